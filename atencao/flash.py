"""Softmax online e atenção em blocos, com o passo de volta do FlashAttention
(capítulos 10 e 11 do livro).

O que este arquivo promete:

* ``online_softmax(x, block)`` calcula a softmax de cada linha numa única
  passada pelos blocos de colunas, mantendo o máximo corrente ``m`` e a soma
  corrente ``l`` (Milakov & Gimelshein, 2018), e depois normaliza.
* ``merge(a, b)`` junta dois estados parciais ``SoftmaxState(m, l, acc)``
  calculados sobre conjuntos disjuntos de chaves; o resultado é exatamente o
  estado do conjunto unido (a ordem não importa, a menos do arredondamento).
* ``tiled_attention(q, k, v, causal=True, block=128)`` devolve a saída da
  atenção e o log-sum-exp de cada linha de pontuações, sem nunca guardar a
  matriz T x T: laço externo sobre blocos de consultas, laço interno sobre
  blocos de chaves (a ordem do FlashAttention-2), pulando os blocos que a
  máscara causal apaga inteiros.
* ``tiled_attention(..., mask_mod=...)`` troca a máscara causal por uma
  máscara qualquer escrita como função (``atencao.masks``: janela deslizante,
  ralos, documentos): visita só os blocos que ``masks.visited_blocks``
  manda visitar e aplica a máscara só nos blocos parciais. Uma linha sem
  chave visível sai 0, com lse = -inf (ver ``atencao.masks``).
* ``FlashAttentionFunction`` é a ``torch.autograd.Function`` por trás de
  ``tiled_attention``: guarda só q, k, v, a saída e o log-sum-exp, e no passo
  de volta recalcula as pontuações bloco a bloco (Dao, 2023, algoritmo 2),
  com o termo D = rowsum(dO * O).

Memória extra: O(T) por cabeça (m, l, log-sum-exp) mais um bloco de
pontuações (block x block), contra O(T^2) da atenção ingênua.

Letras dos comentários de forma (as mesmas de ``core.py``):
    B  lote   H  cabeças   G = B*H (as dimensões iniciais achatadas)
    n  consultas   m  chaves (m = start + n com cache)   d  d_k   dv  d de v
    bq, bk  tamanhos de um bloco de consultas e de um bloco de chaves

Referências: Milakov & Gimelshein (2018), "Online normalizer calculation for
softmax"; Dao et al. (2022), "FlashAttention"; Dao (2023), "FlashAttention-2";
Shah et al. (2024), "FlashAttention-3".
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import torch

from . import masks as _masks

__all__ = [
    "SoftmaxState",
    "online_softmax",
    "merge",
    "block_schedule",
    "count_blocks",
    "tiled_attention",
    "FlashAttentionFunction",
]

Array = Any  # np.ndarray ou torch.Tensor


# --------------------------------------------------------------------------
# Estados parciais da softmax e a softmax online
# --------------------------------------------------------------------------

class SoftmaxState(NamedTuple):
    """Estado parcial de uma softmax sobre um subconjunto das chaves.

    m:   (..., n)      máximo das pontuações vistas até aqui
    l:   (..., n)      soma de exp(s - m) sobre as chaves vistas
    acc: (..., n, dv)  soma de exp(s - m) * v (saída ainda não normalizada),
         ou None quando só interessa a normalização
    """

    m: Array
    l: Array
    acc: Array | None = None


def _xp(x):
    """Devolve (exp, maximum, where) do mesmo mundo de x (NumPy ou torch)."""
    if isinstance(x, torch.Tensor):
        return torch.exp, torch.maximum, torch.where
    if isinstance(x, np.ndarray):
        return np.exp, np.maximum, np.where
    raise TypeError(f"esperava um np.ndarray ou torch.Tensor, veio {type(x).__name__}")


def _rescale_factor(m_old, m_new):
    """exp(m_old - m_new), com 0 onde m_old = -inf (nenhuma chave vista ainda).

    Se m_old e m_new forem ambos -inf, exp(-inf - (-inf)) daria NaN; a conta
    certa é 0, porque o estado antigo não tem massa nenhuma.
    """
    exp, _, where = _xp(m_old)
    with np.errstate(invalid="ignore"):  # -inf - (-inf): trocado por 0 logo abaixo
        factor = exp(m_old - m_new)
    return where(m_old == -math.inf, 0.0, factor)


def merge(a: SoftmaxState, b: SoftmaxState) -> SoftmaxState:
    """Junta dois estados parciais calculados sobre chaves disjuntas.

    m = max(m_a, m_b)
    l = l_a exp(m_a - m) + l_b exp(m_b - m)
    acc = acc_a exp(m_a - m) + acc_b exp(m_b - m)
    """
    if not isinstance(a, SoftmaxState) or not isinstance(b, SoftmaxState):
        raise TypeError(
            "merge espera dois SoftmaxState(m, l, acc), veio "
            f"{type(a).__name__} e {type(b).__name__}"
        )
    if tuple(a.m.shape) != tuple(b.m.shape):
        raise ValueError(
            f"os dois estados precisam da mesma forma de m: {tuple(a.m.shape)} e {tuple(b.m.shape)}"
        )
    if (a.acc is None) != (b.acc is None):
        raise ValueError("os dois estados precisam ter acc, ou nenhum dos dois")
    _, maximum, _ = _xp(a.m)
    m = maximum(a.m, b.m)  # (..., n)
    fa, fb = _rescale_factor(a.m, m), _rescale_factor(b.m, m)  # (..., n)
    l = a.l * fa + b.l * fb
    acc = None
    if a.acc is not None:
        acc = a.acc * fa[..., None] + b.acc * fb[..., None]  # (..., n, dv)
    return SoftmaxState(m, l, acc)


def online_softmax(x: Array, block: int = 128) -> Array:
    """Softmax da última dimensão de x, com uma passada online sobre os blocos.

    Passada 1: percorre as colunas em blocos de ``block``, atualizando o
    máximo corrente m e a soma corrente l = sum exp(x - m) (cada bloco vira
    um estado parcial e é juntado com ``merge``). Passada 2: exp(x - m) / l.
    Uma linha toda -inf dá NaN, como ``torch.softmax`` e ``atencao.softmax``.
    """
    exp, _, where = _xp(x)
    _check_block(block)
    if x.ndim < 1 or x.shape[-1] == 0:
        raise ValueError(f"x precisa de ao menos uma coluna na última dimensão, veio forma {tuple(x.shape)}")
    is_t = isinstance(x, torch.Tensor)
    if not (x.dtype.is_floating_point if is_t else np.issubdtype(x.dtype, np.floating)):
        raise TypeError(f"x deve ser de ponto flutuante, veio dtype {x.dtype}")
    state = None
    for j0 in range(0, x.shape[-1], block):
        xb = x[..., j0:j0 + block]  # (..., bk)
        mb = xb.amax(-1) if is_t else xb.max(-1)  # (...,)
        with np.errstate(invalid="ignore"):  # bloco todo -inf: exp(NaN), trocado por 0
            lb = exp(xb - mb[..., None]).sum(-1)  # (...,)
        part = SoftmaxState(mb, where(mb == -math.inf, 0.0, lb))
        state = part if state is None else merge(state, part)
    with np.errstate(invalid="ignore", divide="ignore"):  # linha toda -inf -> NaN (documentado)
        return exp(x - state.m[..., None]) / state.l[..., None]


# --------------------------------------------------------------------------
# O cronograma de blocos: quem é calculado, quem é pulado, quem leva máscara
# --------------------------------------------------------------------------

def _check_block(block):
    if isinstance(block, bool) or not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"block deve ser um inteiro >= 1, veio {block!r}")


def _check_int(name, val, minimum):
    if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < minimum:
        raise ValueError(f"{name} deve ser um inteiro >= {minimum}, veio {val!r}")


def _effective_mask(causal, mask_mod):
    """A máscara que vale: mask_mod, intersectada com a causal se causal=True
    e a máscara ainda não for causal por construção."""
    if mask_mod is None:
        return None
    if not callable(mask_mod):
        raise TypeError(
            f"mask_mod deve ser uma função (q_idx, kv_idx) -> tensor bool, veio {type(mask_mod).__name__}"
        )
    if causal and not getattr(mask_mod, "is_causal", False):
        return _masks.and_masks(_masks.causal(), mask_mod)
    return mask_mod


def block_schedule(n: int, m: int, block: int, causal: bool = True, start: int = 0, mask_mod=None):
    """Lista, na ordem do FlashAttention-2, os pares de blocos a calcular.

    Devolve [((i0, i1), [(j0, j1, precisa_mascara), ...]), ...]: para cada
    bloco de consultas [i0, i1), os blocos de chaves [j0, j1) que têm ao menos
    uma posição permitida. A consulta i (posição absoluta start + i) vê as
    chaves j <= start + i; um bloco de chaves com j0 > start + i1 - 1 está
    inteiro no futuro de todas as consultas do bloco e é pulado. Um bloco
    precisa de máscara quando sua última chave, j1 - 1, passa de start + i0.

    Com ``mask_mod`` (uma função de ``atencao.masks``; intersectada com a
    causal quando causal=True), os blocos vêm de ``masks.block_map``: só os que
    têm algum par visível, e com máscara só os parciais.
    """
    _check_int("n", n, 0)
    _check_int("m", m, 0)
    _check_block(block)
    _check_int("start", start, 0)
    sched = []
    eff = _effective_mask(causal, mask_mod)
    if eff is not None:
        bm = _masks.block_map(eff, n, block, m, start)  # (nq, nk): 0 pula, 1 parcial, 2 cheio
        for bi, i0 in enumerate(range(0, n, block)):
            row = [(j0, min(j0 + block, m), bool(bm[bi, bj] == 1))
                   for bj, j0 in enumerate(range(0, m, block)) if bm[bi, bj]]
            sched.append(((i0, min(i0 + block, n)), row))
        return sched
    for i0 in range(0, n, block):
        i1 = min(i0 + block, n)
        row = []
        for j0 in range(0, m, block):
            j1 = min(j0 + block, m)
            if causal and j0 > start + i1 - 1:
                break  # este e todos os blocos seguintes estão no futuro
            row.append((j0, j1, bool(causal and j1 - 1 > start + i0)))
        sched.append(((i0, i1), row))
    return sched


def count_blocks(n: int, m: int, block: int, causal: bool = True, start: int = 0, mask_mod=None) -> dict:
    """Quantos pares (bloco de consultas, bloco de chaves) existem, quantos são
    calculados, quantos a máscara pula e quantos precisam de máscara."""
    sched = block_schedule(n, m, block, causal, start, mask_mod)
    total = math.ceil(n / block) * math.ceil(m / block)
    computed = sum(len(row) for _, row in sched)
    masked = sum(needs for _, row in sched for (_, _, needs) in row)
    return {"total": total, "calculados": computed, "pulados": total - computed, "com_mascara": masked}


# --------------------------------------------------------------------------
# Passo de ida e de volta, sobre tensores (G, n, d) já achatados
# --------------------------------------------------------------------------

def _block_mask(i0, i1, j0, j1, start, device, mask_mod=None):
    """(bq, bk) True onde a chave está proibida: no futuro da consulta, ou,
    com mask_mod, onde a máscara não deixa ver (avaliada só neste bloco)."""
    i = torch.arange(start + i0, start + i1, device=device)[:, None]  # (bq, 1)
    j = torch.arange(j0, j1, device=device)[None, :]  # (1, bk)
    if mask_mod is not None:
        return ~_masks.evaluate(mask_mod, i, j)  # (bq, bk)
    return j > i  # (bq, bk)


def _forward(q, k, v, causal, block, start):
    """q (G, n, d), k (G, m, d), v (G, m, dv) -> out (G, n, dv), lse (G, n).

    Laço externo: blocos de consultas (cada um termina com a sua saída pronta).
    Laço interno: blocos de chaves, atualizando (m_i, l_i, acc) como em merge.
    """
    G, n, d = q.shape
    dv = v.shape[-1]
    scale = 1.0 / math.sqrt(d)
    out = q.new_empty(G, n, dv)
    lse = q.new_empty(G, n)
    for (i0, i1), row in block_schedule(n, k.shape[1], block, causal, start):
        qi = q[:, i0:i1] * scale  # (G, bq, d): a escala entra uma vez por bloco
        m_i = q.new_full((G, i1 - i0), -math.inf)  # (G, bq)
        l_i = q.new_zeros(G, i1 - i0)  # (G, bq)
        acc = q.new_zeros(G, i1 - i0, dv)  # (G, bq, dv)
        for j0, j1, needs_mask in row:
            s = torch.bmm(qi, k[:, j0:j1].transpose(1, 2))  # (G, bq, bk)
            if needs_mask:
                s.masked_fill_(_block_mask(i0, i1, j0, j1, start, s.device), -math.inf)
            # o primeiro bloco de chaves sempre tem a chave 0, permitida para
            # toda consulta: depois dele m_i é finito e exp(m_i - m_new) não dá NaN
            m_new = torch.maximum(m_i, s.amax(-1))  # (G, bq)
            p = s.sub_(m_new[..., None]).exp_()  # (G, bq, bk), reaproveita s
            alpha = torch.exp(m_i - m_new)  # (G, bq): reescala o que veio antes
            l_i.mul_(alpha).add_(p.sum(-1))
            acc.mul_(alpha[..., None]).baddbmm_(p, v[:, j0:j1])  # (G, bq, dv)
            m_i = m_new
        out[:, i0:i1] = acc / l_i[..., None]
        lse[:, i0:i1] = m_i + torch.log(l_i)
    return out, lse


def _forward_masked(q, k, v, block, start, mask_mod, record=None):
    """O passo de ida de ``_forward`` sob uma máscara qualquer (já a efetiva).

    Diferenças: os blocos vêm de ``masks.block_map``; um bloco pode apagar uma
    linha inteira antes que ela tenha visto alguma chave, então a conta usa 0
    no lugar de m = -inf (exp(-inf - 0) = 0, sem o NaN de -inf - (-inf)); e
    uma linha que nunca viu chave termina com saída 0 e lse = -inf.
    """
    G, n, d = q.shape
    dv = v.shape[-1]
    scale = 1.0 / math.sqrt(d)
    out = q.new_zeros(G, n, dv)  # blocos de consultas sem bloco visitado ficam 0
    lse = q.new_full((G, n), -math.inf)
    for (i0, i1), row in block_schedule(n, k.shape[1], block, False, start, mask_mod):
        if record is not None:
            record.extend((i0 // block, j0 // block) for j0, _, _ in row)
        if not row:
            continue
        qi = q[:, i0:i1] * scale  # (G, bq, d)
        m_i = q.new_full((G, i1 - i0), -math.inf)  # (G, bq)
        l_i = q.new_zeros(G, i1 - i0)  # (G, bq)
        acc = q.new_zeros(G, i1 - i0, dv)  # (G, bq, dv)
        for j0, j1, needs_mask in row:
            s = torch.bmm(qi, k[:, j0:j1].transpose(1, 2))  # (G, bq, bk)
            if needs_mask:
                s.masked_fill_(_block_mask(i0, i1, j0, j1, start, s.device, mask_mod), -math.inf)
            m_new = torch.maximum(m_i, s.amax(-1))  # (G, bq), -inf se a linha ainda não viu nada
            m_use = torch.where(m_new == -math.inf, 0.0, m_new)  # evita -inf - (-inf) = NaN
            p = s.sub_(m_use[..., None]).exp_()  # (G, bq, bk): 0 onde proibido
            alpha = torch.exp(m_i - m_use)  # (G, bq): 0 enquanto m_i = -inf
            l_i.mul_(alpha).add_(p.sum(-1))
            acc.mul_(alpha[..., None]).baddbmm_(p, v[:, j0:j1])  # (G, bq, dv)
            m_i = m_new
        empty = l_i == 0  # (G, bq): linhas sem chave visível
        out[:, i0:i1] = acc / torch.where(empty, 1.0, l_i)[..., None]  # acc = 0 nelas: saída 0
        lse[:, i0:i1] = m_i + torch.log(l_i)  # -inf + log 0 = -inf nas vazias
    return out, lse


def _backward(q, k, v, out, lse, dout, dlse, causal, block, start, mask_mod=None):
    """Passo de volta do FlashAttention-2 (Dao, 2023, algoritmo 2).

    Com P = exp(S - lse) recalculado bloco a bloco:
        dV = P^T dO
        dP = dO V^T
        dS = P * (dP - D + dlse),  D = rowsum(dO * O)   (D_i = sum_j P_ij dP_ij)
        dQ = dS K / sqrt(d),  dK = dS^T Q / sqrt(d)
    Laço externo sobre blocos de chaves (dK_j e dV_j ficam prontos ao fim de
    cada volta), laço interno sobre os blocos de consultas que os veem.
    """
    G, n, d = q.shape
    m = k.shape[1]
    scale = 1.0 / math.sqrt(d)
    D = (dout * out).sum(-1)  # (G, n)
    if dlse is not None:
        D = D - dlse  # o gradiente do lse entra como -dlse no mesmo termo
    dq = torch.zeros_like(q)
    dk = torch.zeros_like(k)
    dvv = torch.zeros_like(v)
    if mask_mod is not None:
        lse = torch.where(lse == -math.inf, 0.0, lse)  # linhas vazias: p = exp(-inf - 0) = 0
    by_key: dict[tuple[int, int], list] = {}
    for (i0, i1), row in block_schedule(n, m, block, causal, start, mask_mod):
        for j0, j1, needs_mask in row:
            by_key.setdefault((j0, j1), []).append((i0, i1, needs_mask))
    for (j0, j1), col in by_key.items():
        kj, vj = k[:, j0:j1], v[:, j0:j1]  # (G, bk, d), (G, bk, dv)
        dk_j = torch.zeros_like(kj)
        dv_j = torch.zeros_like(vj)
        for i0, i1, needs_mask in col:
            qi = q[:, i0:i1]  # (G, bq, d)
            s = torch.bmm(qi, kj.transpose(1, 2)).mul_(scale)  # (G, bq, bk)
            if needs_mask:
                s.masked_fill_(_block_mask(i0, i1, j0, j1, start, s.device, mask_mod), -math.inf)
            p = s.sub_(lse[:, i0:i1, None]).exp_()  # (G, bq, bk): pesos exatos
            do_i = dout[:, i0:i1]  # (G, bq, dv)
            dv_j.baddbmm_(p.transpose(1, 2), do_i)  # (G, bk, dv)
            dp = torch.bmm(do_i, vj.transpose(1, 2))  # (G, bq, bk)
            ds = p.mul_(dp.sub_(D[:, i0:i1, None]))  # (G, bq, bk), reaproveita p
            dq[:, i0:i1].baddbmm_(ds, kj, alpha=scale)  # (G, bq, d)
            dk_j.baddbmm_(ds.transpose(1, 2), qi, alpha=scale)  # (G, bk, d)
        dk[:, j0:j1] = dk_j
        dvv[:, j0:j1] = dv_j
    return dq, dk, dvv


def _compute_dtype(dtype):
    # float16/bfloat16 acumulam em float32, como os kernels de verdade
    return torch.float64 if dtype == torch.float64 else torch.float32


class FlashAttentionFunction(torch.autograd.Function):
    """Atenção em blocos com passo de volta por recálculo.

    forward(q, k, v, causal, block, start) com q (G, n, d), k (G, m, d),
    v (G, m, dv) devolve (out (G, n, dv), lse (G, n)). Guarda para o passo de
    volta apenas q, k, v, out e lse: O(T) além das entradas, nunca T x T.
    Use por meio de ``tiled_attention``, que confere as entradas e achata as
    dimensões iniciais.
    """

    @staticmethod
    def forward(ctx, q, k, v, causal, block, start, mask_mod=None, record=None):
        ct = _compute_dtype(q.dtype)
        if mask_mod is None:
            if record is not None:
                record.extend((i0 // block, j0 // block)
                              for (i0, _), row in block_schedule(q.shape[1], k.shape[1], block, causal, start)
                              for j0, _, _ in row)
            out, lse = _forward(q.to(ct), k.to(ct), v.to(ct), causal, block, start)
        else:
            out, lse = _forward_masked(q.to(ct), k.to(ct), v.to(ct), block, start, mask_mod, record)
        out = out.to(q.dtype)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.causal, ctx.block, ctx.start, ctx.mask_mod = causal, block, start, mask_mod
        return out, lse

    @staticmethod
    def backward(ctx, dout, dlse):
        q, k, v, out, lse = ctx.saved_tensors
        ct = _compute_dtype(q.dtype)
        if dout is None:
            dout = torch.zeros_like(out)
        dq, dk, dv = _backward(
            q.to(ct), k.to(ct), v.to(ct), out.to(ct), lse,
            dout.to(ct), None if dlse is None else dlse.to(ct),
            ctx.causal, ctx.block, ctx.start, ctx.mask_mod,
        )
        return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype), None, None, None, None, None


# --------------------------------------------------------------------------
# A função pública
# --------------------------------------------------------------------------

def _is_torch(x, name):
    if isinstance(x, torch.Tensor):
        return True
    if isinstance(x, np.ndarray):
        return False
    raise TypeError(f"{name}: esperava um np.ndarray ou torch.Tensor, veio {type(x).__name__}")


def tiled_attention(q: Array, k: Array, v: Array, causal: bool = True, block: int = 128, start: int = 0,
                    mask_mod=None, record: list | None = None):
    """Atenção exata em blocos: devolve (saída, lse) sem formar a matriz T x T.

    q: (..., n, d), k: (..., m, d), v: (..., m, dv)
      -> saída (..., n, dv) e lse (..., n), com
         lse[i] = log sum_j exp(q_i · k_j / sqrt(d)) sobre as chaves permitidas.
    Com causal=True a consulta i (posição start + i) vê as chaves j <= start + i.
    NumPy entra, NumPy sai; torch entra, torch sai. Com tensores que pedem
    gradiente, o passo de volta é o do FlashAttention-2 (recalcula os blocos).
    float16/bfloat16 acumulam em float32; o lse sai em float32 nesse caso.

    mask_mod: uma máscara como função, ``mask_mod(q_idx, kv_idx) -> bool``
    (True = visível), de ``atencao.masks`` (``sliding_window(w)``,
    ``with_sinks(n, w)``, ``document(ids)``) ou escrita à mão; q_idx é a
    posição absoluta start + i. Com causal=True ela é intersectada com a
    máscara causal (as de ``atencao.masks`` já são causais); com causal=False
    vale só ela. Só os pares de blocos que ``masks.visited_blocks`` aponta
    são calculados, e a máscara só é avaliada nos blocos parciais.
    Linha sem nenhuma chave visível: saída 0 e lse = -inf (a softmax de um
    conjunto vazio não existe; 0 é a soma vazia dos valores, e é o estado da
    softmax online que não viu chave nenhuma). Sem mask_mod isso não acontece.
    record: uma lista; se vier, o passo de ida acrescenta nela cada par
    (bloco de consultas, bloco de chaves) que visitou, em índices de bloco.
    """
    kinds = {name: _is_torch(x, name) for name, x in (("q", q), ("k", k), ("v", v))}
    if len(set(kinds.values())) > 1:
        raise TypeError("misture não: use só NumPy ou só torch em q, k e v")
    is_t = kinds["q"]
    for name, x, hint in (("q", q, "(..., n, d)"), ("k", k, "(..., m, d)"), ("v", v, "(..., m, dv)")):
        if x.ndim < 2:
            raise ValueError(f"{name} deve ter forma {hint} (pelo menos 2 dimensões), veio {tuple(x.shape)}")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal deve ser True ou False, veio {causal!r}")
    _check_block(block)
    _check_int("start", start, 0)
    if start and not causal and mask_mod is None:
        raise ValueError("start só tem sentido com causal=True ou com mask_mod")
    eff = _effective_mask(bool(causal), mask_mod)
    if record is not None and not isinstance(record, list):
        raise TypeError(f"record deve ser uma lista (ou None), veio {type(record).__name__}")
    if not is_t:
        dtypes = {x.dtype for x in (q, k, v)}
        if len(dtypes) > 1 or not np.issubdtype(q.dtype, np.floating):
            raise TypeError(f"q, k e v devem ter o mesmo dtype de ponto flutuante, vieram {[str(x.dtype) for x in (q, k, v)]}")
        with torch.no_grad():
            out, lse = tiled_attention(
                torch.from_numpy(np.ascontiguousarray(q)), torch.from_numpy(np.ascontiguousarray(k)),
                torch.from_numpy(np.ascontiguousarray(v)), causal=bool(causal), block=int(block), start=int(start),
                mask_mod=mask_mod, record=record,
            )
        return out.numpy(), lse.numpy()
    if len({q.dtype, k.dtype, v.dtype}) > 1 or not q.dtype.is_floating_point:
        raise TypeError(f"q, k e v devem ter o mesmo dtype de ponto flutuante, vieram {[q.dtype, k.dtype, v.dtype]}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q e k precisam da mesma última dimensão d: q{tuple(q.shape)} e k{tuple(k.shape)}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k e v precisam do mesmo número de posições m: k{tuple(k.shape)} e v{tuple(v.shape)}")
    n, m, d, dv = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    if m == 0 or d == 0:
        raise ValueError(f"é preciso ao menos uma chave e d >= 1: q{tuple(q.shape)}, k{tuple(k.shape)}")
    try:
        # a conta do NumPy: a do torch importa o sympy, ~1,3 s na primeira vez
        lead = torch.Size(np.broadcast_shapes(tuple(q.shape[:-2]), tuple(k.shape[:-2]), tuple(v.shape[:-2])))
    except ValueError:
        raise ValueError(
            "as dimensões iniciais (lote, cabeças) não são compatíveis: "
            f"q{tuple(q.shape)}, k{tuple(k.shape)}, v{tuple(v.shape)}"
        ) from None
    G = math.prod(lead)
    q3 = q.expand(*lead, n, d).reshape(G, n, d)  # (G, n, d)
    k3 = k.expand(*lead, m, d).reshape(G, m, d)  # (G, m, d)
    v3 = v.expand(*lead, m, dv).reshape(G, m, dv)  # (G, m, dv)
    out, lse = FlashAttentionFunction.apply(q3, k3, v3, bool(causal), int(block), int(start), eff, record)
    return out.reshape(*lead, n, dv), lse.reshape(*lead, n)
