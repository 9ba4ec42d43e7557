"""Nenhuma saída solta nas páginas construídas (_build/html, feito por `make book`).

Uma célula cuja última linha é uma expressão mostra o valor dela: o
`torch.manual_seed(0)` do fim da célula de preparação vira
`<torch._C.Generator at 0x7f...>` (e o endereço muda a cada construção: o HTML
deixa de ser reprodutível); um `texto("nome", valor)` mostrado vira a str
colada, entre aspas, solta na página. Aqui: nenhuma saída de texto com
endereço de memória, nem feita só de uma str entre aspas.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html" / "book"
PAGES = sorted(HTML.rglob("*.html")) if HTML.exists() else []
ADDRESS = re.compile(r"<[\w.]+(?: object)? at 0x[0-9a-f]{6,}>")
LONE_STRING = re.compile(r"""\s*(?:'[^'\n]*'|"[^"\n]*")\s*""")


def stray_outputs(html: str) -> list[str]:
    soup = BeautifulSoup(html, "html.parser")
    found = []
    for out in soup.select("div.cell_output div.output.text_plain pre"):
        text = out.get_text()
        if ADDRESS.search(text) or LONE_STRING.fullmatch(text):
            found.append(text.strip()[:80])
    return found


def test_pages_were_built():
    assert len(PAGES) >= 13, "rode `make book` antes"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_no_stray_output_on_the_page(page):
    found = stray_outputs(page.read_text(encoding="utf-8"))
    assert not found, f"{page.relative_to(HTML)}: saídas soltas {found}"


def test_the_check_sees_a_generator_and_a_lone_string():
    page = ('<div class="cell_output"><div class="output text_plain"><pre>'
            '&lt;torch._C.Generator at 0x7f1b83f19730&gt;\n</pre></div></div>'
            '<div class="cell_output"><div class="output text_plain"><pre>\'0,47\'\n</pre></div></div>'
            '<div class="cell_output"><div class="output text_plain"><pre>tensor([0.47])\n</pre></div></div>')
    assert len(stray_outputs(page)) == 2
