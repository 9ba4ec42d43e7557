"""O livro como o leitor o encontra: num navegador de verdade, sem internet.

Abre _build/html (construído por `make book`; `make test` constrói antes)
servido no localhost, no Chromium sem interface, e confere cada página do
sumário: console limpo, nenhuma requisição falha nem sai do localhost,
matemática renderizada pelo MathJax local, imagens carregadas e com texto
alternativo, nenhuma saída de célula com traceback, nada que estoure a largura
de um celular; depois a navegação (anterior/próxima, busca, download, link do
exercício). Guarda capturas de tela em _build/screenshots/ para revisão.

Células com a tag `raises-exception`: o erro é o assunto da célula (mostrar ao
leitor a mensagem que uma entrada errada produz), então o traceback é
permitido e, mais que isso, exigido: a célula precisa mostrar um erro (senão a
tag está velha e o texto promete um erro que não aparece), e a última linha
precisa ser `TipoDeErro: mensagem`. Em qualquer outra célula, um traceback ou
um erro na saída reprova a página.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from urllib.parse import quote

import nbformat
import pytest

from browser_util import (
    DESKTOP, MIN_FIGURE_TEXT_PX, PHONE, ROOT, SCREENSHOTS, Recorder,
    axe_violations, chapters, contrast_ratio, page_axe_violations, strip_url, toc_files, wait_ready,
)

pytestmark = pytest.mark.slow

PAGES = toc_files()
# Comandos TeX e delimitadores que, no texto visível, denunciam matemática crua.
RAW_TEX = re.compile(r"\\[A-Za-z]+|\\[()\[\]]|\$\$|\$[^$\u2029]{1,200}\$")


def page_url(base: str, page: str) -> str:
    return f"{base}{page}.html"


def fetch(url: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.status, resp.read()


# --------------------------------------------------------------------------
# Fixtures: um servidor, um navegador, uma aba, cada página aberta uma vez
# --------------------------------------------------------------------------

@pytest.fixture(scope="session")
def tab(browser, site):
    """Uma aba só, reaproveitada por todos os testes; requisições externas bloqueadas."""
    context = browser.new_context(viewport=DESKTOP, locale="pt-BR", service_workers="block")
    page = context.new_page()
    page.set_default_timeout(15_000)
    recorder = Recorder(context, page, site)
    yield page, recorder
    context.close()


@pytest.fixture(scope="session")
def reports(tab, site):
    page, recorder = tab
    t0 = time.perf_counter()
    out = {p: recorder.visit(page, p, page_url(site, p), axe=True) for p in PAGES}
    print(f"\n[navegador] {len(out)} páginas abertas e medidas em {time.perf_counter() - t0:.1f} s")
    for r in out.values():  # avisos não reprovam (o Chromium emite alguns por conta própria), mas aparecem
        for w in r.console_warnings:
            print(f"[navegador] aviso no console em {r.page}: {w}")
    return out


# --------------------------------------------------------------------------
# Cada página do sumário
# --------------------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_page_loads_without_console_errors_or_failed_requests(reports, page):
    r = reports[page]
    assert r.status == 200, f"{page}: HTTP {r.status}"
    problems = ([f"erro no console: {m}" for m in r.console_errors]
                + [f"erro de JavaScript: {m}" for m in r.page_errors]
                + [f"requisição falhou: {m}" for m in r.failed_requests])
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("page", PAGES)
def test_no_request_leaves_localhost(reports, page):
    external = reports[page].external_requests
    assert not external, (f"{page} pediu recursos fora do localhost (o livro deve abrir sem "
                          "internet; sirva-os em _static/):\n  " + "\n  ".join(external))


@pytest.mark.parametrize("page", PAGES)
def test_math_is_rendered_by_mathjax(reports, page):
    p = reports[page].probe
    if p["mathCount"]:
        assert p["mathjax"], f"{page}: tem matemática, mas o MathJax não carregou"
        assert not p.get("mathjaxError"), f"{page}: o MathJax falhou: {p['mathjaxError']}"
        assert not p["mathUnrendered"], f"{page}: expressões sem renderizar: {p['mathUnrendered'][:5]}"
        assert p["mathRendered"] >= p["mathCount"]
    assert not p["mathErrors"], f"{page}: erros de TeX renderizados em vermelho: {p['mathErrors'][:5]}"
    raw = sorted({m.group(0) for m in RAW_TEX.finditer(p["visibleText"])})
    assert not raw, f"{page}: LaTeX cru no texto visível: {raw[:10]}"
    assert not RAW_TEX.search(p["title"]), (
        f"{page}: LaTeX cru no título da aba: {p['title']!r} "
        "(acrescente o comando a _TEX_SYMBOLS em book/_ext/curso.py)")


@pytest.mark.parametrize("page", PAGES)
def test_images_have_loaded_and_have_alt_text(reports, page):
    p = reports[page].probe
    broken = [i["src"] for i in p["images"] if not (i["complete"] and i["width"] > 0 and i["height"] > 0)]
    no_alt = [i["src"] for i in p["images"] if not (i["alt"] or "").strip()]
    assert not broken, f"{page}: imagens que não carregaram: {broken}"
    assert not no_alt, (f"{page}: imagens sem texto alternativo: {no_alt} "
                        "(nas células: metadados `mystnb: image: alt:`)")
    assert not p["emptyFigures"], f"{page}: figuras sem imagem: {p['emptyFigures']}"


@pytest.mark.parametrize("page", PAGES)
def test_cell_outputs_have_no_traceback_except_raises_exception_cells(reports, page):
    problems = []
    for cell in reports[page].probe["cells"]:
        where = f"célula {cell['index']} ({cell['source'][:60]!r})"
        if "raises-exception" in cell["tags"]:
            if not cell["errors"]:
                problems.append(f"{where}: tem a tag raises-exception mas não mostra erro")
                continue
            last = cell["errors"][-1].strip().splitlines()[-1]
            if not re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Warning)\b: \S", last):
                problems.append(f"{where}: o erro não termina em 'TipoDeErro: mensagem': {last!r}")
        elif cell["errors"] or "Traceback (most recent call last)" in cell["output"]:
            problems.append(f"{where}: saída com traceback (marque raises-exception se o erro é intencional)")
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("page", PAGES)
def test_page_fits_a_phone_screen(reports, page):
    ph = reports[page].phone
    assert ph["over"] <= 0 and not ph["culprits"], (
        f"{page}: a {PHONE['width']} px de largura a página rola {ph['over']} px para o lado; "
        f"elementos que passam da borda fora de uma rolagem local: {ph['culprits']}")


WIDTHS = ["computador", "celular"]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES)
def test_equations_fit_their_column(reports, page, width):
    """A caixa de toda fórmula cabe na coluna; no computador a fórmula cabe inteira na caixa;
    no celular, uma fórmula mais larga rola dentro da caixa, com a sombra de "continua"."""
    layout = reports[page].layout[width]
    outside = [e for e in layout["equations"] if isinstance(e, str)]
    wider = [e for e in layout["equations"] if not isinstance(e, str)]
    cut = wider if width == "computador" else [e for e in wider if not e["marked"]]
    assert not outside and not cut, (
        f"{page} ({width}, {layout['width']} px): fórmulas que passam da coluna {outside} ou cortadas "
        f"na caixa {cut} (quebre com aligned, ou, no celular, deixe a caixa rolar)")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES)
def test_figure_text_is_readable_and_figures_open_full_size(reports, page, width):
    layout = reports[page].layout[width]
    small = [f for f in layout["figures"] if not f["readable"]]
    assert not small, (f"{page} ({width}): figuras com texto menor que {MIN_FIGURE_TEXT_PX} px na tela: "
                       f"{small}")
    no_zoom = [f["src"] for f in layout["figures"] if not f["zoom"]]
    assert not no_zoom, f"{page} ({width}): figuras que não abrem em tamanho real ao toque: {no_zoom}"
    no_cue = [f["src"] for f in layout["figures"] if f.get("cue") is False]
    assert not no_cue, f"{page} ({width}): figuras que rolam sem o sinal de que continuam: {no_cue}"


@pytest.mark.parametrize("page", PAGES)
def test_no_desktop_figure_is_cut(reports, page):
    """No computador (1400 px) toda figura cabe inteira na coluna: nenhuma rola para o lado
    com um painel fora da tela (no celular uma figura larga pode rolar, com o sinal)."""
    layout = reports[page].layout["computador"]
    cut = [f"{f['src']} ({f['cut']['content']} px numa coluna de {f['cut']['box']} px)"
           for f in layout["figures"] if f.get("cut")]
    assert not cut, (f"{page} (computador, {layout['width']} px): figuras mais largas que a coluna, "
                     f"com parte fora da tela: {cut} (reduza a largura da figura ou empilhe os painéis)")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES)
def test_code_blocks_wrap_to_the_column(reports, page, width):
    code = reports[page].layout[width]["code"]
    assert not code, f"{page} ({width}): blocos de código que rolam para o lado: {code}"


@pytest.mark.parametrize("page", PAGES)
def test_no_wcag_violation_reported_by_axe(reports, page):
    violations = reports[page].axe
    assert not violations, f"{page}: violações WCAG 2 A/AA (axe-core):\n  " + "\n  ".join(
        f"{v['id']} ({v['impact']}): {v['help']} em {v['nodes']}" for v in violations)


def test_axe_finds_what_it_should_in_the_whole_page_or_in_one_part(browser):
    """O verificador usado acima e nas figuras (`axe_violations`) acha violações de verdade, na
    página inteira ou só dentro de um seletor, e a segunda chamada na mesma página (o axe já
    injetado) dá o mesmo resultado."""
    context = browser.new_context(viewport=DESKTOP, locale="pt-BR")
    page = context.new_page()
    page.set_content('<html lang="pt-BR"><head><title>t</title></head><body><main>'
                     '<div id="ruim"><button></button><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="></div>'
                     '<div id="boa"><button>Tocar</button></div></main></body></html>')
    try:
        ids = {v["id"] for v in axe_violations(page)}
        assert {"button-name", "image-alt"} <= ids, ids
        assert {v["id"] for v in axe_violations(page, "#ruim")} == ids
        assert axe_violations(page, "#boa") == []
        # o relatório de cada página mede o contraste dos blocos de código por par de cores
        page.set_content('<html lang="pt-BR"><head><title>t</title></head><body><main>'
                         '<div class="highlight" style="background: #fff"><pre><span style="color: #ccc">x = 1'
                         '</span> <span style="color: #000">y</span></pre></div></main></body></html>')
        found = page_axe_violations(page)
        assert [v["id"] for v in found] == ["color-contrast"] and found[0]["nodes"] == ["x = 1"], found
        assert "1,61:1" in found[0]["help"].replace(".", ","), found
    finally:
        context.close()


def test_contrast_ratio_is_the_wcag_one():
    assert contrast_ratio("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21.0)
    assert contrast_ratio("rgb(118, 118, 118)", "rgb(255, 255, 255)") == pytest.approx(4.54, abs=0.01)
    assert contrast_ratio("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(1.0)


def test_theme_button_toggles_between_light_and_dark_in_one_click(tab, site):
    page, _ = tab
    page.goto(page_url(site, PAGES[0]), wait_until="load")
    page.evaluate("() => localStorage.removeItem('mode')")
    page.reload(wait_until="load")
    theme = lambda: page.evaluate("() => document.documentElement.dataset.theme")  # noqa: E731
    button = page.locator(".theme-switch-button:visible").first
    seen = [theme()]
    for _ in range(3):
        button.click()
        page.wait_for_timeout(100)
        seen.append(theme())
    page.evaluate("() => localStorage.removeItem('mode')")
    assert seen == ["light", "dark", "light", "dark"], f"temas depois de cada clique: {seen}"


def test_page_toc_highlight_follows_the_reader_after_a_jump(tab, site):
    """Saltar para o meio de cada seção (barra de rolagem, PageDown) destaca essa seção no sumário."""
    page, _ = tab
    page.set_viewport_size({"width": DESKTOP["width"], "height": 900})
    try:
        page.goto(page_url(site, "book/parte1/07-bloco-transformer"), wait_until="load")
        hashes = page.eval_on_selector_all("#pst-page-toc-nav a", "els => els.map(a => a.hash)")
        assert len(hashes) >= 8, hashes
        wrong = []
        # A seção do leitor: a do último título acima da linha de leitura (30 % da altura
        # abaixo do cabeçalho, a mesma faixa do tema). Saltos de 200 px além de cada título
        # passam por cima da faixa, e o destaque do tema sozinho ficava para trás.
        expected_js = """() => {
            const top = document.getElementById("pst-header").getBoundingClientRect().height;
            const line = top + (innerHeight - top) * 0.3;
            let current = null;
            for (const a of document.querySelectorAll("#pst-page-toc-nav a")) {
                const el = document.getElementById(a.hash.slice(1));
                if (el && el.getBoundingClientRect().top <= line) current = a.hash;
            }
            return current;
        }"""
        for h in hashes[1:]:
            top = page.evaluate("(id) => document.getElementById(id).getBoundingClientRect().top + scrollY",
                                h[1:])
            page.evaluate("(y) => window.scrollTo(0, y)", top + 200)
            page.wait_for_timeout(250)
            want = page.evaluate(expected_js)
            active = page.eval_on_selector_all("#pst-page-toc-nav a.active", "els => els.map(a => a.hash)")
            if active != [want]:
                wrong.append(f"200 px depois de {h}: destaque em {active}, esperado {want}")
        assert not wrong, "o destaque do sumário ficou para trás:\n  " + "\n  ".join(wrong)
    finally:
        page.set_viewport_size(DESKTOP)


@pytest.mark.parametrize("page,slug", chapters())
def test_launch_menu_opens_the_exercise_notebook(tab, site, page, slug):
    """Colab abre o caderno de exercícios; Binder, o caderno do capítulo; sem hub configurado, sem JupyterHub."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]["url"].removeprefix("https://github.com/")
    tab_page, _ = tab
    tab_page.goto(page_url(site, page), wait_until="load")
    menu = dict(tab_page.eval_on_selector_all(
        ".dropdown-launch-buttons a", "els => els.map(a => [a.textContent.trim(), a.href])"))
    assert menu.get("Colab") == (f"https://colab.research.google.com/github/{repo}/blob/main/"
                                 f"exercises/{slug}/{slug}.ipynb"), menu
    # O caderno limpo que o binder/postBuild gera da página (tests/env/test_binder.py confere o conteúdo).
    binder_notebook = f"notebooks/{page.removeprefix('book/')}.ipynb"
    assert menu.get("Binder", "").endswith(f"?urlpath=lab/tree/{binder_notebook}"), menu
    hub = (config.get("launch_buttons") or {}).get("jupyterhub_url")
    if hub:
        assert "git-pull?" in menu.get("JupyterHub", "") and f"exercises/{slug}/{slug}.ipynb" in menu["JupyterHub"]
    else:
        assert "JupyterHub" not in menu, f"botão de JupyterHub sem hub configurado: {menu}"
    assert not [u for u in menu.values() if re.search(r"exemplo|example", u)], menu


