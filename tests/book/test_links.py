"""Links internos do site construído: todo endereço relativo leva a um arquivo
que existe e, com #âncora, a um id que existe na página de destino.

O `-W -n` da construção já pega referências do Sphinx quebradas; isto pega o
resto (HTML escrito à mão nas páginas, links do tema, a diretiva `exercicio`,
arquivos copiados para o site). Roda sobre o HTML, sem navegador (~1 s).
"""

from __future__ import annotations

import sys
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from browser_util import HTML, ROOT

LINK_ATTRS = {("a", "href"), ("link", "href"), ("area", "href"), ("img", "src"),
              ("script", "src"), ("source", "src"), ("iframe", "src"), ("video", "src")}


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[tuple[int, str]] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            if (tag, name) in LINK_ATTRS:
                self.links.append((self.getpos()[0], value))


@lru_cache(maxsize=None)
def parse(path: Path) -> _Collector:
    collector = _Collector()
    collector.feed(path.read_text(encoding="utf-8"))
    return collector


def site_pages() -> list[Path]:
    """Toda página HTML do site (fora _static, que guarda moldes do tema)."""
    if not (HTML / "index.html").exists():
        return []
    return sorted(p for p in HTML.rglob("*.html") if "_static" not in p.relative_to(HTML).parts)


def broken_links(page: Path) -> list[str]:
    problems = []
    for line, url in parse(page).links:
        parts = urlsplit(url)
        if parts.scheme or url.startswith("//"):
            continue  # externo (http, https, mailto, javascript, data): não é conferido aqui
        target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
        if target.is_dir():
            target = target / "index.html"
        if not target.is_relative_to(HTML.resolve()) and not target.is_relative_to(HTML):
            problems.append(f"linha {line}: {url} sai do site")
            continue
        if not target.exists():
            problems.append(f"linha {line}: {url} -> arquivo inexistente")
            continue
        anchor = unquote(parts.fragment)
        if anchor and target.suffix == ".html" and anchor not in parse(target).ids:
            problems.append(f"linha {line}: {url} -> âncora #{anchor} não existe em {target.name}")
    return problems


def test_the_site_has_pages():
    if not (HTML / "index.html").exists():
        pytest.fail("_build/html não existe: rode `make book` (o `make test` faz isso antes do pytest)")
    assert len(site_pages()) >= 3


@pytest.mark.parametrize("page", site_pages(), ids=lambda p: str(p.relative_to(HTML)))
def test_every_relative_link_resolves_to_a_file_and_anchor(page):
    problems = broken_links(page)
    assert not problems, f"{page.relative_to(HTML)}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("page", site_pages(), ids=lambda p: str(p.relative_to(HTML)))
def test_pages_do_not_show_paths_of_the_build_machine(page):
    text = page.read_text(encoding="utf-8")
    paths = {str(ROOT), str(ROOT.resolve()), sys.prefix, str(Path(sys.prefix).resolve())}
    leaked = sorted(p for p in paths if p + "/" in text)
    assert not leaked, f"{page.relative_to(HTML)} mostra caminhos da máquina que o construiu: {leaked}"
