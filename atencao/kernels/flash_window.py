"""v5 -- FlashAttention com janela deslizante e ralos, passo de ida, em Triton.

O que calcula: para q, k, v com forma (B, H, N, d), a saída e o LSE da v2
(flash_fwd.py) sob a máscara ``atencao.masks.with_sinks(n_sinks, w)``: a
consulta i vê as chaves j <= i com i - w < j (a janela dos w últimos tokens,
ela mesma incluída) ou j < n_sinks (os ralos do StreamingLLM). Com
n_sinks = 0 é a janela deslizante pura (a das camadas locais do Gemma 3 e
das camadas de janela de 128 do gpt-oss); com w >= N, a máscara causal.
``window`` e ``n_sinks`` são parâmetros do kernel (inteiros em tempo de
execução): mudar a janela não recompila nada.

Quais blocos de chaves cada programa visita (a mesma regra de
``masks.visited_blocks``, que os testes conferem bloco a bloco): para o bloco
de consultas [i0, i0 + BLOCK_M),
    janela:      as chaves [max(0, i0 - w + 1), min(i0 + BLOCK_M, N)),
                 começando no bloco que contém a primeira delas;
    ralos:  os blocos de [0, n_sinks) que ficam ANTES do primeiro bloco
                 da janela (os outros já são visitados por ela).
Tudo entre os ralos e a janela é pulado: nem carregado.

FLOPs: com w + n_sinks << N, cada bloco de consultas visita no máximo
ceil(n_sinks / BLOCK_N) + (w + BLOCK_M) / BLOCK_N + 1 blocos de chaves, e o
trabalho cai de ~2·B·H·N²·d (causal) para ~4·B·H·N·(n_sinks + w + BLOCK_M)·d:
linear em N em vez de quadrático.
Bytes: K e V são lidos só nos blocos visitados, B·H·N·d·b para Q e O mais
2·B·H·d·b·(n_sinks + w + BLOCK_M) por bloco de consultas para K e V.

O que mudou em relação à v2 (flash_fwd.py):
  * dois intervalos de chaves em vez de um ([0, fim dos ralos) e a
    janela), com o intervalo do meio pulado;
  * a máscara de cada elemento (j <= i e (i - w < j ou j < n_sinks)) em TODO
    bloco visitado: não há laço sem máscara, porque a borda de baixo da
    janela atravessa os blocos como a diagonal;
  * uma linha pode ter um bloco inteiro mascarado ANTES de ver alguma chave
    (na v2 a chave 0 estava sempre no primeiro bloco): então m = -inf é
    trocado por 0 na hora de subtrair, para evitar -inf - (-inf) = NaN;
  * os programas andam em ordem natural: com a janela, todo bloco de
    consultas custa quase o mesmo, e não há o que equilibrar;
  * com ``count_tiles=True`` cada programa grava quantos blocos de chaves
    visitou, para os testes compararem com ``masks.visited_blocks``.

Como rodar: `from atencao.kernels import flash_attention_window`
            `o, lse = flash_attention_window(q, k, v, window=128, n_sinks=4)`
(só o passo de ida; o passo de volta com janela não está implementado.)
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ._comum import bloco_d, precisao
from .flash_fwd import LOG2E, _checar_qkv, _configs_hopper, _podar, autotuned


@triton.jit
def _window_inner(acc, l_i, m_i, n_tiles, q, K, V, stride_kn, stride_kd, stride_vn, stride_vd,
                  offs_m, offs_d, lo, hi, N, D, qk_scale, WINDOW, N_SINKS,
                  BLOCK_N: tl.constexpr, PREC: tl.constexpr):
    """Percorre as chaves [lo, hi) em blocos de BLOCK_N, com a máscara da janela
    e dos ralos em cada elemento."""
    d_ok = offs_d < D  # (BLOCK_D,)
    for start_n in range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,)
        n_ok = offs_n < N
        kt = tl.load(K + offs_n[None, :] * stride_kn + offs_d[:, None] * stride_kd,
                     mask=d_ok[:, None] & n_ok[None, :], other=0.0)  # (BLOCK_D, BLOCK_N)
        v = tl.load(V + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd,
                    mask=n_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_N, BLOCK_D)
        s = tl.dot(q, kt, input_precision=PREC) * qk_scale  # (BLOCK_M, BLOCK_N), base 2
        i = offs_m[:, None]
        j = offs_n[None, :]
        ok = n_ok[None, :] & (j <= i) & ((j > i - WINDOW) | (j < N_SINKS))
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))  # (BLOCK_M,), -inf se a linha nada viu
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)  # evita -inf - (-inf)
        p = tl.exp2(s - m_use[:, None])  # (BLOCK_M, BLOCK_N): 0 onde proibido
        alpha = tl.exp2(m_i - m_use)  # 0 enquanto m_i = -inf
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc, input_precision=PREC)  # (BLOCK_M, BLOCK_D)
        m_i = m_new
        n_tiles += 1
    return acc, l_i, m_i, n_tiles


@triton.jit(do_not_specialize=["N", "H", "WINDOW", "N_SINKS"])
def _flash_window_kernel(Q, K, V, O, LSE, TILES,
                         stride_qb, stride_qh, stride_qn, stride_qd,
                         stride_kb, stride_kh, stride_kn, stride_kd,
                         stride_vb, stride_vh, stride_vn, stride_vd,
                         stride_ob, stride_oh, stride_on, stride_od,
                         H, N, D, qk_scale, WINDOW, N_SINKS,
                         COUNT: tl.constexpr, BLOCK_D: tl.constexpr, PREC: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // H).to(tl.int64)
    h = (bh % H).to(tl.int64)
    Q += b * stride_qb + h * stride_qh
    K += b * stride_kb + h * stride_kh
    V += b * stride_vb + h * stride_vh
    O += b * stride_ob + h * stride_oh
    start_m = pid_m * BLOCK_M
    offs_m = start_m + tl.arange(0, BLOCK_M)  # (BLOCK_M,)
    offs_d = tl.arange(0, BLOCK_D)
    m_ok = offs_m < N
    d_ok = offs_d < D
    q = tl.load(Q + offs_m[:, None] * stride_qn + offs_d[None, :] * stride_qd,
                mask=m_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_M, BLOCK_D)

    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)
    n_tiles = 0

    # A janela: da primeira chave que a primeira consulta vê até a última consulta.
    lo_win = (tl.maximum(start_m - WINDOW + 1, 0) // BLOCK_N) * BLOCK_N
    hi = tl.minimum(start_m + BLOCK_M, N)
    # Os ralos: os blocos de [0, N_SINKS) que ficam antes da janela.
    hi_sink = tl.minimum(tl.cdiv(N_SINKS, BLOCK_N) * BLOCK_N, lo_win)
    acc, l_i, m_i, n_tiles = _window_inner(acc, l_i, m_i, n_tiles, q, K, V,
                                           stride_kn, stride_kd, stride_vn, stride_vd,
                                           offs_m, offs_d, 0, hi_sink, N, D, qk_scale, WINDOW, N_SINKS,
                                           BLOCK_N, PREC)
    acc, l_i, m_i, n_tiles = _window_inner(acc, l_i, m_i, n_tiles, q, K, V,
                                           stride_kn, stride_kd, stride_vn, stride_vd,
                                           offs_m, offs_d, lo_win, hi, N, D, qk_scale, WINDOW, N_SINKS,
                                           BLOCK_N, PREC)

    # Toda consulta válida vê a si mesma (w >= 1): l_i > 0. As linhas de
    # preenchimento (i >= N) podem não ver nada; não são gravadas, mas a conta
    # não deve dividir por zero.
    l_use = tl.where(l_i == 0.0, 1.0, l_i)
    acc = acc / l_use[:, None]
    lse = tl.where(l_i == 0.0, float("-inf"), (m_i + tl.log2(l_use)) * 0.6931471805599453)
    tl.store(LSE + bh.to(tl.int64) * N + offs_m, lse, mask=m_ok)
    tl.store(O + offs_m[:, None] * stride_on + offs_d[None, :] * stride_od,
             acc.to(O.dtype.element_ty), mask=m_ok[:, None] & d_ok[None, :])
    if COUNT:
        tl.store(TILES + bh * tl.num_programs(0) + pid_m, n_tiles)


_flash_window = autotuned(_flash_window_kernel, _configs_hopper(), key=["N", "BLOCK_D"], prune=_podar)


def _check_window_int(name, val, minimum):
    if isinstance(val, bool) or not isinstance(val, int) or val < minimum:
        raise ValueError(f"{name} deve ser um inteiro >= {minimum}, veio {val!r}")


def flash_attention_window(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int,
                           n_sinks: int = 0, config: dict | None = None, count_tiles: bool = False):
    """Passo de ida sob ``masks.with_sinks(n_sinks, window)``.

    Devolve (saída (B, H, N, d), lse (B, H, N) float32); com count_tiles=True,
    também tiles (B, H, ceil(N / BLOCK_M)) int32: quantos blocos de chaves cada
    bloco de consultas visitou (exige ``config``, para saber os blocos).
    `config` fixa os blocos, por exemplo {"BLOCK_M": 32, "BLOCK_N": 32}, em vez
    do autotune; BLOCK_M deve ser múltiplo de BLOCK_N.
    """
    _check_window_int("window", window, 1)
    _check_window_int("n_sinks", n_sinks, 0)
    if not isinstance(count_tiles, bool):
        raise TypeError(f"count_tiles deve ser True ou False, veio {count_tiles!r}")
    if count_tiles and config is None:
        raise ValueError("count_tiles=True exige config (os tamanhos de bloco que a contagem usa)")
    dtype = _checar_qkv(q, k, v)
    B, H, N, d = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((B, H, N), dtype=torch.float32, device=q.device)
    qk_scale = LOG2E / math.sqrt(d)
    window, n_sinks = min(window, N), min(n_sinks, N)  # além de N nada muda (e cabe em int32)
    meta = dict(COUNT=count_tiles, BLOCK_D=bloco_d(d), PREC=precisao(dtype))
    if config is None:
        args = (q, k, v, o, lse, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(),
                H, N, d, qk_scale, window, n_sinks)
        grid = lambda META: (triton.cdiv(N, META["BLOCK_M"]), B * H)  # noqa: E731
        _flash_window[grid](*args, **meta)
        return o, lse
    bm, bn = config["BLOCK_M"], config["BLOCK_N"]
    if bm % bn:
        raise ValueError(f"BLOCK_M deve ser múltiplo de BLOCK_N, vieram {bm} e {bn}")
    n_prog = triton.cdiv(N, bm)
    tiles = torch.zeros((B, H, n_prog), dtype=torch.int32, device=q.device)
    args = (q, k, v, o, lse, tiles, *q.stride(), *k.stride(), *v.stride(), *o.stride(),
            H, N, d, qk_scale, window, n_sinks)
    _flash_window_kernel[(n_prog, B * H)](
        *args, **meta, BLOCK_M=bm, BLOCK_N=bn,
        num_warps=config.get("num_warps", 4), num_stages=config.get("num_stages", 1))
    return (o, lse, tiles) if count_tiles else (o, lse)
