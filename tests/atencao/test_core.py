"""O primeiro pedaço do pacote contra o torch e contra os exemplos resolvidos."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import atencao as at

# Exemplo das "sementes" (OUTLINE.md, capítulos 4-5): d = 2, causal.
Q_SEEDS = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
V_SEEDS = np.array([[2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
W_SEEDS = np.array([[1, 0, 0], [0.330238, 0.669762, 0], [0.197776, 0.401112, 0.401112]])
O_SEEDS = np.array([[2, 0], [0.660477, 1.339523], [1.197776, 1.604448]])

SHAPES = [  # (lead, n, m, d, dv): formas incômodas de propósito
    ((), 1, 1, 1, 1),
    ((), 7, 7, 3, 5),
    ((2,), 17, 17, 8, 4),
    ((2, 3), 33, 33, 16, 16),
    ((1, 4), 5, 12, 7, 9),  # n < m: consultas novas sobre um cache (start = m - n)
]


def sdpa(q, k, v, causal, start=0):
    """Oráculo independente: SDPA do torch, em float64."""
    q, k, v = (torch.as_tensor(x, dtype=torch.float64) for x in (q, k, v))
    n, m = q.shape[-2], k.shape[-2]
    if causal:
        allowed = ~torch.from_numpy(np.triu(np.ones((n, m), bool), k=start + 1))
        return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    return F.scaled_dot_product_attention(q, k, v)


def test_seeds_worked_example_to_six_decimals():
    out, w = at.attention(Q_SEEDS, Q_SEEDS, V_SEEDS, causal=True, return_weights=True)
    np.testing.assert_allclose(w, W_SEEDS, atol=5e-7)
    np.testing.assert_allclose(out, O_SEEDS, atol=5e-7)


@pytest.mark.parametrize("lead,n,m,d,dv", SHAPES)
@pytest.mark.parametrize("causal", [True, False])
def test_attention_matches_torch_sdpa(lead, n, m, d, dv, causal):
    rng = np.random.default_rng(n * 31 + m)
    q = rng.standard_normal((*lead, n, d))
    k = rng.standard_normal((*lead, m, d))
    v = rng.standard_normal((*lead, m, dv))
    start = m - n if causal else 0
    ref = sdpa(q, k, v, causal, start).numpy()
    out = at.attention(q, k, v, causal=causal, start=start)
    assert isinstance(out, np.ndarray) and out.shape == (*lead, n, dv)
    np.testing.assert_allclose(out, ref, atol=1e-12, rtol=1e-10)
    out_t = at.attention(*(torch.from_numpy(x) for x in (q, k, v)), causal=causal, start=start)
    assert isinstance(out_t, torch.Tensor)
    np.testing.assert_allclose(out_t.numpy(), ref, atol=1e-12, rtol=1e-10)


def test_float32_stays_float32_and_matches_is_causal():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 4, 100, 64, generator=g) for _ in range(3))
    out = at.attention(q, k, v)
    assert out.dtype == torch.float32
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)  # float32: ~1e-7 por termo, somas de 100
    out_np = at.attention(q.numpy(), k.numpy(), v.numpy())
    assert out_np.dtype == np.float32


def test_scores_equal_loops_and_einsum():
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((5, 3)), rng.standard_normal((6, 3))
    loops = np.array([[sum(q[i, t] * k[j, t] for t in range(3)) for j in range(6)] for i in range(5)])
    np.testing.assert_allclose(at.scores(q, k), loops, atol=1e-12)
    np.testing.assert_allclose(at.scores(q, k), np.einsum("id,jd->ij", q, k), atol=1e-12)


def test_scale_divides_by_sqrt_dk():
    s = np.full((2, 2), 8.0)
    np.testing.assert_allclose(at.scale(s, 64), np.ones((2, 2)))
    with pytest.raises(ValueError, match="d_k"):
        at.scale(s, 0)


@pytest.mark.parametrize("n,m,start", [(1, 1, 0), (4, 4, 0), (3, 8, 5), (2, 6, 1)])
def test_causal_mask_is_true_exactly_in_the_future(n, m, start):
    mask = at.causal_mask(n, m, start)
    assert mask.shape == (n, m) and mask.dtype == bool
    for i in range(n):
        for j in range(m):
            assert mask[i, j] == (j > start + i)


def test_causal_mask_default_m():
    assert at.causal_mask(3).shape == (3, 3)
    assert at.causal_mask(2, start=4).shape == (2, 6)


def test_softmax_matches_torch_and_is_stable():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1e4, 0.0, 3.0]])
    ref = torch.softmax(torch.from_numpy(x), dim=-1).numpy()
    np.testing.assert_allclose(at.softmax(x), ref, atol=1e-15)
    np.testing.assert_allclose(at.softmax(x).sum(-1), 1.0)
    x16 = torch.tensor([[60000.0, 0.0]], dtype=torch.float16)
    assert torch.isfinite(at.softmax(x16)).all()


def test_fully_masked_row_gives_nan_like_torch():
    x = np.array([[-np.inf, -np.inf], [0.0, -np.inf]])
    ours = at.softmax(x)
    ref = torch.softmax(torch.from_numpy(x), -1).numpy()
    assert np.isnan(ours[0]).all() and np.isnan(ref[0]).all()
    np.testing.assert_allclose(ours[1], [1.0, 0.0])


def test_future_tokens_do_not_change_the_past():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((10, 4)) for _ in range(3))
    out = at.attention(q, k, v)
    k2, v2 = k.copy(), v.copy()
    k2[6:] += 100 * rng.standard_normal((4, 4))
    v2[6:] += 100
    out2 = at.attention(q, k2, v2)
    assert np.array_equal(out[:6], out2[:6])
    assert not np.allclose(out[6:], out2[6:])


@pytest.mark.parametrize(
    "shapes,msg",
    [
        (((3, 4), (3, 5), (3, 5)), "mesma última dimensão"),
        (((3, 4), (3, 4), (2, 4)), "mesmo número de posições"),
        (((4,), (3, 4), (3, 4)), "pelo menos 2"),
        (((2, 3, 4), (5, 3, 4), (5, 3, 4)), "não são compatíveis"),
    ],
)
def test_wrong_shapes_say_what_was_expected(shapes, msg):
    q, k, v = (np.zeros(s) for s in shapes)
    with pytest.raises(ValueError, match=msg):
        at.attention(q, k, v)


def test_mixing_numpy_and_torch_is_an_error():
    with pytest.raises(TypeError, match="NumPy"):
        at.attention(np.zeros((2, 2)), torch.zeros(2, 2), torch.zeros(2, 2))


def test_worked_numbers_in_outline():
    # [0.5, 0.25, 0] inflado 16x -> [8, 4, 0]: ~98,2% na primeira chave
    p = at.softmax(np.array([8.0, 4.0, 0.0]))
    assert round(p[0] * 100, 1) == 98.2
    assert math.sqrt(64) == 8 and 1024 * 1024 == 1_048_576
