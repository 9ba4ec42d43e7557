"""Onde roda a parte oculta (worker/deferred.py, revisão M1), sem kernel: o corte da célula e
os nomes do teste guardados e devolvidos (`park`/`unpark` do lado do corretor)."""

from __future__ import annotations

from autograder.wire import harness
from autograder.worker.cellcode import split_hidden
from autograder.worker.deferred import split_deferred

CELL = ("x = 1\nassert f(x) == 2\n"
        "### BEGIN HIDDEN TESTS\nassert f(p) == 2 * p\n### END HIDDEN TESTS\n"
        "assert True\n")


def test_the_cut_is_at_the_first_part_that_is_not_visible():
    chunks = split_hidden(CELL)
    assert [h for h, _ in chunks] == [False, True, False]
    now, later = split_deferred(chunks)
    assert now == chunks[:1] and later == chunks[1:]        # o visível depois da oculta vai junto
    assert split_deferred([(False, "a = 1\n")]) == ([(False, "a = 1\n")], [])
    assert split_deferred([(None, CELL)]) == ([], [(None, CELL)])  # célula inteira: toda no fim


def test_the_hidden_part_reads_the_names_the_test_had():
    """Um teste posterior religa `p` e cria `q`; a parte oculta vê o `p` do seu teste (também pela
    função do teste, que tem o mesmo dicionário como `__globals__`) e não vê `q`."""
    ns: dict = {}
    exec("p = 3\ndef dobro_de_p():\n    return 2 * p\n", ns)
    harness.park(7, ns)
    exec("p = 100\nq = 1\n", ns)
    harness.unpark(7, ns)
    assert ns["p"] == 3 and "q" not in ns and ns["dobro_de_p"]() == 6
    assert 7 not in harness._parked
