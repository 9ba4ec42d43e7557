"""O laço inteiro do professor (issue 14), numa turma pequena.

Três alunos, três tarefas no curso e só duas dadas (com prazo): corrigir com
`--deadline` → nota manual e comentário escritos pela API do gradebook do nbgrader
(o que o formgrader faz) → `report` e `feedback` SEM repetir os prazos → o
atraso, a nota manual e o comentário aparecem no CSV, na tabela larga, nas
exportações do Moodle e do Canvas e na página do aluno; a tarefa não dada não
aparece em lugar nenhum. A turma é corrigida UMA vez (fixture de módulo).

Os testes sem kernel (prazos, lista da turma, zip do Moodle, formato dos CSVs,
detecção de teste oculto, importações do lado da leitura) vêm primeiro.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

import nbformat
import pytest

import cenarios
from autograder.box import sandbox
from autograder.core.workspace import Workspace
from autograder.core.deadlines import LatePolicy, load_deadlines, update_deadlines
from autograder.readers.csvfile import CsvFormat, write_csv
from autograder.store.identities import identities, read_roster, record_identities
from autograder.authoring.nbbuild import MYST_HEADER, build_text
from autograder.collect import collect
from autograder.core.deadlines import parse_time

ROOT = Path(__file__).resolve().parents[3]

SP = ZoneInfo("America/Sao_Paulo")
A1, A2, UNASSIGNED = "90-dobro", "91-dobro", "92-extra"
DUE = "2025-03-10 23:59"
LIMITS = ["--cell-timeout", "5", "--notebook-timeout", "40"]
HAS_BWRAP, WHY_NOT = sandbox.bwrap_works()
COMMENT = "Boa explicação; faltou dizer que o eixo 1 percorre as colunas."
CODE_COMMENT = "Use o operador de multiplicação direto, sem laço."
SYNTAX = {"dobro": "def dobro(x)\n    return 2 * x\n", "soma_linhas": cenarios.CORRECT["soma_linhas"]}
ROSTER = ("student_id;name;email;participant;sis_id;section\n"
          "ana;Ana Souza;ana@exemplo.br;1001;2025001;T1\n"
          "bruno;Bruno Lima;bruno@exemplo.br;1002;2025002;T1\n"
          "carla;Carla Dias;carla@exemplo.br;1003;2025003;T1\n"
          "davi;Davi Reis;davi@exemplo.br;1004;2025004;T1\n")     # davi não entregou nada


def build(solutions: Path, slug: str) -> None:
    """A tarefa de cenarios.py, com títulos de tarefa como os dos capítulos (fonte MyST)."""
    text = MYST_HEADER + f"""
+++ {{"grade_id": "titulo"}}

# Tarefa {slug}

+++

Complete as funções, $f(x) = 2x$ e $s_i = \\sum_j m_{{ij}}$.

```{{code-cell}}
:tags: [setup]
:grade_id: preparacao

import numpy as np
import torch
```

+++

## Tarefa 1 — o dobro (2 pontos)

Escreva `dobro(x)`.

```{{code-cell}}
:tags: [solution]
:grade_id: dobro

def dobro(x):
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION
```

```{{code-cell}}
:tags: [tests]
:grade_id: test_dobro
:points: 2

conferir("dobro", dobro(np.arange(3.0)), np.array([0.0, 2.0, 4.0]))
### BEGIN HIDDEN TESTS
conferir("dobro oculto {cenarios.SECRET}", dobro(np.array([-1.5])), np.array([-3.0]))
### END HIDDEN TESTS
```

+++

## Tarefa 2 — soma das linhas (3 pontos)

```{{code-cell}}
:tags: [solution]
:grade_id: soma_linhas

def soma_linhas(m):
    ### BEGIN SOLUTION
    return m.sum(axis=1)
    ### END SOLUTION
```

```{{code-cell}}
:tags: [tests]
:grade_id: test_soma_linhas
:points: 3

m = torch.arange(6.0).reshape(2, 3)
assert torch.allclose(soma_linhas(m), torch.tensor([3.0, 12.0])), "soma_linhas errada"
### BEGIN HIDDEN TESTS
assert np.allclose(soma_linhas(np.ones((4, 5))), 5 * np.ones(4)), "{cenarios.SECRET}"
### END HIDDEN TESTS
```

+++

## Tarefa 3 — por que o eixo 1? (1 ponto, correção manual)

