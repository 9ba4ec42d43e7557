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


# O que o binário exportado depende: se nada disto mudou desde a última exportação, ela
# é pulada (sem importar o torch, que custa segundos numa construção incremental).
FONTES = [ROOT / "atencao" / "data" / f
          for f in ("tiny_lm.pt", "tiny_lm.json", "tokenizer.json", "corpus.json")] + [
    ROOT / "atencao" / f for f in ("web_lm.py", "model.py", "lm.py", "text.py")]


def _em_dia(destino: Path) -> bool:
    saidas = [destino / "lm_weights.bin", destino / "lm_manifest.json"]
    if not all(f.is_file() for f in saidas):
        return False
    return min(f.stat().st_mtime for f in saidas) >= max(f.stat().st_mtime for f in FONTES if f.is_file())


def _exportar(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    destino = Path(app.outdir) / "_static" / "modelo"
    if _em_dia(destino):
        return
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from atencao.web_lm import export_web_lm

    try:
        manifest = export_web_lm(destino)
    except (FileNotFoundError, ValueError) as erro:
        raise ExtensionError(f"modelo no navegador: {erro}") from erro
    logger.info(f"modelo no navegador: {manifest.nbytes} bytes de pesos em {destino}")


def setup(app):
    app.connect("build-finished", _exportar)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
