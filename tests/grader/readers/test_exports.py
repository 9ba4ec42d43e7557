"""As exportações para planilhas e para o AVA (readers/exports.py, readers/csvfile.py), sem kernel.

Cenários da revisão de segurança (M2) e da revisão do professor (seção 3): a planilha de
avaliação do Moodle nas duas línguas, o Canvas, o trabalho nunca corrigido em branco, fórmulas
neutralizadas em todo CSV e um formato de atraso só.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from autograder.core.deadlines import Lateness
from autograder.core.results import JobResult, NotebookResult, QuestionResult, Status
from autograder.core.workspace import Workspace
from autograder.readers.csvfile import CsvFormat
from autograder.readers.exports import write_exports
from autograder.readers.report import QuestionRow, Row

SP = ZoneInfo("America/Sao_Paulo")
A1, A2 = "01-pontuacoes", "10-softmax-online"

EVIL = '=HYPERLINK("evil.example";"ver nota")'
PT_BR = ["Identificador", "Nome completo", "Endereço de email", "Status", "Nota", "Nota máxima",
         "Nota pode ser alterada", "Última modificação (envio)", "Última modificação (nota)",
         "Comentários de feedback"]
EN = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade", "Grade can be changed",
      "Last modified (submission)", "Last modified (grade)", "Feedback comments"]


def _row(student, a, score, top=10.0, status=Status.OK, late=None, submitted=None, comment=""):
    q = QuestionResult("q1", "test", top, score)
    res = JobResult(student, a, "k", submitted.isoformat() if submitted else None,
                    [NotebookResult(a, status, questions=[q])], status=status)
    lt = Lateness(late, late is not None and late > 0, 0, 0.0) if late is not None else Lateness(None)
    return Row(res, score, score, 0.0, lt, submitted, [QuestionRow(a, q, score, False, comment)], [])


@pytest.fixture
def turma(tmp_path):
    """Maria 101 e Maria 202 vieram do zip do Moodle (só a 10); ana da pasta, com as duas;
    o nome de um participante é uma fórmula."""
    ws = Workspace(tmp_path / "ws")
    ws.state.mkdir(parents=True)
    (ws.state / "identities.json").write_text(json.dumps({
        "Maria-Silva_101": {"name": "Maria Silva", "participant": "101"},
        "Maria-Silva_202": {"name": EVIL, "participant": "202"},
        "ana": {"name": "Ana Souza", "participant": "7"}}), encoding="utf-8")
    rows = [_row("Maria-Silva_101", A2, 10.0, 12.0, comment="Bom uso do máximo."),
            _row("Maria-Silva_202", A2, 3.0, 12.0),
            _row("ana", A1, 8.0, late=2056, submitted=datetime(2025, 3, 12, 10, 15, tzinfo=SP)),
            _row("ana", A2, -0.0 + 7.5, 12.0)]
    return ws, rows


def _read(path: Path, skip: int = 0):
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    return list(csv.DictReader(io.StringIO(lines[0] + "".join(lines[1 + skip:]))))


def _moodle_import(rows, grade, ident, modified, comments, hidden):
    """O que importgradeslib.php acha: colunas pelo nome, participante depois de `hidden`."""
    assert {grade, ident, modified, comments} <= set(rows[0])
    return {r[ident][len(hidden):].strip(): (r[grade], r[comments]) for r in rows}


def test_moodle_worksheet_ptbr_by_default_with_moodles_own_strings(turma):
    ws, rows = turma
    write_exports(ws, rows)
    path = ws.root / "exportacoes" / "moodle" / f"{A2}-planilha.csv"
    got = _read(path)
    assert list(got[0]) == PT_BR
    imported = _moodle_import(got, "Nota", "Identificador", "Última modificação (nota)",
                              "Comentários de feedback", "Participante")
    assert imported["101"] == ("10", "q1: Bom uso do máximo.")
    assert imported["202"][0] == "3"
    by = {r["Identificador"]: r for r in got}
    # corrigido a partir do zip (sem horário de entrega): nunca "Nenhum envio"
    assert by["Participante101"]["Status"] == "Enviado para avaliação"
    assert by["Participante101"]["Última modificação (envio)"] == "-"        # sem horário: o traço do Moodle


def test_moodle_worksheet_in_english_when_asked(turma):
    ws, rows = turma
    write_exports(ws, rows, CsvFormat(moodle_language="en"))
    got = _read(ws.root / "exportacoes" / "moodle" / f"{A2}-planilha.csv")
    assert list(got[0]) == EN
    imported = _moodle_import(got, "Grade", "Identifier", "Last modified (grade)", "Feedback comments",
                              "Participant ")
    assert imported["101"][0] == "10" and imported["7"][0] == "7.5"
    assert {r["Identifier"]: r["Status"] for r in got}["Participant 101"] == "Submitted for grading"


def test_work_never_graded_is_blank_not_zero_in_every_export(turma):
    """As Marias nunca foram corrigidas na 01: em branco na planilha do Moodle, na tabela larga
    e no Canvas (um 0 escrito iria para o livro de notas)."""
    ws, rows = turma
    write_exports(ws, rows)
    out = ws.root / "exportacoes"
    sheet = {r["Identificador"]: r for r in _read(out / "moodle" / f"{A1}-planilha.csv")}
    assert sheet["Participante101"]["Nota"] == "" and sheet["Participante101"]["Status"] == "Nenhum envio"
    assert sheet["Participante7"]["Nota"] == "8"
    wide = {r["student_id"]: r for r in _read(out / "notas_por_aluno.csv")}
    assert wide["Maria-Silva_101"][A1] == "" and wide["Maria-Silva_101"]["total"] == "10"
    canvas = {r["Student"]: r for r in _read(out / "canvas.csv", skip=1)}
    assert canvas["Maria Silva"][A1] == "" and canvas["Maria Silva"][A2] == "10"


def test_canvas_sis_id_only_from_the_roster(turma):
    ws, rows = turma
    write_exports(ws, rows)
    canvas = {r["Student"]: r for r in _read(ws.root / "exportacoes" / "canvas.csv", skip=1)}
    assert canvas["Maria Silva"]["SIS User ID"] == ""          # nunca o id do workspace
    (ws.root / "roster.csv").write_text("student_id,sis_id\nMaria-Silva_101,M101\n", encoding="utf-8")
    write_exports(ws, rows)
    canvas = {r["Student"]: r for r in _read(ws.root / "exportacoes" / "canvas.csv", skip=1)}
    assert canvas["Maria Silva"]["SIS User ID"] == "M101"


def test_formulas_are_neutralised_in_every_csv(turma):
    """M2: o nome `=HYPERLINK(...)` chega às planilhas como texto ('=...), números ficam."""
    ws, rows = turma
    files = write_exports(ws, rows, CsvFormat(sep=";"))
    seen = 0
    for f in files:
        if f.suffix != ".csv":
            continue
        for line in f.read_text(encoding="utf-8").splitlines()[1:]:
            for cell in next(csv.reader([line], delimiter=";" if f.name == "notas_por_aluno.csv" else ",")):
                assert not cell.startswith(("=", "+", "@", "\t", "\r")), (f.name, cell)
                assert cell == "-" or not (cell.startswith("-") and not cell.lstrip("-").replace(".", "").isdigit())
                seen += cell == "'" + EVIL
    assert seen == 4          # tabela larga, as duas planilhas do Moodle e o Canvas
    from autograder.readers.csvfile import safe_cell
    assert [safe_cell(x) for x in ["-3", "2,5", "-", "+1 ponto", "@x", "\tx", "-1+2", "ok"]] == \
        ["-3", "2,5", "-", "'+1 ponto", "'@x", "'\tx", "'-1+2", "ok"]
    # o pipe (DDE), a largura total e os espaços na frente também (issue 42, L1)
    evil = ["|cmd", "\uff1dHYPERLINK(1)", "\uff0b1", "\uff20x", " =1+1", "\u3000=1", "\nx", "\ufe66x"]
    assert all(safe_cell(x) == "'" + x for x in evil), [safe_cell(x) for x in evil]
    assert [safe_cell(x) for x in ["Ana|Souza", "a=b", "１２"]] == ["Ana|Souza", "a=b", "１２"]


def test_one_lateness_format_everywhere(turma):
    """A planilha do Moodle, o relatório e a página dizem "34 h 16 min", nunca "2056 min"."""
    ws, rows = turma
    write_exports(ws, rows)
    sheet = {r["Identificador"]: r for r in _read(ws.root / "exportacoes" / "moodle" / f"{A1}-planilha.csv")}
    assert "atraso de 34 h 16 min" in sheet["Participante7"]["Comentários de feedback"]
    ana = next(r for r in rows if r.student == "ana" and r.assignment == A1)
    assert any("34 h 16 min" in w for w in ana.attention())
    assert ana.lateness.text() == "Entregue com atraso de 34 h 16 min."
    assert not any("2056" in w for w in ana.attention())
