"""Ferramentas dos testes das figuras interativas (tests/site/test_interativo.py).

Cada figura tem um `Caso`: a página, o nome (data-figura) e a função que a
exercita como o leitor. As funções ficam em tests/support/interativo_casos_parte1.py
(capítulos 1-8) e tests/support/interativo_casos_parte2.py (capítulos 9-13), cada uma
marcada com o decorador `caso`; tests/site/test_interativo.py roda, para todas, os
testes comuns (as duas larguras, axe nos dois temas, a imagem estática, o
orçamento de JavaScript). Contrato: book/_static/interativo/README.md.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Callable

from browser_util import axe_violations

CASOS: list["Caso"] = []


# --------------------------------------------------------------------------
# O leitor: uma aba numa figura, com os dados que a célula embutiu
# --------------------------------------------------------------------------

@dataclass
class Leitor:
    page: object
    nome: str

    @property
    def raiz(self):
        return self.page.locator(f'div.interativo[data-figura="{self.nome}"]')

    def dados(self) -> dict:
        return json.loads(self.raiz.locator("script.interativo-dados").text_content())

    def controle(self, nome: str):
        return self.raiz.locator(f'[data-controle="{nome}"]')

    def mover(self, nome: str, valor) -> None:
        """Põe o controle deslizante `nome` em `valor` (como arrastar o polegar até lá)."""
        self.controle(nome).fill(str(valor))

    def clicar(self, controle: str, texto: str) -> None:
        self.controle(controle).get_by_role("button", name=texto, exact=True).click()

    def valor(self, nome: str) -> str:
        return self.raiz.locator(f'[data-valor="{nome}"]').first.text_content().strip()

    def valores(self, prefixo: str, n: int) -> list[str]:
        return [self.valor(f"{prefixo}{k}") for k in range(n)]


def tabela(leitor: Leitor, saidas: bool = False) -> dict[str, str]:
    """Todos os `data-valor` da figura, {nome: texto}, lidos numa chamada só.

    Com `saidas`, também o texto de cada `data-saida` (as listas do modelo-lm, que não
    têm data-valor), com a chave "saida:<nome>", e o valor de cada controle, com a chave
    "controle:<nome>" (os botões − e + de um deslizante mudam o valor que ele mostra, mesmo
    quando o passo não muda os números): tudo o que a figura mostra ao leitor."""
    return leitor.raiz.evaluate(
        "(r, saidas) => Object.fromEntries([...r.querySelectorAll('[data-valor]')].map("
        "(e) => [e.dataset.valor, e.textContent.trim()]).concat(saidas ? [...r.querySelectorAll('[data-saida]')].map("
        "(e) => ['saida:' + e.dataset.saida, e.textContent.trim()]).concat([...r.querySelectorAll('input')].map("
        "(e, k) => ['controle:' + (e.name || e.id || k), e.type === 'checkbox' ? String(e.checked) : e.value])) : []))",
        saidas)


def esperar_mudar(ler: Callable[[], object], antes, segundos: float = 10.0):
    """Lê de novo até o resultado ser diferente de `antes` (ou `segundos` passarem) e o devolve.

    Um toque pode ter efeito assíncrono (o botão do modelo-lm baixa os pesos); sem mudança,
    devolve o que leu por último, igual a `antes`, e quem chamou reprova com a mensagem dele."""
    fim = time.monotonic() + segundos
    while True:
        agora = ler()
        if agora != antes or time.monotonic() > fim:
            return agora
        time.sleep(0.05)


# --------------------------------------------------------------------------
# O dedo: toques de verdade pelo protocolo do Chromium (CDP)
# --------------------------------------------------------------------------

def arrastar_com_o_dedo(cdp, de: tuple[float, float], para: tuple[float, float], passos: int = 10) -> None:
    """Um dedo encosta na tela em `de` (px CSS da janela), desliza em `passos` movimentos até
    `para` e sai: touchStart, touchMove..., touchEnd, como um celular manda ao navegador."""
    (x0, y0), (x1, y1) = de, para

    def toque(tipo, pontos):
        cdp.send("Input.dispatchTouchEvent", {"type": tipo, "touchPoints": pontos})

    toque("touchStart", [{"x": x0, "y": y0, "id": 1}])
    for k in range(1, passos + 1):
        t = k / passos
        toque("touchMove", [{"x": x0 + t * (x1 - x0), "y": y0 + t * (y1 - y0), "id": 1}])
    toque("touchEnd", [])


POLEGAR_JS = r"""
(el) => {
  // Onde está o polegar de um <input type=range>: a fração do valor ao longo do trilho,
  // descontada a metade da largura do polegar (o do Chromium tem ~16 px) em cada ponta.
  const r = el.getBoundingClientRect();
  const min = Number(el.min || 0), max = Number(el.max || 100), v = Number(el.value);
  const f = max > min ? (v - min) / (max - min) : 0;
  const p = Math.min(16, r.height, r.width / 2);
  return {x: r.left + p / 2 + f * (r.width - p), y: r.top + r.height / 2, fracao: f,
          esquerda: r.left + p / 2, direita: r.right - p / 2, min, max, valor: v};
}
"""


# --------------------------------------------------------------------------
# As figuras
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Caso:
    pagina: str                   # caminho sem .html, como no _toc.yml
    nome: str                     # data-figura
    exercitar: Callable[[Leitor], None]


def caso(pagina: str, nome: str):
    """Registra a função decorada como o exercício da figura `nome` da `pagina`."""
    def registrar(f):
        CASOS.append(Caso(pagina, nome, f))
        return f
    return registrar


def sem_problemas(report):
    problemas = ([f"fora do localhost: {u}" for u in report.external_requests]
                 + [f"erro no console: {m}" for m in report.console_errors]
                 + [f"erro de JavaScript: {m}" for m in report.page_errors]
                 + [f"requisição falhou: {m}" for m in report.failed_requests])
    assert not problemas, f"{report.page}:\n  " + "\n  ".join(problemas)


def axe_na_figura(page, nome: str) -> list:
    """Violações WCAG 2 A/AA do axe-core dentro da figura `nome`."""
    return axe_violations(page, f'div.interativo[data-figura="{nome}"]')