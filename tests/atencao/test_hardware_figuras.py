"""atencao.hardware (a tabela de GPUs das frases do livro) e atencao.figuras (figuras dos cap. 10 e 11)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from atencao import hardware as hw
from atencao.figuras import online_trace, plot_online_trace, plot_tile_dataflow


def test_every_device_has_a_source_a_date_and_sane_numbers():
    for d in hw.DEVICES:
        assert d.source.startswith("https://") and len(d.checked) == 10
        assert 16 <= d.memory_gb <= 1024 and 1e12 <= d.bandwidth <= 1e14 and 1e14 <= d.peak_bf16 <= 1e17
        assert 50 < d.ridge < 1000   # GPUs de data center: a virada fica em centenas de FLOP/byte


def test_memory_sentence_follows_the_table():
    maior = hw.largest()
    assert "cabe em todas" in hw.memory_sentence(1e9)
    quase = hw.memory_sentence(0.95 * maior.memory_bytes)
    assert quase.startswith("não cabe numa GPU de 80 GB") and f"só a {maior.name} a guardaria" in quase
    assert "95%" in quase
    assert hw.memory_sentence(2 * maior.memory_bytes).startswith("mais do que a memória de qualquer GPU")
    assert len(hw.fitting(0)) == len(hw.DEVICES) and hw.fitting(10 * maior.memory_bytes) == []


def test_bad_input_gets_a_portuguese_error():
    with pytest.raises(KeyError, match="não está na tabela"):
        hw.device("GPU imaginária")
    with pytest.raises(ValueError, match="número de bytes"):
        hw.fitting(-1)


def test_table_html_has_one_row_per_device():
    html = hw.table_html()
    assert html.count("<tr>") == len(hw.DEVICES) + 1 and "295" in html   # virada da H100: 989/3,35


def test_online_trace_ends_with_the_softmax_statistics_of_the_row():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(300) * 3 + np.linspace(0, 5, 300)
    tr = online_trace(x, 32)
    assert tr.m.size == 10 and tr.ends[-1] == 300
    assert tr.m[-1] == x.max() and np.isclose(tr.l[-1], np.exp(x - x.max()).sum())
    assert np.all(np.diff(tr.m) >= 0)
    assert np.array_equal(tr.rescaled[1:], np.diff(tr.m) > 0)                  # reescala <=> o máximo subiu
    assert np.all(tr.factor[tr.rescaled] < 1) and np.all(np.diff(tr.l)[~tr.rescaled[1:]] > 0)


def test_figure_functions_draw_and_check_their_input():
    fig, _ = plot_online_trace(np.arange(10.0), block=3)
    assert len(fig.axes) == 2
    assert plot_tile_dataflow(1024, 64, 128, i=3, j=1).axes
    with pytest.raises(ValueError, match="bloco"):
        online_trace(np.zeros(4), 0)
    with pytest.raises(ValueError, match="0 <= j <= i"):
        plot_tile_dataflow(256, 64, 128, i=0, j=1)
