"""O corretor do professor (`python -m autograder`), pelos cenários de uma turma.

A turma de fixtures (tests/support/cenarios.py) tem um aluno por
cenário: correto, errado, em branco, teste apagado, teste editado, allclose
trocado, conferir redefinido, tentativa de ler o gabarito, laço infinito,
laço que ignora SIGINT, os._exit, bomba de memória, JSON inválido, arquivo
fora do UTF-8, atrasado e sem notebook. Ela é corrigida UMA vez (fixture de
módulo, `--jobs 2`) e cada teste confere uma parte do resultado.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

import nbformat
import pytest

from autograder.core import nbmeta
from autograder.worker import integrity
from autograder.box import sandbox
from autograder.core.workspace import Workspace
from autograder.core.deadlines import load_deadlines
from autograder.collect import collect
from autograder.core.deadlines import parse_time

from grading import (HAS_BWRAP, LIMITS, ROOT, SLUG, WHY_NOT, cenarios, clone_prepared,  # noqa: F401
                     git_status, needs_bwrap, read_csv, run_cli)


# ----------------------------------------------------------------------------- cenários

# Os cenários que a turma do cluster de verdade também corrige: uma situação de cada (ok,
# adulterado, tempo, kernel morto, memória, inválido, atrasado, sem entrega). O caminho de
# correção no trabalhador é o mesmo para todos; o que o cluster muda é o transporte (TLS,
# arquivo do agendador, trabalhadores de outro processo), e a turma inteira lá custava minutos.
CLUSTER = ["correct", "wrong", "deleted-test", "infinite-loop", "os-exit", "memory-bomb", "invalid-json",
           "late", "missing"]


@needs_bwrap
@pytest.mark.parametrize("mode,scenario", [("turma", s) for s in sorted(cenarios.EXPECTED)]
                         + [("turma_cluster", s) for s in CLUSTER])
def test_each_scenario_gets_its_score_and_status(request, mode, scenario):
    """Cada cenário, corrigido no LocalCluster (`turma`); os de CLUSTER também num cluster Dask
    de verdade."""
    score, status = cenarios.EXPECTED[scenario]
    row = request.getfixturevalue(mode)["grades"][scenario]
    assert (float(row["score"]), row["status"]) == (score, status), row
    assert float(row["max_score"]) == 6.0   # 5 automáticos + 1 da resposta escrita


@needs_bwrap
def test_one_row_per_student_and_every_other_grade_kept(turma):
    assert sorted(turma["grades"]) == sorted(turma["students"])
    assert all(r["assignment"] == SLUG for r in turma["grades"].values())


@needs_bwrap
def test_correct_answer_leaves_only_the_written_answer_for_manual_grading(turma):
    assert turma["grades"]["correct"]["needs_manual_grade"] == "1"
    # em branco: a resposta escrita não mudou, o nbgrader já dá zero (nada a corrigir)
    assert turma["grades"]["blank"]["needs_manual_grade"] == "0"


@needs_bwrap
def test_details_explain_each_problem_in_portuguese(turma):
    d = {k: v["details"] for k, v in turma["grades"].items()}
    assert "test_dobro' apagada" in d["deleted-test"]
    assert "test_dobro' editada" in d["edited-test"] and "points" in d["edited-test"]
    assert "não atendeu à interrupção" in d["sigint-ignoring"]
    assert "kernel morreu" in d["os-exit"]
    assert "memória esgotada" in d["memory-bomb"]
    assert "JSON inválido" in d["invalid-json"]
    assert "o limite por célula é 100.000" in d["huge-code"]
    assert "expressões aninhadas demais" in d["deep-nesting"]
    assert "fora do protocolo do Jupyter (canal iopub: RecursionError)" in d["undecodable-message"]
    assert "UTF-8" in d["non-utf8"]
    assert "não foi entregue" in d["missing"]


@needs_bwrap
def test_late_is_judged_in_the_deadline_time_zone(turma):
    late, on_time = turma["grades"]["late"], turma["grades"]["correct"]
    # 00:29 em São Paulo é 30 min depois de 23:59 (lido como UTC, estaria no prazo)
    assert (late["late"], late["late_minutes"]) == ("true", "30")
    assert late["submitted_at"] == "2025-03-11T00:29:00-03:00"
    assert (on_time["late"], on_time["late_minutes"]) == ("false", "0")
    assert turma["grades"]["wrong"]["late"] == ""      # sem horário de entrega: não se sabe


@needs_bwrap
def test_student_plots_are_captured_inline(turma):
    nb = nbformat.read(turma["ws"].autograded("correct", SLUG) / f"{SLUG}.ipynb", as_version=4)
    kinds = [o.output_type for c in nb.cells if c.cell_type == "code" for o in c.outputs
             if "image/png" in o.get("data", {})]
    assert kinds == ["display_data"]


@needs_bwrap
def test_output_flood_is_cut_and_the_notebook_stays_small(turma):
    path = turma["ws"].autograded("print-flood", SLUG) / f"{SLUG}.ipynb"
    assert path.stat().st_size < 8 * 1024 * 1024      # 10 MB impressos por teste visível e oculto
    assert "saída cortada pelo corretor" in path.read_text(encoding="utf-8")


@needs_bwrap
def test_questions_csv_has_visible_and_hidden_results(turma):
    with open(turma["ws"].root / "questions.csv", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f)]
    by = {(r["student_id"], r["grade_id"]): r for r in rows}
    assert len(rows) == 3 * len(turma["students"])
    assert by[("correct", "test_dobro")]["hidden_tests"] == "passed"
    assert by[("wrong", "test_dobro")]["visible_tests"] == "failed"
    assert by[("correct", "explique")]["needs_manual_grade"] == "true"


# ----------------------------------------------------------------------------- sandbox

@needs_bwrap
def test_sandbox_hides_solutions_gradebook_other_students_and_network(turma):
    nb = nbformat.read(turma["ws"].autograded("reads-solutions", SLUG) / f"{SLUG}.ipynb", as_version=4)
    out = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert out.count("bloqueado: FileNotFoundError") == 4, out   # gabarito, gradebook, colega, pasta
    assert "rede bloqueada" in out
    # só os próprios processos (não o kernel pré-aquecido do próximo aluno), só a própria pasta
    # em /tmp, sem capacidades; como root, o corretor roda o aluno como nobody
    import re
    assert int(re.search(r"processos visíveis: (\d+)", out)[1]) <= 3, out
    # além da própria pasta, só os caminhos até um Python que mora em /tmp (um clone do
    # repositório em /tmp, como no CI), montados só leitura: o resto do clone não aparece
    python_in_tmp = {p.split("/")[2] for p in sandbox._python_roots(sys.executable) if p.startswith("/tmp/")}
    assert len(set(eval(re.search(r"/tmp: (\[.*\])", out)[1])) - python_in_tmp) == 1, out
    assert "capacidades: 0000000000000000" in out
    assert "subprocesso: ok" in out                 # o aluno ainda pode rodar programas
    if os.geteuid() == 0:
        assert f"uid: {sandbox.NOBODY}" in out


@needs_bwrap
def test_reading_the_solutions_works_without_sandbox(turma, tmp_path):
    """O mesmo notebook, sem sandbox, lê o gabarito: é a sandbox que o impede."""
    one = tmp_path / "entregas"
    import shutil          # cópia, não link: links em entregas nunca são seguidos
    shutil.copytree(turma["subs"] / "reads-solutions" / SLUG, one / "reads-solutions" / SLUG)
    ws = clone_prepared(turma["ws"], tmp_path / "ws")
    # sem sandbox, a memória vira só RLIMIT_AS por processo, e o kernel do corretor importa torch
    # e matplotlib sob o limite (na sandbox, o molde já os importou): com 1.024 MiB, a preparação
    # ali dá MemoryError às vezes (visto em 2026-12-05); 2.048 MiB é o padrão do corretor
    p = run_cli("grade", one, "--workspace", ws, "--solutions", turma["sol"],
                "--no-sandbox", "--no-feedback", "--no-report", *LIMITS, "--memory", "2048")
    assert "SEM sandbox" in p.stderr
    row = read_csv(tmp_path / "ws" / "grades.csv")["reads-solutions"]
    assert float(row["score"]) == 2.0, row          # dobro passou: leu o gabarito


def test_refuses_to_grade_without_bubblewrap_unless_told(arquivos, tmp_path, monkeypatch):
    from autograder.plan.runner import GradeError, GradeOptions, run_grade
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    ws = Workspace(tmp_path / "ws", arquivos["sol"])
    with pytest.raises(GradeError, match="bubblewrap.*--no-sandbox"):
        run_grade(ws, GradeOptions(submissions=arquivos["subs"]))
    assert not (tmp_path / "ws" / "grades.csv").exists()


def test_workspace_inside_the_repository_is_refused(arquivos):
    p = run_cli("grade", arquivos["subs"], "--workspace", ROOT / "tmp-notas", "--solutions", arquivos["sol"],
                check=False)
    assert p.returncode == 2 and "fora do repositório" in p.stderr
    assert not (ROOT / "tmp-notas").exists()


@needs_bwrap
def test_nothing_is_written_into_the_repository(turma):
    assert git_status() == turma["git_before"]


# ----------------------------------------------------------------------------- entrada

def _nb_bytes(release, answers):
    return nbformat.writes(cenarios._solve(release, answers)).encode()


def test_lms_zip_names_students_and_reads_naive_times_in_the_deadline_zone(arquivos, tmp_path):
    release = arquivos["ws"].info(SLUG, "x").release[SLUG]
    z = tmp_path / "turma.zip"
    data = _nb_bytes(release, cenarios.CORRECT)
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("alice.ipynb", data)
        f.writestr(f"José da Silva_123456_assignsubmission_file_/{SLUG}.ipynb", data)
        f.writestr(f"{SLUG}_bia_attempt_2025-03-11-00-29-00_{SLUG}.ipynb", data)
        f.writestr(f"carla/{SLUG}/{SLUG}.ipynb", data)
        f.writestr(f"carla/{SLUG}/timestamp.txt", "2025-03-11 02:30:00.000000 UTC")
        f.writestr("../../fora.ipynb", data)           # nome malicioso: não sai da pasta
        f.writestr("__MACOSX/._alice.ipynb", b"lixo")
    tz = ZoneInfo("America/Sao_Paulo")
    subs, warns = collect(z, {SLUG: [SLUG]}, tz, only=SLUG)
    got = {s.student: s for s in subs}
    # o número de participante do Moodle fica no id (dois "José da Silva" não se juntam)
    assert sorted(got) == ["Jose-da-Silva_123456", "alice", "bia", "carla", "fora"]
    assert got["Jose-da-Silva_123456"].participant == "123456"
    assert all(list(s.files) == [f"{SLUG}.ipynb"] for s in subs)
    assert got["bia"].timestamp == parse_time("2025-03-11 00:29", tz)
    assert got["carla"].timestamp.astimezone(tz).strftime("%H:%M") == "23:30"
    dl = load_deadlines(tmp_path, [f"{SLUG}={cenarios.DEADLINE}"])
    assert dl.late_minutes(SLUG, got["bia"].timestamp) == 30
    assert dl.late_minutes(SLUG, got["carla"].timestamp) == 0


def test_time_parsing_keeps_explicit_zones_and_defaults_to_the_course_zone():
    sp = ZoneInfo("America/Sao_Paulo")
    assert parse_time("2025-03-10 23:59", sp).utcoffset().total_seconds() == -3 * 3600
    assert parse_time("2025-03-11T02:59:00Z", sp) == parse_time("2025-03-10 23:59", sp)
    assert parse_time("2025-03-10 23:59:00-03:00", sp) == parse_time("2025-03-11 02:59 UTC", sp)
    with pytest.raises(ValueError, match="horário inválido"):
        parse_time("ontem", sp)
    with pytest.raises(ValueError, match="TAREFA=DATA"):
        load_deadlines(Path("/nonexistent"), ["sem-igual"])
    with pytest.raises(ValueError, match="fuso horário desconhecido"):
        load_deadlines(Path("/nonexistent"), [], "Marte/Olympus")


# ----------------------------------------------------------------------------- integridade

def _nb(*cells):
    out = []
    for src, locked in cells:
        c = nbformat.v4.new_code_cell(src)
        if locked:
            c.metadata["nbgrader"] = {"grade_id": f"g{len(out)}", "locked": True, "grade": False,
                                      "solution": False, "schema_version": 3}
        out.append(c)
    return nbformat.v4.new_notebook(cells=out)


def test_restoring_puts_a_deleted_test_back_in_place(arquivos):
    release = arquivos["ws"].info(SLUG, "x").release[SLUG]
    nb = cenarios._solve(release, cenarios.CORRECT)
    ids = [nbmeta.grade_id(c) for c in nb.cells]
    nb.cells = [c for c in nb.cells if nbmeta.grade_id(c) != "test_dobro"]
    fixed, issues = integrity.restore_locked_cells(nb, release)
    assert [nbmeta.grade_id(c) for c in fixed.cells] == ids
    assert [i.kind for i in issues] == ["tampered"]


def test_modules_imported_after_an_environment_change_are_not_preimported():
    """TRITON_INTERPRET=1 antes de `import triton`: importar o triton antes quebraria o notebook."""
    from autograder.worker.notebook import warm_modules
    nb = _nb(("import os\nimport numpy as np\nif True:\n    os.environ['TRITON_INTERPRET'] = '1'\n"
              "import triton", True), ("import torch", True))
    assert warm_modules(nb) == ["numpy"]              # e só numpy/torch: os baratos não valem o risco
    assert warm_modules(nb, unsafe=True) == ["triton", "torch"]
    assert warm_modules(_nb(("import numpy\nfrom torch import nn\nimport matplotlib.pyplot", True))) \
        == ["numpy", "torch"]


def test_hidden_tests_split_into_visible_and_hidden_parts():
    from autograder.worker.cellcode import split_hidden
    src = "a = 1\n### BEGIN HIDDEN TESTS\nb = 2\n### END HIDDEN TESTS\nc = 3\n"
    assert [(h, t.strip().splitlines()[-1]) for h, t in split_hidden(src)] == [
        (False, "a = 1"), (True, "### END HIDDEN TESTS"), (False, "c = 3")]


# ----------------------------------------------------------------------------- feedback e relatório

def feedback_html(turma, student) -> str:
    return (turma["ws"].feedback(student, SLUG) / f"{SLUG}.html").read_text(encoding="utf-8")


@needs_bwrap
def test_feedback_never_shows_hidden_tests(turma):
    from autograder.readers.feedback import mathjax_inline
    pages = sorted((turma["ws"].root / "retornos").rglob("*.html"))
    assert len(pages) == len(turma["students"])
    mathjax = mathjax_inline()          # o MathJax dentro da página tem "-1.5" (\\mkern-1.5mu)
    for page in pages:
        text = page.read_text(encoding="utf-8").replace(mathjax, "")
        assert cenarios.SECRET not in text, page
        assert "HIDDEN TESTS" not in text and "-1.5" not in text, page


@needs_bwrap
def test_feedback_shows_visible_results_scores_and_hidden_pass_fail(turma):
    wrong, right = feedback_html(turma, "wrong"), feedback_html(turma, "correct")
    assert "dobro: valores diferentes em 2 de 3 posições" in wrong      # teste visível, em português
    assert "Testes ocultos: não rodaram" in wrong
    assert "Testes ocultos: passaram" in right and "Nota: 5 de 6 pontos" in right
    assert "aguardando correção manual" in right                          # a resposta escrita
    assert "Entregue no prazo" in right
    assert "Entregue com atraso de 30 min" in feedback_html(turma, "late")


@needs_bwrap
def test_feedback_explains_problems_without_revealing_the_flags(turma):
    assert "JSON inválido" in feedback_html(turma, "invalid-json")
    assert "não foi entregue" in feedback_html(turma, "missing")
    assert "apagada (restaurada)" in feedback_html(turma, "deleted-test")
    # um notebook flagged (o observador enganado) está em tests/grader_e2e/wire/test_attacks.py


@needs_bwrap
def test_feedback_renders_math_without_internet(turma, browser):
    """O enunciado tem LaTeX: o MathJax vai dentro da página, que, aberta no Chromium
    sem rede nenhuma e sem outro arquivo, mostra a fórmula renderizada."""
    page = turma["ws"].feedback("correct", SLUG) / f"{SLUG}.html"
    html = page.read_text(encoding="utf-8")
    assert "_mathjax" not in html and "cdnjs.cloudflare.com/ajax/libs/mathjax" not in html
    from browser_util import open_alone
    n, raw, outside = open_alone(browser, page)
    assert n >= 2 and raw == 0, (n, raw)
    assert outside == [], f"o feedback pediu outros endereços: {outside}"


@needs_bwrap
def test_report_has_plots_and_lists_every_row_needing_attention(turma):
    page = (turma["ws"].root / "relatorio" / "index.html").read_text(encoding="utf-8")
    assert page.count('src="data:image/png;base64,') == 2
    assert 'alt="Histogramas das notas de cada tarefa"' in page
    # situações a revisar (não "não entregue"), o atrasado e as respostas escritas à espera
    rows = turma["grades"].values()
    attention = [r for r in rows if r["status"] not in ("ok", "missing") or r["late"] == "true"
                 or r["needs_manual_grade"] != "0" or (r["status"] == "ok" and r["details"])]
    assert f"Pedem atenção ({len(attention)})" in page
    for r in attention:
        assert f"<td>{r['student_id']}</td>" in page, r
    assert "<td>missing</td>" not in page


def test_report_command_without_grading_says_what_to_do(tmp_path):
    p = run_cli("report", "--workspace", tmp_path, check=False)
    assert p.returncode == 2 and "rode `python -m autograder grade` antes" in p.stderr


# ----------------------------------------------------------------------------- retomada e paralelo

@needs_bwrap
def test_grading_twice_gives_the_same_csv_without_regrading(turma):
    csv_before = (turma["ws"].root / "grades.csv").read_bytes()
    q_before = (turma["ws"].root / "questions.csv").read_bytes()
    p = run_cli("grade", turma["subs"], "--workspace", turma["ws"].root, "--solutions", turma["sol"],
                "--jobs", "2", *LIMITS)
    n = len(turma["students"])
    assert f"{n} de {n} entregas já corrigidas" in p.stderr
    assert "corrigindo" not in p.stderr and "(0 escrito(s)" in p.stderr   # feedback também em dia
    assert (turma["ws"].root / "grades.csv").read_bytes() == csv_before
    assert (turma["ws"].root / "questions.csv").read_bytes() == q_before


@needs_bwrap
def test_changing_a_submission_regrades_only_that_student(turma, tmp_path):
    import shutil
    ws = clone_prepared(turma["ws"], tmp_path / "ws")
    subs = tmp_path / "entregas"
    for s in ("correct", "wrong"):     # já corrigidos na turma: os resultados valem aqui
        shutil.copytree(turma["subs"] / s / SLUG, subs / s / SLUG)   # links não são seguidos
        dest = ws / ".autograder" / "results" / SLUG / f"{s}.json"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(turma["ws"].result_path(s, SLUG), dest)
    # "wrong" reenvia a resposta certa: só ele é corrigido de novo
    shutil.rmtree(subs / "wrong" / SLUG)
    shutil.copytree(turma["subs"] / "correct" / SLUG, subs / "wrong" / SLUG)
    p = run_cli("grade", subs, "--workspace", ws, "--solutions", turma["sol"], "--no-report", *LIMITS)
    assert "1 de 2 entregas já corrigidas" in p.stderr and "corrigindo 1 notebook(s)" in p.stderr
    rows = read_csv(ws / "grades.csv")
    assert rows["wrong"]["score"] == rows["correct"]["score"] == "5"


@needs_bwrap
def test_manual_grades_reach_the_csv_and_the_feedback(turma, tmp_path):
    """A resposta escrita, corrigida à mão no gradebook (o que o formgrader faz),
    entra na nota de `report` e no `feedback`, sem corrigir nada de novo."""
    import shutil

    from nbgrader.api import Gradebook
    ws = tmp_path / "ws"
    shutil.copytree(turma["ws"].root, ws, symlinks=True)
    before = read_csv(ws / "grades.csv")["correct"]
    assert before["score"] == "5" and before["needs_manual_grade"] == "1"
    with Gradebook(f"sqlite:///{ws / 'gradebook.db'}") as gb:
        g = gb.find_grade("explique", SLUG, SLUG, "correct")
        g.manual_score = 1.0
        gb.db.commit()
    run_cli("report", "--workspace", ws)
    after = read_csv(ws / "grades.csv")
    assert after["correct"]["score"] == "6" and after["correct"]["needs_manual_grade"] == "0"
    assert {k: v for k, v in after.items() if k != "correct"} == \
        {k: v for k, v in read_csv(turma["ws"].root / "grades.csv").items() if k != "correct"}
    p = run_cli("feedback", "--workspace", ws)
    assert "1 escrito(s)" in p.stderr + p.stdout
    html = (ws / "retornos" / "correct" / SLUG / f"{SLUG}.html").read_text(encoding="utf-8")
    assert "Nota: 6 de 6 pontos" in html and "aguardando correção manual" not in html


SERIAL = ["correct", "deleted-test", "patched-allclose", "os-exit", "reads-solutions"]


@pytest.fixture(scope="module")
def serial_resumed(turma, tmp_path_factory):
    """Parte da turma em série (--jobs 1), interrompida com Ctrl-C e retomada."""
    base = tmp_path_factory.mktemp("serial")
    ws = clone_prepared(turma["ws"], base / "ws")
    subs = base / "entregas"
    import shutil
    shutil.copy(turma["ws"].root / "prazos.toml", ws / "prazos.toml")   # os mesmos prazos da turma
    for s in SERIAL:       # cópia, não link: links em entregas nunca são seguidos
        shutil.copytree(turma["subs"] / s / SLUG, subs / s / SLUG)
    # em série: as notas têm de ser as mesmas da turma corrigida com 2 processos
    args = [sys.executable, "-m", "autograder", "grade", str(subs), "--workspace", str(ws),
            "--solutions", str(turma["sol"]), "--jobs", "1", "--no-feedback",
            "--no-report", *LIMITS]
    # SIGINT com o tratamento padrão no filho: um shell sem controle de jobs (`make test &`)
    # deixa o SIGINT ignorado nos comandos em segundo plano, e o Python herda isso
    proc = subprocess.Popen(args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    results = ws / ".autograder" / "results" / SLUG
    end = time.monotonic() + 120
    while time.monotonic() < end and len(list(results.glob("*.json"))) < 1:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err1 = proc.communicate(timeout=60)
    done_before = len(list(results.glob("*.json")))
    p = run_cli("grade", subs, "--workspace", ws, "--solutions", turma["sol"], "--jobs", "1",
                *LIMITS)
    return {"rc": proc.returncode, "err1": err1, "done_before": done_before, "err2": p.stderr,
            "grades": read_csv(ws / "grades.csv")}


@needs_bwrap
def test_interrupted_grading_resumes_without_regrading_finished_students(serial_resumed):
    r = serial_resumed
    assert r["rc"] == 130, r["err1"][-2000:]
    assert "rode o mesmo comando para continuar" in r["err1"]
    assert 1 <= r["done_before"] < len(SERIAL)
    assert f"{r['done_before']} de {len(SERIAL)} entregas já corrigidas" in r["err2"]
    assert f"corrigindo {len(SERIAL) - r['done_before']} notebook(s)" in r["err2"]
    assert sorted(r["grades"]) == sorted(SERIAL)


@needs_bwrap
def test_serial_and_parallel_give_the_same_rows(turma, serial_resumed):
    cols = ("score", "max_score", "status", "details", "needs_manual_grade")
    for s in SERIAL:
        assert {c: serial_resumed["grades"][s][c] for c in cols} == \
               {c: turma["grades"][s][c] for c in cols}, s


# ----------------------------------------------------------------------------- protocolo entre os kernels

def test_wire_rebuilds_plain_objects_and_refuses_what_is_not_data():
    """Os dados que vêm do aluno voltam como objetos comuns; o resto é recusado com motivo."""
    import numpy as np
    import torch

    from autograder.wire import codec as wire

    class Mentiroso(torch.Tensor):
        def __eq__(self, other):
            return True

    x = torch.arange(6.0).reshape(2, 3).as_subclass(Mentiroso)
    value = {"t": x, "a": np.arange(3, dtype=np.int16).view(type("Sub", (np.ndarray,), {})),
             "n": (1, 2.5, float("nan"), None, True, "ã"), "dt": torch.float16, "s": np.float32(1.5)}
    back = wire.decode(wire.loads(wire.dumps(wire.encode(value))))
    assert type(back["t"]) is torch.Tensor and torch.equal(back["t"], torch.arange(6.0).reshape(2, 3))
    assert type(back["a"]) is np.ndarray and back["a"].dtype == np.int16
    assert back["n"][:2] == (1, 2.5) and back["n"][2] != back["n"][2] and back["n"][3:] == (None, True, "ã")
    assert back["dt"] is torch.float16 and back["s"] == np.float32(1.5)
    with pytest.raises(wire.NotData, match="não pode ser enviado"):
        wire.encode(object())
    with pytest.raises(wire.NotData, match="limite"):
        wire.encode(np.zeros(wire.MAX_BYTES // 8 + 1))
    forged = {"t": "tensor", "dtype": "float32", "shape": [1000], "b64": "AAAA", "grad": False}
    with pytest.raises(wire.BadWire, match="bytes"):
        wire.decode(forged)
    with pytest.raises(wire.BadWire):
        wire.decode({"t": "pickle", "v": "..."})


def test_output_is_capped_per_cell_and_per_notebook():
    """100 células que imprimem 2 MiB cada: o notebook guarda ~1 MiB e um aviso por célula."""
    from autograder.worker.outputs import (MAX_CELL_OUTPUT, MAX_NOTEBOOK_OUTPUT, LimitedClient as _LimitedClient)
    client = _LimitedClient(nbformat.v4.new_notebook(), allow_errors=True).setup_limits(
        MAX_CELL_OUTPUT, MAX_NOTEBOOK_OUTPUT)
    cells = [nbformat.v4.new_code_cell("print('x' * 2**21)") for _ in range(100)]
    for c in cells:
        for _ in range(8):                                     # 8 pedaços de 256 KiB
            msg = {"msg_type": "stream", "parent_header": {}, "header": {"msg_type": "stream"},
                   "content": {"name": "stdout", "text": "x" * 2**18}}
            client.output(c.outputs, msg, None, 0)
    size = len(nbformat.writes(nbformat.v4.new_notebook(cells=cells)).encode())
    assert size < MAX_NOTEBOOK_OUTPUT + 100 * 1024, size
    notes = [o.text for c in cells for o in c.outputs if "saída cortada pelo corretor" in o.get("text", "")]
    assert len(notes) == 100 and "limite do notebook" in notes[-1]


def test_names_the_test_reads_and_student_definitions_come_from_the_notebook_text():
    import ast

    from autograder.worker.cellcode import bound_names, loaded_names, student_definitions, syntax_error
    test = ast.parse("x = torch.ones(3)\nconferir('f', f(x), g)\n")
    assert loaded_names(test) - bound_names(test) == {"torch", "conferir", "f", "g"}
    defs = student_definitions(["def f(x):\n    return x\n", "def g(x):\n    for i in x:\n        pass\n",
                                "def h():\n    pass\nh = print\n"])
    assert sorted(defs) == ["f", "g"] and "for i" in defs["g"]      # h religado: fonte não confiável
    assert student_definitions(["def f(x):\n    return x\n", "exec('def f(x): return 1')"]) == {}
    assert syntax_error("def f(:\n").startswith("(linha 1): ")
    from autograder.worker.cellcode import instructor_names
    names = instructor_names("x = torch.ones(3)\nconferir('f', f(x), g)\n")
    assert names.bound == {"x"} and names.loaded == {"torch", "conferir", "f", "g", "x"}
    assert instructor_names("def f(:\n") is None


def test_nbgrader_metadata_check_keeps_only_what_passed():
    """O CheckCellMetadata do corretor guarda as validações que passaram (job._check_cell_metadata):
    metadados quebrados falham sempre, e os mesmos metadados num tipo de célula que o nbgrader
    recusa também."""
    import copy

    from nbgrader.nbgraderformat import ValidationError

    from autograder.worker.notebook import _check_cell_metadata

    def cell(kind, **meta):
        c = (nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell)("x = 1")
        c.metadata["nbgrader"] = {"schema_version": 3, "grade": False, "solution": False, "locked": False,
                                  "grade_id": "c1", **meta}
        return c

    check = _check_cell_metadata()
    good = nbformat.v4.new_notebook(cells=[cell("code", grade=True, points=2, locked=True)])
    for _ in range(2):
        assert check().preprocess(copy.deepcopy(good), {})[0] is not None
    # nota sem pontos: o nbgrader recusa, da primeira vez e das seguintes
    broken = nbformat.v4.new_notebook(cells=[cell("code", grade=True, locked=True)])
    for _ in range(2):
        with pytest.raises(ValidationError):
            check().preprocess(copy.deepcopy(broken), {})
    # os metadados que passaram numa célula de código não passam numa de texto (nota sem solução)
    md = nbformat.v4.new_notebook(cells=[cell("markdown", grade=True, points=2, locked=True)])
    with pytest.raises(ValidationError):
        check().preprocess(md, {})
    # grade_id repetido: a checagem do notebook inteiro continua
    twice = nbformat.v4.new_notebook(cells=[cell("code", grade=True, points=2, locked=True) for _ in range(2)])
    with pytest.raises(ValidationError):
        check().preprocess(twice, {})


# ----------------------------------------------------------------------------- Dask: um cluster de verdade

from dask_cluster import DaskCluster  # noqa: E402 - os comandos do README (tests/support)


@pytest.fixture(scope="module")
def turma_cluster(turma, tmp_path_factory):
    """Os alunos de CLUSTER, corrigidos por `--scheduler` num agendador e dois trabalhadores de
    verdade (dado pelo arquivo do agendador, o jeito do Slurm; os outros testes usam o endereço)."""
    import shutil
    base = tmp_path_factory.mktemp("cluster")
    ws = clone_prepared(turma["ws"], base / "ws")
    shutil.copy(turma["ws"].root / "prazos.toml", ws / "prazos.toml")
    subs = base / "entregas"
    for s in CLUSTER:
        if (turma["subs"] / s).exists():        # `missing` entrega só um arquivo fora da tarefa
            shutil.copytree(turma["subs"] / s, subs / s)
    cluster = DaskCluster(2)
    try:
        p = run_cli("grade", subs, "--workspace", ws, "--solutions", turma["sol"],
                    *cluster.scheduler_args(), *LIMITS)
        with cluster.client() as c:             # nada ficou nos trabalhadores: kernels e pastas soltos
            leftovers = c.run(lambda: __import__("autograder.worker.tasks").worker.tasks._current is not None)
    finally:
        cluster.close()
    return {"ws": ws, "stderr": p.stderr, "grades": read_csv(ws / "grades.csv"), "leftovers": leftovers}


@needs_bwrap
def test_cluster_and_local_runs_write_identical_csvs(turma, turma_cluster):
    assert "com o Dask (tls://127.0.0.1:" in turma_cluster["stderr"]
    assert "com o Dask (2 processo(s) nesta máquina)" in turma["stderr"]
    for name in ("grades.csv", "questions.csv"):
        local = (turma["ws"].root / name).read_text(encoding="utf-8").splitlines(keepends=True)
        header, rows = local[0], [ln for ln in local[1:] if ln.split(",", 1)[0] in CLUSTER]
        assert (turma_cluster["ws"] / name).read_text(encoding="utf-8") == header + "".join(rows), name
    assert not any(turma_cluster["leftovers"].values()), turma_cluster["leftovers"]


# Nos trabalhadores: a correção do aluno `correct` derruba o processo (como uma máquina sem memória).
_FAULT = """
import os, autograder.worker.tasks as t
_grade = t.grade
def grade(course, task):
    if task.student == "correct":
        os._exit(1)
    return _grade(course, task)
