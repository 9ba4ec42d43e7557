"""Ataques de um aluno hostil ao corretor: nenhum dá ponto a resposta errada com situação ok.

Cada ataque (tests/fixtures/autograder/cenarios.py, ATTACKS) vai junto com
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

from autograder.course import Workspace

from test_autograder import (HAS_BWRAP, LIMITS, ROOT, SLUG, WHY_NOT, arquivos, cenarios,  # noqa: F401
                             clone_prepared, read_csv, run_cli)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not HAS_BWRAP, reason=f"sandbox: {WHY_NOT}")]

SOFTMAX = "04-softmax"
# Engana o observador: a softmax pronta roda com o modo de despacho desligado.
LIAR_SOFTMAX = (
    "def softmax(x, dim=-1):\n"
    "    from torch.utils._python_dispatch import _disable_current_modes\n"
    "    with _disable_current_modes():\n"
    "        return torch.softmax(x, dim)\n")
# Atalho que o `_sem_atalhos` antigo (troca de atributos) deixava passar (revisão, item 30).
SPECIAL_SOFTMAX = "def softmax(x, dim=-1):\n    return torch.special.softmax(x, dim)\n"


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
    p = run_cli("grade", subs, "--workspace", ws, "--solucoes", arquivos["sol"], "--jobs", "2",
                "--sem-relatorio", *LIMITS)
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
    for name, src in (("liar", LIAR_SOFTMAX), ("special", SPECIAL_SOFTMAX), ("solution", None)):
        d = subs / name / SOFTMAX
        d.mkdir(parents=True)
        nbformat.write(_with_softmax(src), d / f"{SOFTMAX}.ipynb")
    run_cli("grade", subs, "--workspace", base / "ws", "--solucoes", ROOT / "solutions", "--assignment", SOFTMAX,
            "--jobs", "2", "--sem-relatorio")
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


def test_aten_level_ban_catches_torch_special_softmax(observador):
    """Item 30 da revisão: torch.special.softmax vira aten._softmax e é pego."""
    special = observador["special"]
    assert float(special["score"]) < float(observador["solution"]["score"]), special
    assert special["status"] == "ok", special


def test_grading_leaves_no_file_in_the_repository():
    assert not (ROOT / "tmp-notas").exists() and os.path.isdir(ROOT / "autograder")
