"""O que volta escrito do kernel do aluno (wire/harness.py, `_may_copy_back`), sem kernel:
só os buffers que nenhum código de fora do lançador enxerga (revisão de 2026-12-01: C3).
"""

from __future__ import annotations

import sys

import numpy as np

from autograder.wire import harness


def _launcher(x, copy_of_x):
    """Como `flash_forward`: cria o buffer de saída e passa ao aluno junto com a entrada."""
    out = np.empty(3)
    return harness._may_copy_back((x, copy_of_x, out), {}, sys._getframe(0))


def test_copy_back_only_into_buffers_no_outer_code_can_see():
    """C3: um array do teste (ou uma visão dele) nunca volta escrito pelo aluno; o buffer que
    só o lançador enxerga, sim."""
    x = np.arange(6.0)
    # (fora do assert: a reescrita do pytest guardaria os temporários em variáveis locais)
    whole = _launcher(x, x.copy())
    view = _launcher(x[1:4], x[:3].copy())                           # visão de x: não volta
    assert whole == {"a1", "a2"} and view == {"a1", "a2"}, (whole, view)