# --------------------------------------------------------------------------
# Navegação
# --------------------------------------------------------------------------

@pytest.mark.parametrize("extra", ["search.html", "genindex.html"])
def test_search_and_index_pages_load_cleanly(tab, site, extra):
    page, recorder = tab
    r = recorder.visit(page, extra, site + extra)
    problems = r.console_errors + r.page_errors + r.failed_requests + r.external_requests
    assert r.status == 200 and not problems, f"{extra}: {problems}"
    assert not RAW_TEX.search(r.probe["visibleText"]), f"{extra}: LaTeX cru no texto"


def test_root_url_opens_the_first_page(tab, site):
    page, _ = tab
    page.goto(site, wait_until="load")
    page.wait_for_url(page_url(site, PAGES[0]))


def test_next_and_previous_links_walk_the_whole_book_in_order(reports, site):
    urls = [page_url(site, p) for p in PAGES]
    for k, p in enumerate(PAGES):
        probe = reports[p].probe
        want_next = urls[k + 1] if k + 1 < len(urls) else None
        want_prev = urls[k - 1] if k > 0 else None
        got_next = strip_url(probe["next"]) if probe["next"] else None
        got_prev = strip_url(probe["prev"]) if probe["prev"] else None
        assert got_next == want_next, f"{p}: 'próxima' leva a {got_next}, esperado {want_next}"
        assert got_prev == want_prev, f"{p}: 'anterior' leva a {got_prev}, esperado {want_prev}"


