"""As respostas plantadas e as justas (tests/exercises/answers), rodadas sem kernel, como no
Jupyter do aluno: o caderno de solutions/ (testes visíveis e ocultos) com as células trocadas.

Uma plantada falha nas células `zero` e passa em todas as outras; uma justa passa em todas. A
mesma lista passa pela linha de comando do corretor em tests/grader_e2e/authoring/test_all_solutions.py: o
que o aluno vê no Jupyter e a nota do corretor têm de concordar."""

from __future__ import annotations

import copy
import os

import pytest
import torch

if not torch.cuda.is_available():        # o cap. 13 roda os kernels no interpretador do Triton
    os.environ.setdefault("TRITON_INTERPRET", "1")

from answers import Planted, cases, case_id  # noqa: E402
from nb_harness import meta, run  # noqa: E402

from autograder import fontes  # noqa: E402

CASES = cases()


def _graded(cells):
    return [meta(c)["grade_id"] for c in cells if c.cell_type == "code" and meta(c).get("grade")]


def _defined(src):
    import ast
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return {"*"}
    out = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        else:
            out.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return out


def _without_demos(cells):
    """Sem as células de demonstração (sem nota, travadas, que nada adiante usa: a medida de
    tempo do cap. 12 custava ~20 s por resposta). O veredito das tarefas não depende delas."""
    import re

    keep = []
    for n, c in enumerate(cells):
        m = meta(c) if c.cell_type == "code" else {}
        if c.cell_type == "code" and not (m.get("solution") or m.get("grade")) and m.get("grade_id") != "preparacao":
            names = _defined(c.source)
            later = "\n".join(d.source for d in cells[n + 1:] if d.cell_type == "code")
            if "*" not in names and not any(re.search(rf"\b{re.escape(x)}\b", later) for x in names):
                continue
        keep.append(c)
    return keep


# Células cujo veredito depende só do texto das células até elas e cujo único efeito são os nomes
# que atribuem (nb_harness.run, `memo`): o treino de 250 passos do cap. 8 (~2,5 s de CPU) roda
# uma vez por processo para as respostas que só trocam células depois dele (cabeça, temperatura),
# em vez de uma vez por resposta. Quem troca uma célula antes dele treina de novo.
MEMO = {"08-modelo-de-linguagem": frozenset({"test_treino"})}


def run_answer(slug, answer):
    """{grade_id da célula de testes: exceção ou None} com as células da resposta trocadas."""
    cells = copy.deepcopy(fontes.load(slug).cells)
    solution_ids = {meta(c)["grade_id"] for c in cells if c.cell_type == "code" and meta(c).get("solution")}
    unknown = set(answer.cells) - solution_ids
    assert not unknown, f"{slug}: células que não são de solução: {sorted(unknown)}"
    cells = _without_demos(cells)
    result = run(cells, replace=lambda c: answer.cells.get(meta(c)["grade_id"], c.source),
                 memo=MEMO.get(slug, frozenset()))
    return {g: result.get(g, KeyError("a célula não rodou")) for g in _graded(cells)}


@pytest.mark.parametrize("slug,kind,i,answer", CASES, ids=[case_id(s, k, i) for s, k, i, _ in CASES])
def test_answer_gets_the_expected_verdict_in_the_students_jupyter(slug, kind, i, answer):
    verdicts = run_answer(slug, answer)
    if isinstance(answer, Planted):
        assert set(answer.zero) <= set(verdicts), f"células de testes desconhecidas: {answer.zero}"
        passed = [g for g in answer.zero if verdicts[g] is None]
        assert not passed, f"{answer.why}: a plantada passou em {passed}"
        lost = {g: str(e)[:300] for g, e in verdicts.items()
                if e is not None and g not in answer.zero and g not in answer.free}
        assert not lost, f"{answer.why}: um erro custou outras tarefas: {lost}"
    else:
        lost = {g: f"{type(e).__name__}: {str(e)[:400]}" for g, e in verdicts.items() if e is not None}
        assert not lost, f"{answer.why}: a resposta justa perdeu pontos: {lost}"
