"""plan/runner.py: um Ctrl-C no meio de uma gravação (notebook, resultado, gradebook) espera
ela terminar e vale logo depois, com o tratamento que havia antes."""

from __future__ import annotations

import os
import signal

import pytest

from autograder.plan import runner


@pytest.fixture
def default_sigint():
    """O Ctrl-C como num terminal (um processo do xdist pode tê-lo ignorado), desfeito no fim."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_ctrl_c_inside_a_recording_waits_for_it_to_end(default_sigint):
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with runner._interrupt_after():
            os.kill(os.getpid(), signal.SIGINT)
            steps.append("gravou")                  # o sinal chegou; a gravação segue
            with runner._interrupt_after():         # aninhado: o de fora decide
                steps.append("aninhado")
            steps.append("fim")
    assert steps == ["gravou", "aninhado", "fim"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_ctrl_c_a_recording_changes_nothing(default_sigint):
    with runner._interrupt_after():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

