"""O que falta nas linhas da turma, dito às claras (readers/gaps.py e quem o usa), sem kernel
(issue 41): tarefa que ninguém entregou não vira zeros; quem não entregou é tratado igual,
venha do zip ou da lista; alunos pelo nome; atraso sem horário nunca é "no prazo"."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from autograder.core.deadlines import UNKNOWN, Deadlines, Lateness
from autograder.core.results import JobResult, NotebookResult, QuestionResult, Status
from autograder.core.workspace import Workspace
from autograder.readers.exports import write_exports
from autograder.readers.report import collect, write_csvs, write_report
from autograder.store.result_files import write_result

SP = ZoneInfo("America/Sao_Paulo")
A1, A2 = "01-pontuacoes", "04-softmax"
DUE = datetime(2026, 3, 10, 23, 59, tzinfo=SP)


def _result(student, a, status=Status.OK, score=2.0, ts=None):
    q = QuestionResult("test_a", "test", 2.0, score if status is Status.OK else 0.0, title="Tarefa 1 — a")
    nb = NotebookResult(a, status, details=[] if status is Status.OK else [f"{a}.ipynb não foi entregue"],
                        questions=[q])
    return JobResult(student, a, "k", ts.isoformat() if ts else None, [nb]).finish()


@pytest.fixture(scope="module")
def turma(tmp_path_factory):
    """Ana e Élise no zip da 01 (Élise com horário, atrasada; Ana sem horário); Davi veio do zip
    mas não entregou a 01; Fernanda só está na lista. A 04 só tem linhas `missing` (uma correção
    antiga com os dois prazos e o zip da 01)."""
    ws = Workspace(tmp_path_factory.mktemp("gaps") / "ws")
    ws.state.mkdir(parents=True)
    (ws.state / "identities.json").write_text(json.dumps({
        "Ana-Souza_101": {"name": "Ana Souza", "participant": "101"},
        "Elise-Goncalves_105": {"name": "Élise Gonçalves", "participant": "105"},
        "Davi-Rocha_108": {"name": "Davi Rocha", "participant": "108"}}), encoding="utf-8")
    (ws.root / "roster.csv").write_text("student_id,name,participant\nFernanda-Lima_109,Fernanda Lima,109\n",
                                        encoding="utf-8")
    for r in [_result("Ana-Souza_101", A1), _result("Elise-Goncalves_105", A1, ts=datetime(2026, 3, 12, 10, 15, tzinfo=SP)),
              _result("Davi-Rocha_108", A1, Status.MISSING),
              *[_result(s, A2, Status.MISSING) for s in ("Ana-Souza_101", "Elise-Goncalves_105", "Davi-Rocha_108")]]:
        write_result(ws.result_path(r.student, r.assignment), r)
    deadlines = Deadlines(SP, {A1: DUE, A2: DUE})
    rows = collect(ws, deadlines)
    write_csvs(ws, rows)
    write_exports(ws, rows)
    report = write_report(ws, rows, deadlines).read_text(encoding="utf-8")
    return {"ws": ws, "rows": {(r.student, r.assignment): r for r in rows}, "report": report}


def _csv(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_an_assignment_nobody_handed_in_is_never_a_column_of_zeros(turma):
    ws = turma["ws"]
    assert {a for _, a in turma["rows"]} == {A1}
    assert not (ws.root / "exportacoes" / "moodle" / f"{A2}-planilha.csv").exists()
    assert A2 not in (ws.root / "exportacoes" / "notas_por_aluno.csv").read_text(encoding="utf-8")
    assert A2 not in (ws.root / "grades.csv").read_text(encoding="utf-8")


def test_no_submission_is_treated_the_same_from_the_zip_or_the_roster(turma):
    ws, rows = turma["ws"], turma["rows"]
    davi, fernanda = rows[("Davi-Rocha_108", A1)], rows[("Fernanda-Lima_109", A1)]
    assert davi.status is fernanda.status is Status.MISSING and davi.score == fernanda.score == 0
    grades = {r["student_id"]: r for r in _csv(ws.root / "grades.csv")}
    keys = ("status", "score", "max_score", "late", "details")
    assert [grades["Davi-Rocha_108"][k] for k in keys] == [grades["Fernanda-Lima_109"][k] for k in keys]
    sheet = {r["Identificador"]: r for r in _csv(ws.root / "exportacoes" / "moodle" / f"{A1}-planilha.csv")}
    for p in ("Participante108", "Participante109"):
        assert (sheet[p]["Status"], sheet[p]["Nota"]) == ("Nenhum envio", ""), sheet[p]
    wide = {r["student_id"]: r for r in _csv(ws.root / "exportacoes" / "notas_por_aluno.csv")}
    assert wide["Davi-Rocha_108"][A1] == wide["Fernanda-Lima_109"][A1] == ""


def test_report_names_people_and_lists_who_did_not_hand_in(turma):
    report = turma["report"]
    assert "Não entregaram (2)" in report
    assert "Davi Rocha (Davi-Rocha_108)" in report and "Fernanda Lima (Fernanda-Lima_109)" in report
    assert "4 aluno(s)" in report
    # a linha que pede atenção (Élise atrasada) mostra o nome, não só o id
    assert "<td>Élise Gonçalves (Elise-Goncalves_105)</td>" in report


def test_a_row_with_a_deadline_and_no_time_says_lateness_was_not_checked(turma):
    ws, rows = turma["ws"], turma["rows"]
    ana = rows[("Ana-Souza_101", A1)]
    assert ana.lateness.unknown and ana.lateness.text() == UNKNOWN
    assert "atraso não conferido (sem horário de entrega)" in ana.attention()
    grades = {r["student_id"]: r for r in _csv(ws.root / "grades.csv")}
    assert grades["Ana-Souza_101"]["late"] == "" and UNKNOWN in grades["Ana-Souza_101"]["details"]
    assert grades["Elise-Goncalves_105"]["late"] == "true"
    assert "1 entrega(s) de 01-pontuacoes sem horário de entrega" in turma["report"]
    assert "--moodle-worksheet" in turma["report"]


def test_lateness_unknown_only_with_a_deadline():
    d = Deadlines(SP, {A1: DUE})
    assert d.lateness(A1, None, 10.0) == Lateness(None, unknown=True)
    assert d.lateness(A2, None, 10.0) == Lateness(None) and Lateness(None).text() == ""
    assert d.lateness(A1, DUE, 10.0).text() == "Entregue no prazo."
