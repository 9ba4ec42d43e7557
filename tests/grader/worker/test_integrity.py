"""A restauração das células travadas (worker/integrity.py), sem kernel.
"""

from __future__ import annotations

import copy


import notebooks
from autograder.worker import integrity

ROOT, CAP1 = notebooks.ROOT, notebooks.CAP1


_release, _cell = notebooks.release, notebooks.cell


def test_answer_cell_claiming_locked_is_restored_and_tampered():
    rel = _release()
    nb = copy.deepcopy(rel)
    _cell(nb, "scores_loops").metadata["nbgrader"]["locked"] = True
    restored, issues = integrity.restore_locked_cells(nb, rel)
    assert _cell(restored, "scores_loops").metadata["nbgrader"] == _cell(rel, "scores_loops").metadata["nbgrader"]
    assert any(i.kind == "tampered" and "scores_loops" in i.message for i in issues), issues
    clean, issues = integrity.restore_locked_cells(copy.deepcopy(rel), rel)
    assert not [i for i in issues if i.kind == "tampered"], issues
