"""Utilidades das páginas do livro: números do texto sempre vindos de células.

    from atencao.book import texto
    texto("n_pontuacoes", fmt_int(1024 * 1024))   # no texto: {glue:text}`n_pontuacoes`

`glue` de uma str mostra aspas no texto; `texto` cola um objeto cuja
representação é a própria string, sem aspas.
"""

from __future__ import annotations

from myst_nb import glue


class _Texto:
    def __init__(self, s: str):
        self.s = s

    def __repr__(self) -> str:
        return self.s


def texto(nome: str, valor) -> str:
    """Cola `valor` (já formatado) sob `nome` para uso com {glue:text}`nome`."""
    s = str(valor)
    glue(nome, _Texto(s), display=False)
    return s
