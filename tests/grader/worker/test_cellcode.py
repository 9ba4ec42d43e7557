"""O que decide onde cada célula roda e o que o texto do aluno diz (worker/cellcode.py), sem
kernel nenhum (revisão de 2026-12-01: C1, H1, H3).

Os cenários de ponta a ponta (com sandbox) estão em tests/grader_e2e/.
"""

from __future__ import annotations

import copy

import nbformat
import pytest

import notebooks
from autograder.worker.cellcode import instructor_cells, is_instructor_code, is_test, student_definitions

ROOT, CAP1 = notebooks.ROOT, notebooks.CAP1


_release, _cell = notebooks.release, notebooks.cell


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


# ----------------------------------------------------------------------------- o que o processo de correção lê


@pytest.mark.parametrize("deep", ["x = " + "-" * 50_000 + "1", "y = 1" + " + 1" * 20_000,
                                  "z = f" + "(x)" * 20_000, "w = " + "not " * 20_000 + "x"])
def test_code_nested_too_deep_is_a_syntax_error_not_a_grader_failure(deep):
    from autograder.worker import cellcode
    assert cellcode.syntax_error(deep) == "(expressões aninhadas demais para o Python compilar)"
    assert cellcode.tamper_evidence([(1, deep), (2, "import torch._python_dispatch")])
    defs = student_definitions([deep, "def dobro(x):\n    return 2 * x\n"])
    assert list(defs) == ["dobro"]
