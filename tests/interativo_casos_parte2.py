"""Como o leitor exercita as figuras interativas dos capítulos 9-13 (ver tests/interativo_util.py).

Cada figura entra aqui com uma função marcada com `@caso(pagina, nome)`.
"""

from __future__ import annotations

from interativo_util import Leitor, caso  # noqa: F401
