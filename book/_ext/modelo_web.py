"""Extensão Sphinx: os pesos do modelo do curso no site, para o cap. 8 rodá-lo no navegador.

Ao fim de cada construção HTML, grava em ``_static/modelo/`` do site os
arquivos de `atencao.web_lm.export_web_lm` (``lm_weights.bin``, float32, e
``lm_manifest.json``), gerados dos pesos de ``atencao/data/``. Eles não são
versionados (seriam uma segunda cópia dos pesos) e não dependem do cache de
execução dos capítulos: um site montado de um cache antigo, ou de um
``_build/html`` apagado, ganha os arquivos de novo. O leitor só os baixa quando
aperta o botão da figura (book/_static/interativo/figuras/modelo-lm.js).
"""

from __future__ import annotations

import sys
from pathlib import Path

from sphinx.errors import ExtensionError
from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[2]
logger = logging.getLogger(__name__)


def _exportar(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from atencao.web_lm import export_web_lm

    destino = Path(app.outdir) / "_static" / "modelo"
    try:
        manifest = export_web_lm(destino)
    except (FileNotFoundError, ValueError) as erro:
        raise ExtensionError(f"modelo no navegador: {erro}") from erro
    logger.info(f"modelo no navegador: {manifest.nbytes} bytes de pesos em {destino}")


def setup(app):
    app.connect("build-finished", _exportar)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
