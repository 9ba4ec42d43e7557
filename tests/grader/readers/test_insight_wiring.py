"""O que liga insight/ ao relatório, aos retornos e à recorreção, sem kernel (issue 40):

- a mensagem de falha de uma célula de teste sai só das saídas das partes VISÍVEIS (o que a
  parte oculta imprimiu, com as entradas sorteadas, não é lido), e uma célula que rodou
  inteira não dá mensagem;
- os parágrafos dos retornos: a mensagem do próprio aluno, "parte oculta" sem detalhe, a
  seção a reler e quantos colegas erraram igual;
- o código curto de cada página: 8 caracteres, estável, muda com a entrega corrigida;
- o que uma recorreção mudou, teste a teste; o bloco entra logo depois do cabeçalho.
"""

from __future__ import annotations

import nbformat
import pytest

from autograder.core.results import JobResult, NotebookResult, QuestionResult
from autograder.core.results import TestPart as Part
from autograder.insight.mistakes import analyze, TestOutcome
from autograder.readers import class_insight
from autograder.readers.feedback import insert_after_header
from autograder.readers.regrade import diff_rows, request_id

CANARIO = "ENTRADA_OCULTA_7391"


def _test_cell(parts, outputs):
    cell = nbformat.v4.new_code_cell("conferir(...)")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "t1", "points": 2}
    cell.metadata["autograder"] = Part.to_metadata(parts)
    cell.outputs = outputs
    return cell


def _err(text):
    return nbformat.v4.new_output("error", ename="AssertionError", evalue=text, traceback=[text])


def test_mensagem_so_da_parte_visivel():
    cell = _test_cell([Part(False, 1, False, True), Part(True, 1, False, True)],
                      [_err("maior diferença: 0,5 na posição (1, 2)"), _err(f"oculto {CANARIO}")])
    assert class_insight.visible_message(cell) == "maior diferença: 0,5 na posição (1, 2)"
    oculta = _test_cell([Part(False, 0, True, True), Part(True, 1, False, True)],
                        [_err(f"oculto {CANARIO}")])
    assert class_insight.visible_message(oculta) == ""
    inteira = _test_cell([Part(None, 1, False, True)], [_err(f"inteira {CANARIO}")])
    assert class_insight.visible_message(inteira) == ""


def _insight(outcomes, messages):
    result = analyze(outcomes, sections={"t1": "Capítulo 4 — A softmax, Tarefa 1"})
    ins = class_insight.Insight(0.5, mistakes={"04-softmax": result})
    ins.messages.update(messages)
    return ins


def _row(student, score=0.0, vis=False, hid=False, key="k"):
    q = QuestionResult("t1", "test", 2.0, score, visible_passed=vis, hidden_passed=hid, title="Tarefa 1")
    r = JobResult(student, "04-softmax", key, notebooks=[NotebookResult("04-softmax", questions=[q])])

    class _R:       # o que mistake_notes lê de uma linha de report.collect
        result = r
        student_ = student
    _R.student, _R.assignment = student, "04-softmax"
    return _R


def test_paragrafos_dos_retornos():
    outs = [TestOutcome("ana", "Tarefa 1", "t1", 0, 2, False, None, "AssertionError: maior diferença: 0,9"),
            TestOutcome("bia", "Tarefa 1", "t1", 0, 2, False, None, "AssertionError: maior diferença: 0,3"),
            TestOutcome("caio", "Tarefa 1", "t1", 0, 2, True, False, ""),
            TestOutcome("davi", "Tarefa 1", "t1", 2, 2, True, True, "")]
    ins = _insight(outs, {("04-softmax", "ana", "t1"): "maior diferença: 0,9",
                          ("04-softmax", "bia", "t1"): "maior diferença: 0,3"})
    notes = class_insight.mistake_notes(ins, [_row(s) for s in ("ana", "bia", "caio", "davi")])
    ana = notes[("ana", "04-softmax", "04-softmax")][0]
    assert "«maior diferença: 0,9»" in ana and "1 colega da turma teve o mesmo erro" in ana
    assert "Vale reler: Capítulo 4 — A softmax, Tarefa 1." in ana
    caio = notes[("caio", "04-softmax", "04-softmax")][0]
    assert "falhou na parte oculta" in caio and "colega" not in caio
    assert ("davi", "04-softmax", "04-softmax") not in notes
    html = class_insight.notes_html([f"<b>{CANARIO}</b>"])
    assert "<b>" not in html and "&lt;b&gt;" in html


def test_codigo_curto_da_pagina():
    a = _row("ana").result
    code = request_id(a)
    assert len(code) == 8 and int(code, 16) >= 0
    assert request_id(_row("ana").result) == code                   # estável
    assert request_id(_row("ana", key="outra").result) != code       # outra correção, outro código
    assert request_id(_row("bia").result) != code


def test_diferenca_da_recorrecao_teste_a_teste():
    before = _row("ana", 0.0, False, False, key="a").result
    after = _row("ana", 2.0, True, True, key="b").result
    [row] = diff_rows(before, after)
    assert row["changed"] == "true"
    assert (row["before_visible"], row["after_visible"], row["before_score"], row["after_score"]) == \
        ("failed", "passed", "0", "2")
    assert (row["before_id"], row["after_id"]) == (request_id(before), request_id(after))
    [same] = diff_rows(before, _row("ana", 0.0, False, False, key="c").result)
    assert same["changed"] == "false"


@pytest.mark.parametrize("page, where", [
    ('<body><div class="ag-cabecalho"><h1>T</h1><div>x</div><ol><li>a</li></ol></div><div class="c">', 0),
    ("<body><h1>Simples</h1><p>nota</p></body>", 1),
    ("<body><p>nada</p></body>", 2),
])
def test_bloco_logo_depois_do_cabecalho(page, where):
    out = insert_after_header(page, "<div id=bloco></div>")
    if where == 0:
        assert '<ol><li>a</li></ol></div><div id=bloco></div><div class="c">' in out
    elif where == 1:
        assert "</h1><div id=bloco></div><p>" in out
    else:
        assert out.endswith("<div id=bloco></div></body>")
    assert insert_after_header(page, "") == page


def test_limiar_guardado_no_workspace(tmp_path):
    assert class_insight.insight_settings(tmp_path) == (class_insight.DEFAULT_THRESHOLD, False)
    assert class_insight.insight_settings(tmp_path, 0.7, True) == (0.7, True)
    assert class_insight.insight_settings(tmp_path) == (0.7, True)
    with pytest.raises(ValueError):
        class_insight.insight_settings(tmp_path, 1.5)
