"""As respostas plantadas e justas (tests/exercises/answers) pelo corretor de verdade.

Uma turma só, corrigida uma vez pela linha de comando (`--jobs 2`, sandbox, dois kernels): um
aluno por pacote de respostas compatíveis (`answers.cli.packs`: células diferentes, tarefas zeradas
diferentes), na mesma turma da solução e do caderno em branco de cada capítulo
(`exercises_class`, tests/grader_e2e/conftest.py). Cada plantada tira 0 nas suas células de testes e a nota cheia nas outras;
cada justa tira todos os pontos. O mesmo contrato roda sem kernel em
tests/exercises/test_answers.py: o Jupyter do aluno e a nota do corretor concordam."""

from __future__ import annotations

import pytest

from answers import case_id, cases, cli

CASES = cases()
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("slug,kind,i,answer", CASES, ids=[case_id(s, k, i) for s, k, i, _ in CASES])
def test_answer_gets_its_contract_through_the_grader(exercises_class, slug, kind, i, answer):
    who = exercises_class["who"]
    sid = cli.student_of(who, answer)
    found = cli.problems({sid: who[sid]}, exercises_class["ws"], only=answer)
    assert not found, "\n".join(found)
