"""A restauração das células travadas (worker/integrity.py), sem kernel.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat

from autograder.core import nbmeta
from autograder.worker import integrity

ROOT = Path(__file__).resolve().parents[3]
CAP1 = "01-pontuacoes"


def _release():
    return nbformat.read(ROOT / "exercises" / CAP1 / f"{CAP1}.ipynb", as_version=4)


def _cell(nb, gid):
    return next(c for c in nb.cells if nbmeta.grade_id(c) == gid)


def test_answer_cell_claiming_locked_is_restored_and_tampered():
    rel = _release()
    nb = copy.deepcopy(rel)
    _cell(nb, "scores_loops").metadata["nbgrader"]["locked"] = True
    restored, issues = integrity.restore_locked_cells(nb, rel)
    assert _cell(restored, "scores_loops").metadata["nbgrader"] == _cell(rel, "scores_loops").metadata["nbgrader"]
    assert any(i.kind == "tampered" and "scores_loops" in i.message for i in issues), issues
    clean, issues = integrity.restore_locked_cells(copy.deepcopy(rel), rel)
    assert not [i for i in issues if i.kind == "tampered"], issues
