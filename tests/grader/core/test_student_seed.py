"""A semente das entradas ocultas de cada entrega (core/student_seed.py).
"""

from __future__ import annotations

from autograder.core import student_seed


def test_hidden_seed_depends_on_secret_student_assignment_and_submission(tmp_path):
    s = student_seed.workspace_secret(tmp_path)
    assert s == student_seed.workspace_secret(tmp_path) and len(s) == 64
    assert (tmp_path / student_seed.SECRET_FILE).stat().st_mode & 0o077 == 0
    d = student_seed.submission_digest(b'{"cells": []}')
    seeds = {student_seed.hidden_seed(s, st, a, d) for st in ("ana", "bia") for a in ("01", "02")}
    assert len(seeds) == 4 and all(0 <= x < 2**63 for x in seeds)
    assert student_seed.hidden_seed(s, "ana", "01", d) == student_seed.hidden_seed(s, "ana", "01", d)
    assert student_seed.hidden_seed("outro", "ana", "01", d) != student_seed.hidden_seed(s, "ana", "01", d)


def test_a_resubmission_draws_new_hidden_inputs_and_a_regrade_the_same():
    """M1: o mesmo aluno, na mesma tarefa, com outra entrega (um byte do notebook, um arquivo ao
    lado) tem outra semente; a mesma entrega, lida de novo (outra cópia dos mesmos bytes, os
    arquivos em outra ordem), a mesma."""
    nb = b'{"cells": [{"source": "def f(x):\\n    return x\\n"}]}'
    base = student_seed.submission_digest(nb, {"dados.csv": b"1,2\n", "b.txt": b"b"})
    again = student_seed.submission_digest(bytes(bytearray(nb)), {"b.txt": b"b", "dados.csv": b"1,2\n"})
    assert again == base and len(base) == 64
    changed = [student_seed.submission_digest(nb + b" ", {"dados.csv": b"1,2\n", "b.txt": b"b"}),
               student_seed.submission_digest(nb, {"dados.csv": b"1,3\n", "b.txt": b"b"}),
               student_seed.submission_digest(nb, {"dados.csv": b"1,2\n", "c.txt": b"b"}),
               student_seed.submission_digest(nb, {"dados.csv": b"1,2\n"}),
               student_seed.submission_digest(nb)]
    assert len({base, *changed}) == 1 + len(changed)
    seed = lambda d: student_seed.hidden_seed("segredo", "ana", "01-pontuacoes", d)  # noqa: E731
    assert seed(again) == seed(base)
    assert all(seed(d) != seed(base) for d in changed)
    # não entregue: vale como vazio (nada roda, mas a conta não quebra)
    assert student_seed.submission_digest(None) == student_seed.submission_digest(b"")
