"""atencao.memoria contra os buffers de verdade dos caches e contra a tabela 1
do DeepSeek-V2.

Oráculos: KVCache.nbytes e PagedKVCache.nbytes (tensores alocados de
verdade), o número de posições que o SinkKVCache guarda depois de decodificar,
e a conta (d_c + d_h^R) l = 9/2 d_h l do artigo do DeepSeek-V2.
"""

import math

import pytest
import torch

from atencao import memoria as mem
from atencao.model import KVCache, PagedKVCache, SinkKVCache, TinyConfig, TinyModel


def test_course_config_matches_the_allocated_kv_cache():
    cfg = TinyConfig()
    model = TinyModel(cfg)
    for batch, T in [(1, 1), (3, 100), (2, 257)]:
        cache = KVCache.for_model(model, batch, T)
        assert mem.kv_cache_bytes(mem.from_tiny(cfg), T, batch, bytes_per_elem=4) == cache.nbytes


def test_paged_pool_with_just_enough_blocks_matches_the_formula_rounded_to_blocks():
    cfg = TinyConfig()
    for T, bs in [(100, 16), (64, 16), (1, 16)]:
        n_blocks = math.ceil(T / bs)
        pool = PagedKVCache(cfg.n_layers, cfg.n_kv_heads, cfg.d_k, n_blocks, bs, dtype=torch.float16)
        assert pool.nbytes == mem.kv_cache_bytes(mem.from_tiny(cfg), n_blocks * bs, 1, 2)


def test_sink_cache_keeps_what_the_formula_counts_for_a_local_layer():
    """Uma camada local guarda window + n_sinks posições: as w - 1 + s entre
    chamadas mais o token da chamada."""
    cfg = TinyConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64)
    model = TinyModel(cfg).eval()
    s, w, T = 3, 7, 30
    cache = SinkKVCache.for_model(model, 1, s, w)
    x = torch.randint(0, 64, (1, T), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        model(x[:, :T - 1], cache=cache)
    kept_in_call = cache.n_kept + 1  # a última chamada traz o token T - 1
    local = mem.KVConfig("local", 2, 4, 2, 8, window=w, n_local_layers=2, n_sinks=s)
    assert mem.kv_cache_bytes(local, T, 1, 4) == 2 * 2 * 2 * 8 * kept_in_call * 4


def test_mla_per_token_is_nine_halves_d_h_l_as_in_deepseek_v2_table_1():
    c = mem.PUBLISHED["DeepSeek-V2"]
    assert c.latent_dim == 4 * c.d_head and c.rope_dim == c.d_head // 2
    assert mem.kv_cache_bytes(c, 1, 1, 1) == 9 * c.d_head * c.n_layers // 2
    mha = mem.PUBLISHED["DeepSeek-V2 como MHA"]
    assert mem.kv_cache_bytes(mha, 1, 1, 1) == 2 * 128 * 128 * 60


def test_window_layers_stop_growing_after_the_window():
    g = mem.PUBLISHED["Gemma 3 27B"]
    per_global = mem.kv_cache_bytes(mem.KVConfig("g", 10, 32, 16, 128), 1)  # só as 10 globais, 1 token
    a, b = mem.kv_cache_bytes(g, 50_000), mem.kv_cache_bytes(g, 50_001)
    assert b - a == per_global  # passada a janela, só as camadas globais crescem
    mistral = mem.PUBLISHED["Mistral 7B"]
    assert mem.kv_cache_bytes(mistral, 10_000) == mem.kv_cache_bytes(mistral, 4096)


def test_course_variants_order_mha_gqa_mqa_and_shrinking_windows():
    v = mem.course_variants()
    T = 1024
    b = {k: mem.kv_cache_bytes(c, T) for k, c in v.items()}
    assert b["MHA"] == 2 * b["GQA"] == 4 * b["MQA"]  # 4, 2 e 1 cabeças KV
    assert b["GQA + janela"] < b["GQA"] and b["GQA + janela"] < b["GQA + janela + ralos"]
    assert v["GQA + janela"].n_local_layers == 2  # 4 camadas alternando: 2 locais
    rows = mem.table(v, T)
    assert rows[0]["fracao_da_primeira"] == 1.0 and [r["nome"] for r in rows][0] == "MHA"
    assert rows[1]["bytes_por_token"] == b["GQA"] / T


def test_published_configs_have_sources():
    for c in mem.PUBLISHED.values():
        assert c.source


@pytest.mark.parametrize("kwargs", [dict(n_local_layers=5), dict(window=0, n_local_layers=1),
                                    dict(n_sinks=4), dict(latent_dim=8, window=4, n_local_layers=1)])
def test_bad_configs_raise_in_portuguese(kwargs):
    with pytest.raises(ValueError, match="deve|precisam|não"):
        mem.KVConfig("x", 4, 4, 2, 8, **kwargs)
