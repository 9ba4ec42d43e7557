"""O formatador de números e durações (atencao/fmt.py): um só para o repositório inteiro.

O livro (atencao.plots, atencao.medir), o corretor (autograder/) e o bench/ escrevem
números e tempos por ele; o corretor o importa sem carregar o torch.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from atencao.fmt import duration, elapsed, fixed, integer, num, sci

ROOT = Path(__file__).resolve().parents[2]
# nomes de formatador que só atencao/fmt.py define (atencao.plots.fmt_num é o `fixed` com o
# padrão de 2 casas das figuras; os `_fmt` de quem mostra "—" no lugar de None chamam o daqui)
FORMATTERS = {"num", "_num", "_pt", "fixed", "duration", "elapsed", "fmt_duration", "integer", "fmt_int",
              "fmt_sci", "sci"}


def test_one_number_formatter_in_the_repository():
    """`num`, o atraso, os inteiros e a notação científica só existem em atencao/fmt.py; o CSV
    do corretor, em readers/csvfile.py."""
    for folder in ("autograder", "atencao", "bench"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("autograder/fontes/"):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
            if rel != "atencao/fmt.py":
                assert not names & FORMATTERS, (rel, sorted(names & FORMATTERS))
            if rel != "autograder/readers/csvfile.py":
                assert "write_csv" not in names, rel


def test_the_formatter_does_not_load_torch():
    """O corretor importa o formatador no processo que planeja, que não carrega o torch."""
    code = "import sys, atencao.fmt, autograder.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr


def test_the_package_still_gives_every_public_name():
    """`atencao/__init__.py` importa os submódulos só quando um nome é usado: todos continuam lá."""
    import atencao
    from atencao import core, model
    assert atencao.attention is core.attention and atencao.TinyModel is model.TinyModel
    assert all(callable(getattr(atencao, n)) for n in atencao.__all__)
    assert atencao.masks.__name__ == "atencao.masks" and set(atencao.__all__) <= set(dir(atencao))


def test_numbers_and_durations_read_as_in_portuguese():
    assert (num(7.0), num(7.9, ","), num(None)) == ("7", "7,9", "")
    assert (integer(100000), fixed(7.26), fixed(3, 2), fixed(1234.5)) == ("100.000", "7,3", "3,00", "1.234,5")
    assert fixed(-98.2012, 2) == "-98,20"
    assert (duration(2056), duration(40), duration(1440)) == ("34 h 16 min", "40 min", "24 h 0 min")
    assert (elapsed(42), elapsed(65), elapsed(3720)) == ("42 s", "1 min 05 s", "1 h 02 min")
    assert (sci(1.234e-16), sci(9.96e-5), sci(0.0), sci(-2.5e3, 2)) == ("1,2 × 10⁻¹⁶", "1,0 × 10⁻⁴", "0",
                                                                          "-2,50 × 10³")
