"""v4 -- atenção de decodificação sobre um KV cache, com GQA.

O que calcula: na geração, um token novo por sequência. Para cada sequência
b e cabeça de consulta h,
    o[b, h] = softmax(q[b, h] · K[b, g(h), :L_b]^T / sqrt(d)) V[b, g(h), :L_b]
com q (B, Hq, d), o cache K, V (B, Hkv, S, d) (S = capacidade, das quais
só as L_b primeiras posições estão preenchidas) e g(h) = h // (Hq / Hkv):
cada grupo de Hq/Hkv cabeças de consulta compartilha uma cabeça de K e V
(GQA; Hkv = Hq é a atenção multi-cabeça comum, Hkv = 1 é MQA). Não há
máscara causal: o token novo é o último e vê todo o cache.

FLOPs: 4·B·Hq·L·d (q·K^T e p·V, uma linha de cada).
Bytes: o cache inteiro é lido uma vez: 2·B·Hkv·L·d·b. Em 16 bits são
Hq/Hkv FLOPs por byte (1 sem GQA, 6 com 24 cabeças de consulta e 4 de KV),
muito abaixo do que a GPU calcula por byte que chega: este kernel é
limitado por memória, e o tempo é bytes / largura de banda.
Por isso cada programa carrega um bloco de K e V UMA vez e o usa para as
Hq/Hkv consultas do grupo (um tl.dot de (grupo, d) x (d, BLOCK_N)), em vez
de um programa por cabeça de consulta relendo o mesmo bloco: o cache é lido
Hkv vezes, não Hq vezes (6x menos com 24 cabeças de consulta e 4 de KV).

O que mudou em relação à v2 (flash_fwd.py): uma só consulta por cabeça e
comprimentos diferentes por sequência (L_b); as linhas do tl.dot são as
cabeças do grupo (completadas até 16, o mínimo de tl.dot), não posições.
E, como B·Hkv programas podem ser poucos para ocupar a GPU, o cache pode
ser dividido em `num_splits` pedaços processados em paralelo ("flash
decoding"): cada pedaço devolve (o parcial, lse parcial) e os pedaços são
fundidos com a mesma regra da softmax online (cap. 10):
    lse = logsumexp_s lse_s,   o = sum_s exp(lse_s - lse) · o_s

Como rodar: `from atencao.kernels import decode_attention`
            `o = decode_attention(q, k_cache, v_cache, lengths)`
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ._comum import (D_MAX, bloco_d, checar_bf16_com_dot, checar_dispositivo,
                     checar_mesmo_dtype, checar_tensor, interpretado, next_pow2, precisao)


@triton.jit
def _decode_kernel(Q, K, V, LENS, O_PART, LSE_PART,
                   stride_qb, stride_qh, stride_qd,
                   stride_kb, stride_kh, stride_kn, stride_kd,
                   stride_vb, stride_vh, stride_vn, stride_vd,
                   HQ, HKV, GROUP, D, CHUNK, NUM_SPLITS, sm_scale,
                   BLOCK_G: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr,
                   PREC: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    hk = tl.program_id(1)
    split = tl.program_id(2)
    length = tl.load(LENS + b)  # posições preenchidas do cache desta sequência
    lo = split * CHUNK
    hi = tl.minimum(lo + CHUNK, length)

    offs_g = tl.arange(0, BLOCK_G)  # cabeças do grupo (linhas do tl.dot)
    offs_d = tl.arange(0, BLOCK_D)
    g_ok = offs_g < GROUP
    d_ok = offs_d < D
    heads = hk * GROUP + offs_g  # (BLOCK_G,) cabeças de consulta deste grupo
    q = tl.load(Q + b * stride_qb + heads[:, None] * stride_qh + offs_d[None, :] * stride_qd,
                mask=g_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_G, BLOCK_D)
    K += b * stride_kb + hk.to(tl.int64) * stride_kh
    V += b * stride_vb + hk.to(tl.int64) * stride_vh
    qk_scale = sm_scale * 1.4426950408889634

    m_i = tl.full((BLOCK_G,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_G,), tl.float32)
    acc = tl.zeros((BLOCK_G, BLOCK_D), tl.float32)
    for start_n in range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_ok = offs_n < hi
        kt = tl.load(K + offs_n[None, :] * stride_kn + offs_d[:, None] * stride_kd,
                     mask=d_ok[:, None] & n_ok[None, :], other=0.0)  # (BLOCK_D, BLOCK_N)
        v = tl.load(V + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd,
                    mask=n_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_N, BLOCK_D)
        s = tl.dot(q, kt, input_precision=PREC) * qk_scale  # (BLOCK_G, BLOCK_N)
        s = tl.where(n_ok[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None], input_precision=PREC)
        m_i = m_new

    # Um pedaço vazio (lo >= L_b) devolve o = 0 e lse = -inf: peso zero na fusão.
    vazio = l_i == 0.0
    o = acc / tl.where(vazio, 1.0, l_i)[:, None]
    lse = tl.where(vazio, float("-inf"), (m_i + tl.log2(tl.where(vazio, 1.0, l_i))) * 0.6931471805599453)
    row = (b * HQ + heads) * NUM_SPLITS + split  # O_PART: (B, Hq, NUM_SPLITS, d)
    tl.store(O_PART + row[:, None] * D + offs_d[None, :], o, mask=g_ok[:, None] & d_ok[None, :])
    tl.store(LSE_PART + row, lse, mask=g_ok)


def _checar_lengths(lengths, B, S, device):
    if isinstance(lengths, bool):
        raise TypeError("lengths deve ser um inteiro ou um tensor de inteiros (B,), veio bool")
    if isinstance(lengths, int):
        lens = torch.full((B,), lengths, dtype=torch.int32, device=device)
    elif isinstance(lengths, torch.Tensor):
        if lengths.dtype not in (torch.int32, torch.int64):
            raise TypeError(f"lengths deve ter dtype int32 ou int64, veio {lengths.dtype}")
        if lengths.shape != (B,):
            raise ValueError(f"lengths deve ter forma (B,) = ({B},), veio {tuple(lengths.shape)}")
        lens = lengths.to(device=device, dtype=torch.int32).contiguous()
    else:
        raise TypeError(f"lengths deve ser um inteiro ou um tensor de inteiros (B,), veio {type(lengths).__name__}")
    lo, hi = int(lens.min()), int(lens.max())
    if lo < 1 or hi > S:
        raise ValueError(
            f"cada comprimento deve estar entre 1 e a capacidade do cache S = {S}, "
            f"vieram valores entre {lo} e {hi}"
        )
    return lens, hi


def decode_attention(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                     lengths, num_splits: int | None = None, block_n: int | None = None):
    """Atenção de um token novo por sequência sobre o cache, com GQA.

    q: (B, Hq, d); k_cache, v_cache: (B, Hkv, S, d), Hq múltiplo de Hkv;
    lengths: int ou tensor (B,) de inteiros em [1, S], quantas posições do
    cache valem para cada sequência. Devolve (B, Hq, d) no dtype de q.
    num_splits: em quantos pedaços dividir o cache (padrão: o bastante para
    ocupar a GPU; 1 no interpretador). block_n: chaves por bloco.
    """
    checar_tensor(q, "q", 3, "(B, Hq, d)")
    checar_tensor(k_cache, "k_cache", 4, "(B, Hkv, S, d)")
    checar_tensor(v_cache, "v_cache", 4, "(B, Hkv, S, d)")
    if k_cache.shape != v_cache.shape:
        raise ValueError(
            f"k_cache e v_cache devem ter a mesma forma (B, Hkv, S, d), vieram "
            f"{tuple(k_cache.shape)} e {tuple(v_cache.shape)}"
        )
    B, Hq, d = q.shape
    Bk, Hkv, S, dk = k_cache.shape
    if Bk != B or dk != d:
        raise ValueError(
            f"q (B, Hq, d) = {tuple(q.shape)} e k_cache (B, Hkv, S, d) = "
            f"{tuple(k_cache.shape)} devem concordar em B e d"
        )
    if Hq % Hkv:
        raise ValueError(
            f"o número de cabeças de consulta Hq = {Hq} deve ser múltiplo do de "
            f"cabeças de K/V Hkv = {Hkv} (GQA)"
        )
    if d > D_MAX:
        raise ValueError(f"d (última dimensão) deve ser <= {D_MAX} neste kernel, veio {d}")
    dtype = checar_mesmo_dtype(q=q, k_cache=k_cache, v_cache=v_cache)
    checar_dispositivo(q=q, k_cache=k_cache, v_cache=v_cache)
    checar_bf16_com_dot(dtype)
    lens, max_len = _checar_lengths(lengths, B, S, q.device)
    group = Hq // Hkv

    if block_n is None:
        block_n = 32 if interpretado() else 64
    if num_splits is None:
        if interpretado():
            num_splits = 1
        else:  # ~2 programas por SM, mas pedaços de pelo menos 4 blocos
            sms = torch.cuda.get_device_properties(q.device).multi_processor_count
            num_splits = max(1, min(triton.cdiv(2 * sms, B * Hkv), triton.cdiv(max_len, 4 * block_n)))
    if isinstance(num_splits, bool) or not isinstance(num_splits, int) or num_splits < 1:
        raise ValueError(f"num_splits deve ser um inteiro >= 1, veio {num_splits!r}")
    chunk = triton.cdiv(triton.cdiv(max_len, num_splits), block_n) * block_n

    o_part = torch.empty((B, Hq, num_splits, d), dtype=torch.float32, device=q.device)
    lse_part = torch.empty((B, Hq, num_splits), dtype=torch.float32, device=q.device)
    _decode_kernel[(B, Hkv, num_splits)](
        q, k_cache, v_cache, lens, o_part, lse_part,
        *q.stride(), *k_cache.stride(), *v_cache.stride(),
        Hq, Hkv, group, d, chunk, num_splits, 1.0 / math.sqrt(d),
        BLOCK_G=max(16, next_pow2(group)), BLOCK_D=bloco_d(d), BLOCK_N=block_n,
        PREC=precisao(dtype), num_warps=4, num_stages=2 if not interpretado() else 1,
    )
    if num_splits == 1:
        return o_part[:, :, 0].to(dtype)
    # Fusão dos pedaços, a mesma regra de fusão da softmax online (cap. 10).
    lse = torch.logsumexp(lse_part, dim=-1, keepdim=True)  # (B, Hq, 1)
    w = torch.exp(lse_part - lse)  # (B, Hq, num_splits), soma 1
    return (w[..., None] * o_part).sum(dim=2).to(dtype)  # (B, Hq, d)
