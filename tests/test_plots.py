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