def test_clicking_next_opens_the_second_page(tab, site):
    page, _ = tab
    page.goto(page_url(site, PAGES[0]), wait_until="load")
    page.locator(".prev-next-area a.right-next").click()
    page.wait_for_url(page_url(site, PAGES[1]))


def test_on_a_phone_the_menu_button_opens_the_table_of_contents(tab, site):
    page, _ = tab
    page.set_viewport_size(PHONE)
    try:
        page.goto(page_url(site, PAGES[-1]), wait_until="load")
        nav = page.locator("nav.bd-docs-nav").first
        assert not nav.is_visible(), "no celular o sumário deveria começar fechado"
        page.locator("button.primary-toggle:visible").first.click()
        page.locator("dialog[open] nav.bd-docs-nav").wait_for(state="visible")
        hrefs = page.eval_on_selector_all(
            "dialog[open] nav.bd-docs-nav a", "els => els.filter(a => a.checkVisibility()).map(a => a.href)")
        shown = {strip_url(h) for h in hrefs}
        missing = [p for p in PAGES[1:] if page_url(site, p) not in shown]
        assert not missing, f"o menu do celular não mostra: {missing}"
    finally:
        page.set_viewport_size(DESKTOP)


# O searchtools.js escreve "Buscando" com reticências animadas (um <span>) no
# <h2> e troca tudo por "Resultados da Busca" quando termina. (Search._pulse_status
# não serve: a animação volta a 0 meio segundo depois de parar, bug do Sphinx 7.4.)
SEARCH_DONE_JS = """() => {
    const h = document.querySelector('#search-results h2');
    return h && !h.querySelector('span') && document.querySelector('#search-results .search-summary');
}"""
# Cada resultado ganha o seu resumo (buscado depois, página a página) e o
# MathJax renderiza título e resumo; esperamos isso, até um limite.
SEARCH_SETTLED_JS = """([raw]) => {
    const items = [...document.querySelectorAll('#search-results ul.search > li')];
    const text = document.getElementById('search-results').innerText;
    return items.every(li => li.querySelector('p.context')) && !new RegExp(raw).test(text);
}"""


