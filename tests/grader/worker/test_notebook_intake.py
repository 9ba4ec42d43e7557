"""O que o processo de correção lê de uma entrega (worker/notebook.py, `load_notebook`), sem kernel:
limites antes de ler, JSON fundo demais, saídas entregues descartadas, memória que não cresce.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[3]
CAP1 = "01-pontuacoes"


def _release():
    return nbformat.read(ROOT / "exercises" / CAP1 / f"{CAP1}.ipynb", as_version=4)


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
    from autograder.worker.notebook import load_notebook
    nb, err = load_notebook(_raw(build(_release())))
    assert nb is None and message in err, err


@pytest.mark.parametrize("levels", [65, 500, 100_000])
def test_json_nested_too_deep_is_refused_with_the_reason(levels):
    """100 mil níveis: o json levanta RecursionError; 500: o json lê, e a cópia da restauração
    (copy.deepcopy) estourava a pilha. As duas viravam falha do corretor na linha do aluno."""
    from autograder.worker.notebook import load_notebook
    text = nbformat.writes(_release())
    raw = text.replace('"metadata": {', '"metadata": {"fundo": ' + "[" * levels + "]" * levels + ", ", 1)
    nb, err = load_notebook(raw.encode())
    assert nb is None and err == "JSON com mais de 64 níveis de listas e objetos aninhados", err


def test_deep_json_in_an_output_is_no_reason_to_refuse():
    from autograder.worker.notebook import load_notebook
    nb = _with_code(_release(), "x")
    deep = json.loads("[" * 80 + "]" * 80)
    nb.cells[-1].outputs = [nbformat.v4.new_output("execute_result", data={"application/json": {"a": deep}})]
    got, err = load_notebook(json.dumps(nb).encode())
    assert err is None and got.cells[-1].outputs == []


def test_outputs_handed_in_are_dropped_before_nbformat_reads_them():
    from autograder.worker.notebook import load_notebook
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
from autograder.worker import cellcode
from autograder.worker.notebook import load_notebook
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
