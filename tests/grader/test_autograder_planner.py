"""O planejador e os leitores do corretor (issue 23), sem kernel nenhum.

Cenários da revisão de segurança (C5, H4, H5, M1, M2) e da revisão do professor
(seção 3): uma coleta que nenhum aluno dirige, exportações que o Moodle e o
Canvas aceitam como estão, retornos seguros para mandar, e uma linha de comando
numa língua só. Cada teste falha no código de antes da issue 23.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from autograder import submissions
from autograder.submissions import collect

SP = ZoneInfo("America/Sao_Paulo")
A1, A2 = "01-pontuacoes", "10-softmax-online"
COURSE = {A1: [A1], A2: [A2]}
NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def _zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as f:
        for name, data in entries.items():
            f.writestr(name, data)
    return path


def _by_student(subs):
    return {s.student: s for s in subs}


# ----------------------------------------------------------------------------- coleta (C5, H4, H5)

def test_folders_inside_a_moodle_submission_never_name_another_student(tmp_path):
    """C5: pastas `Pedro Alves_333/<tarefa>/…` dentro da entrega da Maria continuam sendo da Maria."""
    z = _zip(tmp_path / "m.zip", {
        f"Joao Souza_222_assignsubmission_file_/{A1}.ipynb": NB,
        f"Maria Silva_111_assignsubmission_file_/Pedro Alves_333/{A1}/{A1}.ipynb": b"pedro",
        f"Maria Silva_111_assignsubmission_file_/Joao-Souza_222/{A1}/{A1}.ipynb": b"vazio",
        f"Maria Silva_111_assignsubmission_file_/{A1}.ipynb": NB,
    })
    subs = _by_student(collect(z, COURSE, SP, only=A1)[0])
    assert sorted(subs) == ["Joao-Souza_222", "Maria-Silva_111"]
    assert subs["Joao-Souza_222"].files == {f"{A1}.ipynb": NB}          # o Joao de verdade fica com o id
    maria = subs["Maria-Silva_111"]
    assert maria.participant == "111" and maria.name == "Maria Silva"
    assert set(maria.files) == {f"{A1}.ipynb", f"Pedro Alves_333/{A1}/{A1}.ipynb",
                                f"Joao-Souza_222/{A1}/{A1}.ipynb"}


def test_nested_assignment_folder_stays_with_the_outer_student(tmp_path):
    """Numa pasta `<aluno>/<tarefa>/`, uma `<outro>/<tarefa>/` de dentro é do aluno de fora."""
    z = _zip(tmp_path / "f.zip", {f"turma/ana/{A1}/{A1}.ipynb": NB,
                                  f"turma/ana/{A1}/bruno/{A1}/{A1}.ipynb": b"x"})
    subs = _by_student(collect(z, COURSE, SP)[0])
    assert sorted(subs) == ["ana"]
    assert set(subs["ana"].files) == {f"{A1}.ipynb", f"bruno/{A1}/{A1}.ipynb"}


def test_id_collision_marks_the_rows_and_never_aborts(tmp_path):
    """H4: `Ana_7/<tarefa>/…` ao lado da aluna do Moodle Ana (participante 7): os dois ficam,
    com ids diferentes, e as duas linhas dizem por quê."""
    z = _zip(tmp_path / "m.zip", {
        f"Ana_7_assignsubmission_file_/{A1}.ipynb": NB,
        f"Ana_7/{A1}/{A1}.ipynb": b"outro",
    })
    subs = _by_student(collect(z, COURSE, SP, only=A1)[0])
    assert len(subs) == 2 and "Ana_7" in subs
    assert subs["Ana_7"].participant == "7"                  # quem tem participante fica com o id
    other = next(s for k, s in subs.items() if k != "Ana_7")
    assert other.student.startswith("Ana_7-") and other.participant is None
    for s in subs.values():
        assert any("id repetido" in n for n in s.notes), s.notes


def test_moodle_zip_without_assignment_grades_what_the_notebook_names_say(tmp_path):
    """H5: sem --assignment nem prazo, `…_assignsubmission_file_/10-softmax-online.ipynb` é da 10."""
    z = _zip(tmp_path / "m.zip", {
        f"Maria Silva_101_assignsubmission_file_/{A2}.ipynb": NB,
        f"Joao Souza_222_assignsubmission_file_/{A1}/{A1}.ipynb": NB,
    })
    subs = {(s.student, s.assignment): s for s in collect(z, COURSE, SP)[0]}
    assert subs[("Maria-Silva_101", A2)].files == {f"{A2}.ipynb": NB}
    assert subs[("Joao-Souza_222", A1)].files == {f"{A1}.ipynb": NB}


def test_moodle_zip_with_unnamed_notebooks_is_undecided_not_dropped(tmp_path):
    """H5: um notebook que não diz a tarefa fica em `undecided` (o comando para antes de corrigir)."""
    z = _zip(tmp_path / "m.zip", {f"Maria Silva_202_assignsubmission_file_/meu caderno (1).ipynb": NB})
    got = submissions.gather(z, COURSE, SP)
    assert got.undecided == [f"m.zip:Maria Silva_202_assignsubmission_file_/meu caderno (1).ipynb"]


def test_flat_moodle_zip_keeps_the_participant_number(tmp_path):
    """Zip do Moodle baixado sem pastas: `Nome_101_assignsubmission_file_arquivo.ipynb`."""
    z = _zip(tmp_path / "m.zip", {
        f"Maria Silva_101_assignsubmission_file_{A2}.ipynb": NB,
        "Maria Silva_202_assignsubmission_file_meu caderno (1).ipynb": NB,
    })
    subs = _by_student(collect(z, COURSE, SP, only=A2)[0])
    assert sorted(subs) == ["Maria-Silva_101", "Maria-Silva_202"]
    assert subs["Maria-Silva_101"].files == {f"{A2}.ipynb": NB}
    assert subs["Maria-Silva_202"].files == {"meu caderno (1).ipynb": NB}
    assert (subs["Maria-Silva_202"].participant, subs["Maria-Silva_202"].name) == ("202", "Maria Silva")


def test_moodle_folder_pattern_is_written_once():
    root = Path(__file__).resolve().parents[2] / "autograder"
    hits = [p.name for p in root.glob("*.py") if "assignsubmission_" in p.read_text(encoding="utf-8")
            and "re.compile" in p.read_text(encoding="utf-8")
            and any("assignsubmission_" in line and "re.compile" in line
                    for line in p.read_text(encoding="utf-8").splitlines())]
    assert hits == ["submissions.py"]


# ----------------------------------------------------------------------------- exportações (M2, seção 3)

from datetime import datetime  # noqa: E402

from autograder.course import Workspace  # noqa: E402
from autograder.deadlines import Lateness  # noqa: E402
from autograder.exports import CsvFormat, write_exports  # noqa: E402
from autograder.report import QuestionRow, Row  # noqa: E402
from autograder.results import JobResult, NotebookResult, QuestionResult, Status  # noqa: E402

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
    (ws.state / "identidades.json").write_text(json.dumps({
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
    from autograder.tables import safe_cell
    assert [safe_cell(x) for x in ["-3", "2,5", "-", "+1 ponto", "@x", "\tx", "-1+2", "ok"]] == \
        ["-3", "2,5", "-", "'+1 ponto", "'@x", "'\tx", "'-1+2", "ok"]


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


# ----------------------------------------------------------------------------- retornos (M1, seção 3)

from html.parser import HTMLParser  # noqa: E402

import nbformat  # noqa: E402

ATTACK = ('<script>steal()</script><img src=x onerror="alert(1)">'
          '<img src="https://evil.example/t.png"><a href="javascript:alert(3)">clique</a>'
          '<iframe src="https://evil.example/"></iframe><b onmouseover="alert(4)">negrito</b>')


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False if tag == "script" else self._in_script

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def _cell(kind, source, **nbg):
    c = nbformat.v4.new_markdown_cell(source) if kind == "md" else nbformat.v4.new_code_cell(source)
    if nbg:
        c.metadata["nbgrader"] = {"schema_version": 3, "locked": False, "solution": False, "grade": False,
                                  "task": False, **nbg}
    return c


def _notebooks(answer: str, html_out: str):
    course = "# Tarefa do curso\n\nO curso pode usar <b>HTML</b> e $x^2$."
    release = nbformat.v4.new_notebook(cells=[
        _cell("md", course, grade_id="intro", locked=True),
        _cell("md", "Explique.", grade_id="explique", solution=True, grade=True, points=5),
        _cell("code", "def f(x):\n    return x", grade_id="f", solution=True)])
    graded = nbformat.from_dict(json.loads(nbformat.writes(release)))
    graded.cells[1].source = answer
    graded.cells[2].outputs = [nbformat.v4.new_output(
        "display_data", data={"text/html": html_out, "text/plain": "x"})]
    graded.cells.append(_cell("md", "Minha célula: " + ATTACK))        # célula que o aluno criou
    return release, graded


def _feedback_ws(tmp_path, student, a, names_nbs):
    ws = Workspace(tmp_path / "fb")
    for name in names_nbs:
        release, graded = _notebooks("Resposta: " + ATTACK, ATTACK)
        for folder, nb in [(ws.release(a), release), (ws.source(a), release), (ws.autograded(student, a), graded)]:
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, folder / f"{name}.ipynb")
    return ws


def _two_notebook_row(student, a):
    qs = [QuestionResult("explique", "written", 5.0, s) for s in (4.0, 5.0)]
    res = JobResult(student, a, "k", None, [NotebookResult("nb1", questions=[qs[0]]),
                                            NotebookResult("nb2", questions=[qs[1]])])
    late = Lateness(2056, True, 2, 2.0)
    return Row(res, 9.0, 7.0, 0.0, late, None,
               [QuestionRow("nb1", qs[0], 4.0), QuestionRow("nb2", qs[1], 5.0)], [])


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    from autograder.feedback import generate_feedback
    a, student = "tarefa-dupla", "Jose-Fabio"
    ws = _feedback_ws(tmp_path_factory.mktemp("fb"), student, a, ["nb1", "nb2"])
    written, _, refused = generate_feedback(ws, [_two_notebook_row(student, a)], {student: "José Fábio"})
    assert (written, refused) == (2, [])
    return {n: (ws.feedback(student, a) / f"{n}.html").read_text(encoding="utf-8") for n in ("nb1", "nb2")}


def test_student_html_never_runs_in_the_feedback_page(pages):
    """M1: nem <script>, nem on*, nem recurso remoto, nem javascript: vindo de uma célula do aluno."""
    for page in pages.values():
        p = _Tags()
        p.feed(page)
        assert not any("steal()" in s or "alert(1)" in s for s in p.scripts)
        assert "<script>steal()" not in page and 'onerror="alert' not in page
        for tag, attrs in p.tags:
            assert not [k for k in attrs if k.startswith("on")], (tag, attrs)
            for k in ("src", "href", "data"):
                v = (attrs.get(k) or "").strip().lower()
                assert not v.startswith("javascript:"), (tag, attrs)
                if tag in ("img", "iframe", "script", "link", "video", "audio", "source", "object", "embed"):
                    assert not v.startswith(("http:", "https:", "//")), (tag, attrs)
        assert "<b>HTML</b>" in page and "<h1" in page        # o texto do curso continua formatado
        assert "<p>Resposta: " in page and "<b>negrito</b>" in page    # e o do aluno, filtrado


def test_feedback_names_the_student_and_takes_the_penalty_once(pages):
    nb1, nb2 = pages["nb1"], pages["nb2"]
    assert "José Fábio" in nb1 and "Jose-Fabio</b>" not in nb1
    assert "Nota: 4 de 5 pontos" in nb1 and "Nota: 5 de 5 pontos" in nb2     # sem a multa
    for page in (nb1, nb2):                       # a multa de 2 pontos, uma vez, na nota da tarefa
        assert "7 de 10 pontos" in page and "34 h 16 min" in page


def test_math_written_as_mathml_is_safe_and_small():
    """Com o latex2mathml, a fórmula vira MathML na hora de gravar (sem MathJax na página); o
    TeX do aluno não leva link javascript:, estilo nem script para a página."""
    pytest.importorskip("latex2mathml")
    from autograder.feedback import render_math
    out = render_math(r"<p>Seja $x^2$ e $$\sum_j e^{x_j}$$</p><code>$HOME</code>")
    assert out.count("<math") == 2 and 'display="block"' in out and "<code>$HOME</code>" in out
    evil = render_math(r"<p>$\href{javascript:alert(1)}{x}$ $\style{color:red}{y}$ "
                       r"$\text{&lt;script&gt;alert(2)&lt;/script&gt;}$</p>")
    assert "<math" in evil and "javascript" not in evil and "style=" not in evil and "<script" not in evil


# ----------------------------------------------------------------------------- estrutura e linha de comando

import ast  # noqa: E402

PKG = Path(__file__).resolve().parents[2] / "autograder"
PLANNER_AND_READERS = ["cli", "runner", "submissions", "exports", "report", "feedback", "gradebook",
                       "progress", "results", "deadlines", "store", "tables"]


def _imports(module: str) -> set[str]:
    """Os módulos do pacote que `module` importa (em qualquer lugar do arquivo, inclusive
    dentro de funções; os de `if TYPE_CHECKING:` não contam: não rodam)."""
    tree = ast.parse((PKG / f"{module}.py").read_text(encoding="utf-8"))
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
            and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            out |= {node.module.split(".")[0]} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograder."):
            out.add(node.module.split(".")[1])
    return {m for m in out if (PKG / f"{m}.py").exists()}


def _reach(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += sorted(_imports(m))
    return seen - {start}


def test_no_import_cycle_among_the_planner_and_the_readers():
    for m in PLANNER_AND_READERS:
        assert m not in _reach(m), f"{m} volta a si mesmo: {sorted(_reach(m))}"


def test_readers_never_reach_the_planner_or_the_worker():
    worker = {"runner", "tasks", "job", "executor", "sandbox", "wire", "harness_side", "student_stub",
              "submissions"}
    for m in ["report", "feedback", "exports", "tables", "gradebook", "store", "results"]:
        assert not _reach(m) & worker, (m, sorted(_reach(m) & worker))
    assert not _imports("cli") & {"executor", "sandbox"}, sorted(_imports("cli"))
    assert "submissions" not in _reach("deadlines")


def test_no_function_over_100_lines_in_the_planner_and_the_readers():
    long = []
    for m in PLANNER_AND_READERS:
        for node in ast.walk(ast.parse((PKG / f"{m}.py").read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > 100:
                    long.append(f"{m}.{node.name}: {n}")
    assert not long, long


def test_no_grader_module_over_600_lines_nor_function_over_100():
    """A regra da issue 22 para o trabalhador vale para o pacote inteiro do corretor."""
    long = []
    for path in sorted(PKG.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 600:
            long.append(f"{path.name}: {len(text.splitlines())} linhas")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > 100:
                    long.append(f"{path.stem}.{node.name}: {n}")
    assert len(list(PKG.glob("*.py"))) > 20 and not long, long


def test_one_number_formatter():
    """`num`, o atraso e o CSV só existem em tables.py."""
    for m in PLANNER_AND_READERS:
        tree = ast.parse((PKG / f"{m}.py").read_text(encoding="utf-8"))
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        if m != "tables":
            assert not names & {"num", "_num", "_pt", "fixed", "duration", "write_csv"}, (m, names)


def _parse(*argv):
    from autograder.cli import build_parser
    return build_parser().parse_args(list(argv))


def test_flags_are_english_and_the_portuguese_spellings_still_work():
    english = _parse("grade", "e/", "--workspace", "w", "--deadline", "a=2025-01-01 10:00", "--timezone",
                     "UTC", "--memory", "512", "--cpus", "0.5", "--max-processes", "9", "--disk", "64", "--pattern", "x",
                     "--cell-timeout", "3", "--notebook-timeout", "9", "--force", "--no-feedback",
                     "--no-report", "--no-progress", "--no-sandbox", "--solutions", "s")
    portuguese = _parse("grade", "e/", "--workspace", "w", "--prazo", "a=2025-01-01 10:00", "--fuso",
                        "UTC", "--memoria", "512", "--nucleos", "0,5", "--processos", "9", "--disco", "64", "--padrao", "x",
                        "--tempo-celula", "3", "--tempo-notebook", "9", "--refazer", "--sem-feedback",
                        "--sem-relatorio", "--sem-barra", "--sem-sandbox", "--solucoes", "s")
    assert vars(english) == vars(portuguese)
    assert english.cpus == 0.5 and _parse("grade", "e/", "--workspace", "w").cpus == 1.0
    from autograder.runner import grade_options
    assert grade_options(Path("e"), cell_timeout=1, notebook_timeout=1, memory_mib=64, nproc=4, disk_mib=8,
                         cpus=english.cpus).limits.cpus == 0.5
    assert english.memory == 512 and english.max_processes == 9 and english.deadline == ["a=2025-01-01 10:00"]
    both = _parse("grade", "e/", "--workspace", "w", "--deadline", "a=1", "--prazo", "b=2")
    assert both.deadline == ["a=1", "b=2"]
    d_en = _parse("deadlines", "--workspace", "w", "--grace", "15", "--penalty-per-day", "10",
                  "--zero-after", "7", "--remove", "x", "--timezone", "UTC")
    d_pt = _parse("deadlines", "--workspace", "w", "--tolerancia", "15", "--multa-por-dia", "10",
                  "--zero-apos", "7", "--remover", "x", "--fuso", "UTC")
    assert vars(d_en) == vars(d_pt)
    assert _parse("release", "--verificar").check and _parse("feedback", "--workspace", "w", "--refazer").force


def test_help_shows_only_the_english_flags_in_portuguese(capsys):
    with pytest.raises(SystemExit):
        _parse("grade", "--help")
    text = capsys.readouterr().out
    assert "--memory MIB" in text and "--deadline TAREFA=DATA" in text and "opções:" in text
    for old in ("--memoria", "--prazo", "--processos", "--disco", "--padrao", "--sem-sandbox", "--refazer"):
        assert old not in text, old


def test_grading_a_zip_whose_notebooks_do_not_say_the_assignment_stops_before_grading(tmp_path):
    """H5 no comando: sem --assignment nem prazo, um caderno que não diz a tarefa para tudo
    com um erro em português (antes de preparar ou corrigir qualquer coisa)."""
    from autograder.runner import GradeError, grade_options, run_grade
    sol = tmp_path / "solucoes"
    for a in COURSE:
        (sol / a).mkdir(parents=True)
        (sol / a / f"{a}.ipynb").write_bytes(NB)
    z = _zip(tmp_path / "m.zip", {f"Maria Silva_101_assignsubmission_file_/{A2}.ipynb": NB,
                                  "Maria Silva_202_assignsubmission_file_/meu caderno (1).ipynb": NB})
    ws = Workspace(tmp_path / "ws", sol)
    opts = grade_options(z, cell_timeout=1, notebook_timeout=1, memory_mib=64, nproc=4, disk_mib=8,
                         use_sandbox=False)
    with pytest.raises(GradeError, match=r"(?s)1 arquivo\(s\) de entrega sem tarefa conhecida.*meu caderno "
                                         r"\(1\)\.ipynb.*--assignment TAREFA.*Nada foi corrigido"):
        run_grade(ws, opts)
    assert not (ws.root / "release").exists()              # nada foi preparado
