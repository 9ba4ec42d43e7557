"""Os cadernos de exercícios, célula a célula e sem kernel (tests/nb_harness.py).

Para cada fonte em autograder/fontes (menos a do cap. 13, que precisa do
interpretador do Triton e tem testes próprios):
  - a estrutura segue as convenções (3-6 tarefas com pontos, uma resposta
    escrita, testes ocultos, célula de preparação com o conferir inteiro);
  - as soluções passam em todos os testes, visíveis e ocultos;
  - cada solução trocada pelo stub do nbgrader faz falhar a célula de testes
    logo abaixo dela, e uma que devolve None falha com mensagem em português;
  - a resposta plausível e errada (ERRADO) falha nos seus testes e não em todos.
"""

import pytest

from autograder import fontes
from autograder.nbbuild import CONFERIR
from exercicios_errados import ERRADO, cells
from nb_harness import meta, replacing, returns_none, run, solution_and_test_ids, stub

# Os cadernos do cap. 13 (o principal e o desafio) precisam do interpretador do Triton e têm
# testes próprios (test_exercicio_cap13.py, test_exercicios_erros_tipicos.py).
TODAS = fontes.slugs()
FONTES = [s for s in TODAS if not s.startswith("13-")]


@pytest.mark.parametrize("slug", FONTES)
def test_notebook_structure_follows_the_conventions(slug):
    cs = cells(slug)
    graded = [c for c in cs if meta(c).get("grade")]
    assert 3 <= len(graded) <= 6, f"{slug}: {len(graded)} tarefas com nota"
    assert all(meta(c).get("points", 0) > 0 for c in graded)
    assert any(c.cell_type == "markdown" for c in graded), "falta uma resposta escrita"
    setup = next(c for c in cs if meta(c)["grade_id"] == "preparacao")
    assert CONFERIR in setup.source
    code = "\n".join(c.source for c in cs if c.cell_type == "code")
    assert "import atencao" not in code and "from atencao" not in code
    for c in graded:
        if c.cell_type == "code":
            assert "### BEGIN HIDDEN TESTS" in c.source and "### END HIDDEN TESTS" in c.source
            assert meta(c)["locked"]


@pytest.mark.parametrize("slug", TODAS)
def test_every_notebook_gives_the_same_student_experience(slug):
    """Aviso ao placar no começo e no fim da parte visível de toda célula de testes, etiqueta
    raises-exception (Run All mostra todas as tarefas), preparação recolhida no JupyterLab e no
    Colab, e a última célula diz que arquivo entregar e como."""
    cs = cells(slug)
    tests = [c for c in cs if c.cell_type == "code" and meta(c).get("grade")]
    for n, c in enumerate(tests, 1):
        visible = c.source.split("### BEGIN HIDDEN TESTS")[0]
        assert visible.rstrip().endswith(f"_visiveis_passaram({n})"), (slug, n)
        assert c.source.startswith(f"_tarefa({n}, "), (slug, n)
        assert c.metadata.get("tags") == ["raises-exception"], (slug, n)
    setup = next(c for c in cs if meta(c)["grade_id"] == "preparacao")
    assert setup.metadata["jupyter"] == {"source_hidden": True} and setup.metadata["cellView"] == "form"
    assert setup.source.startswith("# @title ")
    assert [meta(c)["grade_id"] for c in cs[-2:]] == ["placar", "entrega"] and cs[-2].source == "placar()"
    last = cs[-1]
    assert meta(last)["grade_id"] == "entrega" and f"`{slug}.ipynb`" in last.source
    assert "Download" in last.source and "Submit" in last.source


@pytest.mark.parametrize("slug", FONTES)
def test_solutions_pass_every_visible_and_hidden_test(slug):
    failed = {k: repr(v) for k, v in run(cells(slug)).items() if v is not None}
    assert not failed


@pytest.mark.parametrize("slug", FONTES)
def test_blank_or_none_answers_fail_their_tests_with_portuguese_messages(slug):
    cs = cells(slug)
    pairs = solution_and_test_ids(cs)
    assert pairs
    for sol, test in pairs:
        err = run(cs, replacing(sol, stub), stop=test)[test]
        # Alguns cadernos chamam a função do aluno por um invólucro que traduz o
        # NotImplementedError numa AssertionError em português; outros o deixam subir.
        assert isinstance(err, NotImplementedError) or (
            isinstance(err, AssertionError) and "NotImplementedError" in str(err)), f"{slug}/{test}: {err!r}"
        err = run(cs, replacing(sol, returns_none), stop=test)[test]
        assert isinstance(err, AssertionError), f"{slug}/{test}: {err!r}"
        assert "None" in str(err) or "esperava" in str(err), f"{slug}/{test}: {err}"


# A resposta errada do cap. 1 é justamente `.T` num tensor com lote, que o torch já avisa
# estar obsoleto: o aviso é parte do erro que o teste espera.
@pytest.mark.filterwarnings("ignore:The use of `x.T` on tensors:UserWarning")
@pytest.mark.parametrize("slug", FONTES)
def test_plausible_wrong_answer_fails_its_tests_but_not_all(slug):
    cs = cells(slug)
    wrong = ERRADO[slug]
    res = run(cs, lambda c: wrong.get(meta(c)["grade_id"], c.source))
    by_sol = dict(solution_and_test_ids(cs))
    tests = {g for g, c in ((meta(c)["grade_id"], c) for c in cs) if meta(c).get("grade") and g in res}
    failed = {g for g in tests if res[g] is not None}
    # O teste da resposta errada falha com mensagem do conferir; os que não
    # dependem dela passam (nota parcial).
    assert all(isinstance(res[by_sol[g]], AssertionError) for g in wrong), {g: res[by_sol[g]] for g in wrong}
    assert {by_sol[g] for g in wrong} <= failed and failed != tests, failed
