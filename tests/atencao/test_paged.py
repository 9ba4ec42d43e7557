"""PagedKVCache, SinkKVCache e mask_mod no TinyModel, contra o cache contíguo e
contra a atenção completa.

Oráculos: o KVCache contíguo (cap. 12, ele mesmo conferido contra o recálculo
completo), o recálculo completo do modelo sob a máscara (sem cache) e a
contabilidade de blocos feita aqui com ceil(comprimento / block_size).
"""

import math

import pytest
import torch

from atencao import masks as M
from atencao.model import (
    KVCache, PagedKVCache, PoolExhaustedError, SinkKVCache, TinyConfig, TinyModel, generate_paged,
)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def small_model(dtype=torch.float64, seed=0, n_kv_heads=2):
    torch.manual_seed(seed)
    cfg = TinyConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=4, n_kv_heads=n_kv_heads, d_ff=64)
    return TinyModel(cfg).to(dtype).eval()


def tokens(n, seed):
    return torch.randint(0, 64, (n,), generator=torch.Generator().manual_seed(seed))


# --------------------------------------------------------------------------
# PagedKVCache
# --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("block_size", [1, 4, 16])
def test_paged_decoding_equals_contiguous_cache_with_interleaved_sequences(dtype, block_size):
    """Três sequências de comprimentos diferentes, decodificadas em passos
    intercalados no mesmo pool: logits iguais aos do KVCache contíguo."""
    model = small_model(dtype)
    lens = [1, 7, 18]
    idx = [tokens(n + 12, seed=n) for n in lens]
    pool = PagedKVCache.for_model(model, n_blocks=64, block_size=block_size)
    seqs = [pool.new_sequence() for _ in lens]
    caches = [KVCache.for_model(model, 1, n + 12) for n in lens]
    with torch.no_grad():
        for s, c, x, n in zip(seqs, caches, idx, lens):  # prefill
            torch.testing.assert_close(model(x[None, :n], cache=pool.sequence(s)),
                                       model(x[None, :n], cache=c), rtol=0, atol=0)
        for t in range(12):
            for s, c, x, n in zip(seqs, caches, idx, lens):
                a = model(x[None, n + t:n + t + 1], cache=pool.sequence(s))
                b = model(x[None, n + t:n + t + 1], cache=c)
                torch.testing.assert_close(a, b, rtol=0, atol=0)
    for s, n in zip(seqs, lens):
        assert pool.lengths[s] == n + 12
        assert len(pool.block_tables[s]) == math.ceil((n + 12) / block_size)
    used = sum(len(t) for t in pool.block_tables.values())
    assert pool.n_free == 64 - used
    assert sorted(b for t in pool.block_tables.values() for b in t) == sorted(set(range(64)) - set(pool.free_blocks))


def test_generate_paged_gives_the_tokens_of_generate():
    model = small_model(torch.float32, seed=1)
    prompts = [tokens(n, seed=10 + n) for n in (2, 9, 17, 30)]
    pool = PagedKVCache.for_model(model, n_blocks=16, block_size=8)
    outs = generate_paged(model, prompts, 10, pool)
    for p, o in zip(prompts, outs):
        assert torch.equal(o, model.generate(p[None], 10)[0])
    assert pool.n_free == 16 and pool.block_tables == {}  # free=True devolveu tudo


def test_generate_paged_on_the_course_model_with_block_size_16():
    """O modelo do curso (TinyConfig padrão), blocos de 16 como no vLLM."""
    torch.manual_seed(2)
    model = TinyModel(TinyConfig()).eval()
    prompts = [tokens(n, seed=20 + n) for n in (5, 16, 23)]
    pool = PagedKVCache.for_model(model, n_blocks=6, block_size=16)  # 1 + 2 + 2 blocos no fim
    outs = generate_paged(model, prompts, 8, pool, free=False)
    assert [len(t) for t in pool.block_tables.values()] == [1, 2, 2] and pool.n_free == 1
    for p, o in zip(prompts, outs):
        assert torch.equal(o, model.generate(p[None], 8)[0])


def test_gather_returns_what_append_wrote_across_non_contiguous_blocks():
    g = torch.Generator().manual_seed(3)
    pool = PagedKVCache(n_layers=2, n_kv_heads=3, d_k=4, n_blocks=10, block_size=3, dtype=torch.float64)
    a, b = pool.new_sequence(), pool.new_sequence()
    written = {a: [], b: []}
    for step, (s, T) in enumerate([(a, 2), (b, 4), (a, 5), (b, 1), (a, 1)]):
        k = torch.randn(2, 3, T, 4, generator=g, dtype=torch.float64)  # (camadas, Hkv, T, d_k)
        for layer in range(2):
            kk, vv = pool.append(s, layer, k[layer], -k[layer])
            assert kk.shape == (3, pool.lengths[s] + T, 4)
        pool.advance(s, T)
        written[s].append(k)
    for s in (a, b):
        want = torch.cat(written[s], dim=2)  # (camadas, Hkv, comprimento, d_k)
        for layer in range(2):
            kk, vv = pool.gather(s, layer)
            torch.testing.assert_close(kk, want[layer], rtol=0, atol=0)
            torch.testing.assert_close(vv, -want[layer], rtol=0, atol=0)
    # a lista livre entrega 0, 1, 2, ... na ordem dos pedidos: a sequência a ficou
    # espalhada (0, depois 3 e 4), e mesmo assim gather a remontou na ordem
    assert pool.block_tables == {a: [0, 3, 4], b: [1, 2]}


