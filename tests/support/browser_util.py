"""Ferramentas do teste no navegador (tests/site/test_browser.py).

Um servidor HTTP local serve _build/html numa porta livre; o Chromium do
Debian (/usr/bin/chromium), guiado pelo Playwright, abre cada página do
sumário uma vez e devolve um `PageReport` com tudo o que os testes conferem:
console, requisições, matemática, imagens, saídas de células, links.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]
DESKTOP = {"width": 1400, "height": 800}   # a largura do computador em que a issue 16 mediu
PHONE = {"width": 390, "height": 844}   # largura CSS de um celular comum

# Um capítulo é book/parteN/NN-slug; o slug é também o nome do exercício.
CHAPTER = re.compile(r"^book/parte\d+/(?P<slug>\d\d-[a-z0-9-]+)$")


def toc_files() -> list[str]:
    """As páginas do sumário, na ordem de leitura (a da navegação anterior/próxima)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return files


def chapters() -> list[tuple[str, str]]:
    """(página, slug) de cada capítulo do sumário."""
    return [(f, m["slug"]) for f in toc_files() if (m := CHAPTER.match(f))]


# --------------------------------------------------------------------------
# Servidor local
# --------------------------------------------------------------------------

class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # o pytest não precisa de um log por arquivo
        pass


@contextmanager
def serve(directory: Path):
    """Serve `directory` em http://127.0.0.1:<porta livre>/ numa thread."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def is_local(url: str, base: str) -> bool:
    if url.startswith(("data:", "blob:", "about:")):
        return True
    return urlsplit(url).netloc == urlsplit(base).netloc


def strip_url(url: str) -> str:
    """Endereço sem ?consulta e sem #âncora (o Sphinx acrescenta ?highlight=)."""
    return url.split("#", 1)[0].split("?", 1)[0]


# --------------------------------------------------------------------------
# O que o navegador mede em cada página (roda depois do MathJax)
# --------------------------------------------------------------------------

PROBE_JS = r"""
async () => {
  const out = {};
  const mj = window.MathJax;
  out.mathjax = !!(mj && mj.startup && mj.startup.promise);
  if (out.mathjax) {
    try { await mj.startup.promise; } catch (e) { out.mathjaxError = String(e); }
  }
  await document.fonts.ready;
  const visible = (el) => el.checkVisibility({checkVisibilityCSS: true});
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.classList.length ? "." + [...el.classList].slice(0, 3).join(".") : "");

  out.title = document.title;
  const h1 = document.querySelector("article h1");
  out.h1 = h1 ? h1.innerText.replace(/#$/, "").trim() : "";
  const mathEls = [...document.querySelectorAll("span.math, div.math")];
  out.mathCount = mathEls.length;
  out.mathUnrendered = mathEls.filter(e => !e.querySelector("mjx-container"))
    .map(e => e.textContent.trim().slice(0, 80));
  out.mathRendered = document.querySelectorAll("mjx-container").length;
  out.mathErrors = [...document.querySelectorAll("mjx-merror")]
    .map(e => (e.getAttribute("data-mjx-error") || e.textContent).slice(0, 120));

  // Texto visível fora de código e de matemática renderizada.
  const skip = "pre, code, kbd, samp, script, style, textarea, mjx-container, .highlight";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const chunks = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || !n.textContent.trim() || el.closest(skip) || !visible(el)) continue;
    chunks.push(n.textContent);
  }
  out.visibleText = chunks.join("\u2029");
  const article = document.querySelector("article.bd-article") || document.querySelector("main");
  out.articleText = article ? article.innerText : "";

  out.images = [...document.images].map(img => ({
    src: img.currentSrc || img.src, alt: img.getAttribute("alt"),
    complete: img.complete, width: img.naturalWidth, height: img.naturalHeight,
  }));
  out.emptyFigures = [...document.querySelectorAll("figure")]
    .filter(f => !f.querySelector("img, svg, object, video")).map(describe);

  out.cells = [...document.querySelectorAll("div.cell")].map((c, k) => ({
    index: k,
    tags: [...c.classList].filter(x => x.startsWith("tag_")).map(x => x.slice(4)),
    source: ((c.querySelector(".cell_input pre") || {}).textContent || "").trim().slice(0, 100),
    errors: [...c.querySelectorAll(".cell_output .output.traceback, .cell_output .output.error")]
      .map(e => (e.querySelector("pre") || e).textContent),
    output: [...c.querySelectorAll(".cell_output pre")].map(e => e.textContent).join("\n"),
  }));

  const href = (sel) => { const a = document.querySelector(sel); return a ? a.href : null; };
  out.next = href(".prev-next-area a.right-next");
  out.prev = href(".prev-next-area a.left-prev");
  out.downloadSource = href("a.btn-download-source-button");
  out.downloadNotebook = href("a.btn-download-notebook-button");
  out.exercises = [...document.querySelectorAll("a.exercicio-download")].map(a => a.href);
  out.colab = [...document.querySelectorAll("a.exercicio-colab")].map(a => a.href);
  return out;
}
"""

