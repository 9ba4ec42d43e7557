"""As respostas plantadas e justas (tests/exercises/answers) pelo corretor de verdade.

Uma turma só, corrigida uma vez pela linha de comando (`--jobs 2`, sandbox, dois kernels): um
aluno por resposta. Cada plantada tira 0 nas suas células de testes e a nota cheia nas outras;
cada justa tira todos os pontos. O mesmo contrato roda sem kernel em
tests/exercises/test_answers.py: o Jupyter do aluno e a nota do corretor concordam."""

from __future__ import annotations

import pytest

from answers import case_id, cases, cli

CASES = cases()
pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def answers_class(tmp_path_factory):
    base = tmp_path_factory.mktemp("respostas")
    who = cli.build_class(base / "entregas")
    cli.grade(base / "entregas", base / "ws")
    return {"who": who, "ws": base / "ws", "scores": cli.scores(base / "ws")}


@pytest.mark.parametrize("slug,kind,i,answer", CASES, ids=[case_id(s, k, i) for s, k, i, _ in CASES])
def test_answer_gets_its_contract_through_the_grader(answers_class, slug, kind, i, answer):
    sid = cli.student_id(slug, kind, i)
    found = cli.problems({sid: (slug, answer)}, answers_class["ws"])
    assert not found, "\n".join(found)
