"""O livro num celular (390 px, tela de toque) e a busca: o que a revisão de 2026-12-05 achou
(issue 41, "o que um celular ainda encontra").

- todo botão das figuras interativas é um alvo de toque de pelo menos 44 px;
- todo controle deslizante tem − e + de 44 px, que andam um passo por toque (81 px de trilho
  para ~49 passos não se acertam com o dedo);
- a tabela do cap. 7, que rola para o lado, diz que rola;
- os rótulos das chaves no plano do cap. 1 não se sobrepõem (no celular e no computador);
- o modelo do cap. 8 diz o tempo de carga em ms quando é menos de um segundo (não "0,0 s"), e
  avisa quando a frase chega ao limite de caracteres (antes, cortava calado);
- a busca acha as mesmas páginas com e sem acento ("mascara" e "máscara"), e os resumos dos
  resultados são prosa, sem "Mostrar o código" nem código.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from browser_util import DESKTOP, PHONE

pytestmark = [pytest.mark.slow]
PHONE_TOUCH = {"viewport": PHONE, "is_mobile": True, "has_touch": True, "device_scale_factor": 3}
TOUCH_TARGET = 44   # px CSS (Apple HIG; WCAG 2.5.5, nível AAA)
FIGURE_PAGES = [
    "book/parte1/01-pontuacoes", "book/parte1/04-softmax", "book/parte1/05-mistura-com-v",
    "book/parte1/07-bloco-transformer", "book/parte2/10-softmax-online", "book/parte2/11-flashattention",
    "book/parte2/12-kv-cache",
]


@pytest.fixture()
def phone(browser):
    context = browser.new_context(locale="pt-BR", service_workers="block", **PHONE_TOUCH)
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


@pytest.fixture()
def desktop(browser):
    context = browser.new_context(locale="pt-BR", service_workers="block", viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


def _open(page, site, path):
    page.goto(f"{site}{path}.html", wait_until="load")
    page.wait_for_selector('div.interativo[data-estado="pronta"]')


@pytest.mark.parametrize("path", FIGURE_PAGES, ids=lambda p: p.rsplit("/", 1)[-1][:2])
def test_figure_buttons_are_44_px_and_every_slider_step_can_be_hit_with_a_finger(phone, site, path):
    """Uma abertura da página no celular para as duas conferências: todo botão visível das figuras
    tem 44 px, e cada deslizante tem − e + de 44 px que andam um passo por toque."""
    _open(phone, site, path)
    small = phone.evaluate("""(alvo) => [...document.querySelectorAll('.interativo-corpo button')]
        .filter((b) => b.offsetParent !== null)
        .map((b) => { const r = b.getBoundingClientRect();
                      return {t: b.textContent.trim().slice(0, 20), w: r.width, h: r.height}; })
        .filter((r) => r.w < alvo - 0.5 || r.h < alvo - 0.5)""", TOUCH_TARGET)
    assert not small, f"{path}: botões menores que {TOUCH_TARGET} px: {small[:8]}"
    n = phone.locator(".interativo-corpo input[type=range]").count()
    assert n > 0, f"{path}: sem controle deslizante (tire a página de FIGURE_PAGES)"
    for k in range(n):
        slider = phone.locator(".interativo-corpo input[type=range]").nth(k)
        box = slider.locator("xpath=..")
        minus, plus = box.locator('button[data-passo="-1"]'), box.locator('button[data-passo="1"]')
        assert minus.count() == 1 and plus.count() == 1, f"{path}: controle {k} sem os botões − e +"
        for b in (minus, plus):
            r = b.bounding_box()
            assert r and r["width"] >= TOUCH_TARGET - 0.5 and r["height"] >= TOUCH_TARGET - 0.5, (path, k, r)
        step = float(slider.get_attribute("step") or 1)
        low, high = float(slider.get_attribute("min")), float(slider.get_attribute("max"))
        before = float(slider.input_value())
        button, sign = (plus, 1) if before + step <= high + 1e-9 else (minus, -1)
        button.tap()
        after = float(slider.input_value())
        assert after == pytest.approx(before + sign * step, abs=step * 1e-6), (path, k, before, after, step)
        assert low - 1e-9 <= after <= high + 1e-9


def test_chapter_7_table_says_it_scrolls_on_a_phone(phone, desktop, site):
    path = "book/parte1/07-bloco-transformer"
    _open(phone, site, path)
    fig = phone.locator('div.interativo[data-figura="bloco"]')
    box = fig.locator(".interativo-rolagem")
    assert box.evaluate("(b) => b.scrollWidth > b.clientWidth + 1"), "a tabela cabe: o teste perdeu o caso"
    hint = fig.locator(".interativo-dica-rolagem")
    assert hint.is_visible() and "deslize" in hint.inner_text(), "a tabela rola sem dizer"
    assert "interativo-rola" in (box.get_attribute("class") or "")
    # no computador a tabela cabe, e não há aviso
    _open(desktop, site, path)
    dfig = desktop.locator('div.interativo[data-figura="bloco"]')
    assert not dfig.locator(".interativo-rolagem").evaluate("(b) => b.scrollWidth > b.clientWidth + 1")
    assert not dfig.locator(".interativo-dica-rolagem").is_visible()


@pytest.mark.parametrize("width", ["phone", "desktop"])
def test_chapter_1_key_labels_do_not_overlap(phone, desktop, site, width):
    page = phone if width == "phone" else desktop
    _open(page, site, "book/parte1/01-pontuacoes")
    boxes = page.evaluate("""() => [...document.querySelectorAll(
        'div.interativo[data-figura="pontuacoes"] svg.interativo-plano text')]
        .filter((t) => t.textContent.startsWith('k('))
        .map((t) => { const r = t.getBoundingClientRect();
                      return {t: t.textContent, x0: r.left, x1: r.right, y0: r.top, y1: r.bottom}; })""")
    assert len(boxes) >= 3, boxes
    clash = [(a["t"], b["t"]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
             if a["x0"] < b["x1"] - 0.5 and b["x0"] < a["x1"] - 0.5 and a["y0"] < b["y1"] - 0.5 and b["y0"] < a["y1"] - 0.5]
    assert not clash, f"rótulos sobrepostos: {clash}"


def test_model_load_time_and_character_limit_are_said(phone, site):
    phone.goto(f"{site}book/parte1/08-modelo-de-linguagem.html", wait_until="load")
    phone.wait_for_selector('div.interativo[data-figura="modelo-lm"][data-estado="pronta"]')
    phone.locator('[data-controle="carregar"]').tap()
    phone.wait_for_selector('[data-saida="tokens"] button')
    status = phone.locator('div.interativo[data-figura="modelo-lm"]').inner_text()
    m = re.search(r"Modelo carregado em ([\d.,]+) (ms|s)\b", status)
    assert m, status[:300]
    if m.group(2) == "s":   # em segundos só a partir de 1 s; abaixo disso, em ms
        assert float(m.group(1).replace(".", "").replace(",", ".")) >= 1, m.group(0)
    assert "0,0 s" not in status
    limit = phone.locator('[data-saida="limite"]')
    assert not limit.is_visible()
    frase = phone.locator('[data-controle="frase"]')
    frase.fill("a " * 300)
    phone.wait_for_timeout(400)
    assert len(frase.input_value()) == 400
    assert limit.is_visible() and "400" in limit.inner_text(), "o texto foi cortado sem aviso"


def _search(page, site, query):
    page.goto(f"{site}search.html?q={quote(query)}", wait_until="load")
    page.wait_for_function("""() => { const s = document.querySelector('#search-results p.search-summary');
                                      return s && /\\d/.test(s.textContent); }""")
    page.wait_for_timeout(1500)   # os resumos chegam um a um
    items = page.evaluate("""() => [...document.querySelectorAll('#search-results ul.search > li')].map((li) => ({
        href: li.querySelector('a').getAttribute('href'),
        context: (li.querySelector('p.context') || {textContent: ''}).textContent}))""")
    return items


def test_search_finds_the_same_pages_with_or_without_accents_and_shows_prose(desktop, site):
    plain = _search(desktop, site, "mascara")
    accented = _search(desktop, site, "máscara")
    assert plain and {i["href"] for i in plain} == {i["href"] for i in accented}, (
        len(plain), len(accented), {i["href"] for i in plain} ^ {i["href"] for i in accented})
    contexts = [i["context"] for i in plain + accented if i["context"]]
    assert contexts
    noisy = [c[:120] for c in contexts if re.search(r"Mostrar o código|Esconder o código|\bimport \w", c)]
    assert not noisy, noisy