OVERFLOW_JS = r"""
() => {
  // Na largura do celular, nada pode passar da borda direita, a não ser dentro
  // de uma rolagem local do próprio conteúdo (bloco de código, fórmula longa,
  // tabela): se quem rola é a página ou a coluna inteira do artigo, o leitor
  // precisa arrastar o texto todo para o lado.
  const w = document.documentElement.clientWidth;
  const over = Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - w;
  const article = document.querySelector("article.bd-article") || document.querySelector("main");
  const culprits = [];
  for (const el of article.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= w + 1 || !el.checkVisibility()) continue;
    let clip = el.parentElement;
    while (clip && clip !== document.body && getComputedStyle(clip).overflowX === "visible") {
      clip = clip.parentElement;
    }
    if (!clip || clip === document.body || clip.contains(article)) {
      culprits.push(el.tagName.toLowerCase() + "." + [...el.classList].slice(0, 3).join(".") +
                    " (borda direita em " + Math.round(r.right) + " px)");
      if (culprits.length >= 6) break;
    }
  }
  return {width: w, over: over, culprits: culprits};
}
"""

LAYOUT_JS = r"""
([figureTextPx, minTextPx]) => {
  // Fórmulas: a caixa de cada fórmula em destaque cabe na coluna do artigo (texto);
  // as fórmulas mais largas que a própria caixa vão como objetos {label, inner, box, marked}.
  const article = document.querySelector("article.bd-article") || document.querySelector("main");
  const col = article.getBoundingClientRect();
  const equations = [];
  for (const el of document.querySelectorAll('mjx-container[display="true"]')) {
    if (!el.checkVisibility()) continue;
    const box = (el.closest("div.math") || el).getBoundingClientRect();
    const math = el.querySelector("mjx-math");
    const inner = math ? math.getBoundingClientRect().width : 0;
    const item = window.MathJax.startup.document.getMathItemsWithin(el)[0];
    const label = (item ? item.math : el.textContent).trim().slice(0, 60);
    if (box.right > col.right + 1 || box.left < col.left - 1) {
      equations.push(`${label}: caixa de ${Math.round(box.width)} px passa da coluna (${Math.round(col.width)} px)`);
    } else if (inner > box.width + 1) {
      // Mais larga que a caixa: a caixa tem de rolar e mostrar a sombra de "continua"
      // (book/_static/curso.js); o teste exige isso só no celular.
      const scrolls = ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
      equations.push({label, inner: Math.round(inner), box: Math.round(box.width),
                      marked: scrolls && el.classList.contains("formula-rola")});
    }
  }
  // Figuras: o texto normal da figura (figureTextPx na imagem) na escala em que aparece.
  const figures = [];
  for (const img of document.querySelectorAll("div.cell_output img")) {
    if (!img.naturalWidth || !img.checkVisibility()) continue;
    const shown = img.getBoundingClientRect().width;
    const textPx = shown / img.naturalWidth * figureTextPx;
    const zoom = img.closest("a") && img.closest("a").href === img.src;
    figures.push({src: img.src.split("/").pop(), shown: Math.round(shown), natural: img.naturalWidth,
                  textPx: Math.round(textPx * 10) / 10, readable: textPx >= minTextPx - 0.01, zoom: !!zoom});
  }
  // Figuras que rolam na caixa (a figura é mais larga que a coluna: parte dela fica
  // fora da tela, `cut`): a borda do lado em que a figura continua esmaece (curso.css).
  for (const box of document.querySelectorAll("div.cell_output, div.cell_output div.output")) {
    if (!box.querySelector(":scope > a.figura-ampliar") || box.scrollWidth <= box.clientWidth + 1) continue;
    const src = box.querySelector("img").src.split("/").pop();
    const fig = figures.find((f) => f.src === src);
    if (fig) {
      fig.cut = {content: box.scrollWidth, box: box.clientWidth};
      fig.cue = getComputedStyle(box).maskImage.includes("gradient")
        && getComputedStyle(box).animationName === "figura-rola";
    }
  }
  // Blocos de código que rolam para o lado em vez de quebrar a linha na coluna.
  const code = [];
  for (const pre of article.querySelectorAll("div.cell_input pre, div[class*='highlight-'] pre")) {
    if (pre.checkVisibility() && pre.scrollWidth > pre.clientWidth + 1) code.push(pre.textContent.slice(0, 60));
  }
  return {width: document.documentElement.clientWidth, column: Math.round(col.width), equations, figures, code};
}
"""

