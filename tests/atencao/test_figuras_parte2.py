"""As contas que as figuras interativas da Parte II enunciam, conferidas contra o código do pacote (sem navegador).

A figura do KV cache (book/_static/interativo/figuras/kv-cache.js) diz quantas
pontuações cada passo de `TinyModel.generate` calcula, com e sem cache; aqui
um gancho na atenção conta as pontuações visíveis de cada chamada de verdade.
"""

from __future__ import annotations

import torch

from atencao.model import TinyConfig, TinyModel


def visible_scores_per_step(use_cache: bool, T0: int, n: int) -> list[int]:
    """Pontuações visíveis (j <= i) que a camada 0 calcula em cada chamada de generate."""
    torch.manual_seed(0)
    model = TinyModel(TinyConfig(vocab_size=64, d_model=32, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=48))
    counts: list[int] = []

    def hook(mod, args, kwargs, out):
        T = args[0].shape[1]
        cache = kwargs.get("cache")
        start = cache.length if cache is not None else 0  # o cache avança depois de todas as camadas
        counts.append(T * start + T * (T + 1) // 2)  # consulta i (posição start + i) vê start + i + 1 chaves

    model.blocks[0].attn.register_forward_hook(hook, with_kwargs=True)
    model.generate(torch.zeros(1, T0, dtype=torch.long), n, use_cache=use_cache)
    return counts


def test_kv_cache_figure_counts_are_those_of_generate():
    for T0, n in ((1, 1), (5, 4), (16, 7)):
        L = [T0 + s - 1 for s in range(1, n + 1)]  # contexto do passo s
        assert visible_scores_per_step(False, T0, n) == [x * (x + 1) // 2 for x in L]
        assert visible_scores_per_step(True, T0, n) == [T0 * (T0 + 1) // 2] + L[1:]
