"""A fronteira entre os dois kernels, sem kernel nenhum (rápido): o que decide onde o código roda
e o que a palavra do aluno vale (revisão de 2026-12-01: C1, C3, H1, H3).

Os cenários de ponta a ponta (com sandbox) estão em test_autograder_reuso.py,
test_autograder_ataques.py e test_all_solutions.py.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder import harness_side, hidden, integrity
from autograder.cellcode import instructor_cells, is_instructor_code, is_test, student_definitions

ROOT = Path(__file__).resolve().parents[2]
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


# ----------------------------------------------------------------------------- o que o processo de correção lê

def _raw(nb) -> bytes:
    return nbformat.writes(nb).encode()


def _with_code(nb, code: str, copies: int = 1):
    nb = copy.deepcopy(nb)
    nb.cells += [nbformat.v4.new_code_cell(code) for _ in range(copies)]
    return nb


@pytest.mark.parametrize("build, message", [
    (lambda nb: _with_code(nb, "x = 1", 1_000), "células; o limite é 1.000"),
    (lambda nb: _with_code(nb, "x = 1\n" * 20_000), "caracteres de código; o limite por célula é 100.000"),
    (lambda nb: _with_code(nb, "x = 1\n" * 15_000, 6), "caracteres de código no notebook; o limite é 500.000"),
    (lambda nb: nb.cells.extend(nbformat.v4.new_markdown_cell("a" * 100_000) for _ in range(21)) or nb,
     "caracteres nas células; o limite é 2.000.000"),
])
def test_a_notebook_past_the_limits_is_refused_before_it_is_parsed(build, message):
    from autograder.job import load_notebook
    nb, err = load_notebook(_raw(build(_release())))
    assert nb is None and message in err, err


@pytest.mark.parametrize("levels", [65, 500, 100_000])
def test_json_nested_too_deep_is_refused_with_the_reason(levels):
    """100 mil níveis: o json levanta RecursionError; 500: o json lê, e a cópia da restauração
    (copy.deepcopy) estourava a pilha. As duas viravam falha do corretor na linha do aluno."""
    from autograder.job import load_notebook
    text = nbformat.writes(_release())
    raw = text.replace('"metadata": {', '"metadata": {"fundo": ' + "[" * levels + "]" * levels + ", ", 1)
    nb, err = load_notebook(raw.encode())
    assert nb is None and err == "JSON com mais de 64 níveis de listas e objetos aninhados", err


def test_deep_json_in_an_output_is_no_reason_to_refuse():
    from autograder.job import load_notebook
    nb = _with_code(_release(), "x")
    deep = json.loads("[" * 80 + "]" * 80)
    nb.cells[-1].outputs = [nbformat.v4.new_output("execute_result", data={"application/json": {"a": deep}})]
    got, err = load_notebook(json.dumps(nb).encode())
    assert err is None and got.cells[-1].outputs == []


def test_outputs_handed_in_are_dropped_before_nbformat_reads_them():
    from autograder.job import load_notebook
    nb = _with_code(_release(), "print(1)")
    nb.cells[-1].outputs = [nbformat.v4.new_output("stream", text="x\n") for _ in range(50_000)]
    nb.cells[-1].outputs.append({"output_type": "inventado"})      # inválida: não importa mais
    nb.cells[-1].execution_count = 7
    got, err = load_notebook(json.dumps(nb).encode())
    assert err is None and got.cells[-1].outputs == [] and got.cells[-1].execution_count is None
    assert len(got.cells) == len(nb.cells)


def test_the_grading_process_reads_a_huge_cell_without_growing():
    """Sem os limites, 3 MiB de `x = 1` viravam ~1,2 GiB de AST no processo de correção."""
    import subprocess
    code = r'''
import resource, sys
import nbformat
from autograder import cellcode
from autograder.job import load_notebook
release = nbformat.read(sys.argv[1], as_version=4)
nb = nbformat.read(sys.argv[1], as_version=4)
nb.cells.append(nbformat.v4.new_code_cell("x = 1\n" * 500_000))
raw = nbformat.writes(nb).encode()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
got, err = load_notebook(raw)
if got is not None:
    cells = cellcode.student_cells(got, release)
    cellcode.tamper_evidence(cells)
    cellcode.student_definitions([t for _, t in cells])
print(err)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
'''
    p = subprocess.run([sys.executable, "-c", code, str(ROOT / "exercises" / CAP1 / f"{CAP1}.ipynb")],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-2000:]
    err, grown = p.stdout.split("\n")[:2]
    assert "o limite por célula é 100.000" in err and int(grown) < 150, p.stdout


@pytest.mark.parametrize("deep", ["x = " + "-" * 50_000 + "1", "y = 1" + " + 1" * 20_000,
                                  "z = f" + "(x)" * 20_000, "w = " + "not " * 20_000 + "x"])
def test_code_nested_too_deep_is_a_syntax_error_not_a_grader_failure(deep):
    from autograder import cellcode
    assert cellcode.syntax_error(deep) == "(expressões aninhadas demais para o Python compilar)"
    assert cellcode.tamper_evidence([(1, deep), (2, "import torch._python_dispatch")])
    defs = student_definitions([deep, "def dobro(x):\n    return 2 * x\n"])
    assert list(defs) == ["dobro"]
