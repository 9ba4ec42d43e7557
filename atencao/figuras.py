"""Figuras dos capítulos 10 e 11, desenhadas a partir do próprio algoritmo.

- `online_trace` percorre uma linha de pontuações em blocos com `atencao.merge`
  (a mesma junção do capítulo 10) e devolve, bloco a bloco, o máximo corrente
  m_j, a soma corrente ℓ_j e os blocos em que o máximo subiu (em que o estado
  antigo é reescalado por e^{m_antigo − m_novo}); `plot_online_trace` desenha isso.
- `plot_tile_dataflow` desenha o caminho dos blocos entre a HBM e a SRAM no
  laço do FlashAttention-2 (consultas fora, chaves dentro), com os tamanhos dos
  blocos e os bytes movidos calculados de T, d e do tamanho do bloco.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, Rectangle

from .flash import SoftmaxState, merge
from .plots import fmt_bytes, fmt_int


@dataclass(frozen=True)
class OnlineTrace:
    """O estado da softmax online depois de cada bloco de uma linha."""

    ends: np.ndarray        # (n_blocos,) índice da última coluna vista (exclusivo)
    m: np.ndarray           # (n_blocos,) máximo corrente m_j
    l: np.ndarray           # (n_blocos,) soma corrente ℓ_j = Σ e^{s - m_j}
    rescaled: np.ndarray    # (n_blocos,) True onde o máximo subiu e o estado antigo foi reescalado
    factor: np.ndarray      # (n_blocos,) o fator e^{m_antigo − m_novo} aplicado ao estado antigo


def online_trace(x, block: int) -> OnlineTrace:
    """Percorre a linha `x` (1-D) em blocos de `block` colunas, juntando estados com `merge`."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"esperava uma linha 1-D não vazia de pontuações, veio forma {x.shape}")
    if not isinstance(block, (int, np.integer)) or block < 1:
        raise ValueError(f"esperava um tamanho de bloco inteiro >= 1, veio {block!r}")
    estado = SoftmaxState(np.array([-np.inf]), np.array([0.0]))
    ends, ms, ls, subiu, fatores = [], [], [], [], []
    for ini in range(0, x.size, block):
        xb = x[ini:ini + block]
        mb = xb.max()
        novo = merge(estado, SoftmaxState(np.array([mb]), np.array([np.exp(xb - mb).sum()])))
        m_antigo = estado.m[0]
        subiu.append(bool(np.isfinite(m_antigo) and novo.m[0] > m_antigo))
        fatores.append(float(np.exp(m_antigo - novo.m[0])) if np.isfinite(m_antigo) else 0.0)
        estado = novo
        ends.append(min(ini + block, x.size))
        ms.append(estado.m[0])
        ls.append(estado.l[0])
    return OnlineTrace(np.array(ends), np.array(ms), np.array(ls), np.array(subiu), np.array(fatores))


def plot_online_trace(x, block: int, figsize=(6.2, 5.0)):
    """Duas faixas: a linha x com o máximo corrente m_j, e a soma corrente ℓ_j; reescalas marcadas."""
    x = np.asarray(x, dtype=np.float64)
    tr = online_trace(x, block)
    fig, (a1, a2) = plt.subplots(2, 1, figsize=figsize, sharex=True, height_ratios=(3, 2))
    a1.plot(np.arange(x.size), x, ".", ms=3, color="0.65", label="pontuações $s_j$ da linha")
    a1.step(np.r_[0, tr.ends], np.r_[tr.m[0], tr.m], where="pre", color="C0", lw=2,
            label="máximo corrente $m_j$")
    a2.step(np.r_[0, tr.ends], np.r_[tr.l[0], tr.l], where="pre", color="C1", lw=2,
            label="soma corrente $\\ell_j$")
    for ax in (a1, a2):
        for k in range(1, tr.ends.size):
            ax.axvline(tr.ends[k - 1], color="0.85", lw=0.6, zorder=0)
    ev = np.flatnonzero(tr.rescaled)
    inicio = np.r_[0, tr.ends[:-1]]                 # a subida aparece no começo do bloco que a causou
    a1.plot(inicio[ev], tr.m[ev], "v", color="C3", ms=8,
            label="o máximo subiu: reescala")
    a2.plot(inicio[ev], tr.l[ev], "v", color="C3", ms=8)
    a1.set_ylabel("pontuação")
    a2.set_ylabel("$\\ell_j$")
    a2.set_xlabel(f"coluna (blocos de {block})")
    a1.legend(fontsize=8, loc="lower right")
    a2.legend(fontsize=8, loc="upper left")
    a1.set_title("Softmax online: $(m_j, \\ell_j)$ a cada bloco")
    return fig, tr


