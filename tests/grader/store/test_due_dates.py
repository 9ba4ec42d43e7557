"""O prazo de cada tarefa no gradebook do nbgrader (store/gradebook.py, `set_due_dates`), sem
kernel: o formgrader mostra a "Due Date" de prazos.toml, não "None" (issue 41)."""

from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import pytest

from autograder.core.workspace import Workspace
from autograder.store.gradebook import set_due_dates

SP = ZoneInfo("America/Sao_Paulo")


@pytest.mark.slow          # um gradebook novo: o nbgrader roda o alembic num subprocesso
def test_deadlines_reach_the_gradebook_and_nbgrader_counts_the_same_lateness(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook
    # o nbgrader chama `alembic` pelo PATH ao criar um gradebook (como em cli.main)
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    ws = Workspace(tmp_path / "ws")
    ws.root.mkdir(parents=True)
    with Gradebook(ws.db_url) as gb:
        for a in ("01-pontuacoes", "04-softmax"):
            gb.update_or_create_assignment(a)
        gb.add_student("ana")
        late = datetime(2026, 3, 11, 0, 29, tzinfo=SP).astimezone(timezone.utc).replace(tzinfo=None)
        gb.add_submission("01-pontuacoes", "ana", timestamp=late)
    due = datetime(2026, 3, 10, 23, 59, tzinfo=SP)
    set_due_dates(ws, {"01-pontuacoes": due})
    with Gradebook(ws.db_url) as gb:
        assert gb.find_assignment("01-pontuacoes").duedate == datetime(2026, 3, 11, 2, 59)   # UTC, como o nbgrader
        assert gb.find_assignment("04-softmax").duedate is None
        assert gb.find_submission("01-pontuacoes", "ana").total_seconds_late == 30 * 60
    set_due_dates(ws, {})                                  # prazo tirado do workspace: tirado do gradebook
    with Gradebook(ws.db_url) as gb:
        assert gb.find_assignment("01-pontuacoes").duedate is None


def test_a_workspace_without_a_gradebook_is_left_alone(tmp_path):
    ws = Workspace(tmp_path / "vazio")
    set_due_dates(ws, {"01-pontuacoes": datetime(2026, 3, 10, tzinfo=SP)})
    assert not ws.db_path.exists()
