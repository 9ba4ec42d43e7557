"""v2 -- FlashAttention, passo de ida, em Triton.

O que calcula: para q, k, v com forma (B, H, N, d),
    O   = softmax(máscara(Q K^T / sqrt(d))) V        (B, H, N, d)
    LSE = log sum_j exp(Q K^T / sqrt(d))[i, j]        (B, H, N), float32
sem nunca montar a matriz N x N: cada programa cuida de BLOCK_M consultas e
percorre K e V em blocos de BLOCK_N chaves com a softmax online (cap. 10-11).
O LSE é guardado para o passo de volta (flash_bwd.py), que recalcula as
probabilidades a partir dele: P[i, j] = exp(S[i, j] - LSE[i]).

FLOPs: dois produtos de matrizes (Q K^T e P V), cada um 2·N²·d por cabeça:
    4·B·H·N²·d, metade disso com a máscara causal (os blocos acima da
    diagonal são pulados, nem carregados).
Bytes (b bytes por elemento): lê Q uma vez e K, V uma vez POR BLOCO DE
    CONSULTAS: B·H·(N·d + 2·N·d·ceil(N/BLOCK_M))·b, escreve O (B·H·N·d·b) e o
    LSE (B·H·N·4). A versão ingênua escreve e relê a matriz N x N das
    pontuações (e a das probabilidades): B·H·N²·b várias vezes.
    Intensidade aritmética: cada bloco de K e V (2·BLOCK_N·d·b bytes) serve
    a 4·BLOCK_M·BLOCK_N·d FLOPs, ou seja 2·BLOCK_M/b FLOPs por byte lido
    (128 com BLOCK_M = 128 em 16 bits). Como programas vizinhos da mesma
    cabeça leem os mesmos blocos de K e V, o cache L2 ainda reduz o tráfego
    real com a memória global.

O que mudou em relação à v1 (softmax.py): lá a linha inteira cabia num
bloco; aqui a linha de pontuações (N chaves) é percorrida em pedaços, e o
máximo e a soma são mantidos "online" (m_i, l_i), com o acumulador
reescalado por exp(m_antigo - m_novo) a cada bloco. Entram também tl.dot
(Q K^T e P V; nos tensor cores em meia precisão, nas unidades comuns em
float32 "ieee"), a máscara causal com blocos pulados e a
máscara das bordas quando N não é múltiplo do bloco.

Detalhes que importam na GPU:
  * exp2 em vez de exp: as pontuações são multiplicadas por log2(e)/sqrt(d)
    e o LSE é convertido de volta para o logaritmo natural no fim;
  * dois laços: blocos inteiramente permitidos (sem máscara nenhuma) e
    blocos da diagonal ou da borda (com máscara), para não pagar tl.where
    onde não é preciso;
  * os blocos de consulta mais caros (mais perto do fim, no caso causal)
    são lançados primeiro, para equilibrar a carga entre os SMs;
  * configurações escolhidas por autotune entre algumas para Hopper
    (BLOCK_M 128, BLOCK_N 64/128, 4/8 warps, 2-4 estágios), separadas pelo
    que a compilação para sm_90a mostra (registradores, memória
    compartilhada), não por tempos medidos; no interpretador, uma só
    configuração pequena (32 x 32).

Como rodar: `from atencao.kernels import flash_attention_forward`
            `o, lse = flash_attention_forward(q, k, v, causal=True)`
(`flash_attention`, em flash_bwd.py, é a versão que também treina.)
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl
import triton.testing

from ._comum import (D_MAX, bloco_d, checar_bf16_com_dot, checar_dispositivo,
                     checar_mesmo_dtype, checar_tensor, interpretado, precisao)

LOG2E = 1.4426950408889634  # log2(e): exp(x) = exp2(x * log2(e))


def _configs_hopper():
    return [
        triton.Config({"BLOCK_M": 128, "BLOCK_N": bn}, num_warps=w, num_stages=s)
        for bn in (64, 128) for w in (4, 8) for s in (2, 3, 4)
    ]


def _podar(configs, named_args, **kwargs):
    """Descarta configurações ruins para este d, antes de compilar qualquer uma.

    Registradores: cada thread guarda sua parte do acumulador (BLOCK_M x d) e
    das pontuações (BLOCK_M x BLOCK_N), em float32. Com 4 warps (128 threads)
    e mais de 128 x 128 elementos nesses dois blocos, o ptxas derrama
    registradores na memória local (medido compilando para sm_90a, ver
    bench/compilar_sm90.py: 168 bytes de spill com d = 128, BLOCK_N = 64); com
    menos que isso, 8 warps só dividem trabalho pequeno demais. Então: 8 warps
    se e só se os dois blocos passam de 128 x 128 elementos.
    Memória compartilhada: Q + estágios x (K + V) <= ~200 KiB (228 KiB por SM),
    e 4 estágios só com blocos de 64 chaves.
    """
    d = kwargs.get("BLOCK_D", named_args.get("BLOCK_D"))
    b = named_args["Q"].element_size()
    keep = []
    for c in configs:
        bm, bn = c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"]
        grande = bm * d + bm * bn > 128 * 128
        if (c.num_warps == 8) != grande:
            continue
        if bm * d * b + c.num_stages * 2 * bn * d * b > 200 * 1024:
            continue
        if c.num_stages == 4 and bn == 128:
            continue
        keep.append(c)
    return keep or configs[:1]


CONFIG_INTERPRETADOR = triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}, num_warps=4, num_stages=1)


@triton.jit
def _fwd_inner(acc, l_i, m_i, q, K, V, stride_kn, stride_kd, stride_vn, stride_vd,
               offs_m, offs_d, lo, hi, N, D, qk_scale,
               BLOCK_N: tl.constexpr, EVEN_D: tl.constexpr, MASKED: tl.constexpr,
               CAUSAL: tl.constexpr, PREC: tl.constexpr):
    """Percorre as chaves [lo, hi) em blocos de BLOCK_N, atualizando a softmax
    online. MASKED=False só é usado em blocos inteiramente permitidos."""
    d_ok = offs_d < D  # (BLOCK_D,)
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        offs_n = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,)
        kt_ptrs = K + offs_n[None, :] * stride_kn + offs_d[:, None] * stride_kd  # (BLOCK_D, BLOCK_N)
        v_ptrs = V + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd  # (BLOCK_N, BLOCK_D)
        if MASKED:
            n_ok = offs_n < N
            kt = tl.load(kt_ptrs, mask=d_ok[:, None] & n_ok[None, :], other=0.0)
            v = tl.load(v_ptrs, mask=n_ok[:, None] & d_ok[None, :], other=0.0)
        elif EVEN_D:
            kt = tl.load(kt_ptrs)
            v = tl.load(v_ptrs)
        else:
            kt = tl.load(kt_ptrs, mask=d_ok[:, None], other=0.0)
            v = tl.load(v_ptrs, mask=d_ok[None, :], other=0.0)
        # Pontuações já em base 2: s = (q · k) * log2(e) / sqrt(d)
        s = tl.dot(q, kt, input_precision=PREC) * qk_scale  # (BLOCK_M, BLOCK_N)
        if MASKED:
            ok = n_ok[None, :]
            if CAUSAL:
                ok = ok & (offs_n[None, :] <= offs_m[:, None])
            s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))  # (BLOCK_M,)
        p = tl.exp2(s - m_new[:, None])  # (BLOCK_M, BLOCK_N)
        alpha = tl.exp2(m_i - m_new)  # quanto encolher o que já foi somado
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        # p no dtype de v: tl.dot exige operandos do mesmo tipo (float16 com float16)
        acc = tl.dot(p.to(v.dtype), v, acc, input_precision=PREC)  # (BLOCK_M, BLOCK_D)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit(do_not_specialize=["N", "H"])  # uma compilação serve a todo N e H
def _flash_fwd_kernel(Q, K, V, O, LSE,
                      stride_qb, stride_qh, stride_qn, stride_qd,
                      stride_kb, stride_kh, stride_kn, stride_kd,
                      stride_vb, stride_vh, stride_vn, stride_vd,
                      stride_ob, stride_oh, stride_on, stride_od,
                      H, N, D, qk_scale,
                      CAUSAL: tl.constexpr, BLOCK_D: tl.constexpr, PREC: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Blocos de consulta em ordem inversa: no caso causal os últimos são os
    # mais longos, e começar por eles equilibra o trabalho entre os SMs.
    pid_m = tl.num_programs(0) - 1 - tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    Q += b * stride_qb + h * stride_qh
    K += b * stride_kb + h * stride_kh
    V += b * stride_vb + h * stride_vh
    O += b * stride_ob + h * stride_oh
    start_m = pid_m * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)  # (BLOCK_M,) posições das consultas
    offs_d = tl.arange(0, BLOCK_D)
    m_ok = offs_m < N
    d_ok = offs_d < D
    q = tl.load(Q + offs_m[:, None] * stride_qn + offs_d[None, :] * stride_qd,
                mask=m_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_M, BLOCK_D)

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)  # máximo corrente (base 2)
    l_i = tl.zeros((BLOCK_M,), tl.float32)  # soma corrente de exp2(s - m_i)
    acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)  # soma corrente de p·v

    # Chaves [0, hi_full) vêm em blocos inteiros e todos permitidos: sem máscara.
    n_full = (N // BLOCK_N) * BLOCK_N
    if CAUSAL:
        hi_full = tl.minimum(start_m, n_full)  # blocos abaixo da diagonal
        hi = tl.minimum(start_m + BLOCK_M, N)  # acima disso: pulados
    else:
        hi_full = n_full
        hi = N
    acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, K, V, stride_kn, stride_kd, stride_vn, stride_vd,
                               offs_m, offs_d, 0, hi_full, N, D, qk_scale,
                               BLOCK_N, BLOCK_D == D, False, CAUSAL, PREC)
    # Diagonal e borda: com máscara.
    acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, K, V, stride_kn, stride_kd, stride_vn, stride_vd,
                               offs_m, offs_d, hi_full, hi, N, D, qk_scale,
                               BLOCK_N, BLOCK_D == D, True, CAUSAL, PREC)

    acc = acc / l_i[:, None]
    lse = (m_i + tl.log2(l_i)) * 0.6931471805599453  # de volta ao logaritmo natural
    tl.store(LSE + bh.to(tl.int64) * N + offs_m, lse, mask=m_ok)
    tl.store(O + offs_m[:, None] * stride_on + offs_d[None, :] * stride_od,
             acc.to(O.dtype.element_ty), mask=m_ok[:, None] & d_ok[None, :])


def _bench_rapido(kernel_call, quantiles):
    """Cronômetro do autotune, mais curto que o padrão (25 + 100 ms por
    configuração): com dezenas de configurações x formas, o padrão sozinho
    gastaria minutos do orçamento do bench."""
    return triton.testing.do_bench(kernel_call, warmup=5, rep=20, quantiles=quantiles)


def autotuned(kernel, configs_gpu, key, prune=None):
    """No interpretador, uma configuração pequena (sem cronometrar nada); na
    GPU, o autotune entre `configs_gpu`."""
    if interpretado():
        return triton.autotune(configs=[CONFIG_INTERPRETADOR], key=key)(kernel)
    extra = {"prune_configs_by": {"early_config_prune": prune}} if prune else {}
    return triton.autotune(configs=configs_gpu, key=key, do_bench=_bench_rapido, **extra)(kernel)


# Chave do autotune: (N, d, causal) e, implicitamente, o dtype. Cada N novo
# é cronometrado de novo (rápido), mas não recompilado (N não é especializado).
_flash_fwd = autotuned(_flash_fwd_kernel, _configs_hopper(), key=["N", "BLOCK_D", "CAUSAL"], prune=_podar)


def _checar_qkv(q, k, v):
    for nome, x in (("q", q), ("k", k), ("v", v)):
        checar_tensor(x, nome, 4, "(B, H, N, d)")
    if not (q.shape == k.shape == v.shape):
        raise ValueError(
            "q, k e v devem ter a mesma forma (B, H, N, d), vieram "
            f"q{tuple(q.shape)}, k{tuple(k.shape)}, v{tuple(v.shape)}"
        )
    dtype = checar_mesmo_dtype(q=q, k=k, v=v)
    checar_dispositivo(q=q, k=k, v=v)
    checar_bf16_com_dot(dtype)
    d = q.shape[-1]
    if d > D_MAX:
        raise ValueError(f"d (última dimensão) deve ser <= {D_MAX} neste kernel, veio {d}")
    return dtype


def flash_attention_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                            causal: bool = True, config: dict | None = None):
    """Passo de ida: devolve (saída (B, H, N, d), lse (B, H, N) float32).

    `config` (opcional, para experimentos e testes) fixa os blocos, por
    exemplo {"BLOCK_M": 64, "BLOCK_N": 32}, em vez do autotune.
    """
    if not isinstance(causal, bool):
        raise TypeError(f"causal deve ser True ou False, veio {causal!r}")
    dtype = _checar_qkv(q, k, v)
    B, H, N, d = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((B, H, N), dtype=torch.float32, device=q.device)
    qk_scale = LOG2E / math.sqrt(d)
    args = (q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), H, N, d, qk_scale)
    meta = dict(CAUSAL=causal, BLOCK_D=bloco_d(d), PREC=precisao(dtype))
    if config is None:
        grid = lambda META: (triton.cdiv(N, META["BLOCK_M"]), B * H)  # noqa: E731
        _flash_fwd[grid](*args, **meta)
    else:
        bm, bn = config["BLOCK_M"], config["BLOCK_N"]
        if bm % bn:
            raise ValueError(f"BLOCK_M deve ser múltiplo de BLOCK_N, vieram {bm} e {bn}")
        _flash_fwd_kernel[(triton.cdiv(N, bm), B * H)](
            *args, **meta, BLOCK_M=bm, BLOCK_N=bn,
            num_warps=config.get("num_warps", 4), num_stages=config.get("num_stages", 1))
    return o, lse