+++ {{"grade_id": "explique_enunciado"}}

Por que a soma é ao longo do eixo 1?

+++ {{"grade_id": "explique", "tags": ["answer"], "points": 1}}

Porque cada linha é um exemplo.
"""
    path = solutions / slug / f"{slug}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build_text(text, slug), path)


def run_cli(*args, check=True) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"autograder saiu com {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def read_rows(path: Path, sep=",") -> list[dict]:
    with open(path, encoding="utf-8-sig", newline="") as f:
        return list(csv.DictReader(f, delimiter=sep))


# ----------------------------------------------------------------------------- sem kernel

def test_late_policy_grace_penalty_per_day_and_zero_after_a_limit():
    from autograder.core.deadlines import Deadlines
    due = parse_time(DUE, SP)
    d = Deadlines(SP, {A1: due}, LatePolicy(grace_minutes=10, penalty_per_day=25, zero_after_days=2))
    at = lambda text: parse_time(text, SP)  # noqa: E731
    assert d.lateness(A1, at("2025-03-10 23:00"), 6).late is False
    grace = d.lateness(A1, at("2025-03-11 00:09"), 6)
    assert (grace.minutes, grace.late, grace.penalty) == (10, False, 0.0)
    one = d.lateness(A1, at("2025-03-11 02:10"), 6)            # 131 min: 1 dia começado
    assert (one.minutes, one.late, one.days, one.penalty) == (131, True, 1, 1.5)
    two = d.lateness(A1, at("2025-03-12 23:00"), 6)
    assert (two.days, two.penalty) == (2, 3.0)
    assert d.lateness(A1, at("2025-03-13 12:00"), 6).penalty == 6.0   # 3 dias > 2: zero
    assert d.lateness(A2, at("2025-03-13 12:00"), 6).minutes is None   # sem prazo
    assert d.lateness(A1, None, 6).minutes is None                     # sem horário


def test_deadlines_are_kept_in_the_workspace_and_can_be_changed(tmp_path):
    update_deadlines(tmp_path, [f"{A1}={DUE}"], "America/Sao_Paulo")
    d = load_deadlines(tmp_path)                     # sem --deadline: vem do workspace
    assert d.due[A1] == parse_time(DUE, SP) and str(d.tz) == "America/Sao_Paulo"
    update_deadlines(tmp_path, [f"{A2}=2025-03-17 23:59"], grace=15, per_day=10.0, zero_after=7)
    d = load_deadlines(tmp_path)
    assert sorted(d.due) == [A1, A2]
    assert (d.policy.grace_minutes, d.policy.penalty_per_day, d.policy.zero_after_days) == (15, 10.0, 7)
    update_deadlines(tmp_path, remove=[A2], no_zero=True)
    d = load_deadlines(tmp_path)
    assert sorted(d.due) == [A1] and d.policy.zero_after_days is None
    assert "tolerância de 15 min" in d.describe_policy()
    with pytest.raises(ValueError, match="não tem prazo"):
        update_deadlines(tmp_path, remove=["00-nada"])
    with pytest.raises(ValueError, match="porcentagem entre 0 e 100"):
        update_deadlines(tmp_path, per_day=150.0)
    (tmp_path / "prazos.toml").write_text("[atraso]\ntolerancia_min = 'muito'\n", encoding="utf-8")
    with pytest.raises(ValueError, match="tolerancia_min e zero_apos_dias são inteiros"):
        load_deadlines(tmp_path)


def test_deadlines_command_shows_and_changes_the_policy(tmp_path):
    p = run_cli("deadlines", "--workspace", tmp_path, f"{A1}={DUE}", "--penalty-per-day", "10,5",
                "--grace", "5")
    assert f"{A1}: 10/03/2025 23:59" in p.stdout and "multa de 10,5%" in p.stdout
    assert "tolerância de 5 min" in run_cli("deadlines", "--workspace", tmp_path).stdout
    bad = run_cli("deadlines", "--workspace", tmp_path, "--penalty-per-day", "-3", check=False)
    assert bad.returncode == 2 and "maior ou igual a zero" in bad.stderr


def test_moodle_participant_numbers_come_from_the_zip_and_the_roster_wins(tmp_path):
    z = tmp_path / "moodle.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr(f"Ana Souza_1001_assignsubmission_file_/{A1}.ipynb", b"{}")
        f.writestr(f"Bruno Lima_1002_assignsubmission_file_/{A1}.ipynb", b"{}")
    subs, _ = collect(z, {A1: [A1]}, SP, only=A1)
    ws = Workspace(tmp_path / "ws")
    record_identities(ws, subs)
    ids = identities(ws)
    # o id leva o número de participante (dois "Ana Souza" nunca viram um só aluno)
    assert (ids["Ana-Souza_1001"].participant, ids["Ana-Souza_1001"].name) == ("1001", "Ana Souza")
    (ws.root / "roster.csv").write_text("student_id,email,participant\nAna-Souza_1001,ana@x.br,\n",
                                        encoding="utf-8")
    ids = identities(ws)
    assert (ids["Ana-Souza_1001"].email, ids["Ana-Souza_1001"].participant) == ("ana@x.br", "1001")


def test_roster_without_student_id_says_what_it_expects(tmp_path):
    f = tmp_path / "turma.csv"
    f.write_text("\ufeffnome;email\nAna;a@x\n", encoding="utf-8")
    with pytest.raises(ValueError, match="precisa da coluna student_id.*vieram: nome, email"):
        read_roster(f)
    f.write_text("student_id;email\nana;a@x\n", encoding="utf-8")
    assert read_roster(f)["ana"].email == "a@x"


def test_semicolon_and_bom_for_ptbr_spreadsheets(tmp_path):
    fmt = CsvFormat(";", True)
    write_csv(tmp_path / "a.csv", ["aluno", "nota"], [{"aluno": "José", "nota": "5,5"}], fmt)
    raw = (tmp_path / "a.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"aluno;nota\n" in raw
    assert read_rows(tmp_path / "a.csv", ";") == [{"aluno": "José", "nota": "5,5"}]
    assert fmt.decimal == "," and CsvFormat().decimal == "."
    with pytest.raises(ValueError, match="--sep espera um caractere"):
        CsvFormat(";;").check()


def test_hidden_test_lines_are_found_inside_highlighted_html():
    from autograder.readers.feedback import hidden_leaks, hidden_lines
    src = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "conferir('a', f(1), 2)\n### BEGIN HIDDEN TESTS\nassert f(-1.5) == -3.0, 'oculto'\n"
        "### END HIDDEN TESTS")])
    lines = hidden_lines(src)
    assert lines == ["assert f(-1.5) == -3.0, 'oculto'"]
    page = ('<span class="k">assert</span> <span class="n">f</span>(<span class="o">-</span>1.5) '
            '<span class="o">==</span> <span class="o">-</span>3.0, <span class="s1">&#39;oculto&#39;</span>')
    assert hidden_leaks(page, lines) == lines
    assert hidden_leaks("<p>Testes ocultos: passaram.</p>", lines) == []
    # uma linha oculta que também está num teste visível não é segredo
    release = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("assert f(-1.5) == -3.0, 'oculto'")])
    assert hidden_lines(src, release) == []


def test_task_titles_come_from_the_heading_before_each_cell():
    from autograder.core.workspace import grade_cells_of
    nb = nbformat.read(ROOT / "exercises" / "04-softmax" / "04-softmax.ipynb", as_version=4)
    titles = {c.grade_id: c.title for c in grade_cells_of(nb)}
    assert titles["test_softmax"] == "Tarefa 1 — softmax estável"
    assert titles["subtrair_maximo"] == "Tarefa 5 — por que subtrair o máximo?"


def test_timeout_result_is_typed_and_survives_the_json_round_trip(tmp_path):
    """O prazo externo de uma tarefa do Dask (tasks.task_limit) vira uma linha `timeout` tipada."""
    from autograder.core.results import JobResult, Status
    from autograder.store.result_files import read_result, write_result
    from autograder.worker.tasks import GradeTask, timeout_output
    from autograder.core.results import GradeCell
    cells = [GradeCell("test_dobro", "test", 2.0, "Tarefa 1 — o dobro")]
    out = timeout_output(GradeTask("ana", A1, A1, b"{}", {}), cells, 99.0)
    r = JobResult("ana", A1, "k", None, [out.result]).finish()
    assert r.status is Status.TIMEOUT and r.auto_score == 0.0 and out.autograded is None
    write_result(tmp_path / "r.json", r)
    back = read_result(tmp_path / "r.json")
    assert back == r and "passou de 99 s" in back.details[0]


def test_workspace_config_finds_the_course_without_an_absolute_path(tmp_path):
    ws = Workspace(tmp_path / "ws", ROOT / "solutions")
    ws.root.mkdir()
    from autograder.core.workspace import WORKSPACE_CONFIG
    (ws.root / "nbgrader_config.py").write_text(WORKSPACE_CONFIG, encoding="utf-8")
    moved = tmp_path / "outro-lugar"
    shutil.copytree(ws.root, moved)
    text = (moved / "nbgrader_config.py").read_text(encoding="utf-8")
    assert str(ROOT) not in text and str(ws.root) not in text
    code = ("from traitlets.config.loader import PyFileConfigLoader as L\n"
            "c = L('nbgrader_config.py', path='.').load_config()\n"
            "print(c.CourseDirectory.root); print(c.ClearSolutions.text_stub)")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AUTOGRADER_REPO")}
    out = subprocess.run([sys.executable, "-c", code], cwd=moved, capture_output=True, text=True,
                         env={**env, "AUTOGRADER_REPO": str(ROOT)}, check=True).stdout.splitlines()
    assert out == [str(moved), "SUA RESPOSTA AQUI"]


# ----------------------------------------------------------------------------- o laço inteiro

def needs_bwrap(f):
    return pytest.mark.slow(f)


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    if not HAS_BWRAP:
        pytest.fail(f"sandbox: {WHY_NOT}")
    base = tmp_path_factory.mktemp("laco")
    sol = base / "solucoes"
    for slug in (A1, A2, UNASSIGNED):
        build(sol, slug)
    ws = Workspace(base / "ws", sol)
    subs = base / "entregas"
    release = {}
    for slug in (A1, A2, UNASSIGNED):        # a versão do aluno, como o nbgrader a gera
        tmp = Workspace(base / f"gera-{slug}", sol)
        release[slug] = tmp.prepare([slug])[slug].release[slug]
        shutil.rmtree(tmp.root)
    plan = {   # aluno -> tarefa -> (respostas, horário de entrega)
        "ana": {A1: (cenarios.CORRECT, "2025-03-10 22:00:00"), A2: (cenarios.WRONG, "2025-03-10 22:00:00"),
                UNASSIGNED: (cenarios.CORRECT, "2025-03-10 22:00:00")},
        "bruno": {A1: (SYNTAX, "2025-03-10 23:00:00")},
        "carla": {A1: (cenarios.CORRECT, "2025-03-11 02:10:00"), A2: (cenarios.CORRECT, "2025-03-10 20:00:00")},
    }
    for s, tasks in plan.items():
        for a, (answers, ts) in tasks.items():
            d = subs / s / a
            d.mkdir(parents=True)
            nbformat.write(cenarios._solve(release[a], answers), d / f"{a}.ipynb")
            (d / "timestamp.txt").write_text(ts)
    roster = base / "turma.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    grade = run_cli("grade", subs, "--workspace", ws.root, "--solutions", sol, "--jobs", "2",
                    "--deadline", f"{A1}={DUE}", "--deadline", f"{A2}={DUE}", "--roster", roster, *LIMITS)
    before = read_rows(ws.root / "grades.csv")

    # o que o formgrader faz: nota manual e comentários, pela API do gradebook do nbgrader
    from nbgrader.api import Gradebook
    with Gradebook(ws.db_url) as gb:
        gb.find_grade("explique", A1, A1, "ana").manual_score = 1.0
        gb.find_comment("explique", A1, A1, "ana").manual_comment = COMMENT
        gb.find_comment("dobro", A1, A1, "carla").manual_comment = CODE_COMMENT
        gb.db.commit()
    # report e feedback SEM --deadline: os prazos vêm do workspace
    report = run_cli("report", "--workspace", ws.root, "--sep", ";", "--bom")
    feedback = run_cli("feedback", "--workspace", ws.root)
    return {"base": base, "ws": ws, "sol": sol, "grade": grade, "report": report, "feedback": feedback,
            "before": before, "rows": {(r["student_id"], r["assignment"]): r
                                       for r in read_rows(ws.root / "grades.csv", ";")}}


def page(loop, s, a) -> str:
    return (loop["ws"].feedback(s, a) / f"{a}.html").read_text(encoding="utf-8")


@needs_bwrap
def test_only_the_assigned_work_is_graded_and_reported(loop):
    ws = loop["ws"]
    # davi (só da lista) não entregou nada: as mesmas linhas `missing` que bruno/A2 (issue 41)
    assert sorted(loop["rows"]) == [("ana", A1), ("ana", A2), ("bruno", A1), ("bruno", A2),
                                    ("carla", A1), ("carla", A2), ("davi", A1), ("davi", A2)]
    assert loop["rows"][("bruno", A2)]["status"] == "missing"
    assert [loop["rows"][("davi", a)]["status"] for a in (A1, A2)] == ["missing", "missing"]
    for f in ws.root.rglob("*"):
        assert UNASSIGNED not in str(f.relative_to(ws.root)), f
        if f.is_file() and f.suffix in (".csv", ".html", ".json", ".toml"):
            assert UNASSIGNED not in f.read_text(encoding="utf-8", errors="replace"), f
    for z in (ws.root / "exportacoes").rglob("*.zip"):
        assert not any(UNASSIGNED in n for n in zipfile.ZipFile(z).namelist())


@needs_bwrap
def test_lateness_survives_report_and_feedback_without_the_deadline_flags(loop):
    carla, before = loop["rows"][("carla", A1)], {(r["student_id"], r["assignment"]): r for r in loop["before"]}
    assert (carla["late"], carla["late_minutes"]) == ("true", "131")
    assert before[("carla", A1)]["late_minutes"] == "131"
    assert carla["submitted_at"] == "2025-03-11T02:10:00-03:00"
    assert loop["rows"][("carla", A2)]["late"] == "false"
    assert "Entregue com atraso de 2 h 11 min" in page(loop, "carla", A1)
    report = (loop["ws"].root / "relatorio" / "index.html").read_text(encoding="utf-8")
    assert "atraso de 2 h 11 min" in report            # o mesmo formato da página (issue 23)


@needs_bwrap
def test_manual_score_and_comments_reach_the_csv_and_the_page(loop):
    ana = loop["rows"][("ana", A1)]
    assert (ana["score"], ana["needs_manual_grade"], ana["max_score"]) == ("6", "0", "6")
    assert COMMENT in ana["comments"] and "Tarefa 3 — por que o eixo 1?" in ana["comments"]
    assert CODE_COMMENT in loop["rows"][("carla", A1)]["comments"]
    html = page(loop, "ana", A1)
    assert "Nota: 6 de 6 pontos" in html and "aguardando correção manual" not in html
    assert "Comentário do professor" in html and "Boa explicação; faltou dizer" in html
    assert CODE_COMMENT in page(loop, "carla", A1)
    q = {(r["student_id"], r["assignment"], r["grade_id"]): r
         for r in read_rows(loop["ws"].root / "questions.csv", ";")}
    assert q[("ana", A1, "explique")]["manual"] == "true" and q[("ana", A1, "explique")]["comment"] == COMMENT
    assert q[("ana", A1, "test_dobro")]["title"] == "Tarefa 1 — o dobro"


@needs_bwrap
def test_pages_show_task_titles_not_grade_ids(loop):
    html = page(loop, "carla", A2)
    for title in ("Tarefa 1 — o dobro", "Tarefa 2 — soma das linhas", "Tarefa 3 — por que o eixo 1?"):
        assert title in html
    assert "Testes <code>test_dobro</code>" not in html


@needs_bwrap
def test_csv_for_ptbr_spreadsheets_has_bom_semicolon_and_decimal_comma(loop):
    raw = (loop["ws"].root / "grades.csv").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and raw.splitlines()[0].count(b";") >= 10


@needs_bwrap
def test_wide_table_one_row_per_student_one_column_per_assignment(loop):
    rows = read_rows(loop["ws"].root / "exportacoes" / "notas_por_aluno.csv", ";")
    assert list(rows[0]) == ["student_id", "name", "email", "participant", "sis_id", A1, A2, "total", "max_total"]
    by = {r["student_id"]: r for r in rows}
    assert sorted(by) == ["ana", "bruno", "carla", "davi"]            # davi: da lista, sem entrega
    assert (by["ana"][A1], by["ana"]["email"], by["ana"]["participant"]) == ("6", "ana@exemplo.br", "1001")
    # davi (só da lista) e bruno/A2 não entregaram: em branco, não 0 (um 0 iria para o AVA)
    assert (by["davi"][A1], by["davi"]["total"], by["davi"]["max_total"]) == ("", "", "12")
    g = loop["rows"]
    for s in ("ana", "bruno", "carla"):
        total = sum(float(g[(s, a)]["score"].replace(",", ".")) for a in (A1, A2))
        assert float(by[s]["total"].replace(",", ".")) == pytest.approx(total)


@needs_bwrap
def test_moodle_grading_worksheet_parses_as_moodle_reads_it(loop):
    """Como o importador do Moodle (assignfeedback_offline) num Moodle em português: colunas
    pelo nome na língua da interface, o participante depois de "Participante", a nota em
    "Nota", os comentários em "Comentários de feedback"."""
    rows = read_rows(loop["ws"].root / "exportacoes" / "moodle" / f"{A1}-planilha.csv")
    for col in ("Identificador", "Nome completo", "Endereço de email", "Nota", "Nota máxima",
                "Última modificação (nota)", "Comentários de feedback"):
        assert col in rows[0], col
    by = {int(r["Identificador"].removeprefix("Participante")): r for r in rows}
    assert sorted(by) == [1001, 1002, 1003, 1004]
    assert (float(by[1001]["Nota"]), float(by[1001]["Nota máxima"])) == (6.0, 6.0)
    assert COMMENT in by[1001]["Comentários de feedback"]
    assert "atraso de 2 h 11 min" in by[1003]["Comentários de feedback"]
    assert by[1004]["Nota"] == "" and by[1004]["Status"] == "Nenhum envio"      # davi: não entregou


@needs_bwrap
def test_moodle_feedback_zip_uses_the_names_moodle_imports(loop):
    """O importador (assignfeedback_file) divide o caminho em 5 partes por "_":
    nome, participante, tipo e nome do plugin, arquivo."""
    z = zipfile.ZipFile(loop["ws"].root / "exportacoes" / "moodle" / f"{A1}-retornos.zip")
    names = sorted(z.namelist())
    parts = [n.split("_", 4) for n in names]
    assert [(p[0], p[1], p[2], p[3]) for p in parts] == [
        ("Ana Souza", "1001", "assignsubmission", "file"), ("Bruno Lima", "1002", "assignsubmission", "file"),
        ("Carla Dias", "1003", "assignsubmission", "file")]
    assert all(p[4] == f"/{A1}.html" for p in parts)
    assert COMMENT in z.read(names[0]).decode("utf-8")


@needs_bwrap
def test_canvas_gradebook_csv_has_the_columns_canvas_imports(loop):
    with open(loop["ws"].root / "exportacoes" / "canvas.csv", encoding="utf-8", newline="") as f:
        table = list(csv.reader(f))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", A1, A2]
    assert table[1][0].strip() == "Points Possible" and table[1][5:] == ["6", "6"]
    by = {r[2]: r for r in table[2:]}
    assert by["2025001"][:5] == ["Ana Souza", "", "2025001", "ana@exemplo.br", "T1"] and by["2025001"][5] == "6"


@needs_bwrap
def test_report_lists_only_real_attention_items(loop):
    report = (loop["ws"].root / "relatorio" / "index.html").read_text(encoding="utf-8")
    rows = loop["rows"]
    # ana/A2 e carla/A2: a resposta escrita espera correção; carla/A1: atraso (e resposta);
    # bruno/A1: a resposta escrita em branco não espera ninguém; bruno/A2 não entregue não é "atenção"
    expected = [k for k, r in rows.items() if r["late"] == "true" or r["needs_manual_grade"] not in ("0", "")
                or r["status"] not in ("ok", "missing") or (r["status"] == "ok" and r["details"])]
    assert ("bruno", A2) not in expected and ("ana", A1) not in expected
    assert f"Pedem atenção ({len(expected)})" in report
    assert "aguardando correção manual" in report


@needs_bwrap
def test_syntax_error_details_reach_the_csv_and_the_page(loop):
    from autograder.store.result_files import read_result
    r = read_result(loop["ws"].result_path("bruno", A1))
    for line in r.details:
        assert line in loop["rows"][("bruno", A1)]["details"]
        assert line in page(loop, "bruno", A1).replace("&#39;", "'").replace("&quot;", '"')


@needs_bwrap
def test_syntax_error_is_said_plainly(loop):
    assert "sintaxe" in loop["rows"][("bruno", A1)]["details"].lower()


@needs_bwrap
def test_feedback_page_is_one_file_with_math_rendered_offline(loop, browser):
    """A página aberta sozinha (copiada para outra pasta), sem rede e sem outros arquivos."""
    alone = loop["base"] / "sozinha" / "retorno.html"
    alone.parent.mkdir()
    shutil.copy(loop["ws"].feedback("ana", A1) / f"{A1}.html", alone)
    html = alone.read_text(encoding="utf-8")
    assert cenarios.SECRET not in html and "_mathjax" not in html and 'src="http' not in html
    from browser_util import open_alone
    n, raw, asked = open_alone(browser, alone)
    assert n >= 2 and raw == 0, (n, raw)
    assert asked == []


@needs_bwrap
def test_a_page_with_hidden_tests_is_refused_and_nbgrader_feedback_is_flagged(loop, tmp_path):
    """Se o texto de um teste oculto chegasse à página, ela não seria publicada; e o
    "Generate Feedback" do formgrader (pasta feedback/) com testes ocultos gera um aviso."""
    ws = tmp_path / "ws"
    shutil.copytree(loop["ws"].root, ws, symlinks=True)
    nb_path = ws / "autograded" / "carla" / A2 / f"{A2}.ipynb"
    nb = nbformat.read(nb_path, as_version=4)
    secret_line = next(line.strip() for c in nbformat.read(ws / "source" / A2 / f"{A2}.ipynb", as_version=4).cells
                       for line in c.source.splitlines() if cenarios.SECRET in line and "conferir" in line)
    setup = next(c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("locked")
                 and not c.metadata["nbgrader"].get("grade"))      # uma célula travada que não é teste
    setup.outputs.append(nbformat.v4.new_output("stream", name="stdout", text=f"vazou: {secret_line}\n"))
    nbformat.write(nb, nb_path)
    nbg = ws / "feedback" / "carla" / A2
    nbg.mkdir(parents=True)
    (nbg / f"{A2}.html").write_text(f"<pre>{secret_line}</pre>", encoding="utf-8")
    p = run_cli("feedback", "--workspace", ws, check=False)
    assert p.returncode == 1, p.stderr
    assert f"RECUSADO: carla/{A2}/{A2}" in p.stderr and "não foi gravada" in p.stderr
    assert "não as publique" in p.stderr
    assert not (ws / "retornos" / "carla" / A2 / f"{A2}.html").exists()


@needs_bwrap
def test_regrading_old_result_versions(loop, tmp_path):
    """Um resultado gravado por outra versão do contrato conta como "não corrigido"."""
    from autograder.store.result_files import read_result
    p = loop["ws"].result_path("ana", A1)
    data = json.loads(p.read_text(encoding="utf-8"))
    old = tmp_path / "velho.json"
    old.write_text(json.dumps({**data, "version": "1"}), encoding="utf-8")
    assert read_result(old) is None and read_result(p) is not None


@needs_bwrap
def test_grading_again_regrades_nothing_and_keeps_manual_work(loop):
    p = run_cli("grade", loop["base"] / "entregas", "--workspace", loop["ws"].root, "--solutions", loop["sol"],
                "--jobs", "2", *LIMITS)
    assert "6 de 6 entregas já corrigidas" in p.stderr and "corrigindo" not in p.stderr, p.stderr
    rows = {(r["student_id"], r["assignment"]): r for r in read_rows(loop["ws"].root / "grades.csv", ";")}
    assert rows[("ana", A1)]["score"] == "6" and rows[("carla", A1)]["late_minutes"] == "131"


@needs_bwrap
def test_late_policy_changed_later_reaches_csv_report_and_page(loop, tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(loop["ws"].root, ws, symlinks=True)
    run_cli("deadlines", "--workspace", ws, "--penalty-per-day", "10", "--grace", "5")
    run_cli("report", "--workspace", ws)
    run_cli("feedback", "--workspace", ws)
    rows = {(r["student_id"], r["assignment"]): r for r in read_rows(ws / "grades.csv", ";")}
    carla = rows[("carla", A1)]             # 131 min: 1 dia começado, 10% de 6 pontos
    assert (carla["auto_score"], carla["penalty"], carla["score"]) == ("5", "0,6", "4,4")
    assert rows[("ana", A1)]["penalty"] == "0"
    html = (ws / "retornos" / "carla" / A1 / f"{A1}.html").read_text(encoding="utf-8")
    assert "Multa por atraso: 0,6 ponto(s)" in html and "Nota: 4,4 de 6 pontos" in html
    assert "multa de 10% da nota máxima por dia de atraso" in (ws / "relatorio" / "index.html").read_text(encoding="utf-8")
