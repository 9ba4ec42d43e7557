"""A semente das entradas ocultas de cada aluno (core/student_seed.py).
"""

from __future__ import annotations

from autograder.core import student_seed


def test_hidden_seed_depends_on_student_assignment_and_secret(tmp_path):
    s = student_seed.workspace_secret(tmp_path)
    assert s == student_seed.workspace_secret(tmp_path) and len(s) == 64
    assert (tmp_path / student_seed.SECRET_FILE).stat().st_mode & 0o077 == 0
    seeds = {student_seed.hidden_seed(s, st, a) for st in ("ana", "bia") for a in ("01", "02")}
    assert len(seeds) == 4 and all(0 <= x < 2**63 for x in seeds)
    assert student_seed.hidden_seed(s, "ana", "01") == student_seed.hidden_seed(s, "ana", "01")
    assert student_seed.hidden_seed("outro", "ana", "01") != student_seed.hidden_seed(s, "ana", "01")
