"""Quais tarefas uma correção corrige (plan/runner.py: `assigned_set`, `_collect`) e os
horários da planilha do Moodle nas entregas (`_moodle_times`), sem kernel (issue 41)."""

from __future__ import annotations

import zipfile
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from autograder.core.workspace import Workspace
from autograder.plan import runner

SP = ZoneInfo("America/Sao_Paulo")
A1, A2 = "01-pontuacoes", "04-softmax"
NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
DUE = datetime(2026, 3, 10, 23, 59, tzinfo=SP)
SHEET = ("Identificador,Nome completo,Status,Última modificação (envio)\n"
         "Participante101,Ana Souza,Enviado para avaliação,\"terça-feira, 10 mar 2026, 21:40\"\n"
         "Participante105,Élise Gonçalves,Enviado para avaliação,\"quinta-feira, 12 mar 2026, 10:15\"\n")


@pytest.fixture
def course(tmp_path):
    sol = tmp_path / "solucoes"
    for a in (A1, A2):
        (sol / a).mkdir(parents=True)
        (sol / a / f"{a}.ipynb").write_bytes(NB)
    ws = Workspace(tmp_path / "ws", sol)
    z = tmp_path / f"Tópicos-{A1}-12345.zip"          # o zip de UMA tarefa do Moodle
    with zipfile.ZipFile(z, "w") as f:
        f.writestr(f"Ana Souza_101_assignsubmission_file_/{A1}.ipynb", NB)
        f.writestr(f"Élise Gonçalves_105_assignsubmission_file_/{A1}.ipynb", NB)
    return ws, z


def _collect(ws, z, given=(), worksheets=()):
    opts = runner.GradeOptions(submissions=z, assignments=list(given), worksheets=list(worksheets))
    available = ws.available_assignments()
    candidates = runner.assigned_set(opts.assignments, {A1: DUE, A2: DUE}, available)
    got, subs = runner._collect(ws, opts, SP, candidates, available, runner.RunSummary())
    runner._moodle_times(opts, got, available, subs, SP)
    return got, subs


def test_one_assignments_zip_with_two_deadlines_grades_only_that_assignment(course, capsys):
    """O README manda dar os dois prazos; o zip é de uma tarefa: a outra não vira linhas de zeros."""
    ws, z = course
    got, subs = _collect(ws, z)
    assert got == [A1]
    assert {s.assignment for s in subs} == {A1}
    assert f"sem entregas de {A2}" in capsys.readouterr().err


def test_an_assignment_named_on_the_command_line_is_graded_even_without_submissions(course):
    ws, z = course
    got, _ = _collect(ws, z, given=[A1, A2])
    assert got == [A1, A2]


def test_worksheet_times_reach_the_submissions(course, tmp_path):
    ws, z = course
    sheet = tmp_path / "Notas-Tópicos-01.csv"
    sheet.write_text(SHEET, encoding="utf-8")
    _, subs = _collect(ws, z, worksheets=[str(sheet)])
    got = {s.participant: s.timestamp for s in subs}
    assert got == {"101": datetime(2026, 3, 10, 21, 40, tzinfo=SP), "105": datetime(2026, 3, 12, 10, 15, tzinfo=SP)}
    _, subs = _collect(ws, z, worksheets=[f"{A1}={sheet}"])          # com a tarefa dita
    assert {s.participant: s.timestamp for s in subs} == got


def test_a_worksheet_without_its_assignment_is_refused_when_several_are_graded(course, tmp_path):
    ws, z = course
    sheet = tmp_path / "planilha.csv"
    sheet.write_text(SHEET, encoding="utf-8")
    with pytest.raises(runner.GradeError, match="TAREFA=ARQUIVO"):
        _collect(ws, z, given=[A1, A2], worksheets=[str(sheet)])
