"""Mede o site construído como um leitor: a busca e uma página no celular.

    python bench/site_check.py [--html _build/html] [--png bench/celular.png]

Imprime, para cada busca, quantas páginas ela achou e os primeiros
resultados, e salva uma captura de 390 px de largura de uma página com
figuras (a fileira de três painéis do capítulo 4). Usa o Chromium do Debian
pelo Playwright, com o servidor local dos testes (tests/support/browser_util.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from browser_util import CHROMIUM, CHROMIUM_ARGS, HTML, PHONE, serve, wait_ready  # noqa: E402

QUERIES = ["mascara", "máscara", "softmax online"]
PAGE = "book/parte1/04-softmax.html"

RESULTS_JS = """async () => {
  for (let i = 0; i < 200; i++) {
    const summary = document.querySelector("#search-results p.search-summary");
    if (summary && summary.textContent.trim()) break;
    await new Promise(r => setTimeout(r, 50));
  }
  const items = [...document.querySelectorAll("#search-results ul.search > li")];
  return items.map(li => li.querySelector("a").textContent.trim());
}"""


def search(page, base: str, query: str) -> list[str]:
    page.goto(f"{base}search.html?q={quote(query)}", wait_until="load")
    return page.evaluate(RESULTS_JS)


def distinct_pages(results: list[str]) -> list[str]:
    """Resultados por página (a busca lista também seções: 'Capítulo > Seção')."""
    seen = []
    for r in results:
        name = r.split(" > ")[0]
        if name not in seen:
            seen.append(name)
    return seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--html", type=Path, default=HTML)
    ap.add_argument("--png", type=Path, default=None, help="onde salvar a captura do celular")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with serve(args.html) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=PHONE)
        for q in QUERIES:
            results = search(page, base, q)
            pages = distinct_pages(results)
            print(f"{q!r}: {len(results)} resultados, {len(pages)} páginas; primeiros: {pages[:4]}")
        if args.png:
            page.goto(base + PAGE, wait_until="load")
            wait_ready(page)
            img = page.locator("div.cell_output img").nth(1)
            img.scroll_into_view_if_needed()
            page.evaluate("() => window.scrollBy(0, -120)")
            page.screenshot(path=str(args.png))
            print(f"captura: {args.png}")
        browser.close()


if __name__ == "__main__":
    main()
