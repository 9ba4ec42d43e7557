"""Utilidades das páginas do livro: números do texto sempre vindos de células.

    from atencao.book import texto
    texto("n_pontuacoes", fmt_int(1024 * 1024))   # no texto: {glue:text}`n_pontuacoes`

Os números são formatados à brasileira (vírgula decimal, ponto de milhar)
antes de colar; colamos a str (o {glue:text} tira as aspas com literal_eval,
e '1,22' continua str — um objeto com repr 1,22 viraria a tupla (1, 22)).
"""

from __future__ import annotations

from myst_nb import glue


def texto(nome: str, valor) -> str:
    """Cola `valor` (já formatado) sob `nome` para uso com {glue:text}`nome`."""
    s = str(valor)
    glue(nome, s, display=False)
    return s