def search(tab, site, term: str) -> list[str]:
    """Busca `term` na página de busca do Sphinx e devolve os endereços encontrados.

    Confere também o que o leitor vê na lista: console limpo e nenhum LaTeX cru
    nos títulos e resumos dos resultados.
    """
    page, recorder = tab
    r = recorder.visit(page, f"busca por {term!r}", f"{site}search.html?q={quote(term)}")
    problems = r.console_errors + r.page_errors + r.failed_requests + r.external_requests
    assert not problems, f"busca por {term!r}: {problems}"
    try:
        page.wait_for_function(SEARCH_DONE_JS)
    except Exception as exc:
        state = page.evaluate("() => (document.getElementById('search-results') || {}).innerHTML")
        pytest.fail(f"busca por {term!r} não terminou: {exc}; estado {state}; console {r.console_errors}")
    try:
        page.wait_for_function(SEARCH_SETTLED_JS, arg=[RAW_TEX.pattern], timeout=10_000)
    except Exception:
        pass  # o assert abaixo diz o que sobrou
    shown = page.inner_text("#search-results")
    raw = sorted({m.group(0) for m in RAW_TEX.finditer(shown)})
    assert not raw, f"busca por {term!r}: LaTeX cru nos resultados: {raw[:8]}\n{shown[:800]}"
    hrefs = page.eval_on_selector_all("#search-results ul.search li > a", "els => els.map(a => a.href)")
    return sorted({strip_url(h) for h in hrefs})


