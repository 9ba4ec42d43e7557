"""atencao.masks e tiled_attention(mask_mod=...) contra referências densas.

Oráculos: a matriz densa de cada máscara escrita aqui mesmo com laços sobre
(i, j) (não a do pacote), a atenção ingênua escrita aqui (softmax do torch
sobre as pontuações mascaradas, linhas vazias = 0) e, onde o torch instalado
tem, o ``create_block_mask`` do FlexAttention.
"""

import math

import numpy as np
import pytest
import torch

from atencao import masks as M
from atencao.flash import block_schedule, count_blocks, tiled_attention


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tensores pequenos: uma thread basta numa máquina compartilhada."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def rand(*shape, dtype=torch.float64, seed=0, grad=False):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype).requires_grad_(grad)


def loop_mask(kind, n, m, start=0, w=None, s=0, ids=None):
    """Matriz (n, m) visível, montada par a par com a definição por extenso."""
    out = torch.zeros(n, m, dtype=torch.bool)
    for r in range(n):
        i = start + r
        for j in range(m):
            if kind == "causal":
                ok = j <= i
            elif kind == "window":
                ok = i - w < j <= i
            elif kind == "sinks":
                ok = j <= i and (i - w < j or j < s)
            elif kind == "doc":
                ok = j <= i and ids[i] == ids[j]
            out[r, j] = ok
    return out


def naive(q, k, v, vis):
    """Atenção ingênua sob a matriz visível vis (n, m); linhas vazias: saída 0, lse -inf."""
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., n, m)
    s = s.masked_fill(~vis, -math.inf)
    empty = ~vis.any(-1)  # (n,)
    p = torch.softmax(s.masked_fill(empty[:, None], 0.0), dim=-1).masked_fill(empty[:, None], 0.0)
    return p @ v, torch.logsumexp(s, dim=-1)