def test_free_returns_blocks_and_they_are_reused():
    pool = PagedKVCache(n_layers=1, n_kv_heads=1, d_k=2, n_blocks=4, block_size=2)
    a, b = pool.new_sequence(), pool.new_sequence()
    pool.reserve(a, 3)  # 2 blocos
    pool.reserve(b, 4)  # 2 blocos
    assert pool.n_free == 0
    blocks_a = list(pool.block_tables[a])
    pool.free(a)
    assert pool.n_free == 2 and a not in pool.block_tables
    c = pool.new_sequence()
    pool.reserve(c, 4)
    assert sorted(pool.block_tables[c]) == sorted(blocks_a)
    with pytest.raises(KeyError, match="não existe"):
        pool.gather(a, 0)


def test_exhausted_pool_raises_clear_error_and_takes_nothing():
    model = small_model(torch.float32)
    pool = PagedKVCache.for_model(model, n_blocks=3, block_size=4)
    s = pool.new_sequence()
    with torch.no_grad():
        model(tokens(9, 0)[None], cache=pool.sequence(s))  # 3 blocos
        t = pool.new_sequence()
        with pytest.raises(PoolExhaustedError, match=r"o pool do PagedKVCache acabou.*free\(seq\)"):
            model(tokens(2, 1)[None], cache=pool.sequence(t))
    assert pool.block_tables[t] == [] and pool.lengths[t] == 0 and pool.n_free == 0
    with pytest.raises(PoolExhaustedError, match="precisa de mais 1 bloco"):
        generate_paged(model, [tokens(4, 2)], 1, pool)


def test_paged_sequence_refuses_a_batch():
    model = small_model(torch.float32)
    pool = PagedKVCache.for_model(model, n_blocks=4, block_size=4)
    with pytest.raises(ValueError, match="B=1"):
        model(tokens(4, 0).repeat(2, 1), cache=pool.sequence(pool.new_sequence()))


def test_paged_pool_bytes_and_shapes():
    pool = PagedKVCache(n_layers=4, n_kv_heads=2, d_k=32, n_blocks=10, block_size=16, dtype=torch.float16)
    assert pool.k[0].shape == (10, 2, 16, 32)
    assert pool.nbytes == 2 * 4 * 10 * 2 * 16 * 32 * 2


# --------------------------------------------------------------------------
# mask_mod no modelo e SinkKVCache
# --------------------------------------------------------------------------

def test_model_with_causal_mask_mod_equals_default():
    model = small_model()
    x = tokens(20, 4)[None]
    torch.testing.assert_close(model(x, mask_mod=M.causal()), model(x), rtol=0, atol=1e-14)


def test_model_with_window_mask_matches_attention_by_hand():
    """A janela muda a saída, e só a partir da posição w (antes dela, a janela é a causal)."""
    model = small_model()
    x = tokens(20, 5)[None]
    full, win = model(x), model(x, mask_mod=M.sliding_window(6))
    torch.testing.assert_close(win[:, :6], full[:, :6], rtol=0, atol=1e-14)
    assert (win[:, 6:] - full[:, 6:]).abs().amax() > 1e-6


@pytest.mark.parametrize("n_sinks,w,prefill", [(2, 5, 8), (0, 4, 1), (4, 3, 2), (1, 1, 5), (3, 50, 6)])
def test_sink_cache_decoding_equals_full_attention_under_with_sinks(n_sinks, w, prefill):
    model = small_model()
    x = tokens(26, 6)[None]
    full = model(x, mask_mod=M.with_sinks(n_sinks, w))  # (1, 26, V): sem cache, máscara inteira
    cache = SinkKVCache.for_model(model, 1, n_sinks, w)
    outs = [model(x[:, :prefill], cache=cache)]
    for t in range(prefill, 26):
        outs.append(model(x[:, t:t + 1], cache=cache))
        assert cache.n_kept <= n_sinks + w - 1
    torch.testing.assert_close(torch.cat(outs, 1), full, rtol=1e-10, atol=1e-12)
    assert cache.length == 26
    keep = [p for p in range(26) if p < n_sinks or p > 26 - w]
    assert cache.positions.tolist() == keep


def test_sink_cache_keeps_memory_bounded():
    model = small_model(torch.float32)
    cache = SinkKVCache.for_model(model, 2, n_sinks=4, w=8)
    x = torch.randint(0, 64, (2, 40), generator=torch.Generator().manual_seed(7))
    with torch.no_grad():
        model(x[:, :20], cache=cache)
        for t in range(20, 40):
            model(x[:, t:t + 1], cache=cache)
    assert cache.k[0].shape == (2, 2, 4 + 8 - 1, 8)


def test_model_row_without_visible_key_gives_zero_attention_not_nan():
    """A definição de atencao.masks (linha vazia: saída 0) vale também no modelo."""
    from atencao.model import MultiHeadAttention

    torch.manual_seed(8)
    mha = MultiHeadAttention(16, 4, 2).double()
    x = torch.randn(1, 6, 16, dtype=torch.float64)
    out = mha(x, mask_mod=lambda q, kv: kv < q)  # a consulta 0 não vê nada
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out[0, 0], torch.zeros(16, dtype=torch.float64))
