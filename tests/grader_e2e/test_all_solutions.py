"""Toda resposta certa ganha todos os pontos: cada tarefa do curso pelo corretor de verdade.

Cada tarefa de `solutions/` (o desafio do capítulo 13 e o kernel Triton inclusive) é
entregue por dois alunos, numa única correção pela linha de comando (`--jobs 2`):

- `solucao`: o notebook distribuído (`exercises/`) com as células de resposta
  trocadas pelas da solução, como um aluno que acertou tudo entregaria;
- `branco`: o notebook distribuído intocado.

A solução tem de ganhar todos os pontos automáticos (a soma dos pontos das células de
teste da versão distribuída, o máximo automático do nbgrader), com situação `ok` e
cada célula de teste com todos os seus pontos; o notebook em branco, zero.
Uma tarefa cujo teste precisa de algo do kernel do aluno que não atravessa falha aqui
(era o caso do desafio: 0 de 5, `ok`).
"""

from __future__ import annotations

import csv

import nbformat
import pytest

from autograder import integrity
from grading import HAS_BWRAP, ROOT, WHY_NOT, run_cli

pytestmark = pytest.mark.slow

ASSIGNMENTS = sorted(p.name for p in (ROOT / "solutions").iterdir() if any(p.glob("*.ipynb")))


def _answers(solution_nb) -> dict[str, str]:
    return {integrity.grade_id(c): c.source for c in solution_nb.cells
            if integrity.nbgrader_meta(c).get("solution")}


def solved(a: str):
    """O notebook distribuído com as respostas da solução."""
    sol = nbformat.read(ROOT / "solutions" / a / f"{a}.ipynb", as_version=4)
    nb = nbformat.read(ROOT / "exercises" / a / f"{a}.ipynb", as_version=4)
    answers = _answers(sol)
    for c in nb.cells:
        gid = integrity.grade_id(c)
        if gid in answers and integrity.nbgrader_meta(c).get("solution"):
            c.source = answers[gid]
    return nb


def auto_max(a: str) -> float:
    """Pontos automáticos da tarefa: as células de teste da versão distribuída."""
    nb = nbformat.read(ROOT / "exercises" / a / f"{a}.ipynb", as_version=4)
    return float(sum(integrity.nbgrader_meta(c).get("points", 0) for c in nb.cells
                     if c.cell_type == "code" and integrity.nbgrader_meta(c).get("grade")
                     and not integrity.nbgrader_meta(c).get("solution")))


def _rows(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def corrigido(tmp_path_factory):
    base = tmp_path_factory.mktemp("todas")
    subs = base / "entregas"
    for a in ASSIGNMENTS:
        for student, nb in (("solucao", solved(a)),
                            ("branco", nbformat.read(ROOT / "exercises" / a / f"{a}.ipynb", as_version=4))):
            d = subs / student / a
            d.mkdir(parents=True)
            nbformat.write(nb, d / f"{a}.ipynb")
    run_cli("grade", subs, "--workspace", base / "ws", "--jobs", "2", "--sem-relatorio", "--sem-barra")
    grades = {(r["student_id"], r["assignment"]): r for r in _rows(base / "ws" / "grades.csv")}
    return {"ws": base / "ws", "grades": grades, "questions": _rows(base / "ws" / "questions.csv")}


def _failures(ws, student: str, a: str) -> list:
    """(grade_id, erro) de cada célula com saída de erro no notebook corrigido."""
    nb = nbformat.read(ws / "autograded" / student / a / f"{a}.ipynb", as_version=4)
    return [(integrity.grade_id(c), o.get("ename"), str(o.get("evalue", ""))[:300])
            for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


def test_every_assignment_has_a_release():
    assert ASSIGNMENTS and all((ROOT / "exercises" / a / f"{a}.ipynb").is_file() for a in ASSIGNMENTS)


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_solution_gets_every_automatic_point(corrigido, a):
    row = corrigido["grades"][("solucao", a)]
    assert float(row["max_score"]) >= auto_max(a) > 0
    assert (float(row["auto_score"]), row["status"]) == (auto_max(a), "ok"), \
        (row, _failures(corrigido["ws"], "solucao", a))


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_every_test_cell_gets_its_points_for_the_solution(corrigido, a):
    rows = [r for r in corrigido["questions"] if (r["student_id"], r["assignment"]) == ("solucao", a)
            and r["kind"] == "test"]
    assert rows and all(float(r["score"]) == float(r["max_score"]) for r in rows), \
        ([r["grade_id"] for r in rows if float(r["score"]) != float(r["max_score"])],
         _failures(corrigido["ws"], "solucao", a))


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_untouched_release_gets_zero(corrigido, a):
    row = corrigido["grades"][("branco", a)]
    assert (float(row["score"]), row["status"]) == (0.0, "ok"), row