def blocks_from_dense(vis, block):
    """(nq, nk) int8 a partir da matriz densa: 0 nenhum visível, 1 alguns, 2 todos."""
    n, m = vis.shape
    nq, nk = -(-n // block), -(-m // block)
    out = torch.zeros(nq, nk, dtype=torch.int8)
    for a in range(nq):
        for b in range(nk):
            t = vis[a * block:(a + 1) * block, b * block:(b + 1) * block]
            out[a, b] = 2 if t.all() else int(t.any())
    return out


IDS = torch.tensor([0] * 5 + [1] * 9 + [2] + [3] * 8)  # 23 posições, um documento de 1


def family(name, T):
    """(mask_mod, kwargs de loop_mask) para cada família do curso."""
    if name == "causal":
        return M.causal(), dict(kind="causal")
    if name == "window":
        return M.sliding_window(4), dict(kind="window", w=4)
    if name == "big_window":  # janela maior que T: vira a causal
        return M.sliding_window(T + 5), dict(kind="window", w=T + 5)
    if name == "sinks":
        return M.with_sinks(2, 3), dict(kind="sinks", w=3, s=2)
    if name == "zero_sinks":
        return M.with_sinks(0, 5), dict(kind="sinks", w=5, s=0)
    if name == "doc":
        ids = IDS[:T] if T <= len(IDS) else torch.arange(T) // 7
        return M.document(ids), dict(kind="doc", ids=ids.tolist())
    if name == "one_doc":
        return M.document(torch.zeros(T, dtype=torch.long)), dict(kind="doc", ids=[0] * T)
    if name == "scattered_doc":  # o mesmo documento volta depois de outro: sem regra fechada
        ids = torch.tensor([i % 3 == 0 for i in range(T)], dtype=torch.long)
        return M.document(ids), dict(kind="doc", ids=ids.tolist())
    raise KeyError(name)


FAMILIES = ["causal", "window", "big_window", "sinks", "zero_sinks", "doc", "one_doc", "scattered_doc"]


# --------------------------------------------------------------------------
# As máscaras e a matriz densa
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("T", [1, 7, 23])
def test_dense_mask_matches_the_definition(name, T):
    mm, kw = family(name, T)
    torch.testing.assert_close(M.dense_mask(mm, T), loop_mask(n=T, m=T, **kw), rtol=0, atol=0)


def test_masks_broadcast_over_index_tensors():
    q = torch.arange(6)[:, None]  # (6, 1)
    kv = torch.arange(9)[None, :]  # (1, 9)
    for mm in (M.causal(), M.sliding_window(3), M.with_sinks(1, 2), M.document(torch.arange(9) // 3)):
        out = mm(q, kv)
        assert out.dtype == torch.bool and out.shape == (6, 9)
        assert mm(torch.tensor(5), torch.tensor(5)).shape == ()


def test_with_zero_sinks_is_the_sliding_window():
    torch.testing.assert_close(M.dense_mask(M.with_sinks(0, 4), 20), M.dense_mask(M.sliding_window(4), 20))


def test_window_of_one_is_the_diagonal():
    torch.testing.assert_close(M.dense_mask(M.sliding_window(1), 9), torch.eye(9, dtype=torch.bool))


@pytest.mark.parametrize("bad", [lambda: M.sliding_window(0), lambda: M.with_sinks(-1, 3),
                                 lambda: M.with_sinks(2, 0), lambda: M.sliding_window(2.5),
                                 lambda: M.document(torch.zeros(2, 3, dtype=torch.long)),
                                 lambda: M.document(torch.tensor([0.0, 1.0]))])
def test_bad_mask_arguments_raise_in_portuguese(bad):
    with pytest.raises(ValueError, match="deve|não pode"):
        bad()


def test_mask_returning_non_bool_is_refused():
    with pytest.raises(TypeError, match="tensor bool"):
        M.dense_mask(lambda q, kv: (kv <= q).int(), 4)


# --------------------------------------------------------------------------
# Blocos visitados, sem a matriz T x T
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("T,block,start", [(1, 4, 0), (23, 4, 0), (23, 5, 0), (23, 32, 0), (16, 4, 7), (9, 2, 11)])
def test_visited_blocks_equal_the_exact_set_from_the_dense_mask(name, T, block, start):
    n = T - start if start < T else T
    mm, kw = family(name, T + start)
    dense = loop_mask(n=n, m=n + start, start=start, **kw)
    want = blocks_from_dense(dense, block)
    got = M.block_map(mm, n, block, start=start)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    torch.testing.assert_close(M.visited_blocks(mm, n, block, start=start), want > 0)
    torch.testing.assert_close(M.full_blocks(mm, n, block, start=start), want == 2)
    # a mesma classificação pela avaliação genérica de cada bloco (sem a regra fechada)
    generic = M.block_map(lambda q, kv: mm(q, kv), n, block, start=start)
    torch.testing.assert_close(generic, want, rtol=0, atol=0)


def test_closed_rules_never_evaluate_the_mask():
    calls = []
    mm = M.with_sinks(4, 128)
    spy = M.MaskMod(lambda q, kv: calls.append(1) or mm(q, kv), "espiã", True, mm.block_rule)
    c = M.count_visited(spy, 4096, 128)
    assert calls == []
    # cada bloco de consultas vê a diagonal, o anterior (a janela) e o dos ralos
    assert c["total"] == 32 * 32 and c["calculados"] == 32 + 31 + 30
    assert c["fracao_pulada"] == pytest.approx(1 - (32 + 31 + 30) / 1024)


def test_generic_evaluation_works_block_by_block_not_on_t_by_t():
    shapes = []

    def spy(q, kv):
        shapes.append(torch.broadcast_shapes(q.shape, kv.shape))
        return kv <= q

    M.block_map(spy, 50, 16)
    assert shapes and max(a * b for a, b in shapes) <= 16 * 16


def test_count_visited_agrees_with_count_blocks_for_causal():
    for n, block in [(1, 1), (100, 10), (37, 8)]:
        c = M.count_visited(M.causal(), n, block)
        old = count_blocks(n, n, block)
        assert {k: c[k] for k in old} == old
        assert count_blocks(n, n, block, mask_mod=M.causal()) == old


@pytest.mark.slow  # ~5 s: importar e rodar o create_block_mask na CPU
def test_flex_attention_block_mask_agrees():
    """Pares visitados iguais aos do create_block_mask do FlexAttention (CPU)."""
    fa = pytest.importorskip("torch.nn.attention.flex_attention", reason="torch sem FlexAttention")
    T, block = 200, 32

    def flex_blocks(mm):
        bm = fa.create_block_mask(lambda b, h, q, kv: mm(q, kv), None, None, T, T, device="cpu",
                                  BLOCK_SIZE=block)
        return bm.to_dense()[0, 0].to(torch.int8)  # (nq, nk): 1 = visitado

    try:
        flex_blocks(lambda q, kv: kv <= q)
    except (RuntimeError, NotImplementedError) as exc:
        pytest.skip(f"create_block_mask não roda na CPU com este torch: {exc}")
    for mm in (M.causal(), M.sliding_window(40), M.with_sinks(4, 40), M.document(torch.arange(T) // 70)):
        got = M.visited_blocks(mm, T, block).to(torch.int8)
        torch.testing.assert_close(got, flex_blocks(mm), rtol=0, atol=0, msg=f"{mm}: blocos diferentes")


# --------------------------------------------------------------------------
# tiled_attention com mask_mod
# --------------------------------------------------------------------------

@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("lead,T,d,dv,block", [((), 1, 3, 2, 4), ((2,), 23, 8, 5, 4), ((1, 2), 23, 4, 4, 8),
                                               ((1,), 23, 4, 3, 64)])
def test_tiled_attention_with_mask_equals_dense_reference(name, lead, T, d, dv, block):
    mm, kw = family(name, T)
    q, k, v = rand(*lead, T, d, seed=1), rand(*lead, T, d, seed=2), rand(*lead, T, dv, seed=3)
    rec = []
    out, lse = tiled_attention(q, k, v, block=block, mask_mod=mm, record=rec)
    ro, rl = naive(q, k, v, loop_mask(n=T, m=T, **kw))
    torch.testing.assert_close(out, ro, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(lse, rl, atol=1e-12, rtol=1e-10)
    want = M.visited_blocks(mm, T, block)
    assert sorted(rec) == sorted(map(tuple, want.nonzero().tolist()))  # cada bloco uma vez


def test_cache_start_sees_absolute_positions():
    """Consultas novas sobre um cache: q_idx = start + i."""
    n, m, start = 5, 30, 25
    q, k, v = rand(2, n, 8, seed=4), rand(2, m, 8, seed=5), rand(2, m, 8, seed=6)
    for mm, kw in [(M.sliding_window(7), dict(kind="window", w=7)), (M.with_sinks(3, 4), dict(kind="sinks", w=4, s=3))]:
        out, lse = tiled_attention(q, k, v, block=4, start=start, mask_mod=mm)
        ro, rl = naive(q, k, v, loop_mask(n=n, m=m, start=start, **kw))
        torch.testing.assert_close(out, ro, atol=1e-12, rtol=1e-10)
        torch.testing.assert_close(lse, rl, atol=1e-12, rtol=1e-10)


def test_row_without_visible_key_gives_zero_and_minus_inf():
    T = 9
    q, k, v = rand(T, 4, seed=7), rand(T, 4, seed=8), rand(T, 3, seed=9)
    strictly_past = lambda qi, kv: kv < qi  # noqa: E731  a linha 0 não vê nada
    out, lse = tiled_attention(q, k, v, block=4, mask_mod=strictly_past)
    assert torch.equal(out[0], torch.zeros(3, dtype=out.dtype)) and lse[0] == -math.inf
    ro, rl = naive(q, k, v, loop_mask("causal", T, T) & ~torch.eye(T, dtype=torch.bool))
    torch.testing.assert_close(out, ro, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(lse, rl)
    ro2, rl2 = M.dense_attention(q, k, v, M.and_masks(M.causal(), strictly_past))
    torch.testing.assert_close(ro2, ro)
    torch.testing.assert_close(rl2, rl)
    # um bloco de consultas inteiro sem chave: nenhum bloco visitado, saída 0
    rec = []
    out, lse = tiled_attention(q, k, v, block=4, causal=False, mask_mod=lambda qi, kv: qi >= 4, record=rec)
    assert torch.equal(out[:4], torch.zeros(4, 3, dtype=out.dtype)) and (lse[:4] == -math.inf).all()
    assert all(a > 0 for a, _ in rec)


def test_gradients_with_mask_match_autograd_of_the_reference():
    T = 19
    for mm, kw in [(M.with_sinks(2, 4), dict(kind="sinks", w=4, s=2)), (M.document(IDS[:T]), dict(kind="doc", ids=IDS.tolist()))]:
        q, k, v = (rand(2, T, 4, seed=s, grad=True) for s in (10, 11, 12))
        out, lse = tiled_attention(q, k, v, block=4, mask_mod=mm)
        g_out, g_lse = rand(2, T, 4, seed=13), rand(2, T, seed=14)
        got = torch.autograd.grad((out * g_out).sum() + (lse * g_lse).sum(), (q, k, v))
        ro, rl = naive(q, k, v, loop_mask(n=T, m=T, **kw))
        want = torch.autograd.grad((ro * g_out).sum() + (rl * g_lse).sum(), (q, k, v))
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b, atol=1e-10, rtol=1e-8)


def test_gradient_of_empty_rows_is_zero_not_nan():
    q, k, v = (rand(6, 4, seed=s, grad=True) for s in (15, 16, 17))
    out, _ = tiled_attention(q, k, v, block=2, mask_mod=lambda qi, kv: kv < qi)
    dq, dk, dv = torch.autograd.grad(out.sum(), (q, k, v))
    assert torch.isfinite(dq).all() and torch.isfinite(dk).all() and torch.isfinite(dv).all()
    assert torch.equal(dq[0], torch.zeros(4, dtype=dq.dtype))


def test_float16_with_mask():
    """float16 acumula em float32: tolerância da ordem do arredondamento final de 16 bits."""
    T = 40
    q, k, v = (rand(2, T, 16, seed=s, dtype=torch.float16) for s in (18, 19, 20))
    out, lse = tiled_attention(q, k, v, block=16, mask_mod=M.with_sinks(4, 8))
    assert out.dtype == torch.float16
    ro, rl = naive(q.double(), k.double(), v.double(), loop_mask("sinks", T, T, w=8, s=4))
    torch.testing.assert_close(out.double(), ro, atol=2e-3, rtol=2e-3)
    torch.testing.assert_close(lse.double(), rl, atol=1e-4, rtol=1e-4)


def test_numpy_in_numpy_out_with_mask():
    q, k, v = (rand(11, 4, seed=s).numpy() for s in (21, 22, 23))
    out, lse = tiled_attention(q, k, v, block=3, mask_mod=M.sliding_window(3))
    assert isinstance(out, np.ndarray)
    ro, rl = naive(*(torch.from_numpy(x) for x in (q, k, v)), loop_mask("window", 11, 11, w=3))
    np.testing.assert_allclose(out, ro.numpy(), atol=1e-12)


def test_without_mask_mod_nothing_changes():
    """mask_mod=None é o comportamento de antes, bit a bit; causal() dá o mesmo resultado."""
    q, k, v = (rand(2, 33, 8, seed=s) for s in (24, 25, 26))
    a = tiled_attention(q, k, v, block=8)
    b = tiled_attention(q, k, v, block=8, mask_mod=M.causal())
    torch.testing.assert_close(a[0], b[0], atol=1e-14, rtol=0)
    assert block_schedule(33, 33, 8) == block_schedule(33, 33, 8, mask_mod=M.causal())


def test_hand_written_mask_is_intersected_with_causal_unless_causal_false():
    q, k, v = (rand(12, 4, seed=s) for s in (27, 28, 29))
    everything = lambda qi, kv: torch.ones(torch.broadcast_shapes(qi.shape, kv.shape), dtype=torch.bool)  # noqa: E731
    causal_out, _ = tiled_attention(q, k, v, block=4)
    torch.testing.assert_close(tiled_attention(q, k, v, block=4, mask_mod=everything)[0], causal_out)
    full_out, _ = tiled_attention(q, k, v, block=4, causal=False)
    torch.testing.assert_close(tiled_attention(q, k, v, block=4, causal=False, mask_mod=everything)[0], full_out)


def test_bad_mask_mod_and_record_raise():
    q = rand(4, 2)
    with pytest.raises(TypeError, match="mask_mod"):
        tiled_attention(q, q, q, mask_mod="janela")
    with pytest.raises(TypeError, match="record"):
        tiled_attention(q, q, q, mask_mod=M.causal(), record=set())


def test_record_without_mask_mod_lists_the_causal_schedule():
    q = rand(2, 37, 4, seed=30)
    rec = []
    tiled_attention(q, q, q, block=8, record=rec)
    want = [(i0 // 8, j0 // 8) for (i0, _), row in block_schedule(37, 37, 8) for j0, _, _ in row]
    assert rec == want and len(rec) == count_blocks(37, 37, 8)["calculados"]
