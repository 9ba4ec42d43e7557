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


def _softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


def _entropia(p):
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


@caso("book/parte1/02-escala", "escala")
def exercitar_escala(leitor: Leitor):
    d = leitor.dados()
    ds = d["ds"]

    def conferir(k):
        s = np.array(d["linhas"][k])
        s2 = s / np.sqrt(ds[k])
        p, p2 = _softmax(s), _softmax(s2)
        esperado = {"desvio-sem": fmt_num(s.std(), 2), "desvio-com": fmt_num(s2.std(), 2),
                    "maior-sem": fmt_num(p.max(), 3), "maior-com": fmt_num(p2.max(), 3),
                    "entropia-sem": fmt_num(_entropia(p), 2), "entropia-com": fmt_num(_entropia(p2), 2),
                    "media-sem": fmt_num(d["entropia_media"]["sem escala"][k], 2),
                    "media-com": fmt_num(d["entropia_media"]["com escala"][k], 2)}
        assert {nome: leitor.valor(nome) for nome in esperado} == esperado, f"d_k = {ds[k]}"

    conferir(ds.index(64))   # o estado inicial: d_k = 64
    for k in (0, 5, len(ds) - 1):
        leitor.mover("dk", k)
        conferir(k)
    # Teclado: Home vai ao menor d_k, uma seta para a direita ao seguinte.
    leitor.controle("dk").focus()
    leitor.page.keyboard.press("Home")
    leitor.page.keyboard.press("ArrowRight")
    conferir(1)
    # A lição da página: com d_k grande, sem escala a linha satura; com escala, não.
    leitor.mover("dk", len(ds) - 1)
    assert float(leitor.valor("maior-sem").replace(",", ".")) > 0.9
    assert float(leitor.valor("entropia-com").replace(",", ".")) > 2


@caso("book/parte1/03-mascara-causal", "mascara")
def exercitar_mascara(leitor: Leitor):
    import atencao as at

    d = leitor.dados()
    Q, K, V = (np.array(d[n]) for n in "QKV")
    T = len(d["tokens"])
    saida = {}
    for causal in (True, False):
        saida[causal] = at.attention(Q, K, V, causal=causal, return_weights=True)

    def conferir(i):
        (o_com, w_com), (o_sem, w_sem) = saida[True], saida[False]
        assert leitor.valores("com-", T) == [fmt_num(v, 2) for v in w_com[i]], f"linha {i} com máscara"
        assert leitor.valores("sem-", T) == [fmt_num(v, 2) for v in w_sem[i]], f"linha {i} sem máscara"
        assert leitor.valor("futuro-sem") == fmt_num(100 * w_sem[i, i + 1:].sum(), 1)
        assert leitor.valor("prevê-sem") == d["tokens"][int(o_sem[i].argmax())]
        assert leitor.valor("prevê-com") == d["tokens"][int(o_com[i].argmax())]

    conferir(2)
    for i in (0, 4, T - 1):
        leitor.clicar("consulta", f"{i} {d['tokens'][i]}")
        conferir(i)
    # Teclado: Tab até o próximo botão e Enter.
    leitor.controle("consulta").get_by_role("button").nth(1).focus()
    leitor.page.keyboard.press("Enter")
    conferir(1)
    # A cabeça sem máscara lê a palavra seguinte (a resposta): o que a página mostra.
    assert leitor.valor("prevê-sem") == d["tokens"][2]