SETTLE_JS = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"


@dataclass
class PageReport:
    page: str
    url: str
    final_url: str = ""
    status: int | None = None
    console_errors: list[str] = field(default_factory=list)
    console_warnings: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    probe: dict = field(default_factory=dict)
    phone: dict = field(default_factory=dict)
    layout: dict = field(default_factory=dict)   # LAYOUT_JS por largura: "computador", "celular"
    axe: list = field(default_factory=list)       # violações do axe-core (WCAG 2 A/AA)
    seconds: float = 0.0


class Recorder:
    """Liga os eventos do Playwright ao relatório da página que está aberta."""

    def __init__(self, context, page, base: str):
        self.base = base
        self.current: PageReport | None = None
        context.route(lambda url: not is_local(url, base), self._block)
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self._add("page_errors", str(exc)))
        page.on("requestfailed", self._failed)
        page.on("response", self._response)

    def _add(self, attr: str, value: str):
        if self.current is not None:
            getattr(self.current, attr).append(value)

    def _failed(self, req):
        # O ícone da aba é pedido com prioridade baixa, e o Chromium o cancela (ERR_ABORTED) quando
        # a página navega antes de ele chegar (a busca muda a URL logo ao abrir): não é um arquivo
        # que falta. Outro cancelamento, ou outra falha, continua sendo um problema da página.
        if req.failure == "net::ERR_ABORTED" and req.url.split("?")[0].endswith("/_static/favicon.svg"):
            return
        self._add("failed_requests", f"{req.url} ({req.failure})")

    def _block(self, route):
        # Nenhuma requisição sai do localhost: o livro precisa abrir sem internet.
        self._add("external_requests", route.request.url)
        route.abort("blockedbyclient")

    def _console(self, msg):
        where = msg.location.get("url", "") if msg.location else ""
        text = f"{msg.text} [{where}]" if where else msg.text
        if msg.type == "error":
            self._add("console_errors", text)
        elif msg.type == "warning":
            self._add("console_warnings", text)

    def _response(self, resp):
        if resp.status >= 400:
            self._add("failed_requests", f"{resp.url} (HTTP {resp.status})")

    def visit(self, page, path: str, url: str, axe: bool = False) -> PageReport:
        """Abre `url` em largura de computador, mede, e mede de novo em largura de celular.

        Com `axe`, roda também as regras WCAG 2 A/AA do axe-core na largura de computador.
        """
        report = PageReport(page=path, url=url)
        self.current = report
        t0 = time.perf_counter()
        page.set_viewport_size(DESKTOP)
        resp = page.goto(url, wait_until="load")
        report.status = resp.status if resp else None
        report.final_url = page.url
        report.probe = page.evaluate(PROBE_JS)
        args = [figure_text_px(), MIN_FIGURE_TEXT_PX]
        report.layout["computador"] = page.evaluate(LAYOUT_JS, args)
        if axe:
            report.axe = page_axe_violations(page)
        page.set_viewport_size(PHONE)
        page.evaluate(SETTLE_JS)
        report.phone = page.evaluate(OVERFLOW_JS)
        report.layout["celular"] = page.evaluate(LAYOUT_JS, args)
        page.set_viewport_size(DESKTOP)
        report.seconds = time.perf_counter() - t0
        self.current = None
        return report


