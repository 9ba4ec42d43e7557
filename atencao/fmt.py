"""Números e durações em português do Brasil: o único formatador do repositório.

O livro (por `atencao.plots` e `atencao.medir`), o corretor (`autograder/`) e o bench/
escrevem números e tempos só por aqui: a nota "7,9", o atraso "34 h 16 min", o "1.024"
de um eixo e o "98,20" de uma tabela do bench seguem as mesmas regras (vírgula decimal,
ponto de milhar). Só a biblioteca padrão: o corretor importa este módulo sem carregar o
torch (`atencao/__init__.py` só importa o resto quando alguém o usa).
"""

from __future__ import annotations

import math

__all__ = ["num", "integer", "fixed", "sci", "duration", "elapsed"]


def num(x, decimal: str = ".") -> str:
    """Um número sem zeros à toa: 7 → "7", 7.9 → "7.9" (ou "7,9"); None → ""."""
    if x is None:
        return ""
    x = round(float(x), 4)
    return (str(int(x)) if x == int(x) else f"{x:g}").replace(".", decimal)


def integer(n: int) -> str:
    """Inteiro com ponto de milhar: 100000 → "100.000"."""
    return f"{int(n):,}".replace(",", ".")


def fixed(x: float, digits: int = 1) -> str:
    """Com casas fixas, vírgula decimal e ponto de milhar (médias do relatório, medições do
    bench/, textos do livro): 7.26 → "7,3", 98.2012 com 2 casas → "98,20", 1234.5 → "1.234,5"."""
    s = f"{x:,.{digits}f}"
    return s.replace(",", "\0").replace(".", ",").replace("\0", ".")


def sci(x: float, digits: int = 1) -> str:
    """Notação científica para o texto: 1.2e-16 → "1,2 × 10⁻¹⁶"."""
    x = float(x)
    if x == 0 or not math.isfinite(x):
        return "0" if x == 0 else str(x)
    e = int(math.floor(math.log10(abs(x))))
    mant = x / 10**e
    if round(abs(mant), digits) >= 10:  # 9,96 arredondaria para 10,0
        mant, e = mant / 10, e + 1
    sup = str(e).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{mant:.{digits}f}".replace(".", ",") + f" × 10{sup}"


def duration(minutes: int) -> str:
    """Um atraso como se lê: 2056 → "34 h 16 min", 40 → "40 min", 1440 → "24 h 0 min"."""
    h, m = divmod(int(minutes), 60)
    return f"{h} h {m} min" if h else f"{m} min"


def elapsed(seconds: float) -> str:
    """Um tempo de relógio como se lê (a barra de progresso): 42 → "42 s", 65 → "1 min 05 s",
    3720 → "1 h 02 min"."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m} min {s:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"
