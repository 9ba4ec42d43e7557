"""As figuras interativas como o leitor as usa (book/_static/interativo/README.md).

Para cada figura, o Chromium abre a página construída (servida no localhost,
nenhuma requisição para fora) duas vezes. No computador, com o tema claro, o
teste move cada controle como o leitor (arrastar, clicar, teclado) e confere
que os números que a figura mostra são os que o Python calcula para a mesma
posição dos controles, a partir dos dados que a célula do capítulo embutiu na
página; depois imprime (a imagem estática volta). Num celular com tela de
toque (is_mobile, has_touch), com o tema escuro, cada figura é mexida com o
dedo: eventos de toque de verdade (CDP) nos deslizantes e nos SVG arrastáveis,
toques (tap) nos botões. Nas duas: axe-core sem violações WCAG 2 A/AA na
figura, antes e depois de mexer; nada passa da largura da tela. Também: a
imagem estática para quem lê sem JavaScript; nenhuma página ganha mais de
300 KB (gzip) de JavaScript das figuras. As capturas ficam em
_build/screenshots/interativo/.

Cada figura tem um `Caso` (tests/support/interativo_util.py), registrado em
tests/support/interativo_casos_parte1.py ou interativo_casos_parte2.py.
"""

from __future__ import annotations

import gzip
import re

import pytest

from browser_util import DESKTOP, HTML, PHONE, SCREENSHOTS, SETTLE_JS, Recorder

import interativo_casos_parte1  # noqa: F401  (registram os casos)
import interativo_casos_parte2  # noqa: F401
from interativo_util import (CASOS, POLEGAR_JS, Leitor, arrastar_com_o_dedo, axe_na_figura, esperar_mudar,
                             sem_problemas, tabela)

SHOTS = SCREENSHOTS / "interativo"
# Numa figura mais alta que a tela, a captura do elemento junta trechos rolados, e o que é
# fixo na janela (cabeçalho, "Pular para o conteúdo" com foco, "Voltar ao topo") sairia no meio.
SEM_O_FIXO = "#pst-header, .bd-header-article, .skip-link, #pst-back-to-top { visibility: hidden !important; }"
ORCAMENTO_JS = 300 * 1024   # bytes gzip de JavaScript das figuras por página (issue 28)
# Um celular de verdade: tela de toque, viewport da página (is_mobile) e 3 px de tela por px CSS.
CELULAR_COM_TOQUE = {"viewport": PHONE, "is_mobile": True, "has_touch": True, "device_scale_factor": 3}
ALVO_MINIMO = 24   # px CSS de um alvo de toque (WCAG 2.5.8)


# --------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------

def _nova_aba(browser, site, **opcoes):
    context = browser.new_context(locale="pt-BR", service_workers="block", **opcoes)
    page = context.new_page()
    page.set_default_timeout(60_000)   # a máquina de 2 núcleos é dividida; 15 s já estourou aqui
    recorder = Recorder(context, page, site)
    yield page, recorder, site
    context.close()


@pytest.fixture()
def aba(browser, site):
    """Uma aba nova por teste (estado limpo), com requisições externas bloqueadas e anotadas."""
    yield from _nova_aba(browser, site, viewport=DESKTOP)


@pytest.fixture()
def aba_celular(browser, site):
    """A mesma aba num celular com tela de toque (CELULAR_COM_TOQUE)."""
    yield from _nova_aba(browser, site, **CELULAR_COM_TOQUE)


def abrir(aba, caso, largura: dict, tema: str = "light"):
    from browser_util import PageReport

    page, recorder, site = aba
    report = PageReport(page=caso.pagina, url=f"{site}{caso.pagina}.html")
    recorder.current = report
    page.set_viewport_size(largura)
    page.add_init_script(f"localStorage.setItem('mode', '{tema}'); localStorage.setItem('theme', '{tema}');")
    page.goto(report.url, wait_until="load")
    leitor = Leitor(page, caso.nome)
    leitor.raiz.and_(page.locator("[data-estado=pronta]")).wait_for(state="visible")
    assert page.evaluate("document.documentElement.dataset.theme") == tema
    return leitor, report


