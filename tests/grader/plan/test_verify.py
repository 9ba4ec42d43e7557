"""O que um trabalhador devolve só vira nota se conferir (plan/verify.py), sem Dask: um notebook
corrigido feito à mão, com as notas que as saídas dele dão contadas à mão (o oráculo), e cada
jeito de mentir que um trabalhador adulterado tem."""

from __future__ import annotations

import copy
import dataclasses

import nbformat
import pytest

from autograder.core.results import GradeCell, NotebookResult, QuestionResult, Status
from autograder.plan import verify
from autograder.worker.tasks import GradeTask, TaskOutput

CELLS = [GradeCell("t_falha", "test", 2.0), GradeCell("t_passa", "test", 3.0),
         GradeCell("t_parcial", "test", 4.0), GradeCell("escrita", "written", 1.0),
         GradeCell("em_branco", "written", 2.0)]
# o que o nbgrader dá, contado à mão: teste com erro -> 0; sem erro -> tudo; saída "1.5" -> 1,5;
# resposta escrita mudada -> sem nota (manual); a resposta do enunciado, intocada -> 0
HONEST = {"t_falha": 0.0, "t_passa": 3.0, "t_parcial": 1.5, "escrita": None, "em_branco": 0.0}


def _cell(gid: str, points: float, outputs=(), solution=False, kind="code"):
    c = (nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell)(f"# {gid}")
    c.metadata["nbgrader"] = {"schema_version": 3, "grade": True, "solution": solution, "locked": not solution,
                              "grade_id": gid, "points": points}
    if kind == "code":
        c.outputs = list(outputs)
    return c


def _answer(gid: str, points: float, text: str):
    """Uma resposta escrita com o checksum do enunciado (a linha "ESCREVA..." de duas linhas)."""
    from nbgrader.utils import compute_checksum
    c = _cell(gid, points, solution=True, kind="markdown")
    c.source = "ESCREVA SUA RESPOSTA AQUI\n(duas linhas)"
    c.metadata.nbgrader["checksum"] = compute_checksum(c)
    c.source = text
    return c


def _notebook(points: dict | None = None) -> bytes:
    pts = {c.grade_id: c.max_score for c in CELLS} | (points or {})
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("def dobro(x):\n    return 2 * x"),
        _cell("t_falha", pts["t_falha"], [nbformat.v4.new_output("error", ename="AssertionError",
                                                                 evalue="", traceback=[])]),
        _cell("t_passa", pts["t_passa"], [nbformat.v4.new_output("stream", name="stdout", text="ok\n")]),
        _cell("t_parcial", pts["t_parcial"], [nbformat.v4.new_output("execute_result", execution_count=1,
                                                                     data={"text/plain": "1.5"}),
                                              nbformat.v4.new_output("stream", name="stdout",
                                                                     text="parte 1\nparte 2\n")]),
        _answer("escrita", pts["escrita"], "Porque a soma\nde duas linhas\ndá o dobro."),
        _answer("em_branco", pts["em_branco"], "ESCREVA SUA RESPOSTA AQUI\n(duas linhas)"),
    ])
    return nbformat.writes(nb).encode()


TASK = GradeTask("ana", "90-dobro", "90-dobro", b"{}", {}, run_id="rodada-1")


def _output(scores: dict | None = None, nb: bytes | None = b"", **kw) -> TaskOutput:
    scores = HONEST | (scores or {})
    qs = [QuestionResult(c.grade_id, c.kind, c.max_score, score=scores[c.grade_id]) for c in CELLS]
    out = TaskOutput("ana", "90-dobro", "90-dobro", NotebookResult("90-dobro", questions=qs),
                     _notebook() if nb == b"" else nb, run_id="rodada-1")
    return dataclasses.replace(out, **kw)


def test_an_honest_result_is_accepted():
    assert verify.problems(_output(), TASK, CELLS) == []
    assert verify.rejection(_output(), TASK, CELLS, "tls://10.0.0.7:4000") is None
    # sem notebook (não entregue, inválido, tempo esgotado), com tudo zerado
    zeros = {k: 0.0 for k in HONEST}
    assert verify.problems(_output(zeros, nb=None), TASK, CELLS) == []


@pytest.mark.parametrize("question, score", [("t_falha", 2.0), ("t_parcial", 4.0), ("t_passa", 0.0),
                                             ("escrita", 1.0), ("t_falha", 1.0), ("em_branco", 2.0),
                                             ("em_branco", None)])
def test_a_score_that_the_returned_notebook_does_not_give_is_rejected(question, score):
    found = verify.problems(_output({question: score}), TASK, CELLS)
    assert len(found) == 1 and found[0].startswith(f"{question}: nota"), found
    why = verify.rejection(_output({question: score}), TASK, CELLS, "tls://10.0.0.7:4000")
    assert why.startswith("resultado recusado: o que o trabalhador tls://10.0.0.7:4000 devolveu não confere")


def test_the_attack_of_the_review_every_test_at_its_maximum_is_rejected():
    inflated = {c.grade_id: c.max_score for c in CELLS if c.kind == "test"}
    found = verify.problems(_output(inflated), TASK, CELLS)
    assert sorted(f.split(":")[0] for f in found) == ["t_falha", "t_parcial"], found
    # e forjar os pontos do notebook para acompanhar também não passa
    forged = _notebook({"t_falha": 0.0})
    assert any("vale 0 pontos" in f for f in verify.problems(_output(nb=forged), TASK, CELLS))


def test_a_result_of_another_task_or_run_is_rejected():
    assert "rodada" in verify.problems(_output(run_id="rodada-0"), TASK, CELLS)[0]
    assert "não desta tarefa" in verify.problems(_output(student="bia"), TASK, CELLS)[0]
    assert "não desta tarefa" in verify.problems(_output(notebook="outro"), TASK, CELLS)[0]
    assert "devolveu dict" in verify.problems({"score": 10}, TASK, CELLS)[0]


def test_questions_and_maxima_must_be_those_of_the_release():
    out = _output()
    out.result.questions.pop()
    assert "questões do resultado" in verify.problems(out, TASK, CELLS)[0]
    out = _output()
    out.result.questions[1].max_score = 30.0
    assert verify.problems(out, TASK, CELLS) == ["t_passa: máximo 30 em vez de 3"]
    out = _output()
    out.result.questions[1].score = 30.0
    assert verify.problems(out, TASK, CELLS) == ["t_passa: nota 30 fora de 0 a 3"]
    assert verify.problems(_output({"t_passa": -1.0}), TASK, CELLS) == ["t_passa: nota -1 fora de 0 a 3"]
    # pontos sem notebook que os justifique
    assert verify.problems(_output({"t_passa": 3.0} | {k: 0.0 for k in ("t_falha", "t_parcial")}, nb=None),
                           TASK, CELLS) == ["t_passa: nota 3 sem notebook corrigido"]
    assert "não pôde ser lido" in verify.problems(_output(nb=b"{nada"), TASK, CELLS)[0]


def test_a_grade_cell_missing_from_the_notebook_cannot_carry_points():
    nb = nbformat.reads(_notebook().decode(), as_version=4)
    nb.cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "t_passa"]
    raw = nbformat.writes(nb).encode()
    assert verify.problems(_output(nb=raw), TASK, CELLS) == ["t_passa: nota 3 sem a célula no notebook corrigido"]
    assert verify.problems(_output({"t_passa": 0.0}, nb=raw), TASK, CELLS) == []


def test_the_status_is_not_what_is_checked_only_the_points():
    out = _output()
    out.result.status = Status.FLAGGED
    assert verify.problems(copy.deepcopy(out), TASK, CELLS) == []
