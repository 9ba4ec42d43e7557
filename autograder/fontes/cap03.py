"""Exercício do capítulo 3 — a máscara causal.

Tarefas (pontos): mascara_causal (2), aplicar_mascara (2), pesos_causais (2),
respeita_causalidade (3), pergunta escrita sobre -1e9 e linhas mascaradas (2).
Oráculos: torch.triu, Tensor.masked_fill, torch.softmax e
scaled_dot_product_attention (com e sem is_causal); nada do pacote atencao.
"""

from autograder.fontes._parte1 import IMPORTS
from autograder.nbbuild import Notebook

SLUG = "03-mascara-causal"

SETUP = IMPORTS + '''
import torch.nn.functional as F


def _proibido(n, m, start=0):
    """Oráculo: posições proibidas, j > start + i, pelo torch.triu."""
    return torch.triu(torch.ones(n, m, dtype=torch.bool), diagonal=start + 1)


inf = float("inf")
'''


def build() -> Notebook:
    nb = Notebook(SLUG, titulo="Capítulo 3 — A máscara causal")
    nb.md(
        "Um modelo de linguagem gera um token de cada vez: ao prever a posição "
        "$i + 1$, só conhece as posições $0, \\dots, i$. No treino, todas as posições "
        "são processadas juntas; a máscara causal garante que a consulta $i$ não veja "
        "as chaves $j > i$. Neste exercício você constrói a máscara, aplica-a, calcula "
        "os pesos e escreve um teste que pega qualquer vazamento do futuro.\n\n"
        "**Regras.** Use `torch`; não importe o pacote `atencao` do livro. Nesta "
        "tarefa você pode usar `torch.softmax` (o capítulo 4 a escreve do zero). Há "
        "testes ocultos, com outras formas, tipos e casos extremos.\n\n"
        "**Convenção (a mesma do livro).** A máscara é booleana e vale `True` nas "
        "posições **proibidas**. Com um cache de chaves (capítulo 12), chegam $n$ "
        "consultas novas e há $m = \\text{start} + n$ chaves; a consulta $i$ ocupa a "
        "posição absoluta $\\text{start} + i$ e pode ver as chaves "
        "$j \\le \\text{start} + i$."
    )
    nb.setup(SETUP)

    # ------------------------------------------------------------------ tarefa 1
    nb.md(
        "## Tarefa 1 — a máscara (2 pontos)\n\n"
        "Escreva `mascara_causal(n, m=None, start=0)`, que devolve um tensor "
        "`torch.bool` de forma `(n, m)` com `True` exatamente onde $j > \\text{start} + i$. "
        "Se `m` for `None`, use $m = \\text{start} + n$. Se `n`, `m` ou `start` não forem "
        "inteiros $\\ge 0$, levante `ValueError` dizendo o que veio. Não use "
        "`torch.triu`/`torch.tril` (os testes usam); compare índices."
    )
    nb.solution(
        'def mascara_causal(n, m=None, start=0):\n'
        '    """Máscara (n, m), True onde a chave j está no futuro da consulta i: j > start + i."""\n'
        '    ### BEGIN SOLUTION\n'
        '    def _confere(nome, valor):\n'
        '        if isinstance(valor, bool) or not isinstance(valor, int) or valor < 0:\n'
        '            raise ValueError(f"{nome} deve ser um inteiro >= 0, veio {valor!r}")\n'
        '    _confere("n", n)\n'
        '    _confere("start", start)\n'
        '    if m is None:\n'
        '        m = start + n\n'
        '    _confere("m", m)\n'
        '    i = torch.arange(n).unsqueeze(1)  # (n, 1)\n'
        '    j = torch.arange(m).unsqueeze(0)  # (1, m)\n'
        '    return j > start + i  # (n, m)\n'
        '    ### END SOLUTION',
        grade_id="mascara_causal",
    )
    nb.tests(
        '"""mascara_causal: True exatamente em j > start + i."""\n'
        'M = mascara_causal(4)\n'
        '_tipo("mascara_causal(4)", M, torch.bool)\n'
        'conferir("mascara_causal(4)", M, torch.tensor([[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]], dtype=torch.bool))\n'
        'conferir("mascara_causal(2, 6, start=4)", mascara_causal(2, 6, start=4), _proibido(2, 6, 4))\n'
        'conferir_erro("mascara_causal(-1)", mascara_causal, -1)\n'
        '### BEGIN HIDDEN TESTS\n'
        'conferir("mascara_causal(1) (T = 1)", mascara_causal(1), torch.tensor([[False]]))\n'
        'conferir("mascara_causal(1, start=7) (um passo de geração)", mascara_causal(1, start=7), torch.zeros(1, 8, dtype=torch.bool))\n'
        'for n, m, start in ((5, 5, 0), (3, 8, 5), (2, 6, 1), (7, 3, 0), (6, 17, 11)):\n'
        '    caso = f"mascara_causal({n}, {m}, start={start})"\n'
        '    conferir(caso, _chamar(caso, mascara_causal, n, m, start), _proibido(n, m, start))\n'
        'conferir("mascara_causal(3, start=2) com m omitido", mascara_causal(3, start=2), _proibido(3, 5, 2))\n'
        'for args in ((2.5,), (3, 3, -1), (3, -2)):\n'
        '    conferir_erro(f"mascara_causal{args}", mascara_causal, *args)\n'
        '### END HIDDEN TESTS',
        grade_id="test_mascara_causal",
        points=2,
    )

    # ------------------------------------------------------------------ tarefa 2
    nb.md(
        "## Tarefa 2 — aplicar a máscara (2 pontos)\n\n"
        "Escreva `aplicar_mascara(s, mascara)`: `s` tem forma `(..., n, m)` (lote e "
        "cabeças na frente), `mascara` tem forma `(n, m)` e vale para todas as "
        "matrizes do lote. Devolva um tensor **novo**, do mesmo tipo de `s`, com "
        "`-inf` onde a máscara é `True` e `s` no resto (sem alterar `s`). Se as duas "
        "últimas dimensões de `s` não forem as da máscara, levante `ValueError`.\n\n"
        "Por que `-inf`? Porque $e^{-\\infty} = 0$ exatamente: a chave proibida recebe "
        "peso zero, não \"quase zero\"."
    )
    nb.solution(
        'def aplicar_mascara(s, mascara):\n'
        '    """Cópia de s (..., n, m) com -inf onde mascara (n, m) é True."""\n'
        '    ### BEGIN SOLUTION\n'
        '    if tuple(s.shape[-2:]) != tuple(mascara.shape):\n'
        '        raise ValueError(f"a máscara {tuple(mascara.shape)} não combina com as pontuações {tuple(s.shape)} (esperava (..., n, m) e (n, m))")\n'
        '    return s.masked_fill(mascara, float("-inf"))\n'
        '    ### END SOLUTION',
        grade_id="aplicar_mascara",
    )
    nb.tests(
        '"""aplicar_mascara: -inf onde proibido, o resto intacto, s não alterado."""\n'
        's = torch.arange(9.0).reshape(3, 3)\n'
        'conferir("aplicar_mascara(s, mascara_causal(3))", aplicar_mascara(s, _proibido(3, 3)),\n'
        '         torch.tensor([[0.0, -inf, -inf], [3.0, 4.0, -inf], [6.0, 7.0, 8.0]]))\n'
        'assert torch.equal(s, torch.arange(9.0).reshape(3, 3)), "aplicar_mascara: o tensor s foi alterado; devolva um tensor novo."\n'
        '### BEGIN HIDDEN TESTS\n'
        's = torch.randn(2, 3, 5, 7, dtype=torch.float64)\n'
        'M = _proibido(5, 7, 2)\n'
        'caso = "aplicar_mascara com lote e cabeças (2, 3, 5, 7)"\n'
        'conferir(caso, _chamar(caso, aplicar_mascara, s, M), s.masked_fill(M, -inf))\n'
        'h = (torch.randn(4, 4) * 1000).half()\n'
        'r = aplicar_mascara(h, _proibido(4, 4))\n'
        '_tipo("aplicar_mascara(float16)", r, torch.float16)\n'
        'conferir("aplicar_mascara(float16)", r, h.masked_fill(_proibido(4, 4), -inf))\n'
        'tudo = torch.ones(3, 4, dtype=torch.bool)\n'
        'tudo[1, 0] = False\n'
        'conferir("linhas totalmente mascaradas viram -inf", aplicar_mascara(torch.zeros(3, 4), tudo), torch.zeros(3, 4).masked_fill(tudo, -inf))\n'
        'conferir_erro("aplicar_mascara com máscara (3, 3) e s (2, 4, 4)", aplicar_mascara, torch.zeros(2, 4, 4), _proibido(3, 3))\n'
        '### END HIDDEN TESTS',
        grade_id="test_aplicar_mascara",
        points=2,
    )

    # ------------------------------------------------------------------ tarefa 3
    nb.md(
        "## Tarefa 3 — os pesos causais (2 pontos)\n\n"
        "Escreva `pesos_causais(s, start=0)`: dadas pontuações já escaladas `s` "
        "`(..., n, m)`, aplique a máscara causal (com `start`) e a softmax na última "
        "dimensão (`torch.softmax`). O resultado é triangular inferior: zeros exatos "
        "acima da diagonal (deslocada por `start`) e cada linha somando 1."
    )
    nb.solution(
        'def pesos_causais(s, start=0):\n'
        '    """softmax(máscara causal(s)) na última dimensão; s (..., n, m) -> (..., n, m)."""\n'
        '    ### BEGIN SOLUTION\n'
        '    n, m = s.shape[-2], s.shape[-1]\n'
        '    return torch.softmax(aplicar_mascara(s, mascara_causal(n, m, start)), dim=-1)\n'
        '    ### END SOLUTION',
        grade_id="pesos_causais",
    )
    nb.tests(
        '"""pesos_causais: zeros exatos no futuro, linhas somam 1, igual ao torch com máscara aditiva."""\n'
        's = torch.randn(6, 6, dtype=torch.float64)\n'
        'A = pesos_causais(s)\n'
        '_forma("pesos_causais(s)", A, (6, 6))\n'
        'conferir("pesos no futuro (devem ser 0 exato)", A[_proibido(6, 6)], torch.zeros(15, dtype=torch.float64), atol=0, rtol=0)\n'
        'conferir("soma de cada linha", A.sum(-1), torch.ones(6, dtype=torch.float64), atol=1e-12)\n'
        'aditiva = torch.zeros(6, 6, dtype=torch.float64).masked_fill(_proibido(6, 6), -inf)\n'
        'conferir("pesos_causais(s)", A, torch.softmax(s + aditiva, -1), atol=1e-12)\n'
        '### BEGIN HIDDEN TESTS\n'
        'conferir("pesos_causais com T = 1", pesos_causais(torch.randn(1, 1)), torch.ones(1, 1))\n'
        's = torch.randn(2, 3, 4, 9, dtype=torch.float64)  # 4 consultas novas, cache de 5\n'
        'caso = "pesos_causais com start = 5, forma (2, 3, 4, 9)"\n'
        'conferir(caso, _chamar(caso, pesos_causais, s, start=5),\n'
        '         torch.softmax(s.masked_fill(_proibido(4, 9, 5), -inf), -1), atol=1e-12)\n'
        's = torch.randn(5, 5) * 1e4  # pontuações enormes: o torch.softmax é estável\n'
        'conferir("pesos_causais com pontuações ~1e4", pesos_causais(s), torch.softmax(s.masked_fill(_proibido(5, 5), -inf), -1))\n'
        'h = torch.randn(5, 5).half()\n'
        'r = pesos_causais(h)\n'
        '_tipo("pesos_causais(float16)", r, torch.float16)\n'
        '# float16: erro relativo ~5e-4 por operação, algumas operações por peso\n'
        'conferir("pesos_causais(float16)", r, torch.softmax(h.double().masked_fill(_proibido(5, 5), -inf), -1), atol=2e-3)\n'
        '### END HIDDEN TESTS',
        grade_id="test_pesos_causais",
        points=2,
    )

    # ------------------------------------------------------------------ experimento
    nb.md("## Experimento (sem nota)\n\nO desenho dos pesos causais: um triângulo inferior.")
    nb.code(
        'A = pesos_causais(torch.randn(8, 8, generator=torch.Generator().manual_seed(0)))\n'
        'plt.imshow(A.numpy(), cmap="viridis", vmin=0, vmax=1)\n'
        'plt.colorbar(label="peso")\n'
        'plt.xlabel("chave $j$")\n'
        'plt.ylabel("consulta $i$")\n'
        'plt.title("Pesos causais: zero acima da diagonal")\n'
        'plt.show()',
        grade_id="experimento",
    )

    # ------------------------------------------------------------------ tarefa 4
    nb.md(
        "## Tarefa 4 — um teste que pega vazamentos do futuro (3 pontos)\n\n"
        "Uma função de atenção `f(q, k, v)` (tensores `(T, d)`, `(T, d)`, `(T, dv)`, "
        "devolvendo `(T, dv)`) é causal se a saída na posição $t$ depende só das "
        "posições $0, \\dots, t$. Teste isso por perturbação: para cada $t$, troque "
        "`q`, `k` e `v` nas posições **depois** de $t$ por valores novos (por exemplo "
        "`torch.randn_like`, multiplicado por algo grande), chame `f` de novo e exija "
        "que as saídas nas posições $0, \\dots, t$ sejam **idênticas bit a bit** "
        "(`torch.equal`, não `allclose`: numa atenção causal, os pesos das chaves "
        "futuras são zeros exatos, então nada muda).\n\n"
        "Escreva `respeita_causalidade(f, q, k, v)`, que devolve `True` ou `False` "
        "(um `bool` do Python) e não altera `q`, `k`, `v`."
    )
    nb.solution(
        'def respeita_causalidade(f, q, k, v):\n'
        '    """True se mudar as posições > t nunca muda as saídas 0..t de f(q, k, v)."""\n'
        '    ### BEGIN SOLUTION\n'
        '    saida = f(q, k, v)  # (T, dv)\n'
        '    T = q.shape[-2]\n'
        '    for t in range(T - 1):\n'
        '        q2, k2, v2 = q.clone(), k.clone(), v.clone()\n'
        '        for x in (q2, k2, v2):\n'
        '            x[t + 1:] = 100 * torch.randn_like(x[t + 1:])\n'
        '        if not torch.equal(f(q2, k2, v2)[: t + 1], saida[: t + 1]):\n'
        '            return False\n'
        '    return True\n'
        '    ### END SOLUTION',
        grade_id="respeita_causalidade",
    )
    nb.tests(
        '"""respeita_causalidade: aceita a atenção causal do torch, recusa a não causal."""\n'
        'def causal(q, k, v):\n'
        '    return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n'
        'def sem_mascara(q, k, v):\n'
        '    return F.scaled_dot_product_attention(q, k, v)\n'
        'g = torch.Generator().manual_seed(0)\n'
        'q, k, v = (torch.randn(8, 4, generator=g) for _ in range(3))\n'
        'copias = [x.clone() for x in (q, k, v)]\n'
        'for nome, f, esperado in (("atenção causal", causal, True), ("atenção sem máscara", sem_mascara, False)):\n'
        '    r = respeita_causalidade(f, q, k, v)\n'
        '    if not isinstance(r, bool):\n'
        '        raise AssertionError(f"respeita_causalidade({nome}): esperava True ou False (bool), veio {type(r).__name__}: {r!r}")\n'
        '    assert r is esperado, f"respeita_causalidade({nome}): esperava {esperado}, veio {r}."\n'
        'assert all(torch.equal(a, b) for a, b in zip((q, k, v), copias)), "respeita_causalidade: q, k ou v foram alterados; trabalhe em cópias (.clone())."\n'
        '### BEGIN HIDDEN TESTS\n'
        'def espia_um(q, k, v):  # erro de um: a máscara deixa ver a chave i + 1\n'
        '    T = q.shape[-2]\n'
        '    return F.scaled_dot_product_attention(q, k, v, attn_mask=~_proibido(T, T, 1))\n'
        'def espia_o_fim(q, k, v):  # causal, exceto a primeira consulta, que vê a última chave\n'
        '    T = q.shape[-2]\n'
        '    permitido = ~_proibido(T, T)\n'
        '    permitido[0, -1] = True\n'
        '    return F.scaled_dot_product_attention(q, k, v, attn_mask=permitido)\n'
        'def espia_do_meio(q, k, v):  # causal, exceto a consulta 3, que vê a chave 5\n'
        '    T = q.shape[-2]\n'
        '    permitido = ~_proibido(T, T)\n'
        '    permitido[3, 5] = True\n'
        '    return F.scaled_dot_product_attention(q, k, v, attn_mask=permitido)\n'
        'def usa_consulta_seguinte(q, k, v):  # a saída i usa a consulta i + 1: vazamento pelas consultas\n'
        '    q_seguinte = torch.cat([q[1:], q[-1:]])\n'
        '    return F.scaled_dot_product_attention(q_seguinte, k, v, is_causal=True)\n'
        'def causal_manual(q, k, v):  # causal, escrita à mão, em float64\n'
        '    T = q.shape[-2]\n'
        '    s = (q @ k.T / math.sqrt(q.shape[-1])).masked_fill(_proibido(T, T), -inf)\n'
        '    return torch.softmax(s, -1) @ v\n'
        'q, k, v = (torch.randn(11, 5, dtype=torch.float64, generator=g) for _ in range(3))  # d ímpar\n'
        'for nome, f, esperado in (("máscara com erro de um", espia_um, False), ("primeira consulta vê a última chave", espia_o_fim, False),\n'
        '                          ("consulta 3 vê a chave 5", espia_do_meio, False), ("saída i usa a consulta i + 1", usa_consulta_seguinte, False),\n'
        '                          ("atenção causal escrita à mão", causal_manual, True), ("atenção causal do torch", causal, True)):\n'
        '    r = respeita_causalidade(f, q, k, v)\n'
        '    assert r is esperado, f"respeita_causalidade({nome}): esperava {esperado}, veio {r!r}."\n'
        'um = [torch.randn(1, 3, generator=g) for _ in range(3)]\n'
        'assert respeita_causalidade(causal, *um) is True, "respeita_causalidade com T = 1: esperava True."\n'
        '### END HIDDEN TESTS',
        grade_id="test_respeita_causalidade",
        points=3,
    )

    # ------------------------------------------------------------------ escrita
    nb.written(
        "## Tarefa 5 — `-inf` ou `-1e9`? (2 pontos, correção manual)\n\n"
        "Muitos códigos preenchem as posições proibidas com `-1e9` em vez de `-inf`. "
        "Explique (a) o que acontece com `-1e9` quando as pontuações estão em "
        "`float16` (experimente `torch.zeros(2, dtype=torch.float16).masked_fill(...)`) "
        "e (b) o que acontece numa linha em que **todas** as posições estão "
        "proibidas, com `-inf` e com `-1e9`. Qual dos dois comportamentos você "
        "prefere numa linha toda mascarada, e por quê?",
        "(a) O maior float16 finito é 65504: -1e9 não cabe. `masked_fill` com -1e9 num "
        "tensor float16 dá erro (\"value cannot be converted to type Half without "
        "overflow\") e, convertido à força, vira -inf de qualquer jeito. Por isso "
        "código que usa -1e9 costuma trocar para `torch.finfo(dtype).min` ou para -inf. "
        "(b) Com -inf, o máximo da linha toda mascarada é -inf, a subtração "
        "$-\\infty - (-\\infty)$ dá NaN e a softmax inteira dá NaN (é o que o `torch.softmax` faz); com -1e9, "
        "todas as pontuações ficam iguais e a softmax dá pesos uniformes $1/m$: a "
        "consulta passa a olhar para posições que deviam ser invisíveis, sem nenhum "
        "aviso. Prefiro o NaN: não existe distribuição sobre um conjunto vazio, e o NaN "
        "torna o erro visível (quem precisa de linhas vazias, como em preenchimento, "
        "deve tratá-las explicitamente, zerando a saída).",
        grade_id="menos_infinito",
        points=2,
    )
    nb.entrega()
    return nb


# Resposta plausível e errada (usada nos testes do pipeline): `>=` proíbe também
# a diagonal, e a consulta i deixa de ver a própria chave.
ERRADO = {
    "mascara_causal": (
        "def mascara_causal(n, m=None, start=0):\n"
        "    m = start + n if m is None else m\n"
        "    return torch.arange(m)[None, :] >= start + torch.arange(n)[:, None]\n"
    ),
}