# --------------------------------------------------------------------------
# Testes
# --------------------------------------------------------------------------

IDS = [c.nome for c in CASOS]


def _estatica_escondida(leitor) -> None:
    """A figura toma o lugar da imagem estática na tela."""
    celula = leitor.raiz.locator("xpath=ancestor::div[contains(@class,'cell_output')]")
    for img in celula.locator("img").all():
        assert not img.is_visible(), "a imagem estática continua visível ao lado da figura montada"


def _sem_violacoes(leitor, tema: str, quando: str) -> None:
    # Com a figura parada: enquanto o modelo-lm gera (data-estado="gerando"), a lista velha fica
    # esmaecida de propósito, e o axe mediria o contraste desse instante.
    leitor.raiz.locator('[data-estado="gerando"]').wait_for(state="detached", timeout=30_000)
    violacoes = axe_na_figura(leitor.page, leitor.nome)
    assert not violacoes, (f"{leitor.nome} ({tema}, {quando}): violações WCAG 2 A/AA:\n  "
                           + "\n  ".join(map(str, violacoes)))


def _cabe_na_tela(leitor) -> None:
    """Nada da figura passa da borda da tela (no celular, 390 px), nem a página fica mais larga."""
    page = leitor.page
    page.evaluate(SETTLE_JS)
    caixa = leitor.raiz.bounding_box()
    vw = page.evaluate("document.documentElement.clientWidth")
    assert caixa["x"] >= 0 and caixa["x"] + caixa["width"] <= vw + 1, (caixa, vw)
    assert page.evaluate("document.documentElement.scrollWidth") <= vw + 1