def plot_tile_dataflow(T: int, d: int, block: int, i: int = 3, j: int = 1, bytes_per_el: int = 2,
                       figsize=(6.2, 4.6)):
    """O laço do FlashAttention-2 para o bloco de consultas i e o bloco de chaves j.

    À esquerda a HBM com Q, K, V e O divididos em blocos de `block` linhas; à
    direita a SRAM de um multiprocessador com o que vive nela durante a volta
    (i, j). As setas dizem o que é copiado em cada sentido e quantos bytes
    (`bytes_per_el` por número: 2 em bf16).
    """
    n = -(-T // block)
    if not (0 <= j <= i < n):
        raise ValueError(f"esperava 0 <= j <= i < {n} (blocos causais de T = {T} com bloco {block}), "
                         f"veio i={i}, j={j}")
    fig, ax = plt.subplots(figsize=figsize)
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 6.0)
    ax.axis("off")
    ax.add_patch(Rectangle((0.05, 0.35), 5.0, 5.2, fc="#eef3f8", ec="#5b7fa6", lw=1.2))
    ax.add_patch(Rectangle((5.75, 0.35), 4.2, 5.2, fc="#fdf1e6", ec="#d08a3a", lw=1.2))
    ax.text(2.55, 5.68, "HBM: grande, lenta", ha="center", fontsize=11, weight="bold")
    ax.text(7.85, 5.68, "SRAM: pequena, rápida", ha="center", fontsize=11, weight="bold")

    linhas = {"Q": 4.8, "K": 3.9, "V": 3.0, "O": 1.0}
    x0, x1, alt = 0.55, 4.85, 0.5
    w = (x1 - x0) / n
    for nome, y in linhas.items():
        ax.text(x0 - 0.12, y, nome, ha="right", va="center", fontsize=11, weight="bold")
        for b in range(n):
            destaque = (nome in ("Q", "O") and b == i) or (nome in ("K", "V") and b == j)
            visto = nome in ("K", "V") and b < j
            cor = "#5b8e7d" if destaque else ("#b9d3c9" if visto else "white")
            ax.add_patch(Rectangle((x0 + b * w, y - alt / 2), w, alt, fc=cor, ec="0.5", lw=0.5))
    ax.text(2.7, 2.0, f"T = {fmt_int(T)}: {n} blocos\nde {block} linhas, d = {d}\n"
            f"consultas: bloco i = {i}\nchaves: bloco j = {j}",
            ha="center", va="center", fontsize=9)

    def sram(y0, y1, rotulo, cor):
        ax.add_patch(Rectangle((5.95, y0), 3.8, y1 - y0, fc=cor, ec="0.4", lw=0.6))
        ax.text(7.85, (y0 + y1) / 2, rotulo, ha="center", va="center", fontsize=9)

    sram(4.45, 5.15, f"$Q_i$ ({block} × {d}):\nfica durante o laço", "#8fb9a8")
    sram(2.75, 4.15, f"$K_j$, $V_j$ ({block} × {d}):\ntrocados a cada $j$", "#8fb9a8")
    sram(1.95, 2.6, f"$S_{{ij}}$ ({block} × {block}):\nnasce e morre aqui", "#f4a259")
    sram(1.4, 1.85, "$m_i$, $\\ell_i$, $\\mathrm{acc}_i$", "#f7d6b3")
    sram(0.5, 1.25, "no fim: $O_i$, $\\mathrm{lse}_i$", "#e6e6e6")

    bloco_bytes = block * d * bytes_per_el

    def seta(y0, y1, rotulo, cor, para_sram=True):
        a, b = ((x1 + 0.05, y0), (5.9, y1)) if para_sram else ((5.9, y1), (x1 + 0.05, y0))
        ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=12, color=cor, lw=1.4))
        ax.text(5.4, max(y0, y1) + 0.12, rotulo, ha="center", fontsize=8, color=cor)

    seta(linhas["Q"], 4.8, "1 vez", "C0")
    seta(linhas["K"], 3.75, "cada $j$", "C0")
    seta(linhas["V"], 3.15, "", "C0")
    seta(linhas["O"], 0.88, "1 vez", "C3", para_sram=False)
    ax.text(5.0, 0.08, f"cada bloco de $Q$, $K$, $V$ ou $O$: {fmt_bytes(bloco_bytes)}; a matriz $T \\times T$ nunca vai à HBM",
            ha="center", fontsize=8.5, style="italic")
    return fig
