"""Uma turma falsa do Moodle corrigida como o README manda (issue 41), pela linha de comando e
na sandbox: os dois prazos dados, o zip de UMA tarefa, a lista da turma e a planilha de
avaliação do Moodle. Dá o atraso certo (da planilha), nenhuma linha nem planilha de zeros da
outra tarefa, quem não entregou igual venha do zip ou da lista, e o placar da nota no notebook
corrigido (formgrader) e na página do aluno. Depois, o zip da outra tarefa sem a planilha: o
comando, as linhas e o relatório dizem que o atraso não foi conferido."""

from __future__ import annotations

import csv
import io
import os
import re
import sys
from datetime import datetime, timezone

import nbformat
import pytest

import moodle_class
from autograder.core.workspace import Workspace
from grading import LIMITS, needs_bwrap, run_cli

A, B = "91-vezes-dois", "92-vezes-tres"
DUE = "2026-03-10 23:59"
ANA, ELISE, DAVI, FERNANDA = ("Ana Souza", "101"), ("Élise Müller-Gonçalves", "105"), ("Davi Rocha", "108"), \
    ("Fernanda Lima", "109")
IDS = {ANA: "Ana-Souza_101", ELISE: "Elise-Muller-Goncalves_105", DAVI: "Davi-Rocha_108",
       FERNANDA: "Fernanda-Lima_109"}
EMPTY = "nenhuma célula de testes rodou ainda"


def _csv(path, sep=","):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig")), delimiter=sep))


@pytest.fixture(scope="module")
def turma(tmp_path_factory):
    base = tmp_path_factory.mktemp("moodle")
    sol = base / "solucoes"
    moodle_class.build(sol, A, 2)
    moodle_class.build(sol, B, 3)
    ws = Workspace(base / "ws", sol)
    with pytest.MonkeyPatch.context() as mp:      # o nbgrader chama `alembic` pelo PATH (como em cli.main)
        mp.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
        release = {a: info.release[a] for a, info in ws.prepare([A, B]).items()}
    right = {A: "def vezes(x):\n    return 2 * x\n", B: "def vezes(x):\n    return 3 * x\n"}
    wrong = "def vezes(x):\n    return x + 1\n"
    zip_a = moodle_class.moodle_zip(base / f"Tópicos-{A}-12345.zip", A, {
        ANA: moodle_class.answer(release[A], right[A]), ELISE: moodle_class.answer(release[A], right[A]),
        DAVI: moodle_class.answer(release[A], wrong)})
    sheet = moodle_class.worksheet(base / f"Notas-Tópicos-{A}-12345.csv", [
        (ANA[1], ANA[0], "terça-feira, 10 mar 2026, 21:40"),
        (ELISE[1], ELISE[0], "quinta-feira, 12 mar 2026, 10:15"),          # 34 h 16 min depois do prazo
        (DAVI[1], DAVI[0], "terça-feira, 10 mar 2026, 23:59"),
        (FERNANDA[1], FERNANDA[0], "-")], 2)
    roster = base / "turma.csv"
    roster.write_text("student_id;name;participant\n" + "".join(
        f"{IDS[p]};{p[0]};{p[1]}\n" for p in (ANA, ELISE, DAVI, FERNANDA)), encoding="utf-8")
    # o comando do README: os dois prazos, a lista e a planilha da tarefa do zip
    first = run_cli("grade", zip_a, "--workspace", ws.root, "--solutions", sol, "--jobs", "2",
                    "--deadline", f"{A}={DUE}", "--deadline", f"{B}={DUE}", "--roster", roster,
                    "--moodle-worksheet", sheet, *LIMITS)
    snapshot = {"grades": _csv(ws.root / "grades.csv"),
                "sheets": sorted(p.name for p in (ws.root / "exportacoes" / "moodle").glob("*.csv"))}
    # depois, o zip da outra tarefa, sem a planilha dela
    zip_b = moodle_class.moodle_zip(base / f"Tópicos-{B}-12346.zip", B, {
        ANA: moodle_class.answer(release[B], right[B]), DAVI: moodle_class.answer(release[B], right[B])})
    second = run_cli("grade", zip_b, "--workspace", ws.root, "--solutions", sol, *LIMITS)
    return {"ws": ws, "sol": sol, "zip_a": zip_a, "base": base, "first": first, "second": second,
            "after_a": snapshot,
            "rows": {(r["student_id"], r["assignment"]): r for r in _csv(ws.root / "grades.csv")}}


@needs_bwrap
def test_one_assignments_zip_with_two_deadlines_writes_nothing_for_the_other(turma):
    after = turma["after_a"]
    assert {r["assignment"] for r in after["grades"]} == {A}
    assert after["sheets"] == [f"{A}-planilha.csv"]                    # nenhuma planilha de zeros de B
    assert sorted(r["student_id"] for r in after["grades"]) == sorted(IDS.values())


