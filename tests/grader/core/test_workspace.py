"""O workspace e os caminhos dele (core/workspace.py): um workspace de antes da issue 37, com o
estado interno em português, continua valendo (os resultados, o segredo, a lista da turma)."""

from __future__ import annotations

import json

from autograder.core import student_seed
from autograder.core.workspace import OLD_STATE_NAMES, Workspace


def test_an_old_workspace_is_read_with_its_results_and_secret(tmp_path):
    state = tmp_path / "ws" / ".autograder"
    (state / "resultados" / "01-pontuacoes").mkdir(parents=True)
    (state / "resultados" / "01-pontuacoes" / "ana.json").write_text("{}", encoding="utf-8")
    (state / "segredo-oculto").write_text("a" * 64 + "\n", encoding="ascii")
    (state / "identidades.json").write_text(json.dumps({"ana": {"name": "Ana"}}), encoding="utf-8")
    (state / "planilhas.json").write_text('{"sep": ";"}', encoding="utf-8")
    (state / "logs").mkdir()
    (state / "logs" / "falhas.log").write_text("x\n", encoding="utf-8")

    ws = Workspace(tmp_path / "ws")

    assert ws.result_path("ana", "01-pontuacoes").read_text(encoding="utf-8") == "{}"
    assert student_seed.workspace_secret(ws.state) == "a" * 64        # as mesmas entradas ocultas
    for old, new in OLD_STATE_NAMES.items():
        assert not (state / old).exists() and (state / new).exists(), (old, new)


def test_a_new_name_is_never_overwritten_by_an_old_one(tmp_path):
    state = tmp_path / ".autograder"
    (state / "results").mkdir(parents=True)
    (state / "resultados").mkdir()
    (state / "resultados" / "velho.json").write_text("{}", encoding="utf-8")
    Workspace(tmp_path)
    assert (state / "resultados" / "velho.json").exists() and not any((state / "results").iterdir())


def test_gradebook_schema_head_is_the_one_nbgrader_asks_alembic_for():
    """A revisão lida no próprio processo é a que o nbgrader obteria do subprocesso `alembic heads`
    (o que `nbgrader.api.get_alembic_version` roda, com o mesmo alembic.ini temporário)."""
    import subprocess
    import sys
    from pathlib import Path

    from nbgrader.dbutil import _temp_alembic_ini

    from autograder.core.workspace import gradebook_schema_head
    with _temp_alembic_ini("sqlite:////tmp/gradebook.db") as ini:
        out = subprocess.check_output([str(Path(sys.executable).parent / "alembic"), "-c", ini, "heads"], text=True)
    assert gradebook_schema_head() == out.split()[0]
