"""v3 -- FlashAttention, passo de volta, e a função autograd que treina.

O que calcula: dado dO = dL/dO (B, H, N, d), e o que o passo de ida
guardou (q, k, v, O e o LSE, nada de N x N), devolve dQ, dK, dV:
    P  = exp(S - LSE)                     recalculada bloco a bloco
    dV = P^T dO
    dP = dO V^T
    dS = P ∘ (dP - Δ),  Δ_i = sum_j P_ij dP_ij = dO_i · O_i
    dQ = dS K / sqrt(d),   dK = dS^T Q / sqrt(d)
Δ é calculado antes, com o torch: (dO * O).sum(-1), uma passada lendo O e dO.

Dois kernels, sem operações atômicas (resultado determinístico):
  * _dkdv: um programa por bloco de BLOCK_N chaves; percorre os blocos de
    consultas (no caso causal, só os que estão na diagonal ou abaixo dela)
    e acumula dK e dV nos registradores;
  * _dq: um programa por bloco de BLOCK_M consultas; percorre os blocos de
    chaves e acumula dQ.

FLOPs: a convenção (Dao et al.) conta 5 produtos de matrizes (S, dV, dP, dQ,
dK), 2·N²·d cada: 10·B·H·N²·d, ou 2,5 vezes o passo de ida (metade
com a máscara causal). Esta implementação recalcula S e dP nos dois kernels,
então faz 7 produtos (14·B·H·N²·d); as taxas em TFLOP/s do bench usam a
convenção de 2,5x, para comparar com o SDPA.
Bytes: cada kernel lê Q, dO (ou K, V) uma vez por bloco do outro lado:
    O(B·H·N²·d·b / BLOCK), e escreve dQ, dK, dV (3·B·H·N·d·b).

O que mudou em relação à v2 (flash_fwd.py): em vez de guardar P (N x N),
guardamos só o LSE (N números por cabeça) e recalculamos P. Todas as
iterações aplicam a máscara (causal e de borda) com tl.where: mais simples
que os dois laços da v2, ao custo de algumas operações por elemento.

Como rodar: `from atencao.kernels import flash_attention`
            `o, lse = flash_attention(q, k, v, causal=True); o.sum().backward()`
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ._comum import bloco_d, precisao
from .flash_fwd import autotuned, flash_attention_forward


@triton.jit(do_not_specialize=["N", "H"])
def _dkdv_kernel(Q, K, V, DO, DK, DV, LSE, DELTA,
                 stride_b, stride_h, stride_n, stride_d,
                 H, N, D, sm_scale,
                 CAUSAL: tl.constexpr, BLOCK_D: tl.constexpr, PREC: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # q, k, v, dO, dQ, dK, dV são contíguos com a mesma forma: mesmos passos.
    pid_n = tl.program_id(0)
    bh = tl.program_id(1)
    off = (bh // H).to(tl.int64) * stride_b + (bh % H).to(tl.int64) * stride_h
    Q += off
    K += off
    V += off
    DO += off
    DK += off
    DV += off
    LSE += bh.to(tl.int64) * N
    DELTA += bh.to(tl.int64) * N
    qk_scale = sm_scale * 1.4426950408889634  # base 2, como no passo de ida

    start_n = pid_n * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,) chaves deste programa
    offs_d = tl.arange(0, BLOCK_D)
    n_ok = offs_n < N
    d_ok = offs_d < D
    nd_mask = n_ok[:, None] & d_ok[None, :]
    k = tl.load(K + offs_n[:, None] * stride_n + offs_d[None, :] * stride_d, mask=nd_mask, other=0.0)
    v = tl.load(V + offs_n[:, None] * stride_n + offs_d[None, :] * stride_d, mask=nd_mask, other=0.0)
    dk = tl.zeros((BLOCK_N, BLOCK_D), tl.float32)
    dv = tl.zeros((BLOCK_N, BLOCK_D), tl.float32)

    # Causal: consultas i < start_n não veem nenhuma destas chaves.
    lo = (start_n // BLOCK_M) * BLOCK_M if CAUSAL else 0
    for start_m in range(lo, N, BLOCK_M):
        offs_m = start_m + tl.arange(0, BLOCK_M)  # (BLOCK_M,)
        m_ok = offs_m < N
        md_mask = m_ok[:, None] & d_ok[None, :]
        q = tl.load(Q + offs_m[:, None] * stride_n + offs_d[None, :] * stride_d, mask=md_mask, other=0.0)
        do = tl.load(DO + offs_m[:, None] * stride_n + offs_d[None, :] * stride_d, mask=md_mask, other=0.0)
        lse2 = tl.load(LSE + offs_m, mask=m_ok, other=0.0) * 1.4426950408889634
        delta = tl.load(DELTA + offs_m, mask=m_ok, other=0.0)
        # Tudo transposto (chaves nas linhas): P^T tem forma (BLOCK_N, BLOCK_M).
        st = tl.dot(k, tl.trans(q), input_precision=PREC) * qk_scale
        ok = n_ok[:, None] & m_ok[None, :]
        if CAUSAL:
            ok = ok & (offs_n[:, None] <= offs_m[None, :])
        pt = tl.where(ok, tl.exp2(st - lse2[None, :]), 0.0)  # (BLOCK_N, BLOCK_M)
        dv = tl.dot(pt.to(do.dtype), do, dv, input_precision=PREC)  # dV += P^T dO
        dpt = tl.dot(v, tl.trans(do), input_precision=PREC)  # (dO V^T)^T
        dst = pt * (dpt - delta[None, :])  # dS^T
        dk = tl.dot(dst.to(q.dtype), q, dk, input_precision=PREC)  # dK += dS^T Q
    dk = dk * sm_scale
    tl.store(DK + offs_n[:, None] * stride_n + offs_d[None, :] * stride_d,
             dk.to(DK.dtype.element_ty), mask=nd_mask)
    tl.store(DV + offs_n[:, None] * stride_n + offs_d[None, :] * stride_d,
             dv.to(DV.dtype.element_ty), mask=nd_mask)


@triton.jit(do_not_specialize=["N", "H"])
def _dq_kernel(Q, K, V, DO, DQ, LSE, DELTA,
               stride_b, stride_h, stride_n, stride_d,
               H, N, D, sm_scale,
               CAUSAL: tl.constexpr, BLOCK_D: tl.constexpr, PREC: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.num_programs(0) - 1 - tl.program_id(0)  # os mais longos primeiro
    bh = tl.program_id(1)
    off = (bh // H).to(tl.int64) * stride_b + (bh % H).to(tl.int64) * stride_h
    Q += off
    K += off
    V += off
    DO += off
    DQ += off
    LSE += bh.to(tl.int64) * N
    DELTA += bh.to(tl.int64) * N
    qk_scale = sm_scale * 1.4426950408889634

    start_m = pid_m * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    m_ok = offs_m < N
    d_ok = offs_d < D
    md_mask = m_ok[:, None] & d_ok[None, :]
    q = tl.load(Q + offs_m[:, None] * stride_n + offs_d[None, :] * stride_d, mask=md_mask, other=0.0)
    do = tl.load(DO + offs_m[:, None] * stride_n + offs_d[None, :] * stride_d, mask=md_mask, other=0.0)
    lse2 = tl.load(LSE + offs_m, mask=m_ok, other=0.0) * 1.4426950408889634
    delta = tl.load(DELTA + offs_m, mask=m_ok, other=0.0)
    dq = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)

    hi = tl.minimum(start_m + BLOCK_M, N) if CAUSAL else N
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_ok = offs_n < N
        nd_mask = n_ok[:, None] & d_ok[None, :]
        k = tl.load(K + offs_n[:, None] * stride_n + offs_d[None, :] * stride_d, mask=nd_mask, other=0.0)
        v = tl.load(V + offs_n[:, None] * stride_n + offs_d[None, :] * stride_d, mask=nd_mask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * qk_scale  # (BLOCK_M, BLOCK_N)
        ok = m_ok[:, None] & n_ok[None, :]
        if CAUSAL:
            ok = ok & (offs_n[None, :] <= offs_m[:, None])
        p = tl.where(ok, tl.exp2(s - lse2[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v), input_precision=PREC)
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq, input_precision=PREC)  # dQ += dS K
    dq = dq * sm_scale
    tl.store(DQ + offs_m[:, None] * stride_n + offs_d[None, :] * stride_d,
             dq.to(DQ.dtype.element_ty), mask=md_mask)


# Configurações para Hopper, por d, escolhidas pelo que a compilação para sm_90a
# mostra (nenhuma foi cronometrada). No _dkdv cada programa guarda dK e dV
# (2 x BLOCK_N x d em float32) nos registradores; no _dq, dQ (BLOCK_M x d).
# Com d = 128 e 4 warps o ptxas derrama registradores (1436 bytes de spill no
# _dkdv 32 x 128, medido para sm_90a com bench/compilar_sm90.py): só 8 warps.
_BWD = {  # d_max: {kernel: [(BLOCK_M, BLOCK_N, warps, estágios)]}
    64: {"dkdv": [(32, 128, 4, 3), (32, 128, 8, 3), (64, 64, 4, 3)],
         "dq": [(128, 32, 4, 3), (128, 32, 8, 3), (64, 64, 4, 3)]},
    128: {"dkdv": [(32, 128, 8, 3), (64, 64, 8, 3)],
          "dq": [(128, 32, 8, 3), (64, 64, 8, 3)]},
}


def _configs_bwd(kernel):
    todos = {t for por_d in _BWD.values() for t in por_d[kernel]}
    return [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
            for (bm, bn, w, s) in sorted(todos)]


def _podar_bwd(kernel):
    def podar(configs, named_args, **kwargs):
        d = kwargs.get("BLOCK_D", named_args.get("BLOCK_D"))
        lista = _BWD[64 if d <= 64 else 128][kernel]
        keep = [c for c in configs
                if (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages) in lista]
        return keep or configs[:1]
    return podar


_CONFIGS_DKDV = _configs_bwd("dkdv")
_CONFIGS_DQ = _configs_bwd("dq")

# Cada chamada escreve (não acumula) suas saídas: o autotune pode repetir o
# kernel quantas vezes quiser sem estragar o resultado.
_dkdv = autotuned(_dkdv_kernel, _CONFIGS_DKDV, key=["N", "BLOCK_D", "CAUSAL"], prune=_podar_bwd("dkdv"))
_dq = autotuned(_dq_kernel, _CONFIGS_DQ, key=["N", "BLOCK_D", "CAUSAL"], prune=_podar_bwd("dq"))


def flash_attention_backward(q, k, v, o, lse, do, causal: bool):
    """dQ, dK, dV a partir do que o passo de ida guardou."""
    B, H, N, d = q.shape
    q, k, v, o, do = (x.contiguous() for x in (q, k, v, o, do))
    delta = (do.float() * o.float()).sum(-1)  # (B, H, N): Δ_i = dO_i · O_i
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    meta = dict(CAUSAL=causal, BLOCK_D=bloco_d(d), PREC=precisao(q.dtype))
    sm_scale = 1.0 / math.sqrt(d)
    strides = q.stride()
    _dkdv[lambda M: (triton.cdiv(N, M["BLOCK_N"]), B * H)](
        q, k, v, do, dk, dv, lse, delta, *strides, H, N, d, sm_scale, **meta)
    _dq[lambda M: (triton.cdiv(N, M["BLOCK_M"]), B * H)](
        q, k, v, do, dq, lse, delta, *strides, H, N, d, sm_scale, **meta)
    return dq, dk, dv


class FlashAttentionFunction(torch.autograd.Function):
    """Autograd com os kernels Triton: guarda q, k, v, O e o LSE (O(N) por
    cabeça além das entradas), nunca a matriz de probabilidades."""

    @staticmethod
    def forward(ctx, q, k, v, causal):
        o, lse = flash_attention_forward(q, k, v, causal=causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal = causal
        ctx.mark_non_differentiable(lse)
        return o, lse

    @staticmethod
    def backward(ctx, do, _dlse):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = flash_attention_backward(q, k, v, o, lse, do, ctx.causal)
        return dq, dk, dv, None


def flash_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True):
    """FlashAttention em Triton, que treina: devolve (saída, lse).

    q, k, v: (B, H, N, d), float16/bfloat16/float32 (bfloat16 só na GPU),
    d <= 128. saída: (B, H, N, d) no dtype de q; lse: (B, H, N) float32, o
    log da soma das exponenciais de cada linha (sem gradiente).
    """
    if not isinstance(causal, bool):
        raise TypeError(f"causal deve ser True ou False, veio {causal!r}")
    return FlashAttentionFunction.apply(q, k, v, causal)
