"""O formatador de números e durações (core/fmt.py): um só para o corretor inteiro.
"""

from __future__ import annotations

import ast
from pathlib import Path

from autograder.core.fmt import duration, elapsed, fixed, integer, num

PKG = Path(__file__).resolve().parents[3] / "autograder"


def test_one_number_formatter():
    """`num`, o atraso e os inteiros só existem em core/fmt.py; o CSV, em readers/csvfile.py
    (quem importa quem está em test_layers.py)."""
    for path in sorted(PKG.rglob("*.py")):
        if "fontes" in path.relative_to(PKG).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        rel = path.relative_to(PKG).as_posix()
        if rel != "core/fmt.py":
            assert not names & {"num", "_num", "_pt", "fixed", "duration", "elapsed", "fmt_duration", "integer"}, (rel, names)
        if rel != "readers/csvfile.py":
            assert "write_csv" not in names, rel


def test_numbers_and_durations_read_as_in_portuguese():
    assert (num(7.0), num(7.9, ","), num(None)) == ("7", "7,9", "")
    assert (integer(100000), fixed(7.26), fixed(3, 2), fixed(1234.5)) == ("100.000", "7,3", "3,00", "1.234,5")
    assert fixed(-98.2012, 2) == "-98,20"
    assert (duration(2056), duration(40), duration(1440)) == ("34 h 16 min", "40 min", "24 h 0 min")
    assert (elapsed(42), elapsed(65), elapsed(3720)) == ("42 s", "1 min 05 s", "1 h 02 min")