# Menor texto de figura aceito na tela, em px CSS. 9 px é o piso: é o tamanho
# das notas de rodapé mais miúdas da web e pouco abaixo de 12 pt impressos a
# distância de leitura de um celular; abaixo disso os rótulos dos eixos viram
# borrões (na issue 16 eram ~4 px). Mede-se o texto normal das figuras, o dos
# rótulos e marcas dos eixos (font.size do estilo do curso), não as anotações
# menores dentro de mapas de calor.
MIN_FIGURE_TEXT_PX = 9.0


def figure_text_px() -> float:
    """Altura do texto normal das figuras do curso, em px da imagem (font.size em pt x dpi / 72)."""
    from atencao.plots import STYLE

    return STYLE["font.size"] * STYLE["savefig.dpi"] / 72


WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


AXE_OPTIONS = {"runOnly": {"type": "tag", "values": WCAG_TAGS}, "resultTypes": ["violations"],
               # sem pré-carregar as folhas de estilo: o axe 4.12 resolve o @import do tema
               # (../basic.css) a partir da página, não da folha, e pede um arquivo que não existe
               # (404 no console)
               "preload": False}
CODE = "div.highlight"   # os blocos de código coloridos pelo pygments


def _axe(page, context, options: dict) -> list[dict]:
    from axe_playwright_python.sync_playwright import Axe

    if not page.evaluate("typeof axe === 'object' && typeof axe.run === 'function'"):
        page.evaluate(Axe().axe_script)
    response = page.evaluate("([contexto, opcoes]) => axe.run(contexto ?? document, opcoes)", [context, options])
    return [{"id": v["id"], "impact": v.get("impact"), "help": v.get("help"),
             "nodes": [n.get("target") for n in v.get("nodes", [])][:5]}
            for v in response.get("violations", [])]


def axe_violations(page, context: str | None = None) -> list[dict]:
    """Violações das regras WCAG 2 A/AA do axe-core (que vem dentro do axe-playwright-python), na
    página inteira ou só dentro de `context` (um seletor CSS). O axe (~560 kB) entra na página uma
    vez: a segunda chamada na mesma página (antes e depois de mexer numa figura) só roda as regras."""
    return _axe(page, context, AXE_OPTIONS)


# As cores de cada pedaço de código e o fundo do bloco dele, como o navegador as calculou: um par
# (cor, fundo) de cada combinação que aparece na página.
CODE_COLORS_JS = """(sel) => {
  const opaque = (el) => {
    for (; el; el = el.parentElement) {
      const c = getComputedStyle(el).backgroundColor;
      if (c && c !== 'transparent' && !/rgba\\([^)]*,\\s*0\\)$/.test(c)) return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const pares = new Map();
  for (const bloco of document.querySelectorAll(sel)) {
    if (!bloco.getClientRects().length) continue;
    for (const el of [bloco, ...bloco.querySelectorAll('*')]) {
      if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
      const par = [getComputedStyle(el).color, opaque(el)];
      const k = par.join('|');
      if (!pares.has(k)) pares.set(k, [...par, el.textContent.trim().slice(0, 30)]);
    }
  }
  return [...pares.values()];
}"""


