"""Como o leitor exercita as figuras interativas dos capítulos 1-8 (ver tests/interativo_util.py).

Cada função move os controles da figura e confere o que ela mostra contra o
que o Python calcula, a partir dos dados que a célula do capítulo embutiu.
"""

from __future__ import annotations

import numpy as np
import pytest

from atencao.plots import fmt_num
from interativo_util import Leitor, caso


@caso("book/parte1/01-pontuacoes", "pontuacoes")
def exercitar_pontuacoes(leitor: Leitor):
    d = leitor.dados()
    K = np.array(d["K"])
    T = len(d["tokens"])

    def linha_esperada(q):
        return [fmt_num(v, 2) for v in np.asarray(q) @ K.T]

    # Estado inicial: a consulta da página ("ele"), com a linha de S = QK^T.
    i = d["consulta"]
    assert leitor.valores("s-", T) == linha_esperada(d["Q"][i])
    # Mover cada componente de q.
    q = list(d["Q"][i])
    for t, v in enumerate([-1.3, 2.0, 0.75, -0.4]):
        leitor.mover(f"q{t}", v)
        q[t] = v
        assert leitor.valores("s-", T) == linha_esperada(q), f"depois de mover q{t} para {v}"
    melhor = d["tokens"][int(np.argmax(np.asarray(q) @ K.T))]
    assert leitor.valor("melhor") == melhor
    # Teclado: uma seta para a direita soma um passo (0,01).
    leitor.controle("q0").focus()
    leitor.page.keyboard.press("ArrowRight")
    q[0] = round(q[0] + 0.01, 2)
    assert leitor.valores("s-", T) == linha_esperada(q)
    # Outra consulta: os controles voltam ao q dessa linha de Q.
    leitor.clicar("consulta", "gato")
    g = d["tokens"].index("gato")
    assert leitor.valores("s-", T) == linha_esperada(d["Q"][g])
    assert float(leitor.controle("q0").input_value()) == pytest.approx(d["Q"][g][0])
    # Arrastar o ponto no plano (ponteiro): a 1a componente vai para onde o ponto foi.
    plano = leitor.raiz.locator("svg.interativo-plano")
    caixa = plano.bounding_box()
    leitor.page.mouse.move(caixa["x"] + caixa["width"] * 0.5, caixa["y"] + caixa["height"] * 0.5)
    leitor.page.mouse.down()
    leitor.page.mouse.move(caixa["x"] + caixa["width"] * 0.8, caixa["y"] + caixa["height"] * 0.3, steps=4)
    leitor.page.mouse.up()
    q = [float(leitor.controle(f"q{t}").input_value()) for t in range(len(d["eixos"]))]
    assert q[0] > 0.5 and q[1] > 0.3, q
    assert leitor.valores("s-", T) == linha_esperada(q)
