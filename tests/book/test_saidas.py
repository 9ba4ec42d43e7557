"""O que o leitor vê nas saídas das células do livro construído.

- Nenhuma página mostra um caminho absoluto da máquina que construiu o livro
  (`/work/...`, `/home/...`, `/tmp/...`) nem quadros de `site-packages` nos
  tracebacks: um erro mostrado de propósito (tag `raises-exception`) sai só com
  o tipo e a mensagem, e não com os quadros internos do PyTorch.
- Nenhum número de uma saída de texto tem mais que `DIGITOS` algarismos
  significativos depois da vírgula: 16 dígitos de um float64 são ruído, não
  informação (`br` de atencao.plots corta em 6). Ficam de fora as tabelas
  HTML, as células com a tag `valores-crus` (o exemplo resolvido do capítulo 5,
  com 6 casas de propósito) e os inteiros (contagens exatas, como 1.048.576).

Os dois testes leem `_build/html` (o `make test` constrói o livro antes).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from atencao.plots import DIGITOS

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"

# Um caminho absoluto de máquina (não um endereço web: "https://x/home/" tem "/" antes).
ABSOLUTE_PATH = re.compile(r"(?<![\w.~/:-])/(?:work|home|tmp|usr|opt|root|var|mnt|srv)/[\w.+-]")
PACKAGE_FRAME = re.compile(r"site-packages|dist-packages")
# Um número escrito no formato brasileiro com parte decimal: "0,999999", "1.234,5",
# "9,365e-08". A mantissa é o que conta.
DECIMAL_BR = re.compile(r"(?<![\w,.])(\d{1,3}(?:\.\d{3})+|\d+),(\d+)(?:e[-+]?\d+)?(?![\d])")


def pages() -> list[Path]:
    return sorted((HTML / "book").rglob("*.html")) if HTML.exists() else []


def significant_digits(inteiro: str, decimais: str) -> int:
    digitos = (inteiro.replace(".", "") + decimais).lstrip("0")
    return len(digitos)


def long_numbers(texto: str) -> list[str]:
    return [m.group(0) for m in DECIMAL_BR.finditer(texto)
            if significant_digits(m.group(1), m.group(2)) > DIGITOS]


@functools.lru_cache(maxsize=None)
def soup(page: Path):
    from bs4 import BeautifulSoup

    return BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")


RAW_TAG = "valores-crus"   # tag de uma célula que mostra de propósito valores exatos (o exemplo resolvido)


def text_outputs(page: Path) -> list[str]:
    return [pre.get_text() for cell in soup(page).select("div.cell")
            if f"tag_{RAW_TAG}" not in cell.get("class", [])
            for pre in cell.select("div.cell_output pre")]


def test_the_number_checker_counts_significant_digits():
    assert long_numbers("maior diferença 0,9999992920524363") == ["0,9999992920524363"]
    assert long_numbers("9,365004938199917e-08 e 1,23e-07") == ["9,365004938199917e-08"]
    assert long_numbers("0,999999 | 0,000012345 | 1.048.576 | 1.234,56") == []
    assert long_numbers("1.234,5678") == ["1.234,5678"]


def test_br_writes_at_most_six_significant_digits():
    """O `br` sem casas fixas é o que as células usam para mostrar um número: o
    antigo escrevia os 16 dígitos do float64 ('0,9999992920524363')."""
    import numpy as np

    from atencao.plots import br

    assert br(0.9999992920524363) == "0,999999"
    assert br(9.365004938199917e-08) == "9,365e-08"
    assert br(np.float32(0.1)) == "0,1"
    assert br(1048576) == "1.048.576"
    assert not long_numbers(br(np.array([1.3395234, 0.5, 123.456789])))
    assert br(np.array([0.09003057, 0.24472847])) == "[0,090031 0,244728]"


def test_the_path_checker_sees_machine_paths_but_not_addresses():
    assert ABSOLUTE_PATH.search("File /work/wt/x/atencao/core.py:87")
    assert ABSOLUTE_PATH.search("  /tmp/ipykernel_12/1.py")
    assert not ABSOLUTE_PATH.search("https://github.com/org/repo/tree/main/bench")
    assert not ABSOLUTE_PATH.search("File atencao/core.py:87")


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(HTML)))
def test_pages_show_no_machine_path_nor_package_frames(page):
    texto = soup(page).get_text()
    achados = [m.group(0) for rx in (ABSOLUTE_PATH, PACKAGE_FRAME) for m in rx.finditer(texto)]
    assert not achados, (f"{page.relative_to(HTML)} mostra caminhos da máquina ou quadros de pacotes "
                         f"(use %xmode Minimal antes de uma célula raises-exception): {achados[:5]}")


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(HTML)))
def test_outputs_print_numbers_at_sensible_precision(page):
    achados = []
    for saida in text_outputs(page):
        if "Traceback" in saida:
            continue
        achados += long_numbers(saida)
    assert not achados, (f"{page.relative_to(HTML)}: números com mais de {DIGITOS} algarismos "
                         f"significativos nas saídas (use br(x) ou br(x, casas)): {achados[:8]}")


def test_there_are_pages():
    if not pages():
        pytest.fail("_build/html não existe: rode `make book` (o `make test` faz isso antes)")
