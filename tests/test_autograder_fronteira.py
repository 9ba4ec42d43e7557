"""A fronteira entre os dois kernels, sem kernel nenhum (rápido): o que decide onde o código roda
e o que a palavra do aluno vale (revisão de 2026-12-01: C1, C3, H1, H3).

Os cenários de ponta a ponta (com sandbox) estão em test_autograder_reuso.py,
test_autograder_ataques.py e test_all_solutions.py.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder import harness_side, hidden, integrity
from autograder.cellcode import instructor_cells, is_instructor_code, is_test, student_definitions

ROOT = Path(__file__).resolve().parent.parent
CAP1 = "01-pontuacoes"


def _release():
    return nbformat.read(ROOT / "exercises" / CAP1 / f"{CAP1}.ipynb", as_version=4)


def _cell(nb, gid):
    return next(c for c in nb.cells if integrity.grade_id(c) == gid)


def test_test_cells_with_hidden_parts_run_in_the_harness():
    """A célula de teste restaurada da fonte (com os testes ocultos) é do corretor; se não fosse,
    o texto oculto iria para o kernel do aluno."""
    ins = instructor_cells(_release())
    src = nbformat.read(ROOT / "solutions" / CAP1 / f"{CAP1}.ipynb", as_version=4)
    test = _cell(src, "test_scores_loops")
    assert "BEGIN HIDDEN TESTS" in test.source
    assert is_instructor_code(test, ins) and is_test(test, ins)
    assert is_instructor_code(_cell(src, "preparacao"), ins)


def test_a_cell_is_instructor_code_only_by_the_release():
    """C1: metadados do aluno não bastam; texto visível mudado também não."""
    rel = _release()
    ins = instructor_cells(rel)
    answer = copy.deepcopy(_cell(rel, "scores_loops"))
    answer.metadata["nbgrader"]["locked"] = True
    answer.metadata["nbgrader"]["grade"] = True
    assert not is_instructor_code(answer, ins) and not is_test(answer, ins)
    edited = copy.deepcopy(_cell(rel, "test_scores_loops"))
    edited.source += "\nprint('extra')"
    assert not is_instructor_code(edited, ins)


def test_answer_cell_claiming_locked_is_restored_and_tampered():
    rel = _release()
    nb = copy.deepcopy(rel)
    _cell(nb, "scores_loops").metadata["nbgrader"]["locked"] = True
    restored, issues = integrity.restore_locked_cells(nb, rel)
    assert _cell(restored, "scores_loops").metadata["nbgrader"] == _cell(rel, "scores_loops").metadata["nbgrader"]
    assert any(i.kind == "tampered" and "scores_loops" in i.message for i in issues), issues
    clean, issues = integrity.restore_locked_cells(copy.deepcopy(rel), rel)
    assert not [i for i in issues if i.kind == "tampered"], issues


@pytest.mark.parametrize("cells, banned", [
    (["import numpy as np\n_h = np.matmul\ndef f(Q, K):\n    return _h(Q, K)\n"], "np.matmul"),
    (["from numpy import matmul as mm\ndef f(Q, K):\n    return mm(Q, K)\n"], "numpy.matmul"),
    (["def f(x):\n    return g(x)\n", "def g(x):\n    return x @ x\n"], "x @ x"),
])
def test_text_rules_see_aliases_imports_and_callees(cells, banned):
    """H1: o texto lido pela regra traz o que a função usa, não só o `def`."""
    assert banned in student_definitions(cells)["f"]


@pytest.mark.parametrize("escape", [
    "def _r(Q, K):\n    return Q @ K.T\nf.__code__ = _r.__code__\n",
    "setattr(f, '__code__', (lambda Q, K: Q @ K.T).__code__)\n",
    "globals()['f'] = lambda Q, K: Q @ K.T\n",
    "import sys\nsys.modules['__main__'].f = lambda Q, K: Q @ K.T\n",
])
def test_a_definition_swapped_later_is_not_trusted(escape):
    defs = student_definitions(["def f(Q, K):\n    for _ in range(1):\n        pass\n    return Q\n", escape])
    assert "f" not in defs, defs


def _launcher(x, copy_of_x):
    """Como `flash_forward`: cria o buffer de saída e passa ao aluno junto com a entrada."""
    out = np.empty(3)
    return harness_side._may_copy_back((x, copy_of_x, out), {}, sys._getframe(0))


def test_copy_back_only_into_buffers_no_outer_code_can_see():
    """C3: um array do teste (ou uma visão dele) nunca volta escrito pelo aluno; o buffer que
    só o lançador enxerga, sim."""
    x = np.arange(6.0)
    # (fora do assert: a reescrita do pytest guardaria os temporários em variáveis locais)
    whole = _launcher(x, x.copy())
    view = _launcher(x[1:4], x[:3].copy())                           # visão de x: não volta
    assert whole == {"a1", "a2"} and view == {"a1", "a2"}, (whole, view)


def test_hidden_seed_depends_on_student_assignment_and_secret(tmp_path):
    s = hidden.workspace_secret(tmp_path)
    assert s == hidden.workspace_secret(tmp_path) and len(s) == 64
    assert (tmp_path / hidden.SECRET_FILE).stat().st_mode & 0o077 == 0
    seeds = {hidden.hidden_seed(s, st, a) for st in ("ana", "bia") for a in ("01", "02")}
    assert len(seeds) == 4 and all(0 <= x < 2**63 for x in seeds)
    assert hidden.hidden_seed(s, "ana", "01") == hidden.hidden_seed(s, "ana", "01")
    assert hidden.hidden_seed("outro", "ana", "01") != hidden.hidden_seed(s, "ana", "01")
