"""Os exercícios dos capítulos 2 a 5 (autograder/fontes/cap02..cap05).

Sem kernel Jupyter: as células de código de cada notebook rodam em sequência
num dicionário (o que um kernel faz, sem os ~4 s de partida). Três cenários:
  - as soluções passam em todos os testes, visíveis e ocultos;
  - cada solução apagada (como o nbgrader faz ao gerar a versão do aluno)
    faz falhar a célula de testes logo abaixo dela;
  - uma solução que devolve None falha com AssertionError (mensagem em
    português do conferir/_tensor), não com um AttributeError no meio do teste.
A execução real dos notebooks com nbconvert fica com os testes do pipeline.
"""

import contextlib
import io
import re

import matplotlib
import pytest

matplotlib.use("Agg")

from autograder.fontes import cap02, cap03, cap04, cap05  # noqa: E402
from autograder.nbbuild import CONFERIR  # noqa: E402

FONTES = {"02-escala": cap02, "03-mascara-causal": cap03, "04-softmax": cap04, "05-mistura-com-v": cap05}
SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION\n.*?### END SOLUTION", re.S | re.M)


def cells(slug):
    return FONTES[slug].build().nb.cells


def meta(cell):
    return cell.metadata["nbgrader"]


def run(cells_, replace=None, stop=None):
    """Roda as células de código em ordem; devolve {grade_id: exceção ou None}.

    Com `stop`, para na célula `stop` e pula as outras células de teste (elas não
    definem nada que as seguintes usem), para o cenário custar só o necessário.
    """
    ns: dict = {}
    result = {}
    for cell in cells_:
        if cell.cell_type != "code":
            continue
        gid = meta(cell)["grade_id"]
        if stop and meta(cell).get("grade") and gid != stop:
            continue
        src = replace(cell) if replace else cell.source
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(src, f"<{gid}>", "exec"), ns)
            result[gid] = None
        except Exception as e:  # noqa: BLE001 - queremos o que cada célula levantou
            result[gid] = e
        finally:
            matplotlib.pyplot.close("all")
        if gid == stop:
            break
    return result


def solution_and_test_ids(cells_):
    """Pares (célula de solução, primeira célula de testes depois dela)."""
    pairs, pending = [], None
    for c in cells_:
        m = meta(c)
        if c.cell_type == "code" and m.get("solution"):
            pending = m["grade_id"]
        elif c.cell_type == "code" and m.get("grade") and pending:
            pairs.append((pending, m["grade_id"]))
            pending = None
    return pairs


@pytest.mark.parametrize("slug", FONTES)
def test_notebook_structure_follows_the_conventions(slug):
    cs = cells(slug)
    graded = [c for c in cs if meta(c).get("grade")]
    assert 3 <= len(graded) <= 6, f"{slug}: {len(graded)} tarefas com nota"
    assert all(meta(c).get("points", 0) > 0 for c in graded)
    assert any(c.cell_type == "markdown" for c in graded), "falta uma resposta escrita"
    setup = next(c for c in cs if meta(c)["grade_id"] == "preparacao")
    assert CONFERIR in setup.source and "import atencao" not in "".join(c.source for c in cs)
    for c in graded:
        if c.cell_type == "code":
            assert "### BEGIN HIDDEN TESTS" in c.source and "### END HIDDEN TESTS" in c.source
            assert c.metadata["nbgrader"]["locked"]


@pytest.mark.parametrize("slug", FONTES)
def test_solutions_pass_every_test(slug):
    failed = {k: repr(v) for k, v in run(cells(slug)).items() if v is not None}
    assert not failed


@pytest.mark.parametrize("slug", FONTES)
def test_blank_solutions_fail_their_tests_with_portuguese_messages(slug):
    cs = cells(slug)
    pairs = solution_and_test_ids(cs)
    assert pairs
    for sol, test in pairs:
        # 1) como o nbgrader apaga a solução (o stub de nbgrader_config.py)
        def blank(cell, sol=sol):
            if meta(cell)["grade_id"] != sol:
                return cell.source
            return SOLUTION.sub(lambda m: f"{m[1]}# SEU CÓDIGO AQUI\n{m[1]}raise NotImplementedError(\"Complete esta célula\")", cell.source)

        res = run(cs, blank, stop=test)
        assert isinstance(res[test], NotImplementedError), f"{slug}/{test}: {res[test]!r}"

        # 2) uma resposta que devolve None: AssertionError com mensagem em português
        def none(cell, sol=sol):
            if meta(cell)["grade_id"] != sol:
                return cell.source
            return SOLUTION.sub(lambda m: f"{m[1]}return None", cell.source)

        err = run(cs, none, stop=test)[test]
        assert isinstance(err, AssertionError), f"{slug}/{test}: {err!r}"
        assert "None" in str(err) or "esperava" in str(err), f"{slug}/{test}: {err}"


@pytest.mark.parametrize("slug", FONTES)
def test_plausible_wrong_answer_fails_only_its_own_tests(slug):
    cs = cells(slug)
    wrong = FONTES[slug].ERRADO
    res = run(cs, lambda c: wrong.get(meta(c)["grade_id"], c.source))
    pairs = dict(solution_and_test_ids(cs))
    tests = {gid for gid in res if gid.startswith("test_")}
    failed = {gid for gid in tests if res[gid] is not None}
    # O teste da resposta errada falha com mensagem do conferir; os que não dependem
    # dela passam (nota parcial). Testes que usam a função errada também podem falhar.
    assert all(isinstance(res[pairs[g]], AssertionError) for g in wrong), {g: res[pairs[g]] for g in wrong}
    assert {pairs[g] for g in wrong} <= failed and failed != tests, failed
