"""O livro construído (make test constrói antes): toda página do sumário existe,
foi executada, e não sobrou erro nem marcação crua no HTML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for ch in part.get("chapters", []):
            files.append(ch["file"])
            files += [s["file"] for s in ch.get("sections", [])]
    return files


@pytest.fixture(scope="module")
def built():
    if not (HTML / "index.html").exists():
        pytest.fail("_build/html não existe: rode `make book` (make test faz isso antes do pytest)")
    return HTML


@pytest.mark.parametrize("page", toc_files())
def test_every_toc_page_is_built_without_errors(built, page):
    path = built / f"{page}.html"
    assert path.exists(), f"página {page} não foi construída"
    html = path.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" not in html or "raises-exception" in html
    assert not re.search(r"\{glue(:\w+)?\}`", html), f"{page}: glue não resolvido"
    assert 'lang="pt-BR"' in html, f"{page}: idioma da página não é pt-BR"


def test_chapter_pages_were_executed(built):
    """Toda página de capítulo com {code-cell} tem saídas de célula no HTML."""
    for page in toc_files():
        src = ROOT / f"{page}.md"
        if src.exists() and "{code-cell}" in src.read_text(encoding="utf-8"):
            html = (built / f"{page}.html").read_text(encoding="utf-8")
            assert "cell_output" in html, f"{page}: nenhuma saída de célula (não foi executada?)"


def test_mathjax_is_served_locally(built):
    html = (built / "book" / "intro.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', html)
    assert any("mathjax/tex-chtml.js" in s for s in scripts)
    assert not [s for s in scripts if s.startswith(("http://", "https://", "//"))], scripts
    assert (built / "_static" / "mathjax" / "tex-chtml.js").exists()
    assert list((built / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").glob("*.woff"))


def test_exercise_notebooks_are_shipped_with_the_site(built):
    for nb in (ROOT / "exercises").glob("*/*.ipynb"):
        assert (built / "exercicios" / nb.name).read_bytes() == nb.read_bytes()


# Textos dos temas que ficavam em inglês (o pydata-sphinx-theme não tem catálogo em
# português): book/_ext/curso.py traduz os do gettext, book/_templates os fixos.
ENGLISH_THEME = ["Toggle", "Search", "Launch", "previous page", "next page", "Color mode", "Light",
                 "Dark", "System Settings", "Main", "Page", "Download", "Print", "Fullscreen",
                 "Source repository", "Version warning", "Skip to", "Back to top", "Click to"]


@pytest.mark.parametrize("page", toc_files())
def test_theme_labels_are_in_portuguese(built, page):
    html = (built / f"{page}.html").read_text(encoding="utf-8")
    labels = set(re.findall(r'(?:title|aria-label|data-bs-title|placeholder)="([^"]*)"', html))
    english = sorted(x for x in labels if any(re.search(rf"\b{re.escape(w)}\b", x) for w in ENGLISH_THEME)
                     and not re.search(r"\b(19|20)\d\d\b", x))   # citações (título de um artigo) ficam
    assert not english, f"{page}: rótulos do tema em inglês: {english}"
    author = re.search(r'class="component-author">\s*([^<]*)', html)
    assert author is None or not author.group(1).strip().startswith(("By ", "De ")), author.group(1)


def test_references_are_formatted_in_portuguese(built):
    """Estilo ptbr_alpha (book/_ext/curso.py): "e" entre autores, "Em" antes dos anais."""
    html = (built / "book" / "apendices" / "referencias.html").read_text(encoding="utf-8")
    assert "Federico Lebrón e Sumit Sanghai" in html and "Maxim Milakov e Natalia Gimelshein" in html
    assert ", and " not in html and "Milakov and" not in html
    assert "Em <em>" in html and "In <em>" not in html
    assert "arXiv preprint" not in html


def test_in_text_citations_use_e_and_references_link_to_arxiv_or_doi(built):
    """Estilo ptbr_author_year (book/_ext/curso.py) no texto; `eprint`/`doi` do .bib viram links."""
    chapter = (built / "book" / "parte1" / "07-bloco-transformer.html").read_text(encoding="utf-8")
    assert "Zhang e Sennrich" in chapter and "Zhang and Sennrich" not in chapter
    refs = (built / "book" / "apendices" / "referencias.html").read_text(encoding="utf-8")
    bib = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    for eprint in re.findall(r"eprint\s*=\s*\{([^}]+)\}", bib):
        assert f'href="https://arxiv.org/abs/{eprint}"' in refs, f"sem link para arXiv:{eprint}"
    for doi in re.findall(r"doi\s*=\s*\{([^}]+)\}", bib):
        assert f'href="https://doi.org/{doi}"' in refs, f"sem link para o DOI {doi}"
    assert 'role="doc-biblioentry"' not in refs   # papel obsoleto (axe-core, WCAG 2 A)


def _curso():
    import sys

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import curso

    return curso


@pytest.mark.parametrize("field,url", [
    ("jupyterhub_url", "https://hub.exemplo.edu.br"),
    ("binderhub_url", "https://binder.example.org"),
    ("repository_url", "<endereço do repositório>"),
])
def test_a_placeholder_address_fails_the_build(field, url):
    from types import SimpleNamespace

    from sphinx.errors import ExtensionError

    curso = _curso()
    opts = {"repository_url": "https://github.com/org/repo", "repository_branch": "main",
            "launch_buttons": {"binderhub_url": "https://mybinder.org", "jupyterhub_url": ""}}
    good = SimpleNamespace(html_theme_options=opts)
    curso._check_placeholders(None, good)   # o endereço real passa
    if field == "repository_url":
        opts = {**opts, field: url}
    else:
        opts = {**opts, "launch_buttons": {**opts["launch_buttons"], field: url}}
    with pytest.raises(ExtensionError, match="endereços de exemplo"):
        curso._check_placeholders(None, SimpleNamespace(html_theme_options=opts))


def test_jupyterhub_link_is_an_nbgitpuller_link_to_the_exercise():
    from urllib.parse import parse_qs, urlsplit

    curso = _curso()
    launch = curso.Launch("https://github.com/org/repo", "main", hub="https://hub.uni.br")
    url = launch.jupyterhub(curso.exercise_path("03-mascara-causal"))
    parts = urlsplit(url)
    assert (parts.netloc, parts.path) == ("hub.uni.br", "/hub/user-redirect/git-pull")
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert query == {"repo": "https://github.com/org/repo", "branch": "main",
                     "urlpath": "lab/tree/repo/exercises/03-mascara-causal/03-mascara-causal.ipynb"}
    assert curso.Launch("https://github.com/org/repo", "main").jupyterhub("x.ipynb") is None


def test_search_index_forgives_accents():
    """O mesmo radical com e sem acento, no índice (Python) e na consulta (o mesmo stemmer em JS)."""
    language = _curso()._search_language()({})
    assert language.stem("máscara") == language.stem("mascara") == language.stem("Máscaras")
    assert language.stem("atenção") == language.stem("atencao")


def test_repository_files_are_linked_and_the_clone_address_is_the_configured_one(built):
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo, branch = config["repository"]["url"].rstrip("/"), config["repository"]["branch"]
    intro = re.sub(r"<[^>]+>", "", (built / "book" / "intro.html").read_text(encoding="utf-8"))
    assert f"git clone {repo}" in intro and "endereço do repositório&gt;" not in intro
    chapter = (built / "book" / "parte2" / "10-softmax-online.html").read_text(encoding="utf-8")
    assert f'href="{repo}/blob/{branch}/bench/results.md"' in chapter
    assert f'href="{repo}/tree/{branch}/bench"' in chapter


# Um decimal à americana numa saída: ponto seguido de 1-2 ou 4+ dígitos ("0.5",
# "0.9999992920524363", "100.0 %"). Um ponto seguido de exatamente 3 dígitos é o
# separador de milhar brasileiro (1.024) e não conta.
AMERICAN_DECIMAL = re.compile(r"(?<![\w.])\d+\.(?:\d{1,2}|\d{4,})(?![\d])")


@pytest.mark.parametrize("page", [p for p in toc_files() if "/parte" in p])
def test_cell_outputs_write_numbers_in_brazilian_format(built, page):
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((built / f"{page}.html").read_text(encoding="utf-8"), "html.parser")
    wrong = []
    for cell in soup.select("div.cell"):
        source = cell.select_one("div.cell_input")
        if source is not None and "getsource" in source.get_text():
            continue   # a saída é código-fonte do pacote, não um número para o leitor
        for out in cell.select("div.cell_output pre"):
            text = out.get_text()
            if "Traceback" in text:
                continue
            wrong += [line.strip()[:90] for line in text.splitlines() if AMERICAN_DECIMAL.search(line)]
    assert not wrong, f"{page}: números à americana nas saídas (use br/brazilian de atencao.plots): {wrong[:8]}"
