"""O kernel Triton v5 (janela deslizante e ralos) contra a atenção densa.

Sem GPU roda no interpretador do Triton (~5 ms por programa x bloco de
chaves): N <= 160, blocos de 16 a 64, B*H <= 4. Oráculos em float64: a
fórmula direta com a máscara montada aqui par a par, e os blocos visitados
contados na matriz densa, bloco a bloco (não os de ``masks.visited_blocks``,
que também são conferidos contra ela).
"""

from __future__ import annotations

import math
import warnings

import pytest
import torch

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # o aviso de modo é testado em test_kernels.py
    import atencao.kernels as K

from atencao import masks as M

DEV = "cpu" if K.INTERPRETADO else "cuda"

# float32: somas em outra ordem (blocos, softmax online), ~1e-7 relativo acumulado;
#          na GPU pedimos "ieee" em tl.dot, sem TF32.
# float16: entradas, P e saída arredondadas para 16 bits (eps ~ 1e-3).
TOL = {torch.float32: dict(atol=2e-5, rtol=2e-5), torch.float16: dict(atol=4e-3, rtol=4e-3)}


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype).to(DEV)


def visible(N, w, s):
    """(N, N) True = visível, par a par: j <= i e (i - w < j ou j < s)."""
    i = torch.arange(N)[:, None]
    j = torch.arange(N)[None, :]
    return (j <= i) & ((j > i - w) | (j < s))


def direct(q, k, v, vis):
    q, k, v = (x.double().cpu() for x in (q, k, v))
    sc = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~vis, -math.inf)
    return torch.softmax(sc, -1) @ v, torch.logsumexp(sc, -1)


def tiles_from_dense(vis, bm, bn):
    """Blocos de chaves com algum par visível, por bloco de consultas (BLOCK_M x BLOCK_N)."""
    N = vis.shape[0]
    return [sum(bool(vis[a:a + bm, b:b + bn].any()) for b in range(0, N, bn)) for a in range(0, N, bm)]


CASES = [  # (B, H, N, d, w, n_sinks, config)
    (1, 2, 100, 16, 20, 4, {"BLOCK_M": 32, "BLOCK_N": 32}),  # N não múltiplo do bloco
    (2, 1, 100, 32, 1, 0, {"BLOCK_M": 32, "BLOCK_N": 32}),  # janela 1: só a diagonal
    (1, 1, 70, 24, 200, 3, {"BLOCK_M": 16, "BLOCK_N": 16}),  # janela > N: a causal; d = 24
    (1, 1, 1, 16, 5, 2, {"BLOCK_M": 32, "BLOCK_N": 32}),  # N = 1
    (1, 2, 130, 16, 33, 40, {"BLOCK_M": 64, "BLOCK_N": 32}),  # ralos além do 1º bloco
    (1, 1, 160, 16, 16, 0, {"BLOCK_M": 16, "BLOCK_N": 16}),  # janela = bloco, sem ralos
]


@pytest.mark.parametrize("B,H,N,d,w,s,config", CASES)
def test_window_kernel_equals_dense_attention_and_visits_exactly_the_needed_tiles(B, H, N, d, w, s, config):
    q, k, v = (rand(B, H, N, d, seed=N + w + i) for i in range(3))
    o, lse, tiles = K.flash_attention_window(q, k, v, window=w, n_sinks=s, config=config, count_tiles=True)
    vis = visible(N, w, s)
    ro, rl = direct(q, k, v, vis)
    torch.testing.assert_close(o.double().cpu(), ro, **TOL[torch.float32])
    torch.testing.assert_close(lse.double().cpu(), rl, atol=1e-5, rtol=1e-6)
    want = tiles_from_dense(vis, config["BLOCK_M"], config["BLOCK_N"])
    assert tiles.shape == (B, H, len(want))
    assert (tiles.cpu() == torch.tensor(want, dtype=torch.int32)).all(), f"visitados {tiles[0, 0].tolist()}, esperados {want}"
    if config["BLOCK_M"] == config["BLOCK_N"]:  # a mesma regra de masks.visited_blocks
        assert want == M.visited_blocks(M.with_sinks(s, w), N, config["BLOCK_M"]).sum(1).tolist()


def test_window_kernel_float16():
    q, k, v = (rand(1, 2, 96, 32, dtype=torch.float16, seed=40 + i) for i in range(3))
    o, lse = K.flash_attention_window(q, k, v, window=24, n_sinks=4, config={"BLOCK_M": 32, "BLOCK_N": 32})
    assert o.dtype == torch.float16 and lse.dtype == torch.float32
    ro, _ = direct(q, k, v, visible(96, 24, 4))
    torch.testing.assert_close(o.double().cpu(), ro, **TOL[torch.float16])


def test_window_kernel_with_big_window_is_the_causal_kernel():
    q, k, v = (rand(1, 1, 64, 16, seed=50 + i) for i in range(3))
    o, lse = K.flash_attention_window(q, k, v, window=64, config={"BLOCK_M": 32, "BLOCK_N": 32})
    oc, lc = K.flash_attention_forward(q, k, v, causal=True, config={"BLOCK_M": 32, "BLOCK_N": 32})
    torch.testing.assert_close(o, oc, atol=1e-6, rtol=1e-6)
    torch.testing.assert_close(lse, lc, atol=1e-6, rtol=1e-6)


def test_window_kernel_default_config_runs():
    q, k, v = (rand(1, 1, 40, 16, seed=60 + i) for i in range(3))
    o, lse = K.flash_attention_window(q, k, v, window=8, n_sinks=2)
    ro, _ = direct(q, k, v, visible(40, 8, 2))
    torch.testing.assert_close(o.double().cpu(), ro, **TOL[torch.float32])


@pytest.mark.parametrize("kwargs,err,msg", [
    (dict(window=0), ValueError, "window deve ser"),
    (dict(window=4, n_sinks=-1), ValueError, "n_sinks deve ser"),
    (dict(window=4, count_tiles=True), ValueError, "exige config"),
    (dict(window=4, config={"BLOCK_M": 16, "BLOCK_N": 32}), ValueError, "múltiplo"),
])
def test_window_kernel_rejects_bad_arguments_in_portuguese(kwargs, err, msg):
    q = rand(1, 1, 8, 16)
    with pytest.raises(err, match=msg):
        K.flash_attention_window(q, q, q, **kwargs)
