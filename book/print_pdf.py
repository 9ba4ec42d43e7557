"""Imprime o livro inteiro num PDF, para ler sem internet (`make pdf`).

    python book/print_pdf.py _build/singlehtml _build/pdf/atencao-causal.pdf

Entrada: a página única do livro (`jupyter-book build . --builder
singlehtml`). O Chromium do Debian, guiado pelo Playwright (o mesmo navegador
e as mesmas opções dos testes, tests/support/browser_util.py), abre a página servida
no localhost, espera o MathJax local terminar de compor todas as fórmulas e as
imagens carregarem, e imprime em A4 com `page.pdf`. Uma fórmula que o MathJax
não compôs (erro de TeX) interrompe a impressão com uma mensagem clara.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))
from atencao.fmt import fixed  # noqa: E402
from browser_util import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402

# A página única tem o livro todo. Numa máquina carregada (a CI, 2 núcleos) a rede
# já tinha ficado parada ("networkidle") antes de o script do MathJax rodar, e a
# impressão parava dizendo que ele não carregou: esperamos o evento "load" e
# depois o MathJax aparecer, com prazo.
MATHJAX_STARTED = "() => !!(window.MathJax && MathJax.startup && MathJax.startup.promise)"
# Espera o MathJax compor a página toda; devolve quantas fórmulas e quantos erros de TeX.
WAIT_MATH = """async () => {
  await MathJax.startup.promise;
  if (MathJax.typesetPromise) await MathJax.typesetPromise();
  return {formulas: document.querySelectorAll('mjx-container').length,
          errors: document.querySelectorAll('mjx-merror, [data-mjx-error]').length};
}"""
REFRESH = re.compile(r'http-equiv="Refresh" content="0; url=([^"]+)"', re.I)
WAIT_IMAGES = """() => [...document.images].every(img => img.complete && img.naturalWidth > 0)"""


def print_pdf(site: Path, out: Path, timeout_s: float = 300) -> dict:
    """Imprime `site`/index.html em `out`; devolve o que o MathJax compôs."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    if not (site / "index.html").exists():
        raise FileNotFoundError(f"{site / 'index.html'} não existe: construa antes com "
                                "`jupyter-book build . --builder singlehtml` (o `make pdf` faz isso)")
    if not Path(CHROMIUM).exists():
        raise FileNotFoundError(f"Chromium não encontrado em {CHROMIUM}: rode `make apt-deps`")
    out.parent.mkdir(parents=True, exist_ok=True)
    # Com a página raiz numa subpasta (book/intro), o singlehtml do JB1 escreve
    # index.html como um redirecionamento para book/intro.html, mas os
    # endereços dela (_static/, _images/) são relativos à raiz do site: uma
    # cópia na raiz carrega o MathJax e as figuras.
    index = site / "index.html"
    target = REFRESH.search(index.read_text(encoding="utf-8"))
    page_file = site / "livro.html"
    shutil.copyfile(site / target.group(1) if target else index, page_file)
    with serve(site) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1000, "height": 1400})
        page.set_default_timeout(timeout_s * 1000)
        page.goto(f"{base}{page_file.name}", wait_until="load")
        try:
            page.wait_for_function(MATHJAX_STARTED, timeout=timeout_s * 1000)
        except PlaywrightTimeout:
            raise RuntimeError(f"o MathJax não carregou na página única em {timeout_s:.0f} s: "
                               "as fórmulas sairiam cruas") from None
        math = page.evaluate(WAIT_MATH)
        if math["errors"]:
            raise RuntimeError(f"{math['errors']} fórmula(s) com erro de TeX no MathJax")
        deadline = time.monotonic() + timeout_s
        while not page.evaluate(WAIT_IMAGES):
            if time.monotonic() > deadline:
                raise RuntimeError(f"imagens que não carregaram depois de {timeout_s:.0f} s")
            time.sleep(0.2)
        page.pdf(path=str(out), format="A4", print_background=True,
                 margin={"top": "15mm", "bottom": "15mm", "left": "12mm", "right": "12mm"})
        browser.close()
    return math


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Imprime o livro (página única) num PDF.")
    parser.add_argument("site", type=Path, help="pasta do build singlehtml (com index.html)")
    parser.add_argument("saida", type=Path, help="arquivo PDF a escrever")
    parser.add_argument("--timeout", type=float, default=300, metavar="S",
                        help="segundos de espera pelo MathJax e pelas imagens (padrão: 300)")
    args = parser.parse_args(argv)
    try:
        math = print_pdf(args.site, args.saida, timeout_s=args.timeout)
    except (FileNotFoundError, RuntimeError) as erro:
        print(f"erro: {erro}", file=sys.stderr)
        return 1
    size = fixed(args.saida.stat().st_size / 2**20, 1)
    n = math["formulas"]
    formulas = f"{n} fórmula composta" if n == 1 else f"{n} fórmulas compostas"
    print(f"PDF em {args.saida} ({formulas} pelo MathJax, {size} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