def _rgb(css: str) -> tuple[float, float, float, float]:
    parts = [float(x) for x in re.findall(r"[\d.]+", css)]
    return (*parts[:3], parts[3] if len(parts) > 3 else 1.0)


def contrast_ratio(color: str, background: str) -> float:
    """A razão de contraste da WCAG 2 entre duas cores CSS `rgb(...)`/`rgba(...)` (o texto
    translúcido misturado ao fundo, como o navegador o pinta)."""
    r, g, b, a = _rgb(color)
    br, bg, bb, _ = _rgb(background)
    mixed = [a * c + (1 - a) * f for c, f in ((r, br), (g, bg), (b, bb))]

    def lum(rgb) -> float:
        lin = [(c / 255) / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]

    hi, lo = sorted((lum(mixed), lum((br, bg, bb))), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def code_contrast_violations(page, minimum: float = 4.5) -> list[dict]:
    """Cada combinação de cor de texto e fundo dos blocos de código abaixo de `minimum`:1 (WCAG
    1.4.3, texto de tamanho normal), no formato de `axe_violations`."""
    rated = [(contrast_ratio(c, f), c, f, t) for c, f, t in page.evaluate(CODE_COLORS_JS, CODE)]
    return [{"id": "color-contrast", "impact": "serious",
             "help": f"código com contraste {r:.2f}:1 ({c} sobre {f})", "nodes": [t]}
            for r, c, f, t in rated if r < minimum]


def page_axe_violations(page) -> list[dict]:
    """A página inteira pelas regras WCAG 2 A/AA, com o contraste dos blocos de código medido por
    `code_contrast_violations` (um par de cores por combinação) em vez de pelo axe, que media
    cada um dos milhares de pedaços coloridos: 5,4 -> 3,9 núcleo·s no cap. 11. Todas as outras
    regras do axe, o contraste inclusive, passam pelo resto da página; as outras regras, também
    pelos blocos de código."""
    others = dict(AXE_OPTIONS, rules={"color-contrast": {"enabled": False}})
    contrast = dict(AXE_OPTIONS, runOnly={"type": "rule", "values": ["color-contrast"]})
    return (_axe(page, None, others) + _axe(page, {"include": [["html"]], "exclude": [[CODE]]}, contrast)
            + code_contrast_violations(page))


def wait_ready(page):
    """Espera o MathJax terminar e as fontes carregarem (para capturas de tela)."""
    page.evaluate("""async () => {
        const mj = window.MathJax;
        if (mj && mj.startup && mj.startup.promise) await mj.startup.promise;
        await document.fonts.ready;
    }""")
    page.evaluate(SETTLE_JS)


def open_alone(browser, path: Path, timeout_ms: int = 30_000) -> tuple[int, int, list[str]]:
    """Abre um arquivo HTML no Chromium (`browser`, o da sessão de testes) como quem o recebeu
    sozinho, sem rede: só o próprio arquivo pode ser pedido (o resto é recusado e anotado).
    Espera a matemática renderizar e devolve (fórmulas renderizadas, trechos `\\sum_j` ainda
    crus, endereços recusados, sem os `data:`)."""
    refused = []
    context = browser.new_context()
    try:
        tab = context.new_page()

        def only_the_file(route):
            if route.request.url == path.as_uri():
                route.continue_()
            else:
                refused.append(route.request.url)
                route.abort()
        tab.route("**/*", only_the_file)
        tab.goto(path.as_uri())
        # MathJax (mjx-container) ou MathML escrito na hora de gravar (math), que o navegador mostra
        tab.wait_for_selector("mjx-container svg, mjx-container mjx-math, math", timeout=timeout_ms)
        rendered = tab.locator("mjx-container").count() + tab.locator("math").count()
        raw = tab.locator("text=\\sum_j").count()
    finally:
        context.close()
    return rendered, raw, [u for u in refused if not u.startswith("data:")]