@needs_bwrap
def test_lateness_comes_from_moodles_worksheet(turma):
    rows = turma["rows"]
    elise, ana, davi = (rows[(IDS[p], A)] for p in (ELISE, ANA, DAVI))
    assert (elise["late"], elise["late_minutes"]) == ("true", str(34 * 60 + 16))
    assert elise["submitted_at"] == "2026-03-12T10:15:00-03:00"
    assert (ana["late"], davi["late"]) == ("false", "false")
    assert "sem horário" not in turma["first"].stderr
    sheet = {r["Identificador"]: r for r in _csv(turma["ws"].root / "exportacoes" / "moodle" / f"{A}-planilha.csv")}
    assert sheet["Participante105"]["Última modificação (envio)"] == "12/03/2026 10:15"
    assert "atraso de 34 h 16 min" in sheet["Participante105"]["Comentários de feedback"]


@needs_bwrap
def test_whoever_did_not_hand_in_is_treated_the_same_and_named(turma):
    rows, ws = turma["rows"], turma["ws"]
    # Fernanda (só da lista) em A; Élise (do zip de A) e Fernanda em B: as mesmas linhas
    missing = [rows[(IDS[FERNANDA], A)], rows[(IDS[ELISE], B)], rows[(IDS[FERNANDA], B)]]
    assert {(r["status"], r["score"]) for r in missing} == {("missing", "0")}
    sheet_b = {r["Identificador"]: r for r in _csv(ws.root / "exportacoes" / "moodle" / f"{B}-planilha.csv")}
    for p in (ELISE, FERNANDA):
        assert (sheet_b[f"Participante{p[1]}"]["Status"], sheet_b[f"Participante{p[1]}"]["Nota"]) == \
            ("Nenhum envio", "")
    assert sheet_b["Participante101"]["Nota"] == "2"
    report = (ws.root / "relatorio" / "index.html").read_text(encoding="utf-8")
    assert "Não entregaram (3)" in report
    assert f"Fernanda Lima ({IDS[FERNANDA]})" in report and f"Élise Müller-Gonçalves ({IDS[ELISE]})" in report


@needs_bwrap
def test_without_the_worksheet_the_command_rows_and_report_say_lateness_was_not_checked(turma):
    rows, ws = turma["rows"], turma["ws"]
    assert "AVISO: 2 entrega(s) de 92-vezes-tres sem horário de entrega" in turma["second"].stderr
    assert rows[(IDS[ANA], B)]["late"] == ""
    assert "o atraso não foi conferido" in rows[(IDS[ANA], B)]["details"]
    report = (ws.root / "relatorio" / "index.html").read_text(encoding="utf-8")
    assert "NÃO foi conferido" in report and "atraso não conferido (sem horário de entrega)" in report
    page = (ws.feedback(IDS[DAVI], B) / f"{B}.html").read_text(encoding="utf-8")
    assert "Sem horário de entrega: o atraso não foi conferido." in page


@needs_bwrap
def test_graded_notebook_and_feedback_show_the_grades_scoreboard(turma):
    ws = turma["ws"]
    nb = nbformat.read(ws.autograded(IDS[DAVI], A) / f"{A}.ipynb", as_version=4)   # o que o formgrader mostra
    board = "".join(o.get("text", "") for c in nb.cells if c.source.strip() == "placar()" for o in c.outputs)
    assert "Placar da correção" in board and EMPTY not in board
    assert "❌ Tarefa 1 — vezes 2: 0 de 2 pontos (falhou nos testes visíveis)" in board
    page = (ws.feedback(IDS[ANA], A) / f"{A}.html").read_text(encoding="utf-8")
    board = page[page.index("Placar da correção ("):]        # a saída da célula do placar, no fim da página
    assert "✅ Tarefa 1 — vezes 2: 2 de 2 pontos" in board and EMPTY not in board
    assert re.search(r'<details class="ag-recolhida">.*?numpy.*?</details>', page, re.S)


@needs_bwrap
def test_the_formgrader_shows_the_deadline(turma):
    from nbgrader.api import Gradebook
    with Gradebook(turma["ws"].db_url) as gb:
        due = gb.find_assignment(A).duedate
    want = datetime(2026, 3, 11, 2, 59, tzinfo=timezone.utc).replace(tzinfo=None)     # 23:59 em São Paulo
    assert due == want


@needs_bwrap
def test_a_new_worksheet_changes_the_times_without_regrading(turma, tmp_path):
    """A planilha baixada de novo (Élise agora no prazo): só o horário muda, nada é corrigido."""
    import shutil
    ws = tmp_path / "ws"
    shutil.copytree(turma["ws"].root, ws)
    sheet = moodle_class.worksheet(tmp_path / "nova.csv", [(ELISE[1], ELISE[0], "terça-feira, 10 mar 2026, 23:00")], 2)
    # Ana e Davi não estão na planilha nova: o horário que já se sabia deles fica
    p = run_cli("grade", turma["zip_a"], "--workspace", ws, "--solutions", turma["sol"],
                "--moodle-worksheet", sheet, "--no-feedback", *LIMITS)
    assert "3 de 3 entregas já corrigidas" in p.stderr and "notebook(s) de" not in p.stderr, p.stderr
    rows = {(r["student_id"], r["assignment"]): r for r in _csv(ws / "grades.csv")}
    assert rows[(IDS[ELISE], A)]["late"] == "false"
    assert rows[(IDS[ELISE], A)]["submitted_at"] == "2026-03-10T23:00:00-03:00"
    assert rows[(IDS[ANA], A)]["submitted_at"] == "2026-03-10T21:40:00-03:00"
