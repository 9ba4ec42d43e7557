"""Os kernels Triton do capítulo 13 contra o torch e contra a fórmula direta.

Sem GPU, tudo roda no interpretador do Triton (TRITON_INTERPRET=1), que custa
~5 ms por (programa x bloco de chaves): por isso N <= 128 com blocos de 32 e
B*H <= 4, mais um caso de N = 512 com blocos de 64 e B*H = 1. Com GPU, os
mesmos testes rodam compilados (e os de bfloat16 deixam de ser pulados).

Oráculos, todos em float64:
  * torch.nn.functional.scaled_dot_product_attention (saída e gradientes);
  * a fórmula direta softmax(máscara(Q K^T / sqrt(d))) V, escrita aqui
    (é de onde sai o log-sum-exp, que o SDPA não devolve);
  * atencao.core.attention (a referência da Parte I).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # o aviso de modo é testado à parte, num subprocesso
    import atencao.kernels as K

import atencao as at
from atencao.kernels.flash_fwd import flash_attention_forward

ROOT = Path(__file__).resolve().parents[2]
DEV = "cpu" if K.INTERPRETADO else "cuda"
SEM_BF16 = pytest.mark.skipif(
    K.INTERPRETADO,
    reason="bfloat16 fica de fora no interpretador: tl.dot em bfloat16 dá resultados "
    "errados nele (triton-lang/triton#11584); na GPU este teste roda",
)

# Tolerâncias por dtype, com o motivo:
#  float32: o kernel soma em outra ordem (blocos, softmax online); erros de
#           arredondamento de float32 (~1e-7 relativo) acumulados em d e N termos.
#  float16: entradas e saída arredondadas para float16 (eps = 2^-10 ~ 1e-3) e P
#           convertido para float16 antes de P V; valores de saída ~1.
#  bfloat16: 8 bits de mantissa (eps = 2^-7 ~ 8e-3).
TOL = {
    torch.float32: dict(atol=2e-5, rtol=2e-5),
    torch.float16: dict(atol=4e-3, rtol=4e-3),
    torch.bfloat16: dict(atol=3e-2, rtol=3e-2),
}
# Gradientes: dS = P (dP - Δ) subtrai números parecidos e é convertido para o
# dtype da entrada antes de dS K: tolerância maior, relativa à escala do gradiente.
TOL_GRAD = {
    torch.float32: 1e-4,
    torch.float16: 2e-2,
    torch.bfloat16: 8e-2,
}


def rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float32).to(dtype).to(DEV)


def direct_attention(q, k, v, causal):
    """A fórmula direta em float64: devolve (saída, lse)."""
    q, k, v = (x.detach().double().cpu() for x in (q, k, v))
    n = q.shape[-2]
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, N, N)
    if causal:
        s = s.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
    lse = torch.logsumexp(s, dim=-1)  # (B, H, N)
    return torch.softmax(s, dim=-1) @ v, lse


def sdpa64(q, k, v, causal):
    q, k, v = (x.detach().double().cpu() for x in (q, k, v))
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def assert_close(got, want, dtype, what):
    tol = TOL[dtype]
    got = got.detach().double().cpu()
    want = want.detach().double().cpu()
    err = (got - want).abs().max().item()
    assert torch.allclose(got, want, **tol), f"{what}: maior diferença {err:.3g}, tolerância {tol}"


# --------------------------------------------------------------------------
# v1: softmax fundida
# --------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(37, 781), (3, 7, 33), (1, 1), (2, 3, 1), (5, 4096)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_softmax_matches_torch_on_awkward_shapes(shape, dtype):
    # bfloat16 pode: este kernel não usa tl.dot (o problema do interpretador é só no tl.dot).
    x = rand(*shape, dtype=dtype, seed=sum(shape)) * 4
    y = K.softmax(x)
    assert y.shape == x.shape and y.dtype == dtype
    assert_close(y, torch.softmax(x.double(), dim=-1), dtype, f"softmax {shape} {dtype}")


def test_softmax_rows_sum_to_one_and_masked_entries_are_zero():
    x = rand(6, 50, seed=3)
    x[:, 40:] = float("-inf")  # como uma máscara causal faria
    y = K.softmax(x)
    assert (y[:, 40:] == 0).all()
    torch.testing.assert_close(y.sum(-1), torch.ones(6, device=DEV), atol=1e-6, rtol=0)


def test_softmax_row_all_minus_inf_gives_nan_like_torch():
    x = torch.zeros(3, 10, device=DEV)
    x[1] = float("-inf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # o NumPy do interpretador avisa de -inf - (-inf)
        y = K.softmax(x)
    assert torch.isnan(y[1]).all() and not torch.isnan(y[[0, 2]]).any()
    assert torch.isnan(torch.softmax(x, -1)[1]).all()  # o torch faz o mesmo


def test_softmax_accepts_non_contiguous_input():
    x = rand(40, 24, seed=5).t()  # (24, 40), passos trocados
    assert not x.is_contiguous()
    assert_close(K.softmax(x), torch.softmax(x.double(), -1), torch.float32, "transposta")


@pytest.mark.parametrize(
    "x, erro, trecho",
    [
        ([1.0, 2.0], TypeError, "torch.Tensor"),
        (torch.ones(3, 4, dtype=torch.int64), TypeError, "float16, bfloat16 ou float32"),
        (torch.ones(2, 40000), ValueError, "n deve ser <= 32768"),
        (torch.ones(2, 0), ValueError, "vazia"),
        (torch.ones(2, 3, device="meta"), ValueError, "CPU" if K.INTERPRETADO else "GPU"),
    ],
)
def test_softmax_rejects_bad_input_in_portuguese(x, erro, trecho):
    with pytest.raises(erro, match=trecho):
        K.softmax(x)


# --------------------------------------------------------------------------
# v2: FlashAttention, passo para a frente
# --------------------------------------------------------------------------

CASES_FWD = [  # (B, H, N, d): N = 100 não é múltiplo do bloco; d = 24 não é potência de 2
    (1, 2, 100, 16),
    (2, 1, 100, 32),
    (1, 2, 100, 64),
    (1, 1, 1, 32),
    (2, 2, 33, 24),
    (1, 1, 128, 64),
]


@pytest.mark.parametrize("B,H,N,d", CASES_FWD)
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_flash_forward_matches_sdpa_and_lse(B, H, N, d, causal, dtype):
    q, k, v = (rand(B, H, N, d, dtype=dtype, seed=s + N + d) for s in range(3))
    o, lse = K.flash_attention(q, k, v, causal=causal)
    assert o.shape == (B, H, N, d) and o.dtype == dtype
    assert lse.shape == (B, H, N) and lse.dtype == torch.float32
    ref_o, ref_lse = direct_attention(q, k, v, causal)
    assert_close(o, sdpa64(q, k, v, causal), dtype, "saída x SDPA")
    assert_close(o, ref_o, dtype, "saída x fórmula direta")
    # O LSE sai em float32 mesmo com entradas float16: só o arredondamento de q, k conta.
    torch.testing.assert_close(lse.double().cpu(), ref_lse, atol=1e-4, rtol=1e-5)


@SEM_BF16
@pytest.mark.parametrize("causal", [True, False])
def test_flash_forward_bfloat16_on_gpu(causal):
    q, k, v = (rand(2, 2, 100, 64, dtype=torch.bfloat16, seed=s) for s in range(3))
    o, _ = K.flash_attention(q, k, v, causal=causal)
    assert_close(o, sdpa64(q, k, v, causal), torch.bfloat16, "bfloat16")


def test_flash_forward_agrees_with_part_one_reference():
    q, k, v = (rand(1, 2, 45, 16, seed=s) for s in range(3))
    o, _ = K.flash_attention(q, k, v, causal=True)
    ref = at.attention(*(x.double().cpu() for x in (q, k, v)), causal=True)
    assert_close(o, ref, torch.float32, "atencao.attention")


@pytest.mark.parametrize("config", [{"BLOCK_M": 64, "BLOCK_N": 32}, {"BLOCK_M": 16, "BLOCK_N": 16}])
def test_flash_forward_other_block_shapes(config):
    # BLOCK_M = 2 x BLOCK_N: a diagonal atravessa dois blocos de chaves, um deles
    # inteiramente mascarado para as primeiras linhas (sem NaN: o máximo já é finito).
    q, k, v = (rand(1, 2, 100, 32, seed=10 + s) for s in range(3))
    for causal in (True, False):
        o, lse = flash_attention_forward(q, k, v, causal=causal, config=config)
        ref_o, ref_lse = direct_attention(q, k, v, causal)
        assert_close(o, ref_o, torch.float32, f"{config} causal={causal}")
        torch.testing.assert_close(lse.double().cpu(), ref_lse, atol=1e-5, rtol=1e-6)


def test_flash_forward_longer_sequence_block_64():
    q, k, v = (rand(1, 1, 512, 64, seed=20 + s) for s in range(3))
    o, _ = flash_attention_forward(q, k, v, causal=True, config={"BLOCK_M": 64, "BLOCK_N": 64})
    assert_close(o, sdpa64(q, k, v, True), torch.float32, "N = 512")


def test_causal_skips_blocks_above_the_diagonal():
    # Com blocos de 32, as consultas 0-31 só podem ler as chaves 0-31. Se as
    # chaves e valores 32.. forem NaN e ainda assim essas saídas saírem finitas
    # e certas, os blocos acima da diagonal nem foram carregados.
    q, k, v = (rand(1, 1, 96, 32, seed=30 + s) for s in range(3))
    k_bad, v_bad = k.clone(), v.clone()
    k_bad[..., 32:, :] = float("nan")
    v_bad[..., 32:, :] = float("nan")
    cfg = {"BLOCK_M": 32, "BLOCK_N": 32}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # o NumPy do interpretador avisa dos NaN
        o, lse = flash_attention_forward(q, k_bad, v_bad, causal=True, config=cfg)
        o_nc, _ = flash_attention_forward(q, k_bad, v_bad, causal=False, config=cfg)
    ref_o, ref_lse = direct_attention(q[..., :32, :], k[..., :32, :], v[..., :32, :], True)
    assert_close(o[..., :32, :], ref_o, torch.float32, "primeiro bloco")
    assert torch.isnan(o[..., 32:, :]).all()  # os demais leram o NaN, como deviam
    assert torch.isnan(o_nc).all()  # sem máscara causal, todos leem tudo


def test_future_tokens_do_not_change_the_past():
    q, k, v = (rand(1, 2, 70, 16, seed=40 + s) for s in range(3))
    o1, _ = K.flash_attention(q, k, v, causal=True)
    k2, v2 = k.clone(), v.clone()
    k2[..., 50:, :] += 5.0
    v2[..., 50:, :] -= 3.0
    o2, _ = K.flash_attention(q, k2, v2, causal=True)
    assert torch.equal(o1[..., :50, :], o2[..., :50, :])
    assert not torch.allclose(o1[..., 50:, :], o2[..., 50:, :])


def test_flash_attention_accepts_non_contiguous_inputs():
    x = rand(1, 40, 2, 3 * 16, seed=50)  # (B, N, H, 3d) -> q, k, v como vistas (B, H, N, d)
    q, k, v = x.transpose(1, 2).split(16, dim=-1)
    assert not q.is_contiguous()
    o, _ = K.flash_attention(q, k, v, causal=True)
    assert_close(o, sdpa64(q, k, v, True), torch.float32, "vistas não contíguas")


@pytest.mark.parametrize(
    "args, erro, trecho",
    [
        ((torch.ones(2, 8, 16),) * 3, ValueError, r"\(B, H, N, d\)"),
        ((torch.ones(1, 1, 8, 16), torch.ones(1, 1, 9, 16), torch.ones(1, 1, 9, 16)), ValueError, "mesma forma"),
        ((torch.ones(1, 1, 8, 16), torch.ones(1, 1, 8, 16, dtype=torch.float16), torch.ones(1, 1, 8, 16)),
         TypeError, "mesmo dtype"),
        ((torch.ones(1, 1, 8, 16, dtype=torch.float64),) * 3, TypeError, "float16, bfloat16 ou float32"),
        ((torch.ones(1, 1, 8, 256),) * 3, ValueError, "d .* <= 128"),
        (("q", "k", "v"), TypeError, "torch.Tensor"),
    ],
)
def test_flash_attention_rejects_bad_input_in_portuguese(args, erro, trecho):
    with pytest.raises(erro, match=trecho):
        K.flash_attention(*(a.to(DEV) if isinstance(a, torch.Tensor) else a for a in args))


def test_flash_attention_rejects_non_bool_causal():
    x = rand(1, 1, 8, 16)
    with pytest.raises(TypeError, match="causal deve ser True ou False"):
        K.flash_attention(x, x, x, causal="sim")


@pytest.mark.skipif(not K.INTERPRETADO, reason="só no interpretador o bfloat16 é recusado")
def test_interpreter_refuses_bfloat16_and_says_why():
    x = torch.ones(1, 1, 8, 16, dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="11584"):
        K.flash_attention(x, x, x)


# --------------------------------------------------------------------------
# v3: passo para trás e autograd
# --------------------------------------------------------------------------

@pytest.mark.parametrize("B,H,N,d", [(1, 2, 100, 16), (2, 1, 100, 32), (1, 2, 100, 64), (1, 1, 1, 16), (1, 2, 33, 24)])
@pytest.mark.parametrize("causal", [True, False])
def test_flash_gradients_match_torch_autograd(B, H, N, d, causal):
    _check_grads(B, H, N, d, causal, torch.float32, seed=N + d)


@pytest.mark.parametrize("causal", [True, False])
def test_flash_gradients_float16(causal):
    _check_grads(2, 2, 100, 32, causal, torch.float16, seed=7)


@SEM_BF16
def test_flash_gradients_bfloat16_on_gpu():
    _check_grads(2, 2, 100, 64, True, torch.bfloat16, seed=8)


def _check_grads(B, H, N, d, causal, dtype, seed):
    q, k, v = (rand(B, H, N, d, dtype=dtype, seed=seed + s).requires_grad_() for s in range(3))
    do = rand(B, H, N, d, dtype=dtype, seed=seed + 3)
    o, lse = K.flash_attention(q, k, v, causal=causal)
    assert not lse.requires_grad  # o LSE é guardado para o backward, não é diferenciável
    o.backward(do)
    q64, k64, v64 = (x.detach().double().cpu().requires_grad_() for x in (q, k, v))
    F.scaled_dot_product_attention(q64, k64, v64, is_causal=causal).backward(do.double().cpu())
    for name, got, want in (("dQ", q.grad, q64.grad), ("dK", k.grad, k64.grad), ("dV", v.grad, v64.grad)):
        assert got.dtype == dtype and got.shape == want.shape
        scale = max(want.abs().max().item(), 1.0)  # N = 1: dQ = 0 exatamente; erro absoluto então
        err = (got.double().cpu() - want).abs().max().item()
        assert err <= TOL_GRAD[dtype] * scale, f"{name}: maior diferença {err:.3g} (escala {scale:.3g})"


def test_flash_attention_trains_a_tiny_problem():
    # Aprender q para que a atenção copie v: a perda tem que cair com os gradientes do kernel.
    k, v = rand(1, 1, 16, 16, seed=60), rand(1, 1, 16, 16, seed=61)
    q = torch.zeros(1, 1, 16, 16, device=DEV, requires_grad=True)
    target = v.clone()
    opt = torch.optim.Adam([q], lr=0.3)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        o, _ = K.flash_attention(q, k, v, causal=False)
        loss = ((o - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0], losses


# --------------------------------------------------------------------------
# v4: decodificação sobre um KV cache com GQA
# --------------------------------------------------------------------------

def decode_reference(q, k_cache, v_cache, lengths):
    """Uma consulta por sequência, só as primeiras lengths[b] posições; GQA por repetição."""
    B, Hq, d = q.shape
    group = Hq // k_cache.shape[1]
    outs = []
    for b in range(B):
        L = int(lengths[b])
        kk = k_cache[b, :, :L].double().cpu().repeat_interleave(group, dim=0)  # (Hq, L, d)
        vv = v_cache[b, :, :L].double().cpu().repeat_interleave(group, dim=0)
        outs.append(F.scaled_dot_product_attention(q[b, :, None].double().cpu(), kk, vv)[:, 0])
    return torch.stack(outs)  # (B, Hq, d)


@pytest.mark.parametrize("Hq,Hkv", [(4, 4), (4, 2), (6, 1), (8, 2)])
@pytest.mark.parametrize("d", [16, 32, 64])
def test_decode_matches_reference_with_gqa_and_ragged_lengths(Hq, Hkv, d):
    B, S = 3, 100
    q = rand(B, Hq, d, seed=Hq + d)
    kc, vc = rand(B, Hkv, S, d, seed=70 + d), rand(B, Hkv, S, d, seed=71 + d)
    lengths = torch.tensor([100, 37, 1], device=DEV)
    kc[1, :, 37:] = float("nan")  # posições além do comprimento não podem ser lidas
    vc[1, :, 37:] = float("nan")
    want = decode_reference(q, kc, vc, lengths)
    for splits in (1, 3):
        got = K.decode_attention(q, kc, vc, lengths, num_splits=splits)
        assert got.shape == (B, Hq, d)
        assert_close(got, want, torch.float32, f"num_splits={splits}")


def test_decode_float16_and_sdpa_enable_gqa():
    q = rand(2, 8, 32, dtype=torch.float16, seed=80)
    kc, vc = (rand(2, 2, 64, 32, dtype=torch.float16, seed=81 + s) for s in range(2))
    got = K.decode_attention(q, kc, vc, 64, num_splits=2)
    want = F.scaled_dot_product_attention(
        q[:, :, None].double().cpu(), kc.double().cpu(), vc.double().cpu(), enable_gqa=True)[:, :, 0]
    assert got.dtype == torch.float16
    assert_close(got, want, torch.float16, "float16 x SDPA(enable_gqa)")


def test_decode_equals_last_row_of_causal_flash_attention():
    # Gerar o token N-1 com o cache das N posições = a última linha da atenção causal completa.
    q, k, v = (rand(1, 2, 50, 16, seed=90 + s) for s in range(3))
    o_full, _ = K.flash_attention(q, k, v, causal=True)
    o_dec = K.decode_attention(q[:, :, -1], k, v, 50)
    assert_close(o_dec, o_full[:, :, -1], torch.float32, "decode x última linha")


@pytest.mark.parametrize(
    "kw, erro, trecho",
    [
        (dict(q=(1, 3, 16), kc=(1, 2, 8, 16), lengths=8), ValueError, "múltiplo"),
        (dict(q=(1, 2, 16), kc=(1, 2, 8, 16), lengths=9), ValueError, "entre 1 e"),
        (dict(q=(1, 2, 16), kc=(1, 2, 8, 16), lengths=0), ValueError, "entre 1 e"),
        (dict(q=(2, 2, 16), kc=(2, 2, 8, 16), lengths=torch.tensor([3])), ValueError, r"forma \(B,\)"),
        (dict(q=(1, 2, 16), kc=(1, 2, 8, 16), lengths=torch.tensor([3.0])), TypeError, "int32 ou int64"),
        (dict(q=(1, 2, 16), kc=(1, 2, 8, 32), lengths=8), ValueError, "concordar em B e d"),
        (dict(q=(1, 1, 2, 16), kc=(1, 2, 8, 16), lengths=8), ValueError, r"\(B, Hq, d\)"),
    ],
)
def test_decode_rejects_bad_input_in_portuguese(kw, erro, trecho):
    q = torch.ones(*kw["q"], device=DEV)
    kc = torch.ones(*kw["kc"], device=DEV)
    with pytest.raises(erro, match=trecho):
        K.decode_attention(q, kc, kc, kw["lengths"])


# --------------------------------------------------------------------------
# O modo (interpretador ou GPU) é escolhido sozinho e dito uma vez
# --------------------------------------------------------------------------

def _run_python(code: str):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True,
                          text=True, env=env, timeout=120)


@pytest.mark.skipif(torch.cuda.is_available(), reason="com GPU o interpretador não é escolhido")
def test_without_gpu_interpreter_is_chosen_before_triton_is_imported():
    r = _run_python(
        "import os, sys\n"
        "import atencao.kernels as K\n"
        "assert K.INTERPRETADO and os.environ['TRITON_INTERPRET'] == '1'\n"
        "import torch\n"
        "print(float(K.softmax(torch.zeros(1, 4))[0, 0]))\n"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0.25"
    assert r.stderr.count("ModoInterpretador") == 1, r.stderr  # dito uma vez
    assert "sem GPU CUDA" in r.stderr
    # Sem o arquivo e a linha de quem importou (no Jupyter, /tmp/ipykernel_.../....py:1).
    aviso = next(linha for linha in r.stderr.splitlines() if "ModoInterpretador" in linha)
    assert aviso.startswith("ModoInterpretador: atencao.kernels:"), aviso


@pytest.mark.skipif(torch.cuda.is_available(), reason="com GPU o interpretador não é escolhido")
def test_triton_imported_first_without_interpreter_warns_and_errors_clearly():
    # Tarde demais para o interpretador: tl.max e companhia já foram decorados
    # no modo compilado. O módulo avisa ao ser importado e cada chamada dá um
    # erro claro, em vez de um erro obscuro de dentro do triton.
    r = _run_python(
        "import triton\n"
        "import atencao.kernels as K\n"
        "import torch\n"
        "assert not K.INTERPRETADO\n"
        "try:\n"
        "    K.softmax(torch.zeros(1, 2))\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
    )
    assert r.returncode == 0, r.stderr
    assert "importado antes de atencao.kernels" in r.stderr  # o aviso, no import
    assert "reinicie o Python" in r.stdout  # o erro, na chamada


# --------------------------------------------------------------------------
# v0: o kernel ingênuo em CUDA C compila (e, com GPU, confere com a CPU)
# --------------------------------------------------------------------------

@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) não está instalado")
def test_naive_cuda_kernel_compiles_without_warnings(tmp_path):
    exe = tmp_path / "naive_attention"
    src = ROOT / "atencao" / "kernels" / "naive_attention.cu"
    r = subprocess.run(["nvcc", "-O2", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra,-Werror",
                        "-o", str(exe), str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    if torch.cuda.is_available():
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "maior diferença GPU x CPU" in run.stdout
