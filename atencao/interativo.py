"""Figuras interativas do livro: os dados saem das células, o desenho do navegador.

Uma célula do capítulo desenha a figura estática (matplotlib, a imagem que o
PDF e quem lê sem JavaScript veem) e, na mesma célula, entrega ao navegador os
números de que a versão interativa precisa:

    from atencao.interativo import figura
    fig, ax = plt.subplots(...)
    ...
    plt.show()
    figura("pontuacoes", {"tokens": tokens, "Q": Q, "K": K},
           titulo="Pontuações de uma consulta que você move")

`figura` mostra um bloco HTML escondido (``hidden``) com os dados em JSON; o
módulo book/_static/interativo/figuras/<nome>.js, carregado pela extensão
book/_ext/interativo.py só nas páginas que o usam, monta a figura nesse bloco e
esconde na tela as imagens da mesma célula (que continuam na impressão). O
contrato completo está em book/_static/interativo/README.md.

Nenhum número que o Python calculou é digitado no JavaScript: o módulo recebe
os dados daqui e só aplica as fórmulas que a página enuncia (um produto
escalar, uma softmax); tests/site/test_interativo.py move cada controle e confere o
que a figura mostra contra o Python.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass

import numpy as np

# O nome é também o do arquivo JavaScript: minúsculas, dígitos e hífen.
NOME = re.compile(r"^[a-z][a-z0-9-]{1,40}$")
# Limite dos dados embutidos numa página (o JSON vai no HTML de cada visita).
MAX_BYTES = 200_000


def _jsonavel(x, caminho: str):
    """Converte arrays e escalares do NumPy/PyTorch em listas e números do JSON."""
    if hasattr(x, "detach"):  # tensor do PyTorch, sem importar torch aqui
        x = x.detach().cpu().numpy()
    if isinstance(x, np.ndarray):
        x = x.tolist()
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, dict):
        for k in x:
            if not isinstance(k, str):
                raise TypeError(f"figura interativa: a chave {k!r} em {caminho} deveria ser str")
        return {k: _jsonavel(v, f"{caminho}.{k}") for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonavel(v, f"{caminho}[{i}]") for i, v in enumerate(x)]
    if isinstance(x, float) and not math.isfinite(x):
        # O JSON não tem Infinity/NaN: quem precisa deles manda uma str ("-inf") e trata no JS.
        raise ValueError(f"figura interativa: {caminho} = {x} não cabe em JSON; mande um número finito")
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    raise TypeError(f"figura interativa: {caminho} tem tipo {type(x).__name__}; "
                    "esperava número, str, lista, dict ou array")


@dataclass(frozen=True)
class Figura:
    """Uma figura interativa de uma página: o nome do módulo JS, o título e os dados."""

    nome: str
    titulo: str
    dados: dict

    def html(self) -> str:
        corpo = json.dumps(self.dados, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        # "</script>" dentro do JSON fecharia o bloco antes da hora.
        corpo = corpo.replace("</", "<\\/")
        return (f'<div class="interativo" data-figura="{self.nome}" '
                f'data-titulo="{html.escape(self.titulo, quote=True)}" hidden>'
                f'<script type="application/json" class="interativo-dados">{corpo}</script></div>')

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html(),
                "text/plain": f"[figura interativa {self.nome!r}: abra a página do livro]"}


def montar(nome: str, dados: dict, *, titulo: str) -> Figura:
    """A `Figura` de `nome` (book/_static/interativo/figuras/<nome>.js), com os dados validados.

    `titulo` é o nome acessível da figura (lido por leitores de tela).
    """
    if not NOME.match(nome):
        raise ValueError(f"figura interativa: nome {nome!r} inválido; use minúsculas, dígitos e hífen "
                         "(é o nome do arquivo .js)")
    if not isinstance(dados, dict):
        raise TypeError(f"figura interativa {nome!r}: os dados devem ser um dict; veio {type(dados).__name__}")
    if not titulo.strip():
        raise ValueError(f"figura interativa {nome!r}: falta o título (o nome que o leitor de tela lê)")
    fig = Figura(nome=nome, titulo=titulo.strip(), dados=_jsonavel(dados, "dados"))
    tamanho = len(fig.html().encode())
    if tamanho > MAX_BYTES:
        raise ValueError(f"figura interativa {nome!r}: {tamanho} bytes de dados passam do limite de "
                         f"{MAX_BYTES}; mande menos números (ou menos casas)")
    return fig


def figura(nome: str, dados: dict, *, titulo: str) -> None:
    """Põe na saída da célula a figura interativa `nome` com `dados` (ver `montar`).

    Não devolve nada: a última linha de uma célula que devolvesse a figura a
    mostraria duas vezes.
    """
    from IPython.display import display

    display(montar(nome, dados, titulo=titulo))