def test_search_results_show_titles_and_summaries_without_raw_latex(tab, site):
    # "atenção" aparece em quase toda página, inclusive nas cheias de fórmulas.
    found = search(tab, site, "atenção")
    assert len(found) >= 3, found


def test_search_finds_an_accented_portuguese_word(tab, site, reports):
    word = "máscara"
    # Toda página cujo texto mostra a palavra deve aparecer na busca.
    want = {page_url(site, p) for p, r in reports.items()
            if re.search(rf"(?<!\w){word}", r.probe["articleText"], re.IGNORECASE)}
    assert page_url(site, "book/apendices/glossario") in want
    found = set(search(tab, site, word))
    assert want <= found, f"a busca por {word!r} não achou: {sorted(want - found)}; achou {sorted(found)}"


def search_titles(tab, site, term: str) -> list[str]:
    """Os títulos dos resultados, na ordem da lista (depois de `search`)."""
    search(tab, site, term)
    page, _ = tab
    return page.eval_on_selector_all("#search-results ul.search li > a", "els => els.map(a => a.textContent.trim())")


def test_search_forgives_accents_and_ranks_the_chapter_with_that_title_first(tab, site):
    accented = search_titles(tab, site, "máscara")
    plain = search_titles(tab, site, "mascara")
    # Por página: a busca por título de seção ("Glossário > máscara causal") é exata no Sphinx.
    pages = lambda titles: sorted({t.split(" > ")[0] for t in titles})  # noqa: E731
    assert pages(plain) == pages(accented), f"'mascara' achou {plain}; 'máscara' achou {accented}"
    assert "A máscara causal" in accented[0], accented[:4]
    online = search_titles(tab, site, "softmax online")
    assert "Softmax online" in online[0], online[:4]