def _captura(leitor, visita: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    # scale="css": a captura do celular (3 px de tela por px CSS) sai do tamanho da de sempre
    leitor.raiz.screenshot(path=str(SHOTS / f"{leitor.nome}-{visita}.png"), style=SEM_O_FIXO, scale="css")


# Cada figura é aberta duas vezes, cada vez com tudo o que se confere nela: no computador com o
# tema claro (os números contra o Python, a impressão) e num celular com tela de toque e o tema
# escuro (o dedo). As duas larguras e os dois temas sem abrir a mesma página cinco vezes.
@pytest.mark.slow
@pytest.mark.parametrize("caso", CASOS, ids=IDS)
def test_no_computador_os_controles_recalculam_como_o_python(aba, caso):
    """Computador (1400 px), tema claro: o exercício do caso (os números que a figura mostra são os
    que o Python calcula), axe antes e depois de mexer, nada passa da tela e, na impressão
    (book/print_pdf.py imprime com JavaScript), a figura montada sai e a imagem estática volta."""
    leitor, report = abrir(aba, caso, DESKTOP, "light")
    _estatica_escondida(leitor)
    _sem_violacoes(leitor, "claro", "ao abrir")
    caso.exercitar(leitor)
    _cabe_na_tela(leitor)
    # Depois de mexer, o axe de novo (estados novos: botões marcados, valores trocados).
    _sem_violacoes(leitor, "claro", "depois de mexer")
    _captura(leitor, "computador-claro")
    leitor.page.emulate_media(media="print")
    assert not leitor.raiz.is_visible(), "na impressão, a figura montada continua na página"
    celula = leitor.raiz.locator("xpath=ancestor::div[contains(@class,'cell_output')]")
    assert celula.locator("img").first.is_visible(), "na impressão, a imagem estática não volta"
    sem_problemas(report)


ROLAGEM_JS = """() => ({x: window.scrollX, y: window.scrollY, largura: document.documentElement.scrollWidth,
                        janela: document.documentElement.clientWidth})"""


def _pagina_nao_rolou(page, antes: dict, onde: str, vertical: bool) -> None:
    """A página não rolou para o lado (nem, com `vertical`, para cima ou para baixo) com o dedo."""
    r = page.evaluate(ROLAGEM_JS)
    assert r["x"] == 0 and r["largura"] <= r["janela"] + 1, \
        f"{onde}: a página rolou ou ficou mais larga que a tela ({antes} -> {r})"
    if vertical:
        assert r["y"] == antes["y"], f"{onde}: arrastar para o lado rolou a página na vertical ({antes} -> {r})"


def _alvo_de_toque(controle, onde: str) -> None:
    caixa = controle.bounding_box()
    assert caixa["width"] >= ALVO_MINIMO - 0.01 and caixa["height"] >= ALVO_MINIMO - 0.01, \
        f"{onde}: alvo de toque de {caixa['width']:.1f}x{caixa['height']:.1f} px, menor que {ALVO_MINIMO}x{ALVO_MINIMO}"


def _arrastar_deslizantes(leitor, cdp, feitos: set, mostrado) -> int:
    """Arrasta com o dedo cada deslizante visível ainda não arrastado; devolve quantos arrastou."""
    page, n = leitor.page, 0
    deslizantes = leitor.raiz.locator('input[type="range"]')
    for k in range(deslizantes.count()):
        d = deslizantes.nth(k)
        if k in feitos or not d.is_visible():
            continue
        feitos.add(k)
        n += 1
        onde = f"{leitor.nome}, deslizante {d.get_attribute('data-controle') or k}"
        d.scroll_into_view_if_needed()
        page.evaluate(SETTLE_JS)
        _alvo_de_toque(d, onde)
        p = d.evaluate(POLEGAR_JS)
        assert p["max"] > p["min"], f"{onde}: deslizante sem para onde ir ({p})"
        # Para o lado com mais trilho: 40% da largura, o bastante para passar de um passo.
        lado = 1 if p["fracao"] <= 0.5 else -1
        alvo = p["x"] + lado * 0.4 * (p["direita"] - p["esquerda"])
        rotulo = d.locator("xpath=following-sibling::output[1]")   # o valor ao lado, que a figura escreve
        antes, rotulo_antes, rolagem = mostrado(), rotulo.text_content(), page.evaluate(ROLAGEM_JS)
        inicial = d.input_value()
        arrastar_com_o_dedo(cdp, (p["x"], p["y"]), (alvo, p["y"]))
        final = d.input_value()
        sentido = "direita" if lado > 0 else "esquerda"
        assert (float(final) - p["valor"]) * lado > 0, \
            f"{onde}: o dedo foi para a {sentido} e o valor foi de {inicial} para {final}"
        depois = esperar_mudar(mostrado, antes, segundos=1)   # o input redesenha na hora
        _pagina_nao_rolou(page, rolagem, onde, vertical=True)
        assert rotulo.text_content() != rotulo_antes, f"{onde}: o valor ao lado do deslizante não acompanhou o dedo"
        # O dedo e o teclado concordam: digitar os dois valores (fill) mostra o mesmo que o toque.
        d.fill(inicial)
        com_inicial = mostrado()
        d.fill(final)
        assert mostrado() == depois, f"{onde}: em {final}, o toque e o teclado mostram números diferentes"
        # Os números mudam com o dedo, a não ser que não dependam desse valor no estado atual (na
        # mistura, com a consulta 1, q[0] soma o mesmo a todas as pontuações e a softmax não muda).
        assert depois != antes or com_inicial == depois, \
            f"{onde}: o valor foi de {inicial} para {final}, mas nenhum número da figura mudou"
    return n


BOTOES_JS = """(bs) => bs.map((b) => ({visivel: b.checkVisibility(), ativo: !b.disabled,
    pressionado: b.getAttribute('aria-pressed'), texto: b.textContent.trim().slice(0, 30),
    grupo: (b.closest('[data-controle]') || b).dataset.controle || ''}))"""


def _tocar_botoes(leitor, feitos: set, mostrado) -> int:
    """Toca, um a um, cada botão visível, ativo e não marcado ainda não tocado; devolve quantos tocou.

    Relê os botões a cada toque: um toque marca outro botão do grupo, habilita o vizinho
    (◀ anterior) ou mostra botões novos (o painel do modelo-lm)."""
    page, n = leitor.page, 0
    botoes = leitor.raiz.locator("button")
    while True:
        estado = botoes.evaluate_all(BOTOES_JS)
        k = next((k for k, e in enumerate(estado) if k not in feitos and e["visivel"] and e["ativo"]
                  and e["pressionado"] != "true"), None)
        if k is None:
            return n
        feitos.add(k)
        n += 1
        e, b = estado[k], botoes.nth(k)
        onde = f"{leitor.nome}, botão «{e['texto']}» ({e['grupo'] or k})"
        b.scroll_into_view_if_needed()
        _alvo_de_toque(b, onde)
        antes, rolagem = mostrado(), page.evaluate(ROLAGEM_JS)
        b.tap(timeout=15_000)   # um botão que não recebe o toque reprova em 15 s, não nos 60 s da aba
        if e["pressionado"] is not None:
            marcado = esperar_mudar(lambda: b.get_attribute("aria-pressed"), e["pressionado"])
            assert marcado == "true", f"{onde}: tocado, aria-pressed ficou {marcado!r}"
        else:
            assert esperar_mudar(mostrado, antes) != antes, f"{onde}: tocado, nada do que a figura mostra mudou"
        _pagina_nao_rolou(page, rolagem, onde, vertical=False)


def _arrastar_svgs(leitor, cdp, mostrado) -> int:
    """Arrasta com o dedo, do centro para cima e para a direita, cada SVG arrastável (README, seção 2)."""
    page = leitor.page
    svgs = leitor.raiz.locator("svg.arrastavel").all()
    for k, s in enumerate(svgs):
        onde = f"{leitor.nome}, SVG arrastável {k}"
        s.scroll_into_view_if_needed()
        page.evaluate(SETTLE_JS)
        c = s.bounding_box()
        x, y = c["x"] + c["width"] / 2, c["y"] + c["height"] / 2
        antes, rolagem = mostrado(), page.evaluate(ROLAGEM_JS)
        arrastar_com_o_dedo(cdp, (x, y), (x + 0.3 * c["width"], y - 0.3 * c["height"]))
        assert esperar_mudar(mostrado, antes) != antes, f"{onde}: arrastado com o dedo, nenhum número mudou"
        _pagina_nao_rolou(page, rolagem, onde, vertical=True)   # touch-action: none, nem na vertical
    return len(svgs)


@pytest.mark.slow
@pytest.mark.parametrize("caso", CASOS, ids=IDS)
def test_no_celular_escuro_a_figura_responde_ao_dedo(aba_celular, caso):
    """Num celular com tela de toque (390 px) e o tema escuro, o leitor mexe a figura com o dedo.

    Cada deslizante: o dedo encosta no polegar, desliza pelo trilho e sai (touchStart,
    touchMove, touchEnd pelo CDP); o valor anda para o lado do dedo e os números da figura
    mudam. Cada botão: um toque (tap) o marca (aria-pressed) ou muda o que a figura mostra.
    Cada SVG arrastável: o dedo o arrasta e os números mudam. Nada disso rola a página para
    o lado, todo alvo tem pelo menos 24x24 px CSS, e nenhum erro nem requisição para fora.
    Como no computador: a imagem estática escondida, axe (no tema escuro) antes e depois de
    mexer e nada passa da largura do celular."""
    leitor, report = abrir(aba_celular, caso, PHONE, "dark")
    page = leitor.page
    assert page.evaluate("matchMedia('(pointer: coarse)').matches && navigator.maxTouchPoints > 0"), \
        "o contexto não emula uma tela de toque"
    _estatica_escondida(leitor)
    _sem_violacoes(leitor, "escuro", "ao abrir")
    cdp = page.context.new_cdp_session(page)
    mostrado = lambda: tabela(leitor, saidas=True)   # noqa: E731
    deslizantes, botoes = set(), set()
    total = _arrastar_svgs(leitor, cdp, mostrado)
    for _ in range(5):   # rodadas: um toque pode mostrar controles novos (o botão do modelo-lm)
        novos = _arrastar_deslizantes(leitor, cdp, deslizantes, mostrado) + _tocar_botoes(leitor, botoes, mostrado)
        total += novos
        if not novos:
            break
    assert total, f"{caso.nome}: nenhum controle para mexer com o dedo"
    assert mostrado(), f"{caso.nome}: a figura não mostra nenhum data-valor nem data-saida"
    nao_tocados = [e["texto"] for k, e in enumerate(leitor.raiz.locator("button").evaluate_all(BOTOES_JS))
                   if k not in botoes and e["visivel"]]
    assert not nao_tocados, f"{caso.nome}: botões visíveis que o teste não conseguiu tocar: {nao_tocados}"
    _cabe_na_tela(leitor)
    _sem_violacoes(leitor, "escuro", "depois de mexer com o dedo")
    _captura(leitor, "celular-escuro")
    sem_problemas(report)


@pytest.mark.slow
@pytest.mark.parametrize("caso", CASOS, ids=IDS)
def test_imagem_estatica_sem_javascript(browser, site, caso):
    """Sem JavaScript, o bloco da figura fica escondido e a imagem da célula aparece (a impressão,
    com JavaScript, é conferida em test_no_computador_os_controles_recalculam_como_o_python)."""
    url = f"{site}{caso.pagina}.html"
    seletor = f'div.interativo[data-figura="{caso.nome}"]'
    celula = f"xpath=//div[contains(@class,'interativo') and @data-figura='{caso.nome}']" \
             "/ancestor::div[contains(@class,'cell_output')]//img"
    ctx = browser.new_context(viewport=DESKTOP, java_script_enabled=False)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    page.goto(url)
    assert not page.locator(seletor).is_visible()
    assert page.locator(celula).first.is_visible()
    ctx.close()


@pytest.mark.slow
def test_fmt_do_javascript_escreve_como_fmt_num(aba):
    """Interativo.fmt (no Chromium) e atencao.plots.fmt_num dão o mesmo texto, empates incluídos."""
    import numpy as np

    from atencao.plots import fmt_num

    page, _, site = aba
    page.goto(f"{site}{CASOS[0].pagina}.html")
    rng = np.random.default_rng(0)
    casos = [(0.125, 2), (-0.125, 2), (0.375, 2), (2.5, 0), (3.5, 0), (-2.5, 0), (1234567.891, 2),
             (0.005, 2), (-0.001, 2), (65504.0, 1), (12.345, 2), (0.0625, 3)]
    casos += [(k / 16, c) for k in range(-40, 40) for c in (0, 1, 2, 3)]
    casos += [(float(x), int(c)) for x, c in zip(rng.standard_normal(500) * rng.choice([1e-3, 1, 1e3, 1e6], 500),
                                                  rng.integers(0, 5, 500))]
    js = page.evaluate("(cs) => cs.map(([x, c]) => Interativo.fmt(x, c))", casos)
    diferentes = [(x, c, fmt_num(x, c), j) for (x, c), j in zip(casos, js) if fmt_num(x, c) != j]
    assert not diferentes, diferentes[:10]


SCRIPT = re.compile(r'<script[^>]+src="([^"?]+)')


def test_javascript_das_figuras_cabe_no_orcamento_de_cada_pagina():
    """Soma, em cada página do site, o gzip dos scripts de _static/interativo/ que ela carrega."""
    paginas = list(HTML.rglob("*.html"))
    assert paginas, "_build/html vazio: rode `make book`"
    com_figura = 0
    for html in paginas:
        texto = html.read_text(encoding="utf-8", errors="replace")
        total = 0
        for src in SCRIPT.findall(texto):
            if "_static/interativo/" not in src:
                continue
            arquivo = (html.parent / src).resolve()
            assert arquivo.is_file(), f"{html.relative_to(HTML)} pede {src}, que não existe"
            total += len(gzip.compress(arquivo.read_bytes(), compresslevel=9))
        com_figura += total > 0
        assert total <= ORCAMENTO_JS, f"{html.relative_to(HTML)}: {total} bytes gzip de JS das figuras"
    nomes = {c.pagina for c in CASOS}
    assert com_figura >= len(nomes)


def test_cada_figura_do_site_tem_um_caso_neste_teste():
    """Uma figura nova sem teste de leitor reprova: todo data-figura do site está em CASOS."""
    achadas = set()
    for html in HTML.rglob("*.html"):
        if html.parent.name in ("_static", "_sources"):
            continue
        for nome in re.findall(r'<div class="interativo" data-figura="([a-z0-9-]+)"', html.read_text(encoding="utf-8")):
            achadas.add((str(html.relative_to(HTML).with_suffix("")), nome))
    esperadas = {(c.pagina, c.nome) for c in CASOS}
    assert achadas - esperadas == set(), f"figuras sem teste: {sorted(achadas - esperadas)}"
    assert esperadas - achadas == set(), f"casos sem figura no site: {sorted(esperadas - achadas)}"


# --------------------------------------------------------------------------
# O lado Python e a extensão (sem navegador)
# --------------------------------------------------------------------------

def test_dados_viram_json_embutido_sem_fechar_o_script():
    import json

    import numpy as np

    from atencao.interativo import montar

    fig = montar("teste-a", {"Q": np.arange(3.0), "n": np.int64(2), "t": "</script><b>"}, titulo="Teste")
    html = fig.html()
    assert html.count("</script>") == 1 and 'data-figura="teste-a"' in html and " hidden>" in html
    corpo = html.split('class="interativo-dados">', 1)[1].rsplit("</script>", 1)[0]
    assert json.loads(corpo) == {"Q": [0.0, 1.0, 2.0], "n": 2, "t": "</script><b>"}


@pytest.mark.parametrize("dados, erro", [
    ({"x": float("nan")}, "JSON"), ({"x": [1.0, float("inf")]}, "JSON"), ({1: 2}, "str"),
    ({"x": object()}, "tipo"), ({"x": list(range(60_000))}, "limite"),
])
def test_dados_ruins_dao_erro_claro(dados, erro):
    from atencao.interativo import montar

    with pytest.raises((ValueError, TypeError), match=erro):
        montar("teste-b", dados, titulo="Teste")


def test_nome_e_titulo_validados():
    from atencao.interativo import montar

    with pytest.raises(ValueError, match="nome"):
        montar("Nome Ruim", {}, titulo="x")
    with pytest.raises(ValueError, match="título"):
        montar("ok", {}, titulo=" ")


def test_extensao_acha_as_figuras_e_recusa_modulo_que_falta():
    import sys

    from sphinx.errors import ExtensionError

    sys.path.insert(0, str(HTML.parent.parent / "book" / "_ext"))
    import interativo as ext

    boa = '<div class="interativo" data-figura="pontuacoes" x>'
    corpo = boa + '<div class="interativo" data-figura="nao-existe" y>'
    assert ext.figuras_da_pagina(corpo + corpo) == ["pontuacoes", "nao-existe"]

    class App:
        def __init__(self):
            self.js, self.css = [], []

        def add_js_file(self, f, **kw):
            self.js.append(f)

        def add_css_file(self, f, **kw):
            self.css.append(f)

    app = App()
    ext._pagina(app, "p", None, {"body": boa}, None)
    assert app.js == ["interativo/interativo.js", "interativo/figuras/pontuacoes.js"]
    with pytest.raises(ExtensionError, match="nao-existe.js"):
        ext._pagina(App(), "p", None, {"body": corpo}, None)
    semfig = App()
    ext._pagina(semfig, "p", None, {"body": "<p>nada</p>"}, None)
    assert semfig.js == [] and semfig.css == []
