"""Como o leitor exercita as figuras interativas dos capítulos 1-8 (ver tests/support/interativo_util.py).

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


@caso("book/parte1/04-softmax", "softmax")
def exercitar_softmax(leitor: Leitor):
    import atencao as at
    from atencao.analysis import naive_softmax

    d = leitor.dados()
    s = np.array(d["pontuacoes"])
    n = len(s)
    assert d["limite16"] == pytest.approx(np.log(float(np.finfo(np.float16).max)))

    def conferir(tau, c):
        z = (s + c) / tau
        z16 = z.astype(np.float16)
        with np.errstate(over="ignore"):
            e16 = np.exp(z16)
            soma = np.sum(e16)
        p16 = naive_softmax(z16)
        esperado = {}
        for j in range(n):
            esperado |= {f"z-{j}": fmt_num(z[j], 2), f"exp-{j}": fmt_num(float(e16[j]), 2),
                         f"ingenua-{j}": fmt_num(float(p16[j]), 3),
                         f"estavel-{j}": fmt_num(float(at.softmax(z)[j]), 3)}
        assert {k: leitor.valor(k) for k in esperado} == esperado, (tau, c)
        estado = ("eᶻ estourou: NaN" if np.isnan(p16).any()
                  else "a soma estourou: pesos zerados" if np.isinf(soma) else "sem estouro")
        assert leitor.valor("estado") == estado, (tau, c)

    conferir(1.0, 0.0)
    for tau, c in [(0.5, 0.0), (0.5, 4.0), (0.25, 9.5), (3.0, 15.0), (1.0, 10.0), (1.0, -10.0)]:
        leitor.mover("tau", tau)
        leitor.mover("c", c)
        conferir(tau, c)
    # O estouro que a página descreve: z passa de ~11,09 e a ingênua dá NaN; a estável, não.
    leitor.mover("tau", 1.0)
    leitor.mover("c", 10.0)
    assert leitor.valor("estado") == "eᶻ estourou: NaN"
    assert leitor.valor("ingenua-0") == "nan" and leitor.valor("estavel-0") != "nan"
    # Teclado: PageUp/PageDown e setas no deslocamento.
    leitor.controle("c").focus()
    leitor.page.keyboard.press("ArrowLeft")
    leitor.page.keyboard.press("ArrowLeft")
    conferir(1.0, 9.0)


@caso("book/parte1/05-mistura-com-v", "mistura")
def exercitar_mistura(leitor: Leitor):
    import atencao as at

    d = leitor.dados()
    Q, K, V = (np.array(d[n]) for n in "QKV")
    T = len(V)

    def conferir(i, q):
        Qm = Q.copy()
        Qm[i] = q
        O, W = at.attention(Qm, K, V, causal=True, return_weights=True)
        pesos = [fmt_num(W[i, j], 3) if j <= i else "—" for j in range(T)]
        assert leitor.valores("w-", T) == pesos, (i, q)
        assert [leitor.valor("o-0"), leitor.valor("o-1")] == [fmt_num(O[i, 0], 3), fmt_num(O[i, 1], 3)], (i, q)

    i = d["consulta"]
    conferir(i, Q[i])
    leitor.clicar("consulta", "2")
    conferir(2, Q[2])
    leitor.mover("q0", -2.5)
    conferir(2, [-2.5, Q[2][1]])
    leitor.mover("q1", 3)
    conferir(2, [-2.5, 3.0])
    leitor.controle("q1").focus()
    leitor.page.keyboard.press("ArrowLeft")
    conferir(2, [-2.5, 2.95])
    leitor.clicar("consulta", "0")
    conferir(0, Q[0])
    assert leitor.valor("o-0") == fmt_num(V[0, 0], 3)   # a consulta 0 só vê v_0


@caso("book/parte1/06-multi-cabeca", "gqa")
def exercitar_gqa(leitor: Leitor):
    from atencao.plots import fmt_bytes, fmt_int

    d = leitor.dados()
    b = d["bytes_por_numero"]

    def conferir(m, hkv, T):
        esperado = {"g": fmt_int(m["H"] // hkv), "numeros": fmt_int(2 * hkv * m["d_k"]),
                    "bytes-posicao": fmt_bytes(2 * hkv * m["d_k"] * b),
                    "bytes-cache": fmt_bytes(2 * hkv * m["d_k"] * b * T), "razao": f"{fmt_int(m['H'] // hkv)}×"}
        assert {k: leitor.valor(k) for k in esperado} == esperado, (m["nome"], hkv, T)
        assert len(leitor.raiz.locator("svg rect").all()) == hkv   # uma caixa por cabeça KV
        assert len(leitor.raiz.locator("svg circle").all()) == m["H"]

    m = d["modelos"][0]
    conferir(m, m["Hkv"], m["T"])
    divisores = [k for k in range(1, m["H"] + 1) if m["H"] % k == 0]
    leitor.mover("hkv", 0)
    conferir(m, divisores[0], m["T"])
    leitor.mover("t", 3)
    conferir(m, divisores[0], 8)
    grande = d["modelos"][-1]
    leitor.clicar("modelo", grande["nome"])
    conferir(grande, grande["Hkv"], grande["T"])
    dg = [k for k in range(1, grande["H"] + 1) if grande["H"] % k == 0]
    leitor.mover("hkv", len(dg) - 1)        # MHA: H_kv = H
    conferir(grande, grande["H"], grande["T"])
    leitor.controle("hkv").focus()
    leitor.page.keyboard.press("Home")      # MQA
    conferir(grande, 1, grande["T"])


@caso("book/parte1/07-bloco-transformer", "bloco")
def exercitar_bloco(leitor: Leitor):
    import torch

    import atencao as at

    d = leitor.dados()
    x0 = torch.tensor(d["x"], dtype=torch.float64)[None]   # (1, T, D)
    T, D = x0.shape[1:]
    cfg = at.TinyConfig(vocab_size=16, d_model=D, n_layers=1, n_heads=d["n_heads"], n_kv_heads=d["n_kv_heads"],
                        d_ff=len(d["pesos"]["mlp.w1.weight"]), rope_base=d["rope_base"], norm_eps=d["eps"])
    bloco = at.Block(cfg).double()
    bloco.load_state_dict({k: torch.tensor(v, dtype=torch.float64) for k, v in d["pesos"].items()})

    def conferir(t, alfa, residual):
        x = x0.clone()
        x[0, t] *= alfa
        with torch.no_grad():
            n1 = bloco.norm1(x)
            att = bloco.attn(n1)
            h = x + att if residual else att
            n2 = bloco.norm2(h)
            m = bloco.mlp(n2)
            y = h + m if residual else m
            if residual:
                assert torch.allclose(y, bloco(x), atol=1e-12, rtol=0)
        etapas = [v[0, t].numpy() for v in (x, n1, att, h, n2, m, y)]
        esperado = {f"v-{k}-{c}": fmt_num(v[c], 2) for k, v in enumerate(etapas) for c in range(D)}
        esperado |= {f"norma-{k}": fmt_num(float(np.linalg.norm(v)), 2) for k, v in enumerate(etapas)}
        visto = {k: leitor.valor(k) for k in esperado}
        assert visto == esperado, (t, alfa, residual, {k: (visto[k], v) for k, v in esperado.items() if visto[k] != v})

    t = d["posicao"]
    conferir(t, 1.0, True)
    leitor.mover("alfa", 3.5)
    conferir(t, 3.5, True)
    leitor.clicar("posicao", "2")
    conferir(2, 3.5, True)
    leitor.clicar("residual", "desligada")
    conferir(2, 3.5, False)
    leitor.controle("alfa").focus()
    leitor.page.keyboard.press("End")
    conferir(2, 5.0, False)