t.grade = grade
"""


@needs_bwrap
def test_a_worker_that_dies_is_retried_then_the_row_is_crashed_and_rerun_later(turma, tmp_path):
    import shutil
    ws = clone_prepared(turma["ws"], tmp_path / "ws")
    subs = tmp_path / "entregas"
    shutil.copytree(turma["subs"] / "correct" / SLUG, subs / "correct" / SLUG)
    cluster = DaskCluster(2, nanny=False)       # sem nanny: um trabalhador morto não volta
    try:
        with cluster.client() as c:
            c.run(exec, _FAULT, {})
        p = run_cli("grade", subs, "--workspace", ws, "--solutions", turma["sol"], *cluster.grade_args,
                    "--no-feedback", "--no-report", *LIMITS, check=False)
    finally:
        cluster.close()
    assert p.returncode == 1, p.stderr
    row = read_csv(ws / "grades.csv")["correct"]
    assert (row["status"], float(row["score"])) == ("crashed", 0.0), row
    assert "morreu 2 vezes" in row["details"], row
    assert "rode de novo para tentar outra vez" in p.stderr
    # a próxima correção (aqui, local) tenta de novo: a linha crashed não tinha chave
    p = run_cli("grade", subs, "--workspace", ws, "--solutions", turma["sol"], "--no-feedback",
                "--no-report", *LIMITS)
    assert "corrigindo 1 notebook(s)" in p.stderr
    assert read_csv(ws / "grades.csv")["correct"]["status"] == "ok"


@needs_bwrap
def test_a_cluster_that_disappears_stops_with_a_message_and_the_run_resumes(turma, tmp_path):
    import shutil
    ws = clone_prepared(turma["ws"], tmp_path / "ws")
    # seis alunos bastam: o agendador cai depois de duas notas, com quatro por fazer
    subs = tmp_path / "entregas"
    few = ("correct", "blank", "wrong", "late", "deleted-test", "print-flood")
    for student in few:
        shutil.copytree(turma["subs"] / student, subs / student)
    cluster = DaskCluster(2)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "autograder", "grade", str(subs), "--workspace",
                                 str(ws), "--solutions", str(turma["sol"]), *cluster.grade_args,
                                 "--no-feedback", "--no-report", "--no-progress", *LIMITS],
                                cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        results = ws / ".autograder" / "results" / SLUG
        end = time.monotonic() + 180
        while time.monotonic() < end and len(list(results.glob("*.json"))) < 2:
            time.sleep(0.2)
        os.killpg(cluster.scheduler.pid, signal.SIGKILL)        # o agendador some no meio da correção
        _, err = proc.communicate(timeout=180)
    finally:
        cluster.close()
    assert proc.returncode == 2, err[-3000:]
    assert "a conexão com o cluster Dask (tls://127.0.0.1:" in err and "rode o mesmo comando" in err, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    done = len(list(results.glob("*.json")))
    total = len(few)
    assert 2 <= done < total
    p = run_cli("grade", subs, "--workspace", ws, "--solutions", turma["sol"], "--no-feedback",
                "--no-report", *LIMITS)
    assert f"{done} de {total} entregas já corrigidas" in p.stderr, p.stderr
    rows = read_csv(ws / "grades.csv")
    assert sorted(rows) == sorted(few)
    assert all(rows[s]["score"] == turma["grades"][s]["score"] for s in few), rows


@needs_bwrap
def test_workers_without_the_sandbox_are_refused_before_grading(arquivos, tmp_path):
    turma = arquivos
    ws = clone_prepared(turma["ws"], tmp_path / "ws")
    # trabalhadores cujo PATH não tem o bwrap (uma máquina do cluster sem o pacote bubblewrap)
    cluster = DaskCluster(1, worker_env={"PATH": str(Path(sys.executable).parent)})
    try:
        p = run_cli("grade", turma["subs"], "--workspace", ws, "--solutions", turma["sol"],
                    *cluster.grade_args, *LIMITS, check=False)
    finally:
        cluster.close()
    assert p.returncode == 2, p.stderr
    assert "trabalhador(es) do Dask sem o que a correção precisa" in p.stderr, p.stderr
    assert "bubblewrap" in p.stderr and "Traceback" not in p.stderr
    assert not (ws / ".autograder" / "results").exists()
