"""Toda resposta certa ganha todos os pontos: cada tarefa do curso pelo corretor de verdade.

Cada tarefa de `solutions/` (o desafio do capítulo 13 e o kernel Triton inclusive) é
entregue por dois alunos, na turma de todos os cadernos (`exercises_class` em
tests/grader_e2e/conftest.py, com as respostas plantadas e justas), corrigida uma vez:

- `solucao`: o notebook distribuído (`exercises/`) com as células de resposta
  trocadas pelas da solução, como um aluno que acertou tudo entregaria;
- `branco`: o notebook distribuído intocado.

A solução tem de ganhar todos os pontos automáticos (a soma dos pontos das células de
teste da versão distribuída, o máximo automático do nbgrader), com situação `ok` e
cada célula de teste com todos os seus pontos; o notebook em branco, zero.
Uma tarefa cujo teste precisa de algo do kernel do aluno que não atravessa falha aqui
(era o caso do desafio: 0 de 5, `ok`).

Na mesma turma (e neste arquivo, para que o `--dist loadfile` do `make test` a corrija uma
vez só), as respostas plantadas e justas de tests/exercises/answers, em pacotes compatíveis
(`answers.cli.packs`: células diferentes, tarefas zeradas diferentes): cada plantada tira 0
nas suas células de testes e a nota cheia nas outras; cada justa tira todos os pontos. O
mesmo contrato roda sem kernel em tests/exercises/test_answers.py: o Jupyter do aluno e a
nota do corretor concordam.
"""

from __future__ import annotations

import nbformat
import pytest

from answers import case_id, cases, cli
from autograder.core import nbmeta
from grading import ROOT

pytestmark = pytest.mark.slow

ASSIGNMENTS = sorted(p.name for p in (ROOT / "solutions").iterdir() if any(p.glob("*.ipynb")))


def auto_max(a: str) -> float:
    """Pontos automáticos da tarefa: as células de teste da versão distribuída."""
    nb = nbformat.read(ROOT / "exercises" / a / f"{a}.ipynb", as_version=4)
    return float(sum(nbmeta.nbgrader_meta(c).get("points", 0) for c in nb.cells
                     if c.cell_type == "code" and nbmeta.nbgrader_meta(c).get("grade")
                     and not nbmeta.nbgrader_meta(c).get("solution")))


@pytest.fixture(scope="session")
def corrigido(exercises_class):
    """A turma de todos os cadernos (tests/grader_e2e/conftest.py), corrigida uma vez por bateria
    junto com as respostas plantadas e justas."""
    return exercises_class


def _failures(ws, student: str, a: str) -> list:
    """(grade_id, erro) de cada célula com saída de erro no notebook corrigido."""
    nb = nbformat.read(ws / "autograded" / student / a / f"{a}.ipynb", as_version=4)
    return [(nbmeta.grade_id(c), o.get("ename"), str(o.get("evalue", ""))[:300])
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


CASES = cases()


@pytest.mark.parametrize("slug,kind,i,answer", CASES, ids=[case_id(s, k, i) for s, k, i, _ in CASES])
def test_answer_gets_its_contract_through_the_grader(exercises_class, slug, kind, i, answer):
    who = exercises_class["who"]
    sid = cli.student_of(who, answer)
    found = cli.problems({sid: who[sid]}, exercises_class["ws"], only=answer)
    assert not found, "\n".join(found)
