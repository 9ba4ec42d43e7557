"""atencao.flash contra o torch: softmax online, merge, atenção em blocos e o
passo de volta do FlashAttention-2.

Oráculos: torch.softmax, torch.logsumexp, F.scaled_dot_product_attention e o
autograd do torch sobre a atenção ingênua escrita aqui mesmo (não a do pacote).
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import atencao as at
from atencao.flash import SoftmaxState, block_schedule, count_blocks, merge, online_softmax, tiled_attention


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tensores pequenos: uma thread basta, e numa máquina compartilhada e
    sobrecarregada as barreiras do OpenMP entre 2 threads deixam estes testes
    cerca de 2x mais lentos (16 s contra 8,6 s, medido aqui com carga 8)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def naive(q, k, v, causal=True, start=0):
    """Atenção ingênua em torch, diferenciável: devolve (saída, lse)."""
    n, m = q.shape[-2], k.shape[-2]
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., n, m)
    if causal:
        i = torch.arange(n)[:, None] + start
        j = torch.arange(m)[None, :]
        s = s.masked_fill(j > i, float("-inf"))
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s, dim=-1)


def rand(*shape, dtype=torch.float64, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype).requires_grad_(grad)


# (lead, n, m, d, dv, block): T=1, bloco que não divide T, bloco maior que T, n < m
CASES = [
    ((), 1, 1, 1, 1, 4),
    ((1,), 7, 7, 3, 5, 4),
    ((2, 3), 33, 33, 16, 8, 8),
    ((1, 2), 50, 50, 8, 8, 64),
    ((2,), 5, 23, 7, 9, 4),  # consultas novas sobre um cache: start = m - n
]


# --------------------------------------------------------------------------
# Softmax online e merge
# --------------------------------------------------------------------------

@pytest.mark.parametrize("block", [1, 3, 64, 1000])
def test_online_softmax_equals_torch_softmax(block):
    x = rand(4, 6, 97, seed=block) * 10
    np.testing.assert_allclose(online_softmax(x, block), torch.softmax(x, -1), atol=1e-15, rtol=1e-13)
    xn = x.numpy()
    out = online_softmax(xn, block)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, torch.softmax(x, -1).numpy(), atol=1e-15, rtol=1e-13)


def test_online_softmax_survives_large_values_and_masked_blocks():
    x = torch.tensor([[1000.0, 1001.0, -math.inf, -math.inf, 999.0]], dtype=torch.float32)
    # o segundo bloco (de tamanho 2) é todo -inf: precisa contribuir com massa 0, sem NaN
    torch.testing.assert_close(online_softmax(x, 2), torch.softmax(x, -1), atol=1e-7, rtol=0)


def test_online_softmax_all_masked_row_is_nan_like_torch():
    x = torch.full((2, 5), -math.inf)
    x[1] = torch.arange(5.0)
    y = online_softmax(x, 2)
    assert torch.isnan(y[0]).all()
    torch.testing.assert_close(y[1], torch.softmax(x[1], -1))


def _state(s, v):
    """Estado parcial (m, l, acc) calculado direto de pontuações s (n, bk) e v (bk, dv)."""
    m = s.amax(-1)
    p = torch.exp(s - m[:, None])
    return SoftmaxState(m, p.sum(-1), p @ v)


def test_merge_of_two_halves_equals_state_of_the_union():
    s, v = rand(6, 40, seed=1) * 5, rand(40, 3, seed=2)
    a, b, whole = _state(s[:, :15], v[:15]), _state(s[:, 15:], v[15:]), _state(s, v)
    for merged in (merge(a, b), merge(b, a)):  # a ordem não importa
        for got, want in zip(merged, whole):
            torch.testing.assert_close(got, want, atol=1e-12, rtol=1e-12)
    out = merge(a, b).acc / merge(a, b).l[:, None]
    torch.testing.assert_close(out, torch.softmax(s, -1) @ v, atol=1e-12, rtol=1e-12)


def test_merge_with_an_empty_state_changes_nothing():
    s, v = rand(4, 10, seed=3), rand(10, 2, seed=4)
    a = _state(s, v)
    empty = SoftmaxState(torch.full((4,), -math.inf, dtype=torch.float64),
                         torch.zeros(4, dtype=torch.float64), torch.zeros(4, 2, dtype=torch.float64))
    for merged in (merge(a, empty), merge(empty, a)):
        for got, want in zip(merged, a):
            torch.testing.assert_close(got, want, atol=0, rtol=0)
    both = merge(empty, empty)
    assert not any(torch.isnan(t).any() for t in both)


def test_merge_works_in_numpy():
    s, v = rand(3, 8, seed=5).numpy(), rand(8, 2, seed=6).numpy()
    a = _state(torch.from_numpy(s[:, :5]), torch.from_numpy(v[:5]))
    b = _state(torch.from_numpy(s[:, 5:]), torch.from_numpy(v[5:]))
    an = SoftmaxState(*(t.numpy() for t in a))
    bn = SoftmaxState(*(t.numpy() for t in b))
    got = merge(an, bn)
    assert isinstance(got.l, np.ndarray)
    np.testing.assert_allclose(got.acc / got.l[:, None], torch.softmax(torch.from_numpy(s), -1).numpy() @ v, atol=1e-12)


# --------------------------------------------------------------------------
# O cronograma de blocos
# --------------------------------------------------------------------------

@pytest.mark.parametrize("n,m,block,start", [(8, 8, 2, 0), (10, 10, 3, 0), (5, 23, 4, 18), (1, 1, 1, 0), (9, 30, 4, 21)])
def test_schedule_skips_exactly_the_blocks_the_mask_erases(n, m, block, start):
    forbidden = np.arange(m)[None, :] > np.arange(n)[:, None] + start  # (n, m)
    sched = dict(block_schedule(n, m, block, causal=True, start=start))
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        computed = {(j0, j1): needs for j0, j1, needs in sched[(i0, i1)]}
        for j0 in range(0, m, block):
            j1 = min(j0 + block, m)
            tile = forbidden[i0:i1, j0:j1]
            if tile.all():
                assert (j0, j1) not in computed  # inteiro no futuro: pulado
            else:
                assert computed[(j0, j1)] == bool(tile.any())  # máscara só onde precisa


def test_causal_square_skips_nb_times_nb_minus_1_over_2_blocks():
    for T, block in [(1024, 128), (4096, 128), (1000, 128)]:
        nb = math.ceil(T / block)
        c = count_blocks(T, T, block)
        assert c == {"total": nb * nb, "calculados": nb * (nb + 1) // 2,
                     "pulados": nb * (nb - 1) // 2, "com_mascara": nb}
    assert count_blocks(100, 100, 10, causal=False)["pulados"] == 0


# --------------------------------------------------------------------------
# Passo de ida
# --------------------------------------------------------------------------

@pytest.mark.parametrize("lead,n,m,d,dv,block", CASES)
@pytest.mark.parametrize("causal", [True, False])
def test_tiled_attention_equals_sdpa_and_logsumexp(lead, n, m, d, dv, block, causal):
    q, k, v = rand(*lead, n, d, seed=1), rand(*lead, m, d, seed=2), rand(*lead, m, dv, seed=3)
    start = m - n if causal else 0
    out, lse = tiled_attention(q, k, v, causal=causal, block=block, start=start)
    mask = None
    if causal:
        mask = ~(torch.arange(m)[None, :] > torch.arange(n)[:, None] + start)  # True = permitido
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert out.shape == (*lead, n, dv) and lse.shape == (*lead, n)
    torch.testing.assert_close(out, ref, atol=1e-12, rtol=1e-10)  # float64: só arredondamento
    torch.testing.assert_close(lse, naive(q, k, v, causal, start)[1], atol=1e-12, rtol=1e-12)


def test_numpy_in_numpy_out_and_equal_to_core_attention():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((3, 37, 8)) for _ in range(3))
    out, lse = tiled_attention(q, k, v, block=16)
    assert isinstance(out, np.ndarray) and isinstance(lse, np.ndarray)
    np.testing.assert_allclose(out, at.attention(q, k, v), atol=1e-12)


def test_float32_within_1e5_of_sdpa_at_gpt2_head_size():
    q, k, v = (rand(1, 2, 300, 64, dtype=torch.float32, seed=s) for s in range(3))
    out, lse = tiled_attention(q, k, v, block=128)
    assert out.dtype == torch.float32 and lse.dtype == torch.float32
    # float32: eps ~1.2e-7, somas de ~300 termos reescaladas algumas vezes
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-5, rtol=1e-5)


def test_float16_returns_float16_close_to_float32_result():
    q, k, v = (rand(2, 45, 16, dtype=torch.float16, seed=s) for s in range(3))
    out, lse = tiled_attention(q, k, v, block=16)
    assert out.dtype == torch.float16 and lse.dtype == torch.float32
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)
    # a saída é arredondada para float16 (eps ~9.8e-4) no fim; a conta é em float32
    torch.testing.assert_close(out.float(), ref, atol=2e-3, rtol=2e-3)


def test_leading_dims_broadcast_like_core_attention():
    q, k, v = rand(2, 3, 10, 4, seed=1), rand(1, 3, 10, 4, seed=2), rand(3, 10, 4, seed=3)
    out, _ = tiled_attention(q, k, v, block=4)
    torch.testing.assert_close(out, naive(q, k, v)[0], atol=1e-12, rtol=1e-12)


def test_future_keys_do_not_change_past_outputs():
    q, k, v = rand(1, 40, 8, seed=1), rand(1, 40, 8, seed=2), rand(1, 40, 8, seed=3)
    out, _ = tiled_attention(q, k, v, block=8)
    k2, v2 = k.clone(), v.clone()
    k2[:, 20:] += 100.0
    v2[:, 20:] -= 100.0
    out2, _ = tiled_attention(q, k2, v2, block=8)
    torch.testing.assert_close(out[:, :20], out2[:, :20], atol=0, rtol=0)
    assert not torch.allclose(out[:, 20:], out2[:, 20:])


# --------------------------------------------------------------------------
# Passo de volta
# --------------------------------------------------------------------------

@pytest.mark.parametrize("lead,n,m,d,dv,block", CASES)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("dtype,tol", [(torch.float64, 1e-8), (torch.float32, 1e-4)])
def test_gradients_equal_autograd_of_naive_attention(lead, n, m, d, dv, block, causal, dtype, tol):
    q, k, v = rand(*lead, n, d, dtype=dtype, seed=1, grad=True), rand(*lead, m, d, dtype=dtype, seed=2, grad=True), \
        rand(*lead, m, dv, dtype=dtype, seed=3, grad=True)
    start = m - n if causal else 0
    dout, dlse = rand(*lead, n, dv, dtype=dtype, seed=4), rand(*lead, n, dtype=dtype, seed=5)
    out, lse = tiled_attention(q, k, v, causal=causal, block=block, start=start)
    got = torch.autograd.grad((out * dout).sum() + (lse * dlse).sum(), (q, k, v))
    ro, rl = naive(q, k, v, causal, start)
    want = torch.autograd.grad((ro * dout).sum() + (rl * dlse).sum(), (q, k, v))
    for name, g, w in zip("qkv", got, want):
        torch.testing.assert_close(g, w, atol=tol, rtol=tol, msg=lambda s: f"d{name}: {s}")


@pytest.mark.parametrize("causal", [True, False])
def test_gradcheck_small_float64(causal):
    q, k = rand(1, 2, 11, 4, seed=1, grad=True), rand(1, 2, 11, 4, seed=2, grad=True)
    v = rand(1, 2, 11, 3, seed=3, grad=True)
    assert torch.autograd.gradcheck(lambda q, k, v: tiled_attention(q, k, v, causal=causal, block=4), (q, k, v))


def test_backward_saves_only_q_k_v_out_and_lse():
    T = 64
    q, k, v = (rand(1, 2, T, 8, seed=s, grad=True) for s in range(3))
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(tuple(t.shape)) or t, lambda t: t):
        out, lse = tiled_attention(q, k, v, block=16)
    assert sorted(saved) == sorted([(2, T, 8)] * 4 + [(2, T)])  # q, k, v, out (achatados) e lse
    out.sum().backward()
    assert q.grad is not None and torch.isfinite(q.grad).all()


# --------------------------------------------------------------------------
# Entradas ruins
# --------------------------------------------------------------------------

def test_bad_inputs_raise_clear_errors():
    q = torch.randn(4, 8)
    with pytest.raises(ValueError, match="block"):
        tiled_attention(q, q, q, block=0)
    with pytest.raises(ValueError, match="mesma última dimensão"):
        tiled_attention(q, torch.randn(4, 7), q)
    with pytest.raises(ValueError, match="mesmo número de posições"):
        tiled_attention(q, q, torch.randn(5, 8))
    with pytest.raises(TypeError, match="misture"):
        tiled_attention(q, q.numpy(), q)
    with pytest.raises(TypeError, match="ponto flutuante"):
        tiled_attention(*(torch.ones(2, 2, dtype=torch.int64),) * 3)
    with pytest.raises(ValueError, match="start"):
        tiled_attention(q, q, q, causal=False, start=2)
    with pytest.raises(ValueError, match="pelo menos 2"):
        tiled_attention(torch.randn(4), q, q)
    with pytest.raises(ValueError, match="compatíveis"):
        tiled_attention(torch.randn(2, 4, 8), torch.randn(3, 4, 8), torch.randn(3, 4, 8))
    with pytest.raises(TypeError, match="SoftmaxState"):
        merge((1, 2, 3), (1, 2, 3))
    with pytest.raises(ValueError, match="block"):
        online_softmax(q, block=-1)


# --------------------------------------------------------------------------
# Memória: a medida e a promessa O(T)
# --------------------------------------------------------------------------

def test_tensor_meter_counts_live_bytes_and_ignores_inputs_and_views():
    from atencao.medir import TensorBytesMeter
    x = torch.zeros(1000)
    with TensorBytesMeter(exclude=[x]) as meter:
        a = torch.ones(1000)  # 4000 bytes
        b = a[:10]  # visão: nada novo
        c = x + 1  # 4000 bytes
        del a, b, c
        d = torch.empty(500, dtype=torch.float64)  # 4000 bytes, depois que a e c morreram
        x.add_(1)  # no lugar, numa entrada: nada
    assert meter.peak == 8000 and meter.current == 4000
    del d


def test_tiled_attention_extra_memory_is_a_tiny_fraction_of_naive():
    from atencao.medir import peak_tensor_bytes
    T, d = 1024, 64
    q, k, v = (rand(1, 1, T, d, dtype=torch.float32, seed=s) for s in range(3))
    naive_b = peak_tensor_bytes(lambda: at.attention(q, k, v), (q, k, v))
    tiled_b = peak_tensor_bytes(lambda: tiled_attention(q, k, v, block=128), (q, k, v))
    assert naive_b >= T * T * 4  # ao menos uma matriz T x T em float32
    # em blocos: saída (T d) + lse + estado de um bloco (128 x 128): O(T), não O(T^2)
    assert tiled_b < 0.05 * naive_b, (tiled_b, naive_b)


def test_fmt_sci_writes_brazilian_scientific_notation():
    from atencao.medir import fmt_sci
    assert fmt_sci(1.234e-16) == "1,2 × 10⁻¹⁶"
    assert fmt_sci(9.96e-5) == "1,0 × 10⁻⁴"  # arredondar não pode dar "10,0 × 10⁻⁵"
    assert fmt_sci(0.0) == "0"
    assert fmt_sci(-2.5e3) == "-2,5 × 10³"