def test_search_finds_a_term_from_the_last_chapter(tab, site, reports):
    last, _slug = chapters()[-1]
    title = reports[last].probe["h1"]
    word = max(re.findall(r"[^\W\d_]{4,}", title), key=len)
    found = search(tab, site, word)
    assert page_url(site, last) in found, f"a busca por {word!r} (título de {last}) não achou a página: {found}"


@pytest.mark.parametrize("page", PAGES)
def test_download_button_gives_the_page_source_and_notebook(reports, page):
    p = reports[page].probe
    src = ROOT / f"{page}.md"
    assert p["downloadSource"], f"{page}: sem o botão de baixar a fonte"
    status, body = fetch(p["downloadSource"])
    assert status == 200 and body == src.read_bytes(), f"{page}: o .md baixado difere de {src.relative_to(ROOT)}"
    if "{code-cell}" not in src.read_text(encoding="utf-8"):
        return
    assert p["downloadNotebook"], f"{page}: página com código, mas sem o botão de baixar o .ipynb"
    status, body = fetch(p["downloadNotebook"])
    assert status == 200
    nb = nbformat.reads(body.decode("utf-8"), as_version=4)
    nbformat.validate(nb)
    # 1ª célula: instala o pacote do curso fora do repositório (book/_ext/baixar.py);
    # as outras são o código que a página mostra, sem as células removidas.
    assert "course-install" in nb.cells[0].metadata.get("tags", []), f"{page}: o .ipynb não instala o pacote"
    assert "%pip install" in nb.cells[0].source
    code = [c.source for c in nb.cells[1:] if c.cell_type == "code"]
    assert code, f"{page}: o .ipynb baixado não tem células de código"
    text = src.read_text(encoding="utf-8")
    assert all(c.strip() in text for c in code), f"{page}: o .ipynb baixado não corresponde à fonte"
    assert not any({"remove-cell", "remove-input"} & set(c.metadata.get("tags", [])) for c in nb.cells), \
        f"{page}: o .ipynb baixado tem células que a página não mostra"
    outputs = json.dumps([c.get("outputs", []) for c in nb.cells], ensure_ascii=False)
    assert str(ROOT) not in outputs and "ipykernel_" not in outputs, f"{page}: caminho da máquina nas saídas"


OPTIONAL_EXERCISES = {"13-kernel-triton": ["13-desafio-flashattention"]}


@pytest.mark.parametrize("page,slug", chapters())
def test_chapter_links_to_its_exercise_notebook(reports, site, page, slug):
    p = reports[page].probe
    want = f"{site}exercicios/{slug}.ipynb"
    # o cap. 13 liga também o desafio opcional, depois do caderno do capítulo
    extra = [f"{site}exercicios/{x}.ipynb" for x in OPTIONAL_EXERCISES.get(slug, [])]
    assert p["exercises"] == [want, *extra], f"{page}: link do exercício {p['exercises']}, esperado [{want}]"
    status, body = fetch(want)
    assert status == 200
    nb = nbformat.reads(body.decode("utf-8"), as_version=4)
    nbformat.validate(nb)
    assert body == (ROOT / "exercises" / slug / f"{slug}.ipynb").read_bytes()
    assert json.loads(body)["cells"], "caderno vazio"
    assert len(p["colab"]) == 1 + len(extra) and p["colab"][0].endswith(f"/exercises/{slug}/{slug}.ipynb"), \
        p["colab"]


# --------------------------------------------------------------------------
# Capturas de tela para revisão humana
# --------------------------------------------------------------------------

def test_screenshots_of_home_and_a_chapter_at_desktop_and_phone_width(tab, site):
    page, _ = tab
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    targets = {"inicio": PAGES[0], "capitulo": chapters()[0][0]}
    written = []
    for name, target in targets.items():
        for size_name, size in (("computador", DESKTOP), ("celular", PHONE)):
            page.set_viewport_size(size)
            page.goto(page_url(site, target), wait_until="load")
            wait_ready(page)
            path = SCREENSHOTS / f"{name}-{size_name}.png"
            page.screenshot(path=str(path), full_page=True)
            written.append(path)
    page.set_viewport_size(DESKTOP)
    for path in written:
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, f"captura suspeita: {path}"
