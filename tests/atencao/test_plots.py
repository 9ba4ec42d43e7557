import numpy as np
import pytest

from atencao import plots


def test_brazilian_number_formats():
    assert plots.fmt_int(1_048_576) == "1.048.576"
    assert plots.fmt_int(68_719_476_736) == "68.719.476.736"
    assert plots.fmt_num(98.2012, 1) == "98,2"
    assert plots.fmt_num(1234.5, 2) == "1.234,50"
    assert plots.fmt_bytes(4 * 1024**2) == "4,00 MiB"
    assert plots.fmt_bytes(16 * 1024**3) == "16,00 GiB"
    assert plots.fmt_bytes(512) == "512 B"


def test_heatmap_draws_masked_cells_and_rejects_3d():
    ax = plots.heatmap(np.arange(9.0).reshape(3, 3), masked=np.triu(np.ones((3, 3), bool), 1))
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 6  # 3 posições mascaradas não recebem número
    with pytest.raises(ValueError, match="2D"):
        plots.heatmap(np.zeros((2, 2, 2)))


def test_axes_write_numbers_in_brazilian_format():
    """Toda escala linear (eixos e barras de cor) usa FormatadorBR: 0,5 e 4.096, não 0.5 e 4096."""
    import matplotlib.pyplot as plt

    from atencao.plots import FormatadorBR, brazilian

    fig, ax = plt.subplots()
    ax.plot([0, 0.5, 1.5], [0, 2048, 4096])
    fig.canvas.draw()
    xs = [t.get_text() for t in ax.get_xticklabels()]
    ys = [t.get_text() for t in ax.get_yticklabels()]
    plt.close(fig)
    assert isinstance(ax.xaxis.get_major_formatter(), FormatadorBR)
    assert "0,2" in xs and not [x for x in xs if "." in x], xs
    assert "4.000" in ys, ys
    assert brazilian("−0.25 e 1500") == "−0,25 e 1.500"


def test_heatmap_annotations_are_brazilian():
    ax = plots.heatmap(np.array([[0.25, 1500.0], [0.5, 0.125]]))
    assert sorted(t.get_text() for t in ax.texts) == ["0,12", "0,25", "0,50", "1.500,00"]


def test_score_panels_share_one_colour_scale_with_the_uniform_marked():
    """N5 da revisão de 2026-12-05: um painel cujos valores ficam no nível uniforme não pode
    ganhar a cor mais clara só porque cada painel tinha a sua escala."""
    import matplotlib.pyplot as plt

    painéis = {"forte": np.array([[0.05, 0.40], [0.10, 0.12]]), "ruído": np.array([[0.02, 0.03], [0.025, 0.01]])}
    uniforme = {"forte": 0.05, "ruído": 0.03}
    fig = plots.score_panels(painéis, uniforme, ncols=2)
    imagens = [im for ax in fig.axes for im in ax.images]
    assert len(imagens) == 2
    assert {im.get_clim() for im in imagens} == {(0.0, 0.40)}      # uma escala só, começando em zero
    barras = [ax for ax in fig.axes if not ax.images and ax.get_ylim() == (0.0, 0.40)]
    assert len(barras) == 1, "uma barra de cores para todos os painéis"
    linhas = {round(ln.get_ydata()[0], 6) for ln in barras[0].lines}
    assert {0.05, 0.03} <= linhas, linhas                          # o nível uniforme marcado
    fraco = plots.score_panels({"só ruído": painéis["ruído"]}, {"só ruído": 0.03}, ncols=1)
    assert fraco.axes[0].images[0].get_clim() == (0.0, pytest.approx(0.09))   # ao menos 3 vezes o uniforme
    with pytest.raises(ValueError, match="um uniforme por painel"):
        plots.score_panels(painéis, {"forte": 0.05})
    plt.close("all")
