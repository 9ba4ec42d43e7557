"""A página de retorno mostra o placar da nota, não o do kernel do aluno, e a preparação
recolhida (issue 41), sem kernel."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from autograder.core import gradeboard
from autograder.core.deadlines import Lateness
from autograder.core.results import JobResult, NotebookResult, QuestionResult
from autograder.core.workspace import Workspace
from autograder.readers.report import QuestionRow, Row

EMPTY = "Placar: nenhuma célula de testes rodou ainda. Use Run All (Kernel → Restart Kernel and Run All).\n"
SETUP = "# @title Preparação: rode esta célula (não precisa ler nem mudar)\nimport math\nSEGREDO_NAO = 1\n"


def _cell(kind, source, **nbg):
    c = nbformat.v4.new_markdown_cell(source) if kind == "md" else nbformat.v4.new_code_cell(source)
    c.metadata["nbgrader"] = {"schema_version": 3, "locked": False, "solution": False, "grade": False,
                              "task": False, **nbg}
    return c


def _release():
    setup = _cell("code", SETUP, grade_id="preparacao", locked=True)
    setup.metadata["jupyter"] = {"source_hidden": True}
    return nbformat.v4.new_notebook(cells=[
        setup,
        _cell("md", "## Tarefa 1 — quanto custa $T \\times T$ (2 pontos)", grade_id="t1", locked=True),
        _cell("code", "def f(x):\n    return x", grade_id="f", solution=True),
        _cell("code", "assert f(1) == 1", grade_id="test_f", grade=True, locked=True, points=2),
        _cell("md", "## Tarefa 2 — explique (1 ponto)", grade_id="t2", locked=True),
        _cell("md", "Resposta", grade_id="explique", solution=True, grade=True, points=1),
        _cell("code", "placar()", grade_id="placar", locked=True)])


def _row(student, a, manual):
    qs = [QuestionResult("test_f", "test", 2.0, 0.0, visible_passed=True, hidden_passed=False,
                         title="Tarefa 1 — quanto custa $T \\times T$"),
          QuestionResult("explique", "written", 1.0, None, needs_manual=True, title="Tarefa 2 — explique")]
    res = JobResult(student, a, "k", None, [NotebookResult(a, questions=qs)])
    return Row(res, 0.0 + (manual or 0.0), 0.0 + (manual or 0.0), 0.0 if manual is not None else 1.0,
               Lateness(None), None, [QuestionRow(a, qs[0], 0.0), QuestionRow(a, qs[1], manual, manual is not None)],
               [])


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """As duas páginas (resposta escrita à espera; com a nota do professor), feitas uma vez."""
    return {m: _page(tmp_path_factory.mktemp("fb"), m) for m in (None, 1.0)}


def _page(tmp_path, manual):
    from autograder.readers.feedback import generate_feedback
    a, student = "90-placar", "ana"
    ws = Workspace(tmp_path / "ws")
    release = _release()
    graded = nbformat.from_dict(json.loads(nbformat.writes(release)))
    graded.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text=EMPTY)]
    for folder, nb in [(ws.release(a), release), (ws.source(a), release), (ws.autograded(student, a), graded)]:
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, folder / f"{a}.ipynb")
    written, _, refused = generate_feedback(ws, [_row(student, a, manual)], {student: "Ana Souza"})
    assert (written, refused) == (1, [])
    return (ws.feedback(student, a) / f"{a}.html").read_text(encoding="utf-8")


def test_feedback_shows_the_grades_scoreboard_not_the_empty_student_kernel(pages):
    page = pages[None]
    assert "nenhuma célula de testes rodou ainda" not in page
    assert "Placar da correção" in page
    assert "Tarefa 1 — quanto custa T × T: 0 de 2 pontos (passou nos testes visíveis; falhou nos ocultos)" in page
    assert "Tarefa 2 — explique: aguardando correção manual" in page
    assert "$T" not in page.split("Placar da correção")[1]          # o placar é texto, sem TeX cru


def test_feedback_scoreboard_has_the_teachers_manual_score(pages):
    page = pages[1.0]
    assert "Tarefa 2 — explique: 1 de 1 ponto (correção do professor)" in page
    assert "Soma das questões: 1 de 3 pontos." in page


def test_setup_cell_is_collapsed_on_the_feedback_page(pages):
    page = pages[None]
    m = re.search(r'<details class="ag-recolhida">(.*?)</details>', page, re.S)
    assert m is not None and "SEGREDO_NAO" in m.group(1)
    assert "SEGREDO_NAO" not in page.replace(m.group(0), "")          # o código só dentro do recolhido
    assert "<details class=\"ag-recolhida\" open" not in page
    # a célula de testes e a da solução continuam abertas
    assert page.count('<details class="ag-recolhida">') == 1


def test_scoreboard_text_for_each_state():
    lines = [gradeboard.Line("Tarefa 1 — a", "test", 2.0, 2.0, True, True),
             gradeboard.Line("Tarefa 2 — b", "test", 0.0, 3.0, False, None),
             gradeboard.Line("Tarefa 3 — c", "test", 0.0, 1.0, None, None),
             gradeboard.Line("Tarefa 4 — $QK^\\top$ e $\\frac{1}{\\sqrt{d}}$", "written", 1.5, 2.0, manual=True)]
    out = gradeboard.text(lines)
    assert "✅ Tarefa 1 — a: 2 de 2 pontos" in out
    assert "❌ Tarefa 2 — b: 0 de 3 pontos (falhou nos testes visíveis)" in out
    assert "❌ Tarefa 3 — c: 0 de 1 ponto (os testes não chegaram a rodar)" in out
    assert "◐ Tarefa 4 — QKᵀ e 1/√d: 1,5 de 2 pontos (correção do professor)" in out
    assert out.rstrip().endswith("Soma das questões: 3,5 de 8 pontos.")


def test_only_the_scoreboard_cell_is_replaced():
    nb = _release()
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text="preparado\n")]
    assert gradeboard.fill(nb, [gradeboard.Line("t", "test", 1.0, 1.0, True, True)])
    assert nb.cells[0].outputs[0]["text"] == "preparado\n"
    assert "✅ t: 1 de 1 ponto" in nb.cells[-1].outputs[0]["text"]
    nb.cells[-1].metadata["nbgrader"]["locked"] = False            # uma célula do aluno com `placar()`
    assert not gradeboard.fill(nb, [])
