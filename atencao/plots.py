"""Figuras do livro com um só estilo: rótulos em português, mapas de calor legíveis.

Os capítulos importam daqui em vez de repetir código de gráfico. Importar este
módulo também põe os números dos eixos no formato brasileiro (0,5; 1.024): a
escala linear do matplotlib passa a usar `FormatadorBR`, que escreve cada
número com `fmt_num`, o mesmo formatador do texto e das saídas (os números
em si são de `atencao/fmt.py`, o formatador único do repositório).
"""

from __future__ import annotations

import re

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.scale as mscale
import matplotlib.ticker as mticker
import numpy as np

from .fmt import fixed
from .fmt import integer as fmt_int  # inteiro com ponto de milhar: 1048576 -> '1.048.576'

# Paleta e tamanhos comuns a todas as figuras do livro.
STYLE = {
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.autolayout": True,
}
plt.rcParams.update(STYLE)


def _as_numpy(x):
    if hasattr(x, "detach"):
        x = x.detach().cpu().float().numpy()
    return np.asarray(x)


def heatmap(
    matrix,
    ax=None,
    row_labels=None,
    col_labels=None,
    title: str = "",
    xlabel: str = "chave j",
    ylabel: str = "consulta i",
    cbar_label: str = "",
    cmap: str = "viridis",
    annotate: bool | None = None,
    fmt="{:.2f}",
    masked=None,
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
):
    """Mapa de calor de uma matriz (n, m), com a origem no canto superior esquerdo.

    `vmin`/`vmax` fixam a escala de cores (padrão: a da própria matriz); com
    `colorbar=False` não desenha a barra (quem chama desenha uma para vários mapas).

    `masked`: máscara booleana (n, m); posições True aparecem em cinza-claro
    (as posições proibidas da máscara causal). `annotate` escreve os valores
    nas células (padrão: só quando a matriz é pequena); `fmt` é uma string de
    formato (o número sai à brasileira: "{:.2f}" escreve 0,25) ou uma função
    valor -> texto (ex.: `lambda v: fmt_num(v, 2)`).
    """
    a = _as_numpy(matrix).astype(float)
    if a.ndim != 2:
        raise ValueError(f"heatmap espera uma matriz 2D (n, m), veio forma {a.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(0.5 * a.shape[1] + 2.5, 0.45 * a.shape[0] + 1.5))
    shown = np.ma.masked_array(a, mask=None if masked is None else np.asarray(masked, bool))
    shown = np.ma.masked_invalid(shown)
    cm = matplotlib.colormaps[cmap].with_extremes(bad="#e6e6e6")
    im = ax.imshow(shown, cmap=cm, aspect="auto", vmin=vmin, vmax=vmax)
    if annotate is None:
        annotate = a.size <= 100
    if annotate:
        lo, hi = im.get_clim()
        mid = (lo + hi) / 2
        for (i, j), val in np.ndenumerate(a):
            if np.ma.is_masked(shown[i, j]):
                continue
            color = "black" if val > mid else "white"
            label = fmt(val) if callable(fmt) else brazilian(fmt.format(val))
            ax.text(j, i, label, ha="center", va="center", fontsize=8, color=color)
    if row_labels is not None:
        ax.set_yticks(range(len(row_labels)), row_labels)
    if col_labels is not None:
        ax.set_xticks(range(len(col_labels)), col_labels, rotation=45, ha="right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if colorbar:
        cb = ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
        if cbar_label:
            cb.set_label(cbar_label)
    return ax


def score_panels(panels: dict, uniform: dict, row_labels=None, col_labels=None, ncols: int = 2,
                 fmt=None, cbar_label: str = "pontuação média", figsize=(10, 8.4)):
    """Vários mapas de pontuação (cada um (n, m)) numa escala de cores SÓ, com o uniforme marcado.

    `panels`: {título: matriz}; `uniform`: {título: o valor de quem espalhasse o peso por
    igual}. A escala vai de 0 até o maior entre o maior valor e 3 vezes o maior uniforme
    (a regra do cap. 8 pede pelo menos 3 vezes o uniforme): uma célula no nível do uniforme
    fica escura em todos os painéis, e uma cor clara quer dizer o mesmo número em qualquer
    um deles. A barra de cores, uma para todos, tem uma linha em cada nível uniforme.
    Devolve a figura.
    """
    mats = {k: _as_numpy(v).astype(float) for k, v in panels.items()}
    if set(mats) != set(uniform):
        raise ValueError(f"um uniforme por painel: painéis {sorted(mats)}, uniformes {sorted(uniform)}")
    vmax = max(max(float(np.nanmax(m)) for m in mats.values()), 3 * max(uniform.values()))
    nrows = -(-len(mats) // ncols)
    fig, axs = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False)
    fmt = fmt or (lambda v: fmt_num(v, 2))
    for ax, (titulo, m) in zip(axs.flat, mats.items()):
        heatmap(m, ax=ax, row_labels=row_labels, col_labels=col_labels, xlabel="", ylabel="",
                title=f"{titulo} (uniforme: {fmt_num(uniform[titulo], 2)})", annotate=True, fmt=fmt,
                vmin=0.0, vmax=vmax, colorbar=False)
    for ax in list(axs.flat)[len(mats):]:
        ax.remove()
    fig.tight_layout(rect=(0, 0, 0.9, 1))
    cax = fig.add_axes((0.92, 0.12, 0.02, 0.76))
    cb = fig.colorbar(axs.flat[0].images[0], cax=cax)
    cb.set_label(cbar_label)
    niveis = sorted(set(round(u, 6) for u in uniform.values()))
    for u in niveis:
        cb.ax.axhline(u, color="white", lw=2)
        cb.ax.axhline(u, color="black", lw=1, ls="--")
    cb.ax.set_yticks(sorted(set(list(cb.get_ticks()) + niveis)),
                     [f"uniforme {fmt_num(t, 2)}" if round(t, 6) in niveis else fmt_num(t, 2)
                      for t in sorted(set(list(cb.get_ticks()) + niveis))])
    cb.ax.set_ylim(0, vmax)
    return fig


def fmt_num(x: float, casas: int = 2) -> str:
    """Número com vírgula decimal e 2 casas se não disser outra coisa: 98.2012 -> '98,20'
    (`atencao.fmt.fixed`, o formatador do repositório, com o padrão das figuras)."""
    return fixed(x, casas)


# Um número escrito por Python ou NumPy ("0.25", "4096", "0." do NumPy), fora de expoentes.
_NUMBER = re.compile(r"(?<![eE])(?<![eE][-+])(?<![\w.])\d+(?:\.\d*)?")


def brazilian(text: str) -> str:
    """Os números que Python escreveu num texto ('0.25', '1500') no formato de `fmt_num`.

    Mantém as casas decimais de cada número: '0.50' -> '0,50', '4096' -> '4.096',
    o '0.' do NumPy -> '0,' (mesma largura); o expoente de '1.5e-07' fica.
    """
    def convert(m):
        whole, dot, decimals = m[0].partition(".")
        if dot and not decimals:
            return fmt_int(int(whole)) + ","
        return fmt_num(float(m[0]), len(decimals))

    return _NUMBER.sub(convert, text)


# Algarismos significativos de um número que o livro mostra sem casas fixas: mais
# que isso é ruído de ponto flutuante (float32 tem uns 7), não informação.
DIGITOS = 6


def br(valor, casas: int | None = None, cientifica: bool = False) -> str:
    """Número, array NumPy ou tensor escrito no formato brasileiro, para as saídas do livro.

    Sem `casas`, no máximo `DIGITOS` algarismos significativos, com vírgula
    decimal (0.9999992920524363 -> '0,999999'; 9.365004938199917e-08 ->
    '9,365e-08'; um array sai como o `print` do NumPy, alinhado, com até
    `DIGITOS` casas). Com `casas`, casas fixas (`fmt_num`), ou notação
    científica com `cientifica=True` (5.55e-17 -> '5,6e-17' com casas=1).
    """
    if hasattr(valor, "detach"):
        valor = valor.detach().cpu().numpy()
    if isinstance(valor, np.ndarray) and valor.ndim > 0:
        if casas is not None:
            valor = np.round(valor, casas)
        if casas is None:   # DIGITOS significativos no maior elemento: menos casas se ele for >= 1
            finitos = np.abs(valor[np.isfinite(valor)]) if valor.dtype.kind == "f" else np.abs(valor)
            maior = float(finitos.max()) if finitos.size else 0.0
            casas = max(0, DIGITOS - (int(np.floor(np.log10(maior))) + 1 if maior >= 1 else 0))
        return brazilian(np.array2string(valor, precision=casas))
    if isinstance(valor, (bool, np.bool_)) or not isinstance(valor, (int, float, np.number, np.ndarray)):
        raise TypeError(f"br espera um número, array ou tensor; veio {type(valor).__name__}")
    x = float(valor)
    if cientifica:
        return brazilian(f"{x:.{1 if casas is None else casas}e}")
    if casas is not None:
        return fmt_num(x, casas)
    if isinstance(valor, (int, np.integer)):
        return fmt_int(valor)
    return brazilian(f"{x:.{DIGITOS}g}")


class FormatadorBR(mticker.ScalarFormatter):
    """O `ScalarFormatter` do matplotlib com os números escritos por `brazilian`."""

    def __call__(self, x, pos=None):
        return brazilian(super().__call__(x, pos))

    def get_offset(self):
        return brazilian(super().get_offset())

    def format_data_short(self, value):
        return brazilian(super().format_data_short(value))


class EscalaLinearBR(mscale.LinearScale):
    """A escala "linear" (a padrão de todo eixo) com marcas no formato brasileiro."""

    name = "linear"

    def __init__(self):   # sem o parâmetro `axis`, que o matplotlib 3.11 vai descontinuar
        super().__init__(None)

    def set_default_locators_and_formatters(self, axis):
        super().set_default_locators_and_formatters(axis)
        axis.set_major_formatter(FormatadorBR())


# Registrar com o nome "linear" troca a escala padrão de todos os eixos (e barras de cor).
mscale.register_scale(EscalaLinearBR)


def fmt_bytes(n: float) -> str:
    """Bytes em unidades binárias, com vírgula decimal: 4194304 -> '4,00 MiB'."""
    for unit in ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]:
        if abs(n) < 1024 or unit == "PiB":
            return f"{fmt_num(n, 2 if unit != 'B' else 0)} {unit}"
        n /= 1024
    raise AssertionError("inalcançável")
