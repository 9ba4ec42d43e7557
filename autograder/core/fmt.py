"""Números e durações: o único formatador do corretor e do bench/ (sem torch nem numpy).

`report`, `exports`, `feedback`, o executor e o progresso escrevem números e
tempos só por aqui, então a nota "7,9" e o atraso "34 h 16 min" são os mesmos
no grades.csv, na planilha do Moodle, no relatório e na página do aluno. As
planilhas (CSV) são escritas por `readers/csvfile.py`.
"""

from __future__ import annotations


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
    bench/): 7.26 → "7,3", 98.2012 com 2 casas → "98,20", 1234.5 → "1.234,5"."""
    s = f"{x:,.{digits}f}"
    return s.replace(",", "\0").replace(".", ",").replace("\0", ".")


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
