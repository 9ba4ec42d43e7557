"""Extensão Sphinx das figuras interativas (contrato em book/_static/interativo/README.md).

Numa página cujo HTML tem um bloco ``<div class="interativo" data-figura="NOME">``
(escrito por `atencao.interativo.figura` numa célula), acrescenta, só nessa
página, o núcleo compartilhado (interativo/interativo.js e interativo.css, os
mesmos arquivos em todo o site, guardados em cache pelo navegador) e o módulo
de cada figura (interativo/figuras/NOME.js), todos com ``defer``: o núcleo roda
primeiro, os módulos se registram nele, e ele monta as figuras quando o
documento termina de carregar. Uma página que pede uma figura sem módulo é erro
de construção. As páginas sem figura não carregam nada.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.errors import ExtensionError

STATIC = Path(__file__).resolve().parent.parent / "_static" / "interativo"
FIGURA = re.compile(r'<div class="interativo" data-figura="([a-z][a-z0-9-]*)"')


def figuras_da_pagina(body: str) -> list[str]:
    """Os nomes das figuras interativas no HTML de uma página, na ordem, sem repetir."""
    return list(dict.fromkeys(FIGURA.findall(body)))


def _pagina(app, pagename, templatename, context, doctree):
    nomes = figuras_da_pagina(context.get("body", ""))
    if not nomes:
        return
    faltam = [n for n in nomes if not (STATIC / "figuras" / f"{n}.js").is_file()]
    if faltam:
        raise ExtensionError(f"{pagename}: figura(s) interativa(s) sem módulo JavaScript: "
                             + ", ".join(f"book/_static/interativo/figuras/{n}.js" for n in faltam))
    app.add_css_file("interativo/interativo.css")
    app.add_js_file("interativo/interativo.js", loading_method="defer")
    for n in nomes:
        app.add_js_file(f"interativo/figuras/{n}.js", loading_method="defer")


def setup(app):
    app.connect("html-page-context", _pagina)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
