"""Exercício do capítulo 10 — softmax online e atenção em blocos.

Tarefas (pontos): estatísticas online (m, l) por blocos (2), softmax online (2),
junção de dois estados parciais (3), atenção em blocos sem a matriz T x T (3),
pergunta escrita sobre a reescala (2). Oráculos: torch.softmax,
torch.logsumexp, F.scaled_dot_product_attention e o estado calculado de uma
vez sobre a união das chaves; nada do pacote atencao.
"""

from autograder.fontes._parte2 import IMPORTS
from autograder.nbbuild import Notebook

SLUG = "10-softmax-online"


def build() -> Notebook:
    nb = Notebook(SLUG, "Capítulo 10 — Softmax online e atenção em blocos")
    nb.md(
        "A softmax de uma linha precisa do máximo e da soma de **todas** as exponenciais antes de "
        "escrever o primeiro peso. A softmax online (Milakov e Gimelshein, 2018) calcula as duas coisas "
        "numa única passada, bloco a bloco, guardando um estado pequeno: o máximo corrente $m$, a "
        "soma corrente $\\ell = \\sum_j e^{x_j - m}$ e, na atenção, a saída ainda não normalizada "
        "$\\text{acc} = \\sum_j e^{s_j - m} v_j$.\n\n"
        "**Como trabalhar.** Complete as células marcadas com `# SEU CÓDIGO AQUI` (apague a linha "
        "`raise NotImplementedError`) e rode a célula de testes logo abaixo. Se algo estiver errado, "
        "a mensagem diz o que se esperava e o que veio. Na correção rodam também testes ocultos "
        "(formas tortas, T = 1, blocos que não dividem T, float16, valores enormes, -inf).\n\n"
        "**Regras.** Use só `torch` (e `math`). Dentro das suas funções, nada de "
        "`torch.softmax`, `F.softmax`, `torch.logsumexp` nem `F.scaled_dot_product_attention`: "
        "os testes ocultos conferem. Não importe o pacote `atencao` do livro.",
        grade_id="instrucoes",
    )
    nb.setup(IMPORTS)

    # ---------------------------------------------------------------- tarefa 1
    nb.md(
        "## Tarefa 1 — máximo e soma numa passada só (2 pontos)\n\n"
        "Implemente `online_stats(x, block)`: percorra a última dimensão de `x` (forma `(..., n)`) em "
        "blocos de `block` colunas, **uma vez**, mantendo para cada linha\n\n"
        "$$m \\leftarrow \\max(m, \\max_{j \\in \\text{bloco}} x_j), \\qquad "
        "\\ell \\leftarrow \\ell\\, e^{m_{\\text{antigo}} - m} + \\sum_{j \\in \\text{bloco}} e^{x_j - m}.$$\n\n"
        "Devolva `(m, l)`, cada um com forma `(...)`. No fim, $m$ é o máximo da linha e "
        "$\\ell = \\sum_j e^{x_j - m}$.\n\n"
        "Cuidado com `-inf` (posições mascaradas): um bloco inteiro de `-inf` no começo da linha deixa "
        "$m = -\\infty$, e $e^{-\\infty - (-\\infty)}$ é `nan`. Nesse caso o fator certo é 0 "
        "(ainda não havia massa nenhuma). `torch.where` resolve.",
        grade_id="tarefa1_enunciado",
    )
    nb.solution(
        "def online_stats(x, block):\n"
        "    \"\"\"(m, l) de cada linha de x, numa única passada por blocos de colunas.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    m = torch.full(x.shape[:-1], -inf, dtype=x.dtype)\n"
        "    l = torch.zeros(x.shape[:-1], dtype=x.dtype)\n"
        "    for j0 in range(0, x.shape[-1], block):\n"
        "        xb = x[..., j0:j0 + block]                       # (..., bk)\n"
        "        m_new = torch.maximum(m, xb.amax(dim=-1))        # (...,)\n"
        "        alpha = torch.where(m == -inf, torch.zeros_like(m), torch.exp(m - m_new))\n"
        "        p = torch.where(xb == -inf, torch.zeros_like(xb), torch.exp(xb - m_new[..., None]))\n"
        "        l = l * alpha + p.sum(dim=-1)\n"
        "        m = m_new\n"
        "    return m, l\n"
        "    ### END SOLUTION",
        grade_id="online_stats",
    )
    nb.tests(
        "\"\"\"online_stats devolve o máximo e a soma das exponenciais deslocadas.\"\"\"\n"
        "x = torch.tensor([1.0, 3.0, 2.0, 5.0, 4.0], dtype=torch.float64)\n"
        "m, l = _tupla(\"online_stats(x, 2)\", online_stats(x, 2), 2)\n"
        "conferir(\"m de online_stats([1, 3, 2, 5, 4], 2)\", m, torch.tensor(5.0, dtype=torch.float64))\n"
        "conferir(\"l de online_stats([1, 3, 2, 5, 4], 2)\", l, torch.exp(x - 5).sum())\n"
        "xr = torch.randn(3, 10) * 4\n"
        "m, l = _tupla(\"online_stats(x (3, 10), 4)\", online_stats(xr, 4), 2)\n"
        "conferir(\"m com x (3, 10) e block=4\", m, xr.amax(-1))\n"
        "conferir(\"l com x (3, 10) e block=4\", l, torch.exp(xr - xr.amax(-1, keepdim=True)).sum(-1), rtol=1e-5)\n"
        "print(\"Tarefa 1: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(91)\n"
        "for _shape, _b in [((1,), 1), ((7,), 3), ((2, 3, 17), 5), ((4, 33), 100), ((2, 64), 64)]:\n"
        "    _x = torch.randn(*_shape, generator=_g, dtype=torch.float64) * 10\n"
        "    _m, _l = _tupla(f\"online_stats com forma {_shape} e block={_b}\", _chamar(f\"online_stats com forma {_shape}, block={_b}\", online_stats, _x, _b), 2)\n"
        "    conferir(f\"m com forma {_shape}, block={_b}\", _m, _x.amax(-1), atol=0, rtol=0)\n"
        "    conferir(f\"l com forma {_shape}, block={_b}\", _l, torch.exp(_x - _x.amax(-1, keepdim=True)).sum(-1), atol=1e-12, rtol=1e-12)\n"
        "# valores enormes: exp(1000) estoura, mas exp(x - m) não\n"
        "_x = torch.tensor([[1000.0, 999.0, 1001.0, 998.0]])\n"
        "_m, _l = online_stats(_x, 2)\n"
        "conferir(\"l com valores perto de 1000 (sem estouro)\", _l, torch.exp(_x - 1001.0).sum(-1), rtol=1e-6)\n"
        "# -inf: primeiro bloco todo mascarado, e um bloco mascarado no meio\n"
        "_x = torch.tensor([[-inf, -inf, 1.0, 2.0, -inf, -inf, 0.5]], dtype=torch.float64)\n"
        "_m, _l = online_stats(_x, 2)\n"
        "conferir(\"m com blocos inteiros de -inf\", _m, torch.tensor([2.0], dtype=torch.float64))\n"
        "conferir(\"l com blocos inteiros de -inf (nada de nan)\", _l, torch.exp(_x - 2.0).sum(-1), atol=1e-12)\n"
        "with _sem_atalhos():\n"
        "    _chamar(\"online_stats sem torch.softmax/torch.logsumexp\", online_stats, torch.randn(3, 9), 4)\n"
        "with _SoBlocos(\"online_stats com x (3, 20) e block=4\", 20, 4):\n"
        "    _chamar(\"online_stats em blocos\", online_stats, torch.randn(3, 20), 4)\n"
        "### END HIDDEN TESTS",
        grade_id="test_online_stats",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 2
    nb.md(
        "## Tarefa 2 — a softmax online (2 pontos)\n\n"
        "Com `(m, l)` da tarefa 1, a softmax é $e^{x_j - m} / \\ell$. Implemente "
        "`online_softmax(x, block)` usando `online_stats` (uma passada para as estatísticas, "
        "outra para escrever os pesos). A saída tem a forma e o `dtype` de `x`.",
        grade_id="tarefa2_enunciado",
    )
    nb.solution(
        "def online_softmax(x, block):\n"
        "    \"\"\"Softmax da última dimensão usando as estatísticas online.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    m, l = online_stats(x, block)\n"
        "    return torch.exp(x - m[..., None]) / l[..., None]\n"
        "    ### END SOLUTION",
        grade_id="online_softmax",
    )
    nb.tests(
        "\"\"\"online_softmax coincide com torch.softmax.\"\"\"\n"
        "x = torch.randn(4, 23) * 3\n"
        "conferir(\"online_softmax(x (4, 23), block=8)\", _tensor(\"online_softmax\", online_softmax(x, 8)), torch.softmax(x, -1))\n"
        "print(\"Tarefa 2: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(92)\n"
        "for _shape, _b in [((1, 1), 1), ((2, 5, 31), 4), ((3, 7), 50)]:\n"
        "    _x = torch.randn(*_shape, generator=_g, dtype=torch.float64) * 5\n"
        "    conferir(f\"online_softmax com forma {_shape}, block={_b}\", _chamar(\"online_softmax\", online_softmax, _x, _b), torch.softmax(_x, -1), atol=1e-14, rtol=1e-12)\n"
        "# float16: exp(12) já estoura em float16 sem a subtração do máximo\n"
        "_x = (torch.randn(3, 40, generator=_g) * 8).half()\n"
        "_y = _chamar(\"online_softmax em float16\", online_softmax, _x, 16)\n"
        "_tipo(\"online_softmax em float16\", _y, torch.float16)\n"
        "conferir(\"online_softmax em float16\", _y.float(), torch.softmax(_x.float(), -1), atol=2e-3, rtol=1e-2)  # float16: ~3 dígitos\n"
        "with _sem_atalhos():\n"
        "    _chamar(\"online_softmax sem torch.softmax\", online_softmax, torch.randn(2, 9), 4)\n"
        "with _SoBlocos(\"online_softmax com x (3, 20) e block=4\", 20, 4):\n"
        "    _chamar(\"online_softmax em blocos\", online_softmax, torch.randn(3, 20), 4)\n"
        "### END HIDDEN TESTS",
        grade_id="test_online_softmax",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 3
    nb.md(
        "## Tarefa 3 — juntar dois estados parciais (3 pontos)\n\n"
        "Um estado parcial é a tripla `(m, l, acc)` calculada sobre um subconjunto das chaves: "
        "`m` e `l` com forma `(..., n)` e `acc` com forma `(..., n, dv)`. Dois estados de conjuntos "
        "**disjuntos** de chaves se juntam assim:\n\n"
        "$$m = \\max(m_a, m_b),\\quad \\ell = \\ell_a e^{m_a - m} + \\ell_b e^{m_b - m},\\quad "
        "\\text{acc} = \\text{acc}_a e^{m_a - m} + \\text{acc}_b e^{m_b - m}.$$\n\n"
        "Implemente `merge(a, b)` devolvendo a tripla `(m, l, acc)` do conjunto unido. Um estado "
        "**vazio** (nenhuma chave ainda) é `m = -inf`, `l = 0`, `acc = 0`: juntá-lo com outro deve "
        "devolver o outro, sem `nan` — nem quando os dois estão vazios.",
        grade_id="tarefa3_enunciado",
    )
    nb.solution(
        "def merge(a, b):\n"
        "    \"\"\"Junta dois estados (m, l, acc) calculados sobre chaves disjuntas.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    m_a, l_a, acc_a = a\n"
        "    m_b, l_b, acc_b = b\n"
        "    m = torch.maximum(m_a, m_b)\n"
        "    f_a = torch.where(m_a == -inf, torch.zeros_like(m), torch.exp(m_a - m))\n"
        "    f_b = torch.where(m_b == -inf, torch.zeros_like(m), torch.exp(m_b - m))\n"
        "    return m, l_a * f_a + l_b * f_b, acc_a * f_a[..., None] + acc_b * f_b[..., None]\n"
        "    ### END SOLUTION",
        grade_id="merge",
    )
    nb.code(
        "def state_of(s, v):\n"
        "    \"\"\"Estado (m, l, acc) calculado de uma vez: s (..., n, bk) pontuações, v (..., bk, dv).\"\"\"\n"
        "    m = s.amax(dim=-1)                      # (..., n)\n"
        "    p = torch.exp(s - m[..., None])         # (..., n, bk)\n"
        "    return m, p.sum(dim=-1), p @ v          # (..., n), (..., n), (..., n, dv)",
        grade_id="estado_direto",
    )
    nb.tests(
        "\"\"\"merge de duas metades dá o estado das chaves todas.\"\"\"\n"
        "s, v = torch.randn(5, 12, dtype=torch.float64) * 3, torch.randn(12, 4, dtype=torch.float64)\n"
        "got = _tupla(\"merge(a, b)\", merge(state_of(s[:, :7], v[:7]), state_of(s[:, 7:], v[7:])), 3)\n"
        "for nome, g, w in zip((\"m\", \"l\", \"acc\"), got, state_of(s, v)):\n"
        "    conferir(f\"{nome} de merge(primeiras 7 chaves, últimas 5)\", g, w, atol=1e-12)\n"
        "conferir(\"acc / l depois do merge (a saída da atenção)\", got[2] / got[1][:, None], torch.softmax(s, -1) @ v, atol=1e-12)\n"
        "print(\"Tarefa 3: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(93)\n"
        "_s, _v = torch.randn(2, 3, 6, 20, generator=_g, dtype=torch.float64) * 4, torch.randn(2, 3, 20, 5, generator=_g, dtype=torch.float64)\n"
        "_A, _B, _C = state_of(_s[..., :4], _v[..., :4, :]), state_of(_s[..., 4:13], _v[..., 4:13, :]), state_of(_s[..., 13:], _v[..., 13:, :])\n"
        "_todo = state_of(_s, _v)\n"
        "for _nome, _r in [(\"merge(merge(a, b), c)\", lambda: merge(merge(_A, _B), _C)), (\"merge(a, merge(b, c))\", lambda: merge(_A, merge(_B, _C))),\n"
        "                  (\"merge(c, merge(b, a))\", lambda: merge(_C, merge(_B, _A)))]:\n"
        "    _got = _tupla(_nome, _chamar(_nome, _r), 3)\n"
        "    for _n, _x, _w in zip((\"m\", \"l\", \"acc\"), _got, _todo):\n"
        "        conferir(f\"{_n} de {_nome} com forma de lote (2, 3)\", _x, _w, atol=1e-12)\n"
        "_vazio = (torch.full((6,), -inf, dtype=torch.float64), torch.zeros(6, dtype=torch.float64), torch.zeros(6, 5, dtype=torch.float64))\n"
        "_a = state_of(_s[0, 0], _v[0, 0])\n"
        "for _nome, _par in [(\"merge(a, vazio)\", (_a, _vazio)), (\"merge(vazio, a)\", (_vazio, _a))]:\n"
        "    for _n, _x, _w in zip((\"m\", \"l\", \"acc\"), _chamar(_nome, merge, *_par), _a):\n"
        "        conferir(f\"{_n} de {_nome}\", _x, _w, atol=0, rtol=0)\n"
        "_vv = _chamar(\"merge(vazio, vazio)\", merge, _vazio, _vazio)\n"
        "conferir(\"l de merge(vazio, vazio) (deve ser 0, não nan)\", _vv[1], _vazio[1])\n"
        "conferir(\"acc de merge(vazio, vazio) (deve ser 0, não nan)\", _vv[2], _vazio[2])\n"
        "### END HIDDEN TESTS",
        grade_id="test_merge",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 4
    nb.md(
        "## Tarefa 4 — atenção em blocos, sem a matriz $T \\times T$ (3 pontos)\n\n"
        "Implemente `blocked_attention(q, k, v, block)` **sem máscara causal**: `q` com forma "
        "`(..., n, d)`, `k` com `(..., m, d)`, `v` com `(..., m, dv)`, saída `(..., n, dv)` igual a "
        "$\\mathrm{softmax}(q k^\\top / \\sqrt{d})\\, v$.\n\n"
        "Comece com o estado vazio e, para cada bloco de `block` chaves, calcule as pontuações "
        "`(..., n, bk)` desse bloco, o estado do bloco (`state_of` serve) e junte com `merge`. "
        "No fim, divida `acc` por `l`. (Se o seu `merge` ainda errar, os testes desta tarefa aceitam "
        "também o resultado que ele daria: um erro da tarefa 3 não custa duas vezes.) Assim a maior matriz que existe tem `n x block` elementos, "
        "nunca `n x m` (um teste oculto confere com T = 256 e block = 32).",
        grade_id="tarefa4_enunciado",
    )
    nb.solution(
        "def blocked_attention(q, k, v, block):\n"
        "    \"\"\"softmax(q kᵀ / sqrt(d)) v, percorrendo as chaves em blocos.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    scale = 1.0 / math.sqrt(q.shape[-1])\n"
        "    lead, n = q.shape[:-2], q.shape[-2]\n"
        "    state = (torch.full((*lead, n), -inf, dtype=q.dtype), torch.zeros((*lead, n), dtype=q.dtype),\n"
        "             torch.zeros((*lead, n, v.shape[-1]), dtype=q.dtype))\n"
        "    for j0 in range(0, k.shape[-2], block):\n"
        "        s = (q @ k[..., j0:j0 + block, :].transpose(-2, -1)) * scale   # (..., n, bk)\n"
        "        state = merge(state, state_of(s, v[..., j0:j0 + block, :]))\n"
        "    m, l, acc = state\n"
        "    return acc / l[..., None]\n"
        "    ### END SOLUTION",
        grade_id="blocked_attention",
    )
    nb.tests(
        "\"\"\"blocked_attention coincide com F.scaled_dot_product_attention (sem máscara).\"\"\"\n"
        "def _com_o_seu_merge(q, k, v, block):\n"
        "    \"\"\"A atenção em blocos montada aqui com o SEU merge (tarefa 3) e state_of.\"\"\"\n"
        "    lead, n = q.shape[:-2], q.shape[-2]\n"
        "    est = (torch.full((*lead, n), -inf, dtype=q.dtype), torch.zeros((*lead, n), dtype=q.dtype),\n"
        "           torch.zeros((*lead, n, v.shape[-1]), dtype=q.dtype))\n"
        "    for j0 in range(0, k.shape[-2], block):\n"
        "        s = (q @ k[..., j0:j0 + block, :].transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (..., n, bk)\n"
        "        est = merge(est, state_of(s, v[..., j0:j0 + block, :]))\n"
        "    return est[2] / est[1][..., None]\n"
        "\n"
        "\n"
        "def _conferir_blocos(nome, out, q, k, v, block, atol, rtol=1e-5):\n"
        "    \"\"\"Confere com o SDPA; se o SEU merge (tarefa 3) erra nesta entrada, aceita também a\n"
        "    atenção montada com ele: um erro da tarefa 3 não tira pontos de novo aqui.\"\"\"\n"
        "    certo = F.scaled_dot_product_attention(q, k, v)\n"
        "    try:\n"
        "        conferir(nome, out, certo, atol=atol, rtol=rtol)\n"
        "    except AssertionError:\n"
        "        try:\n"
        "            seu = _com_o_seu_merge(q, k, v, block)\n"
        "            merge_certo = torch.allclose(seu, certo, atol=atol, rtol=rtol)\n"
        "        except Exception:  # noqa: BLE001 - o merge da tarefa 3 nem roda\n"
        "            merge_certo = True\n"
        "        if merge_certo:\n"
        "            raise\n"
        "        conferir(f\"{nome}, com o seu merge da tarefa 3\", out, seu, atol=atol, rtol=rtol)\n"
        "        print(f\"{nome}: confere com o seu merge, que ainda erra (veja a tarefa 3).\")\n"
        "\n"
        "\n"
        "q, k, v = torch.randn(2, 3, 50, 16), torch.randn(2, 3, 50, 16), torch.randn(2, 3, 50, 16)\n"
        "out = _tensor(\"blocked_attention\", blocked_attention(q, k, v, 16))\n"
        "_conferir_blocos(\"blocked_attention com (2, 3, 50, 16) e block=16\", out, q, k, v, 16, atol=1e-5)\n"
        "print(\"Tarefa 4: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(94)\n"
        "for _lead, _n, _m, _d, _dv, _b in [((), 1, 1, 1, 1, 4), ((1,), 7, 40, 5, 3, 6), ((2, 2), 33, 33, 8, 12, 10), ((3,), 20, 9, 4, 4, 64)]:\n"
        "    _q = torch.randn(*_lead, _n, _d, generator=_g, dtype=torch.float64)\n"
        "    _k = torch.randn(*_lead, _m, _d, generator=_g, dtype=torch.float64)\n"
        "    _v = torch.randn(*_lead, _m, _dv, generator=_g, dtype=torch.float64)\n"
        "    _caso = f\"blocked_attention com q{tuple(_q.shape)}, k{tuple(_k.shape)}, v{tuple(_v.shape)}, block={_b}\"\n"
        "    with _sem_atalhos():\n"
        "        _out = _chamar(_caso, blocked_attention, _q, _k, _v, _b)\n"
        "    _conferir_blocos(_caso, _out, _q, _k, _v, _b, atol=1e-12, rtol=1e-10)\n"
        "_q, _k, _v = (torch.randn(1, 256, 16, generator=_g) for _ in range(3))\n"
        "with _SoBlocos(\"blocked_attention com T=256, block=32\", 256, 32):\n"
        "    _out = _sem_matriz_TxT(\"blocked_attention com T=256, block=32\", 256, blocked_attention, _q, _k, _v, 32)\n"
        "_conferir_blocos(\"blocked_attention com T=256, block=32\", _out, _q, _k, _v, 32, atol=1e-5)\n"
        "### END HIDDEN TESTS",
        grade_id="test_blocked_attention",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 5
    nb.written(
        "## Tarefa 5 — pergunta aberta (2 pontos)\n\n"
        "Na tarefa 1, quando um bloco traz um máximo maior que o corrente, $\\ell$ é multiplicado por "
        "$e^{m_{\\text{antigo}} - m_{\\text{novo}}}$ antes de somar o bloco. Explique por que esse fator "
        "é necessário e o que daria errado (com números, se quiser) se você só somasse "
        "$\\sum e^{x_j - m_{\\text{novo}}}$ ao $\\ell$ antigo. Por que não basta, em vez disso, "
        "guardar $\\sum_j e^{x_j}$ sem subtrair máximo nenhum?",
        "Os termos já somados em $\\ell$ foram escritos como $e^{x_j - m_{\\text{antigo}}}$; para somá-los "
        "aos novos, todos precisam estar na mesma referência $m_{\\text{novo}}$, e "
        "$e^{x_j - m_{\\text{antigo}}} e^{m_{\\text{antigo}} - m_{\\text{novo}}} = e^{x_j - m_{\\text{novo}}}$. "
        "Sem o fator, os termos antigos ficariam grandes demais em $e^{m_{\\text{novo}} - m_{\\text{antigo}}}$ "
        "(ex.: $x = [0, 10]$ em blocos de 1: $\\ell$ sairia $e^{0} + e^{0} = 2$ em vez de $e^{-10} + 1$) e "
        "a softmax ficaria errada. Guardar $\\sum e^{x_j}$ sem subtrair o máximo estoura: $e^{89}$ já é "
        "infinito em float32 e $e^{12}$ em float16; a subtração mantém todo expoente $\\le 0$.",
        grade_id="resposta_reescala",
        points=2,
    )
    nb.entrega()
    return nb


# Respostas plausíveis e erradas (usadas nos testes): esquecer de reescalar
# do estado antigo quando o máximo muda.
ERRADO = {
    "merge": (
        "def merge(a, b):\n"
        "    m = torch.maximum(a[0], b[0])\n"
        "    return m, a[1] + b[1], a[2] + b[2]\n"
    ),
}
