"""Ataques de um aluno hostil ao corretor: nenhum dá ponto a resposta errada com situação ok.

Cada ataque (tests/support/cenarios.py, ATTACKS) vai junto com
respostas erradas na tarefa de fixtures `90-dobro`: ganchos do IPython
(set_custom_exc, showtraceback, input_transformers_cleanup), `conferir`
afrouxado (`__defaults__`), funções do numpy/torch trocadas (código,
embrulho, builtins), subclasses de array e de tensor que mentem nas
comparações, exceção com nome de erro do corretor, `In`/pilha/histórico
impressos, leitura de notebooks do disco. Um aluno que engana o observador
do capítulo 4 (desligando o modo de despacho do torch) tem de perder os
pontos e ficar `flagged`.

Depois de corrigir: nota 0 (ou situação diferente de ok) em todos, e o
texto dos testes ocultos em nenhuma saída do notebook corrigido nem em
nenhuma página de feedback.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import nbformat
import pytest

from autograder.core.workspace import Workspace

from grading import (HAS_BWRAP, LIMITS, ROOT, SLUG, WHY_NOT, cenarios,  # noqa: F401
                     clone_prepared, read_csv, run_cli)

pytestmark = pytest.mark.slow

SOFTMAX = "04-softmax"
# Engana o observador: a softmax pronta roda com o modo de despacho desligado.
LIAR_SOFTMAX = (
    "def softmax(x, dim=-1):\n"
    "    from torch.utils._python_dispatch import _disable_current_modes\n"
    "    with _disable_current_modes():\n"
    "        return torch.softmax(x, dim)\n")
# Atalho que o `_sem_atalhos` antigo (troca de atributos) deixava passar (revisão, item 30).
SPECIAL_SOFTMAX = "def softmax(x, dim=-1):\n    return torch.special.softmax(x, dim)\n"
# C4.3: sem forjar nada, a softmax pronta com os modos desligados e um clone observado no fim
NO_MODES_SOFTMAX = (
    "from torch.utils._python_dispatch import _disable_current_modes as _sem_modos\n"
    "def softmax(x, dim=-1):\n"
    "    with _sem_modos():\n"
    "        y = torch.softmax(x, dim)\n"
    "    return y.clone()\n")


def _with_softmax(src: str | None):
    """A versão do aluno com as soluções (e `src` no lugar da softmax, se dado)."""
    sol = nbformat.read(ROOT / "solutions" / SOFTMAX / f"{SOFTMAX}.ipynb", as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in sol.cells
               if c.metadata.get("nbgrader", {}).get("solution")}
    if src is not None:
        answers["softmax"] = src
    nb = copy.deepcopy(nbformat.read(ROOT / "exercises" / SOFTMAX / f"{SOFTMAX}.ipynb", as_version=4))
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            c.source = answers[gid]
    return nb


@pytest.fixture(scope="module")
def ataques(arquivos, tmp_path_factory):
    base = tmp_path_factory.mktemp("ataques")
    ws = clone_prepared(arquivos["ws"], base / "ws")
    release = arquivos["ws"].info(SLUG, "x").release[SLUG]
    subs = base / "entregas"
    for name, nb in cenarios.attack_scenarios(release).items():
        d = subs / name / SLUG
        d.mkdir(parents=True)
        nbformat.write(nb, d / f"{SLUG}.ipynb")
    p = run_cli("grade", subs, "--workspace", ws, "--solutions", arquivos["sol"], "--jobs", "2",
                "--no-report", *LIMITS)
    return {"ws": ws, "grades": read_csv(ws / "grades.csv"), "stderr": p.stderr}


@pytest.mark.parametrize("attack", sorted(cenarios.ATTACKS))
def test_attack_with_wrong_answers_earns_no_point_with_status_ok(ataques, attack):
    row = ataques["grades"][attack]
    assert float(row["score"]) == 0.0 or row["status"] != "ok", row


def _visible_text(nb) -> str:
    return json.dumps([o for c in nb.cells if c.cell_type == "code" for o in c.outputs], ensure_ascii=False)


@pytest.mark.parametrize("attack", sorted(cenarios.ATTACKS))
def test_no_hidden_test_text_in_outputs_or_feedback(ataques, attack):
    nb = nbformat.read(ataques["ws"] / "autograded" / attack / SLUG / f"{SLUG}.ipynb", as_version=4)
    assert cenarios.SECRET not in _visible_text(nb)
    html = (Workspace(ataques["ws"]).feedback(attack, SLUG) / f"{SLUG}.html").read_text(encoding="utf-8")
    assert cenarios.SECRET not in html and "HIDDEN TESTS" not in html


def test_student_kernel_never_sees_test_code(ataques):
    """O aluno que imprime `In`, a pilha e o histórico só vê as próprias células."""
    nb = nbformat.read(ataques["ws"] / "autograded" / "prints-history" / SLUG / f"{SLUG}.ipynb", as_version=4)
    text = _visible_text(nb)
    assert "In:" in text and "pilha:" in text          # o ataque rodou e imprimiu
    assert 'conferir("dobro' not in text and cenarios.SECRET not in text     # o texto dos testes


def test_spoofed_exception_name_comes_back_as_a_student_error(ataques):
    nb = nbformat.read(ataques["ws"] / "autograded" / "spoofed-exception" / SLUG / f"{SLUG}.ipynb",
                       as_version=4)
    enames = {o.get("ename") for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error"}
    assert "CellTimeoutError" not in enames and "StudentError" in enames, enames


@pytest.fixture(scope="module")
def observador(tmp_path_factory):
    """O capítulo 4 de verdade: uma resposta que engana o observador e uma que usa um atalho."""
    base = tmp_path_factory.mktemp("observador")
    subs = base / "entregas"
    for name, src in (("liar", LIAR_SOFTMAX), ("special", SPECIAL_SOFTMAX), ("no-modes", NO_MODES_SOFTMAX),
                      ("solution", None)):
        d = subs / name / SOFTMAX
        d.mkdir(parents=True)
        nbformat.write(_with_softmax(src), d / f"{SOFTMAX}.ipynb")
    run_cli("grade", subs, "--workspace", base / "ws", "--solutions", ROOT / "solutions", "--assignment", SOFTMAX,
            "--jobs", "2", "--no-report")
    return {**read_csv(base / "ws" / "grades.csv"), "ws": base / "ws"}


def _errors(ws: Path, student: str) -> list:
    nb = nbformat.read(ws / "autograded" / student / SOFTMAX / f"{SOFTMAX}.ipynb", as_version=4)
    return [(c.metadata.get("nbgrader", {}).get("grade_id"), o.get("ename"), o.get("evalue", "")[:200])
            for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


def test_lying_to_the_watcher_loses_the_points_and_is_flagged(observador):
    full = float(observador["solution"]["score"])
    assert observador["solution"]["status"] == "ok", observador["solution"]
    assert full == 9.0, _errors(observador["ws"], "solution")     # todos os pontos automáticos
    liar = observador["liar"]
    assert float(liar["score"]) < full and liar["status"] == "flagged", liar
    assert "observador" in liar["details"]
    page = (Workspace(observador["ws"]).feedback("liar", SOFTMAX) / f"{SOFTMAX}.html").read_text(encoding="utf-8")
    assert "em revisão pelo professor" in page and "observador" not in page   # o motivo fica com o professor


def test_dodging_the_watcher_without_forging_is_flagged_with_the_evidence(observador):
    """C4.3: o observador roda no processo do aluno e não vê a conta feita com os modos
    desligados; a regra não passa em silêncio: a linha fica `flagged`, com a célula e a linha
    do contorno para o professor."""
    row = observador["no-modes"]
    assert row["status"] == "flagged", row
    assert "_disable_current_modes" in row["details"] and "linha" in row["details"], row["details"]
    assert observador["solution"]["status"] == "ok"


def test_aten_level_ban_catches_torch_special_softmax(observador):
    """Item 30 da revisão: torch.special.softmax vira aten._softmax e é pego."""
    special = observador["special"]
    assert float(special["score"]) < float(observador["solution"]["score"]), special
    assert special["status"] == "ok", special


def test_grading_leaves_no_file_in_the_repository():
    assert not (ROOT / "tmp-notas").exists() and os.path.isdir(ROOT / "autograder")


# ----------------------------------------------------------------------------- revisão de 2026-12-01 (C1, H1)

CAP1 = "01-pontuacoes"
CLEAN_LOOPS = ("def scores_loops(Q, K):\n"
               "    for _ in range(1):\n"
               "        pass\n"
               "    return np.zeros((Q.shape[0], K.shape[0]))\n")
CODE_SWAP = CLEAN_LOOPS + ("def _rapida(Q, K):\n"
                           "    return Q @ K.T\n"
                           "scores_loops.__code__ = _rapida.__code__\n")
# `@` por método especial, com os laços e os produtos que a regra pede (H1)
DUNDER = ("def scores_loops(Q, K):\n"
          "    S = np.zeros((Q.shape[0], K.shape[0]))\n"
          "    for i in range(Q.shape[0]):\n"
          "        for j in range(K.shape[0]):\n"
          "            for t in range(1):\n"
          "                S[i, j] += Q[i, t] * K[j, t]\n"
          "    return Q.__matmul__(K.T)\n")
ALIAS = ("_h = np.matmul\n"
         "def scores_loops(Q, K):\n"
         "    for _ in range(1):\n"
         "        pass\n"
         "    return _h(Q, np.swapaxes(K, 0, 1))\n")
# resposta em branco numa célula que se diz travada: rodaria no kernel do corretor (C1)
LOCKED_BLANK = ("_ip = get_ipython()\n"
                "def _rt(lines):\n"
                "    return ['pass\\n'] if 'conferir' in ''.join(lines) else lines\n"
                "if '_autograder_harness' in __import__('sys').modules:\n"
                "    _ip.input_transformers_cleanup.append(_rt)\n"
                "def scores_loops(Q, K):\n"
                "    return None\n")


def _chapter1(src: str | None, locked: bool = False):
    sol = nbformat.read(ROOT / "solutions" / CAP1 / f"{CAP1}.ipynb", as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: c.source for c in sol.cells
               if c.metadata.get("nbgrader", {}).get("solution")} if not locked else {}
    if src is not None:
        answers["scores_loops"] = src
    nb = copy.deepcopy(nbformat.read(ROOT / "exercises" / CAP1 / f"{CAP1}.ipynb", as_version=4))
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            c.source = answers[gid]
        if locked and gid == "scores_loops":
            c.metadata["nbgrader"]["locked"] = True
    return nb


@pytest.fixture(scope="module")
def capitulo1(tmp_path_factory):
    base = tmp_path_factory.mktemp("capitulo1")
    subs = base / "entregas"
    for name, nb in (("solution", _chapter1(None)), ("code-swap", _chapter1(CODE_SWAP)),
                     ("alias", _chapter1(ALIAS)), ("dunder", _chapter1(DUNDER)),
                     ("locked-blank", _chapter1(LOCKED_BLANK, locked=True))):
        d = subs / name / CAP1
        d.mkdir(parents=True)
        nbformat.write(nb, d / f"{CAP1}.ipynb")
    run_cli("grade", subs, "--workspace", base / "ws", "--assignment", CAP1, "--jobs", "2", "--no-report")
    import csv
    with open(base / "ws" / "questions.csv", encoding="utf-8", newline="") as f:
        questions = {(r["student_id"], r["grade_id"]): float(r["score"]) for r in csv.DictReader(f)
                     if r["score"]}
    return {"grades": read_csv(base / "ws" / "grades.csv"), "questions": questions}


def test_answer_cell_marked_locked_is_restored_and_tampered(capitulo1):
    """C1: a resposta em branco que se diz travada não roda no corretor: 0 ponto, `tampered`
    (e `flagged` por cima: o código dela procura `_autograder_harness`, um contorno)."""
    row = capitulo1["grades"]["locked-blank"]
    assert float(row["score"]) == 0.0 and row["status"] in ("tampered", "flagged"), row
    assert "metadados" in row["details"] and "_autograder_harness" in row["details"], row


@pytest.mark.parametrize("attack", ["code-swap", "alias", "dunder"])
def test_text_rule_reads_what_runs_not_only_the_def(capitulo1, attack):
    """H1: `__code__` trocado depois do `def`, um apelido (`_h = np.matmul`) fora dele e
    `Q.__matmul__(K.T)` não passam pela regra "com laços, sem produto pronto"; a solução passa."""
    assert capitulo1["questions"][("solution", "test_scores_loops")] == 2.0
    assert capitulo1["questions"][(attack, "test_scores_loops")] == 0.0, capitulo1["grades"][attack]
