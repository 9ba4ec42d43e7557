"""Os cadernos de exercícios, célula a célula e sem kernel (tests/support/nb_harness.py).

Para cada fonte em autograder/fontes (menos a do cap. 13, que precisa do
interpretador do Triton e tem testes próprios):
  - a estrutura segue as convenções (3-7 tarefas com pontos, uma resposta
    escrita, testes ocultos, célula de preparação com o conferir inteiro);
  - as soluções passam em todos os testes, visíveis e ocultos;
  - cada solução trocada pelo stub do nbgrader faz falhar a célula de testes
    logo abaixo dela, e uma que devolve None falha com mensagem em português;
  - a resposta plausível e errada (ERRADO) falha nos seus testes e não em todos.
"""

import pytest

from autograder import fontes
from autograder.authoring.nbbuild import CONFERIR
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
    # até 7 tarefas com nota; o cap. 8 tem 7 e a pergunta aberta (issue 39: o treino do BPE e o
    # do modelo escritos à mão)
    assert 3 <= len(graded) <= (8 if slug == "08-modelo-de-linguagem" else 7), f"{slug}: {len(graded)} tarefas com nota"
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


def test_test_cells_show_portuguese_errors_from_the_students_line_and_a_scoreboard(monkeypatch, capsys):
    """Num IPython (o que o Jupyter do aluno roda): erro na função do aluno sai a partir da linha
    dele, em português e sem a cadeia de tracebacks; tarefa em branco é uma linha; o placar diz
    tarefa por tarefa o que passou, o que falhou (com a 1ª mensagem) e o que falta."""
    import re

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shown = []
    monkeypatch.setattr(shell, "_showtraceback", lambda t, v, stb: shown.append(re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(stb))))
    try:
        assert shell.run_cell(CONFERIR).error_in_exec is None
        shell.run_cell("def f(x):\n    return g(x)\n\n\ndef g(x):\n    return x.nao_existe\n\n\n"
                       "def h():\n    raise NotImplementedError('Tarefa ainda não feita')\n")
        r = shell.run_cell("_tarefa(1, 'f', 'test_f', 'cap. 1')\nconferir('f', _chamar('f com 1', f, 1), 1)\n_visiveis_passaram(1)")
        assert r.error_in_exec is not None and len(shown) == 1, shown
        assert "f com 1: sua função levantou AttributeError" in shown[0] and "return g(x)" in shown[0], shown[0]
        assert "return x.nao_existe" in shown[0] and "above exception" not in shown[0] and "_chamar" not in shown[0]
        r = shell.run_cell("_tarefa(2, 'h', 'test_h', 'cap. 2')\nh()\n_visiveis_passaram(2)")
        assert r.error_in_exec is not None and shown[1] == (
            "Tarefa 2: ainda não feita. Complete a célula da sua função acima (apague o `raise NotImplementedError`), "
            "rode-a e depois rode esta célula de novo."), shown[1]
        r = shell.run_cell("_tarefa(3, 'certa', 'test_c', 'cap. 3')\nconferir('um', 1, 1)\n_visiveis_passaram(3)")
        assert r.error_in_exec is None
        capsys.readouterr()
        shell.run_cell("placar()")
        out = capsys.readouterr().out
        assert "Tarefa 1 — f: ❌ falhou" in out and "primeira mensagem: f com 1: sua função levantou AttributeError" in out
        assert "Tarefa 2 — h: ⬜ ainda não feita" in out and "Tarefa 3 — certa: ✅" in out
        assert "célula de testes `test_f`" in out and "no livro: cap. 1" in out and "1 de 3 tarefas" in out
    finally:
        shell.set_custom_exc((), None)
        shell.events.unregister("post_run_cell", shell._placar_do_curso)
