"""A máscara como função: janela deslizante, ralos e documentos (cap. 10-12).

O que este arquivo promete:

* Uma máscara é uma função pequena ``mask_mod(q_idx, kv_idx) -> bool`` que diz
  se a consulta na posição ``q_idx`` pode ver a chave na posição ``kv_idx``
  (True = visível, a convenção do FlexAttention; atenção: ``core.causal_mask``
  usa a convenção oposta, True = proibido). Ela recebe tensores de índices
  inteiros que se combinam por broadcast, por exemplo (bq, 1) e (1, bk), e
  devolve um tensor bool da forma combinada.
* ``causal()``, ``sliding_window(w)``, ``with_sinks(n_sinks, w)`` e
  ``document(ids)`` constroem as máscaras do curso; ``and_masks`` combina.
* ``visited_blocks`` diz quais pares (bloco de consultas, bloco de chaves) têm
  ao menos um par visível, SEM montar a matriz T x T: para as famílias acima
  por uma regra fechada sobre os intervalos de índices do bloco (O(1) por par
  de blocos); para uma função qualquer, avaliando a máscara só nos índices do
  bloco (bq x bk de memória, nunca T x T). ``full_blocks`` diz quais blocos
  são inteiramente visíveis (não precisam de máscara) e ``count_visited`` conta
  o trabalho poupado.
* ``dense_mask`` monta a matriz densa (só para testes e figuras) e
  ``dense_attention`` é a atenção ingênua sob a máscara, a referência.

Linha sem chave visível: a softmax de um conjunto vazio não existe (0/0).
Definimos a saída dessa linha como zero e o seu log-sum-exp como -inf: é o que
sai naturalmente do estado da softmax online que nunca viu chave nenhuma
(soma l = 0, acumulador 0, máximo -inf), é o elemento neutro de ``merge`` e é
também o que o FlexAttention devolve. Com as máscaras causais do curso isso só
acontece quando uma consulta não tem nem a si mesma entre as chaves (consultas
além da última chave, ou uma máscara escrita à mão como ``kv < q``).

Posições: ``q_idx`` é a posição ABSOLUTA da consulta. Com um cache de ``start``
posições, a linha i das consultas novas está na posição start + i.

Referências: Beltagy et al. (2020, Longformer: janela deslizante); Xiao et al.
(2023, StreamingLLM: ralos de atenção); Dong et al. (2024, FlexAttention:
``mask_mod`` e máscaras de blocos).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

__all__ = [
    "MaskMod",
    "causal",
    "sliding_window",
    "with_sinks",
    "document",
    "and_masks",
    "evaluate",
    "dense_mask",
    "dense_attention",
    "visited_blocks",
    "full_blocks",
    "block_map",
    "count_visited",
]


def _check_int(name, val, minimum):
    if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < minimum:
        raise ValueError(f"{name} deve ser um inteiro >= {minimum}, veio {val!r}")
    return int(val)


class MaskMod:
    """Uma máscara como função: ``mm(q_idx, kv_idx)`` -> tensor bool (True = visível).

    Guarda, além da função, o que as regras de blocos precisam saber:
    ``name`` (para mensagens e figuras), ``is_causal`` (nunca deixa ver o
    futuro) e ``block_rule(i0, i1, j0, j1) -> (algum, todos)``, que diz se o
    bloco de consultas [i0, i1) x chaves [j0, j1) tem algum par visível e se
    todos são visíveis, sem avaliar a máscara elemento a elemento (None quando
    não há regra fechada; aí os blocos são avaliados).
    """

    def __init__(self, fn: Callable, name: str, is_causal: bool = False,
                 block_rule: Callable | None = None):
        self.fn, self.name, self.is_causal, self.block_rule = fn, name, bool(is_causal), block_rule

    def __call__(self, q_idx, kv_idx):
        return self.fn(q_idx, kv_idx)

    def __repr__(self) -> str:
        return self.name


def causal() -> MaskMod:
    """A consulta i vê as chaves j <= i."""

    def rule(i0, i1, j0, j1):
        # algum: a primeira chave não passa da última consulta;
        # todos: a última chave não passa da primeira consulta
        return j0 <= i1 - 1, j1 - 1 <= i0

    return MaskMod(lambda q, kv: kv <= q, "causal()", True, rule)


def _band_rule(w):
    """Regra de blocos da faixa 0 <= i - j < w (causal com janela w).

    No retângulo [i0, i1) x [j0, j1) a diferença i - j assume TODOS os inteiros
    entre (i0 - (j1 - 1)) e ((i1 - 1) - j0): o bloco toca a faixa se e só se
    esses dois intervalos se cruzam, e está dentro dela se o primeiro contém o
    segundo.
    """

    def rule(i0, i1, j0, j1):
        lo, hi = i0 - (j1 - 1), (i1 - 1) - j0  # menor e maior i - j do bloco
        return hi >= 0 and lo <= w - 1, lo >= 0 and hi <= w - 1

    return rule


def sliding_window(w: int) -> MaskMod:
    """Janela deslizante causal: a consulta i vê as chaves j com i - w < j <= i.

    Cada consulta vê no máximo w chaves (ela mesma e as w - 1 anteriores);
    w = 1 é só a diagonal. Uma janela maior que T é a máscara causal.
    """
    w = _check_int("w (tamanho da janela)", w, 1)
    return MaskMod(lambda q, kv: (kv <= q) & (kv > q - w), f"sliding_window({w})", True, _band_rule(w))


def with_sinks(n_sinks: int, w: int) -> MaskMod:
    """Janela deslizante mais ralos: a consulta i vê j <= i com
    i - w < j (a janela) ou j < n_sinks (as primeiras posições, sempre).

    É a máscara do StreamingLLM (Xiao et al., 2023), que guarda 4 ralos.
    Com n_sinks = 0 é ``sliding_window(w)``.
    """
    n_sinks = _check_int("n_sinks", n_sinks, 0)
    w = _check_int("w (tamanho da janela)", w, 1)
    band = _band_rule(w)

    def rule(i0, i1, j0, j1):
        any_band, _ = band(i0, i1, j0, j1)
        # ralos no bloco: as chaves [j0, min(j1, n_sinks)), vistas por i >= j
        any_sink = j0 < n_sinks and j0 <= i1 - 1
        # todos: nada no futuro, e as chaves que não são ralos, [max(j0, n_sinks), j1),
        # cabem na janela da última consulta (a que tem a janela mais adiantada)
        j_rest = max(j0, n_sinks)
        every = j1 - 1 <= i0 and (j_rest >= j1 or (i1 - 1) - j_rest <= w - 1)
        return any_band or any_sink, every

    def fn(q, kv):
        return (kv <= q) & ((kv > q - w) | (kv < n_sinks))

    return MaskMod(fn, f"with_sinks({n_sinks}, {w})", True, rule)


def document(ids) -> MaskMod:
    """Documentos empacotados numa sequência: a consulta i vê j <= i com
    ids[j] == ids[i] (causal dentro do documento, nada entre documentos).

    ids: tensor 1-D de inteiros, um por posição (comprimento T). Quando cada
    documento ocupa posições contíguas (o caso do empacotamento), os blocos
    são decididos por uma regra fechada; senão, avaliando cada bloco.
    """
    ids = torch.as_tensor(ids)
    if ids.ndim != 1 or ids.dtype.is_floating_point or ids.dtype == torch.bool:
        raise ValueError(
            f"ids deve ser um tensor 1-D de inteiros (um documento por posição), "
            f"veio forma {tuple(ids.shape)} e dtype {ids.dtype}"
        )
    T = ids.shape[0]
    if T == 0:
        raise ValueError("ids não pode ser vazio")

    def fn(q, kv):
        # sem conferir os índices aqui (o .item() de uma conferência não roda sob o vmap do
        # FlexAttention): um índice >= T dá o IndexError do próprio torch
        idv = ids.to(q.device)
        return (kv <= q) & (idv[q] == idv[kv])

    contiguous = T == 1 or bool((ids[1:] != ids[:-1]).sum() + 1 == torch.unique(ids).numel())
    rule = None
    if contiguous:
        # doc_start[i]: primeira posição do documento de i (não decrescente)
        new = torch.ones(T, dtype=torch.bool)
        new[1:] = ids[1:] != ids[:-1]
        pos = torch.arange(T)
        doc_start = torch.where(new, pos, torch.zeros_like(pos)).cummax(0).values.tolist()

        def rule(i0, i1, j0, j1):
            if i1 > T or j1 > T:
                raise IndexError(f"document(ids) cobre as posições 0 a {T - 1}: bloco além disso")
            # i < j1 - 1: vê algum j do bloco se e só se i >= j0 (doc_start[i] <= i);
            # i >= j1 - 1: se e só se doc_start[i] <= j1 - 1 (basta o menor desses i)
            some = max(i0, j0) < min(i1, j1 - 1)
            i = max(i0, j1 - 1)
            some = some or (i < i1 and doc_start[i] <= j1 - 1)
            return some, j1 - 1 <= i0 and doc_start[i1 - 1] <= j0

    return MaskMod(fn, f"document({T} posições)", True, rule)


def and_masks(*mods) -> MaskMod:
    """Interseção: visível só onde todas as máscaras deixam ver."""
    if not mods:
        raise ValueError("and_masks precisa de ao menos uma máscara")
    for m in mods:
        if not callable(m):
            raise TypeError(f"cada máscara deve ser uma função (q_idx, kv_idx), veio {type(m).__name__}")

    def fn(q, kv):
        out = mods[0](q, kv)
        for m in mods[1:]:
            out = out & m(q, kv)
        return out

    return MaskMod(fn, " & ".join(repr(m) if isinstance(m, MaskMod) else getattr(m, "__name__", "mask_mod")
                                  for m in mods),
                   any(getattr(m, "is_causal", False) for m in mods))


# --------------------------------------------------------------------------
# Matriz densa e atenção de referência (só para testes e figuras)
# --------------------------------------------------------------------------

def evaluate(mask_mod, q_idx, kv_idx):
    """mask_mod(q_idx, kv_idx), conferindo o que ela devolve: um tensor bool da
    forma do broadcast de q_idx e kv_idx (True = visível)."""
    out = mask_mod(q_idx, kv_idx)
    # a conta do NumPy: a do torch (torch.broadcast_shapes) importa o sympy, ~1,3 s na primeira vez
    want = torch.Size(np.broadcast_shapes(tuple(q_idx.shape), tuple(kv_idx.shape)))
    if not isinstance(out, torch.Tensor) or out.dtype != torch.bool:
        raise TypeError(
            f"mask_mod deve devolver um tensor bool (True = visível), devolveu "
            f"{type(out).__name__}{'' if not isinstance(out, torch.Tensor) else ' ' + str(out.dtype)}"
        )
    return out.expand(want)


def dense_mask(mask_mod, n: int, m: int | None = None, start: int = 0, device=None) -> torch.Tensor:
    """A matriz (n, m) da máscara, True = visível: linha i = consulta na posição
    start + i, coluna j = chave j. Monta T x T: só para testes e figuras."""
    n = _check_int("n", n, 0)
    m = n + start if m is None else _check_int("m", m, 0)
    start = _check_int("start", start, 0)
    q = torch.arange(start, start + n, device=device)[:, None]  # (n, 1)
    kv = torch.arange(m, device=device)[None, :]  # (1, m)
    return evaluate(mask_mod, q, kv)  # (n, m)


def dense_attention(q, k, v, mask_mod, start: int = 0):
    """Atenção ingênua sob a máscara: devolve (saída (..., n, dv), lse (..., n)).

    Monta as pontuações n x m inteiras. Linhas sem chave visível: saída 0 e
    lse = -inf (a definição do módulo). Calcula em float32 quando a entrada é
    de 16 bits, e devolve a saída no dtype da entrada.
    """
    n, m = q.shape[-2], k.shape[-2]
    ct = torch.float64 if q.dtype == torch.float64 else torch.float32
    vis = dense_mask(mask_mod, n, m, start, device=q.device)  # (n, m)
    s = (q.to(ct) @ k.to(ct).transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (..., n, m)
    s = s.masked_fill(~vis, -math.inf)
    lse = torch.logsumexp(s, dim=-1)  # (..., n): -inf nas linhas vazias
    empty = ~vis.any(-1)  # (n,)
    p = torch.exp(s - torch.where(empty[:, None], 0.0, lse[..., None]))  # (..., n, m): 0 nas vazias
    return (p @ v.to(ct)).to(q.dtype), lse


# --------------------------------------------------------------------------
# Blocos: quais visitar, quais precisam de máscara
# --------------------------------------------------------------------------

def block_map(mask_mod, n: int, block: int = 128, m: int | None = None, start: int = 0) -> torch.Tensor:
    """Classifica cada par (bloco de consultas, bloco de chaves), sem a matriz T x T.

    Devolve um tensor int8 (ceil(n/block), ceil(m/block)): 0 = pulado (nenhum
    par visível), 1 = parcial (visitado, com máscara), 2 = cheio (visitado,
    todo visível, sem máscara). Consultas nas posições start .. start + n - 1,
    chaves 0 .. m - 1 (m = start + n quando omitido).

    Se a máscara tem regra fechada (``MaskMod.block_rule``), ela decide cada
    bloco em O(1); senão a máscara é avaliada nos índices de cada bloco
    (memória bq x bk). Os blocos da borda são mais curtos: [i0, min(i0 + block, n)).
    """
    n = _check_int("n", n, 0)
    block = _check_int("block", block, 1)
    start = _check_int("start", start, 0)
    m = n + start if m is None else _check_int("m", m, 0)
    if not callable(mask_mod):
        raise TypeError(f"mask_mod deve ser uma função (q_idx, kv_idx) -> bool, veio {type(mask_mod).__name__}")
    rule = getattr(mask_mod, "block_rule", None)
    nq, nk = -(-n // block), -(-m // block)
    out = torch.zeros(nq, nk, dtype=torch.int8)
    for bi in range(nq):
        i0, i1 = start + bi * block, start + min((bi + 1) * block, n)  # posições absolutas
        qi = torch.arange(i0, i1)[:, None] if rule is None else None  # (bq, 1)
        for bj in range(nk):
            j0, j1 = bj * block, min((bj + 1) * block, m)
            if rule is not None:
                some, every = rule(i0, i1, j0, j1)
            else:
                vis = evaluate(mask_mod, qi, torch.arange(j0, j1)[None, :])  # (bq, bk), nunca T x T
                some, every = bool(vis.any()), bool(vis.all())
            out[bi, bj] = 2 if (some and every) else (1 if some else 0)
    return out


def visited_blocks(mask_mod, n: int, block: int = 128, m: int | None = None, start: int = 0) -> torch.Tensor:
    """Tensor bool (ceil(n/block), ceil(m/block)): True nos pares de blocos com
    ao menos um par (consulta, chave) visível, os únicos que um kernel em
    blocos precisa visitar. Ver ``block_map``."""
    return block_map(mask_mod, n, block, m, start) > 0


def full_blocks(mask_mod, n: int, block: int = 128, m: int | None = None, start: int = 0) -> torch.Tensor:
    """Tensor bool: True nos pares de blocos inteiramente visíveis (dispensam a máscara)."""
    return block_map(mask_mod, n, block, m, start) == 2


def count_visited(mask_mod, n: int, block: int = 128, m: int | None = None, start: int = 0) -> dict:
    """Quantos pares de blocos existem, quantos são visitados, quantos pulados,
    quantos precisam de máscara, e a fração pulada (o trabalho poupado).

    Mesmas chaves de ``atencao.flash.count_blocks``, mais "fracao_pulada".
    """
    bm = block_map(mask_mod, n, block, m, start)
    total = bm.numel()
    visited = int((bm > 0).sum())
    return {
        "total": total,
        "calculados": visited,
        "pulados": total - visited,
        "com_mascara": int((bm == 1).sum()),
        "fracao_pulada": (total - visited) / total if total else 0.0,
    }
