"""Utilidades das páginas do livro: números do texto sempre vindos de células.

    from atencao.book import texto
    texto("n_pontuacoes", fmt_int(1024 * 1024))   # no texto: {glue:text}`n_pontuacoes`

Os números são formatados à brasileira (vírgula decimal, ponto de milhar)
antes de colar; colamos a str (o {glue:text} tira as aspas com literal_eval,
e '1,22' continua str — um objeto com repr 1,22 viraria a tupla (1, 22)).

Fora da construção do livro (o .ipynb baixado de uma página, rodado num
ambiente só com os requisitos do aluno) o myst_nb pode não estar instalado:
aí não há onde colar, e `texto` só devolve o texto.
"""

from __future__ import annotations

try:
    from myst_nb import glue
except ImportError:  # fora do livro: nada a colar
    glue = None


def texto(nome: str, valor) -> str:
    """Cola `valor` (já formatado) sob `nome` para uso com {glue:text}`nome`."""
    s = str(valor)
    if glue is not None:
        glue(nome, s, display=False)
    return s
