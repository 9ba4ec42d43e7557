"""Exercício do capítulo 11 — FlashAttention: passo de ida com log-sum-exp,
blocos causais pulados e o passo de volta por recálculo.

Tarefas (pontos): passo de ida em blocos com lse, na ordem do FlashAttention-2
(4), contagem dos blocos calculados e pulados (2), o passo de volta de um par
de blocos (3), o passo de volta completo (3), pergunta escrita sobre guardar o
lse em vez de P (2). Oráculos: F.scaled_dot_product_attention, torch.logsumexp,
o autograd do torch sobre a atenção ingênua e a contagem por força bruta sobre
a máscara; nada do pacote atencao.
"""

from autograder.fontes._parte2 import IMPORTS
from autograder.nbbuild import Notebook

SLUG = "11-flashattention"


def build() -> Notebook:
    nb = Notebook(SLUG, "Capítulo 11 — FlashAttention")
    nb.md(
        "Você vai escrever, em PyTorch, o algoritmo do FlashAttention-2 (Dao, 2023): o passo de ida "
        "em blocos, que devolve a saída e o log-sum-exp (lse) de cada linha, pula os blocos que a "
        "máscara causal apaga inteiros e nunca forma a matriz $T \\times T$; e o passo de volta, que "
        "recalcula as pontuações bloco a bloco a partir de q, k, v, da saída e do lse.\n\n"
        "Notação: $S = q k^\\top / \\sqrt{d}$, $P = \\mathrm{softmax}(S)$ (com a máscara), "
        "$O = P V$, $\\mathrm{lse}_i = \\log \\sum_j e^{S_{ij}}$, de modo que $P_{ij} = e^{S_{ij} - \\mathrm{lse}_i}$.\n\n"
        "**Como trabalhar.** Complete as células marcadas com `# SEU CÓDIGO AQUI` (apague a linha "
        "`raise NotImplementedError`) e rode a célula de testes logo abaixo. Na correção rodam "
        "também testes ocultos (T = 1, T que o bloco não divide, float16, float64, com e sem máscara).\n\n"
        "**Regras.** Use só `torch` (e `math`). Dentro das suas funções, nada de "
        "`F.scaled_dot_product_attention`, `torch.softmax` nem `torch.logsumexp`, e nada de "
        "`backward`/`torch.autograd`: os gradientes são contas suas. Não importe o pacote `atencao`.",
        grade_id="instrucoes",
    )
    nb.setup(IMPORTS)

    # ---------------------------------------------------------------- tarefa 1
    nb.md(
        "## Tarefa 1 — passo de ida em blocos, com lse (4 pontos)\n\n"
        "Implemente `flash_forward(q, k, v, causal=True, block=32)` para `q`, `k` com forma "
        "`(..., T, d)` e `v` com `(..., T, dv)`. Devolva `(out, lse)`: `out` com forma `(..., T, dv)` e o "
        "`dtype` de `q`; `lse` com forma `(..., T)`.\n\n"
        "* Laço **externo** sobre blocos de `block` consultas; para cada um, estado "
        "$m = -\\infty$, $\\ell = 0$, $\\text{acc} = 0$.\n"
        "* Laço **interno** sobre blocos de `block` chaves: pontuações do bloco, máscara (só nos "
        "blocos que a diagonal corta), atualização online de $(m, \\ell, \\text{acc})$.\n"
        "* Com `causal=True`, a consulta $i$ vê as chaves $j \\le i$: os blocos de chaves que começam "
        "depois da última consulta do bloco ficam de fora do laço (nem são visitados).\n"
        "* No fim do bloco de consultas: $O = \\text{acc} / \\ell$ e $\\mathrm{lse} = m + \\log \\ell$.\n\n"
        "Entradas em float16: faça as contas em float32 e devolva `out` em float16.",
        grade_id="tarefa1_enunciado",
    )
    nb.solution(
        "def flash_forward(q, k, v, causal=True, block=32):\n"
        "    \"\"\"Atenção em blocos (ordem do FlashAttention-2): devolve (out, lse).\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    dtype_in = q.dtype\n"
        "    if dtype_in in (torch.float16, torch.bfloat16):\n"
        "        q, k, v = q.float(), k.float(), v.float()\n"
        "    T, d = q.shape[-2], q.shape[-1]\n"
        "    scale = 1.0 / math.sqrt(d)\n"
        "    out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype)   # (..., T, dv)\n"
        "    lse = torch.empty(q.shape[:-1], dtype=q.dtype)                 # (..., T)\n"
        "    for i0 in range(0, T, block):\n"
        "        i1 = min(i0 + block, T)\n"
        "        qi = q[..., i0:i1, :] * scale                               # (..., bq, d)\n"
        "        m = torch.full(qi.shape[:-1], -inf, dtype=q.dtype)         # (..., bq)\n"
        "        l = torch.zeros(qi.shape[:-1], dtype=q.dtype)              # (..., bq)\n"
        "        acc = torch.zeros(*qi.shape[:-1], v.shape[-1], dtype=q.dtype)  # (..., bq, dv)\n"
        "        last = i1 if causal else T   # com máscara, as chaves j >= i1 não interessam\n"
        "        for j0 in range(0, last, block):\n"
        "            j1 = min(j0 + block, T)\n"
        "            s = qi @ k[..., j0:j1, :].transpose(-2, -1)            # (..., bq, bk)\n"
        "            if causal and j1 - 1 > i0:   # a diagonal corta este bloco\n"
        "                futuro = torch.arange(j0, j1)[None, :] > torch.arange(i0, i1)[:, None]\n"
        "                s = s.masked_fill(futuro, -inf)\n"
        "            m_new = torch.maximum(m, s.amax(dim=-1))\n"
        "            p = torch.exp(s - m_new[..., None])\n"
        "            alpha = torch.exp(m - m_new)   # m = -inf só antes do 1º bloco: exp(-inf) = 0\n"
        "            l = l * alpha + p.sum(dim=-1)\n"
        "            acc = acc * alpha[..., None] + p @ v[..., j0:j1, :]\n"
        "            m = m_new\n"
        "        out[..., i0:i1, :] = acc / l[..., None]\n"
        "        lse[..., i0:i1] = m + torch.log(l)\n"
        "    return out.to(dtype_in), lse\n"
        "    ### END SOLUTION",
        grade_id="flash_forward",
    )
    nb.tests(
        "\"\"\"flash_forward coincide com o SDPA do torch e com torch.logsumexp.\"\"\"\n"
        "q, k, v = torch.randn(1, 2, 70, 16), torch.randn(1, 2, 70, 16), torch.randn(1, 2, 70, 16)\n"
        "for causal in (True, False):\n"
        "    res = _tupla(f\"flash_forward(causal={causal})\", flash_forward(q, k, v, causal=causal, block=32), 2)\n"
        "    ref_out, ref_lse = _atencao_ingenua(q, k, v, causal)\n"
        "    conferir(f\"out de flash_forward com T=70, block=32, causal={causal}\", res[0],\n"
        "             F.scaled_dot_product_attention(q, k, v, is_causal=causal), atol=1e-5)\n"
        "    conferir(f\"lse de flash_forward com T=70, block=32, causal={causal}\", res[1], ref_lse, atol=1e-5)\n"
        "print(\"Tarefa 1: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(101)\n"
        "for _lead, _T, _d, _dv, _b in [((), 1, 4, 3, 8), ((2,), 9, 5, 7, 4), ((2, 3), 40, 8, 8, 16), ((1,), 20, 8, 4, 64), ((1, 1), 64, 16, 16, 16)]:\n"
        "    for _causal in (True, False):\n"
        "        _q, _k = torch.randn(*_lead, _T, _d, generator=_g, dtype=torch.float64), torch.randn(*_lead, _T, _d, generator=_g, dtype=torch.float64)\n"
        "        _v = torch.randn(*_lead, _T, _dv, generator=_g, dtype=torch.float64)\n"
        "        _caso = f\"flash_forward com q{tuple(_q.shape)}, v{tuple(_v.shape)}, block={_b}, causal={_causal}\"\n"
        "        with _sem_atalhos():\n"
        "            _res = _tupla(_caso, _chamar(_caso, flash_forward, _q, _k, _v, causal=_causal, block=_b), 2)\n"
        "        _ro, _rl = _atencao_ingenua(_q, _k, _v, _causal)\n"
        "        conferir(\"out de \" + _caso, _res[0], _ro, atol=1e-12, rtol=1e-10)\n"
        "        conferir(\"lse de \" + _caso, _res[1], _rl, atol=1e-12, rtol=1e-10)\n"
        "# float16 na entrada: saída float16, contas em float32\n"
        "_q, _k, _v = (torch.randn(2, 45, 16, generator=_g).half() for _ in range(3))\n"
        "_res = _tupla(\"flash_forward em float16\", _chamar(\"flash_forward em float16\", flash_forward, _q, _k, _v, True, 16), 2)\n"
        "_tipo(\"out de flash_forward em float16\", _res[0], torch.float16)\n"
        "_ro, _rl = _atencao_ingenua(_q.float(), _k.float(), _v.float(), True)\n"
        "conferir(\"out de flash_forward em float16\", _res[0].float(), _ro, atol=3e-3, rtol=3e-3)  # float16: ~3 dígitos\n"
        "conferir(\"lse de flash_forward em float16\", _res[1].float(), _rl, atol=3e-3, rtol=3e-3)\n"
        "# nunca a matriz T x T\n"
        "_q, _k, _v = (torch.randn(1, 256, 16, generator=_g) for _ in range(3))\n"
        "_res = _sem_matriz_TxT(\"flash_forward com T=256, block=32\", 256, flash_forward, _q, _k, _v, True, 32)\n"
        "conferir(\"out de flash_forward com T=256, block=32\", _res[0], F.scaled_dot_product_attention(_q, _k, _v, is_causal=True), atol=1e-5)\n"
        "### END HIDDEN TESTS",
        grade_id="test_flash_forward",
        points=4,
    )

    # ---------------------------------------------------------------- tarefa 2
    nb.md(
        "## Tarefa 2 — quantos blocos a máscara causal poupa (2 pontos)\n\n"
        "Com blocos quadrados de lado `block` e $T$ posições, há $\\lceil T/\\text{block} \\rceil^2$ pares "
        "(bloco de consultas, bloco de chaves). Implemente `causal_blocks(T, block)` devolvendo "
        "`(calculados, pulados)`: quantos pares têm **ao menos uma** posição permitida ($j \\le i$) e "
        "quantos estão inteiros no futuro. Devolva inteiros do Python (`int`).",
        grade_id="tarefa2_enunciado",
    )
    nb.solution(
        "def causal_blocks(T, block):\n"
        "    \"\"\"(pares de blocos calculados, pares pulados) na atenção causal.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    nb = -(-T // block)   # teto de T / block\n"
        "    computed = nb * (nb + 1) // 2   # o triângulo inferior, com a diagonal\n"
        "    return computed, nb * nb - computed\n"
        "    ### END SOLUTION",
        grade_id="causal_blocks",
    )
    nb.code(
        "def blocks_by_brute_force(T, block):\n"
        "    \"\"\"Conta pares de blocos olhando a máscara inteira (só para conferir; custa T²).\"\"\"\n"
        "    allowed = ~(torch.arange(T)[None, :] > torch.arange(T)[:, None])   # (T, T)\n"
        "    computed = skipped = 0\n"
        "    for i0 in range(0, T, block):\n"
        "        for j0 in range(0, T, block):\n"
        "            if allowed[i0:i0 + block, j0:j0 + block].any():\n"
        "                computed += 1\n"
        "            else:\n"
        "                skipped += 1\n"
        "    return computed, skipped",
        grade_id="forca_bruta",
    )
    nb.tests(
        "\"\"\"causal_blocks confere com a contagem por força bruta.\"\"\"\n"
        "res = _tupla(\"causal_blocks(256, 32)\", causal_blocks(256, 32), 2)\n"
        "conferir(\"causal_blocks(256, 32)\", np.array(res), np.array(blocks_by_brute_force(256, 32)))\n"
        "assert all(isinstance(x, int) for x in res), f\"causal_blocks: devolva inteiros do Python, veio {[type(x).__name__ for x in res]}\"\n"
        "print(\"Tarefa 2: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "for _T, _b in [(1, 1), (1, 128), (100, 32), (7, 1), (130, 64), (96, 96)]:\n"
        "    _res = _tupla(f\"causal_blocks({_T}, {_b})\", _chamar(f\"causal_blocks({_T}, {_b})\", causal_blocks, _T, _b), 2)\n"
        "    conferir(f\"causal_blocks({_T}, {_b})\", np.array(_res), np.array(blocks_by_brute_force(_T, _b)))\n"
        "_res = causal_blocks(262_144, 128)   # contexto do modelo grande: 2048 blocos por lado\n"
        "assert tuple(_res) == (2_098_176, 2_096_128), f\"causal_blocks(262144, 128): esperava (2098176, 2096128), veio {_res}\"\n"
        "### END HIDDEN TESTS",
        grade_id="test_causal_blocks",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 3
    nb.md(
        "## Tarefa 3 — o passo de volta de um par de blocos (3 pontos)\n\n"
        "Dado um bloco de consultas $i$ e um bloco de chaves $j$, com o lse das linhas do bloco e "
        "$D_i = \\sum_c dO_{ic} O_{ic}$ (um número por linha), as contribuições desse par para os "
        "gradientes são:\n\n"
        "$$P = e^{q_i k_j^\\top/\\sqrt{d} - \\mathrm{lse}_i} \\text{ (0 onde a máscara proíbe)},\\quad "
        "dV_j \\mathrel{+}= P^\\top dO_i,\\quad dP = dO_i V_j^\\top,$$\n"
        "$$dS = P \\odot (dP - D_i),\\quad dQ_i \\mathrel{+}= dS\\, k_j / \\sqrt{d},\\quad "
        "dK_j \\mathrel{+}= dS^\\top q_i / \\sqrt{d}.$$\n\n"
        "Implemente `block_backward(q_i, k_j, v_j, do_i, lse_i, D_i, mask=None)` devolvendo as "
        "contribuições `(dq_i, dk_j, dv_j)` (formas de `q_i`, `k_j`, `v_j`). `mask`, quando vem, é um "
        "tensor booleano `(bq, bk)` com `True` onde a chave é proibida.",
        grade_id="tarefa3_enunciado",
    )
    nb.solution(
        "def block_backward(q_i, k_j, v_j, do_i, lse_i, D_i, mask=None):\n"
        "    \"\"\"Contribuições (dq_i, dk_j, dv_j) de um par (bloco de consultas, bloco de chaves).\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    scale = 1.0 / math.sqrt(q_i.shape[-1])\n"
        "    s = (q_i @ k_j.transpose(-2, -1)) * scale           # (..., bq, bk)\n"
        "    if mask is not None:\n"
        "        s = s.masked_fill(mask, -inf)\n"
        "    p = torch.exp(s - lse_i[..., None])                 # (..., bq, bk)\n"
        "    dv_j = p.transpose(-2, -1) @ do_i                   # (..., bk, dv)\n"
        "    dp = do_i @ v_j.transpose(-2, -1)                   # (..., bq, bk)\n"
        "    ds = p * (dp - D_i[..., None])                      # (..., bq, bk)\n"
        "    return (ds @ k_j) * scale, (ds.transpose(-2, -1) @ q_i) * scale, dv_j\n"
        "    ### END SOLUTION",
        grade_id="block_backward",
    )
    nb.code(
        "def naive_gradients(q, k, v, dout, causal):\n"
        "    \"\"\"Oráculo: gradientes de (out * dout).sum() pelo autograd do torch sobre a atenção ingênua.\"\"\"\n"
        "    q, k, v = (x.detach().clone().requires_grad_(True) for x in (q, k, v))\n"
        "    out, lse = _atencao_ingenua(q, k, v, causal)\n"
        "    (out * dout).sum().backward()\n"
        "    return out.detach(), lse.detach(), (q.grad, k.grad, v.grad)",
        grade_id="oraculo_gradientes",
    )
    nb.tests(
        "\"\"\"Com um único bloco (a matriz toda), block_backward dá os gradientes do autograd.\"\"\"\n"
        "q, k, v, dout = (torch.randn(2, 12, 8, dtype=torch.float64) for _ in range(4))\n"
        "out, lse, grads = naive_gradients(q, k, v, dout, causal=False)\n"
        "D = (dout * out).sum(-1)\n"
        "res = _tupla(\"block_backward\", block_backward(q, k, v, dout, lse, D), 3)\n"
        "for nome, g, w in zip((\"dq\", \"dk\", \"dv\"), res, grads):\n"
        "    conferir(f\"{nome} de block_backward num bloco só, sem máscara\", g, w, atol=1e-10)\n"
        "print(\"Tarefa 3: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(103)\n"
        "# com a máscara causal num bloco só\n"
        "_q, _k, _v, _do = (torch.randn(3, 10, 6, generator=_g, dtype=torch.float64) for _ in range(4))\n"
        "_out, _lse, _grads = naive_gradients(_q, _k, _v, _do, causal=True)\n"
        "_mask = torch.arange(10)[None, :] > torch.arange(10)[:, None]\n"
        "with _sem_atalhos():\n"
        "    _res = _tupla(\"block_backward com máscara\", _chamar(\"block_backward com máscara\", block_backward, _q, _k, _v, _do, _lse, (_do * _out).sum(-1), _mask), 3)\n"
        "for _n, _x, _w in zip((\"dq\", \"dk\", \"dv\"), _res, _grads):\n"
        "    conferir(f\"{_n} de block_backward num bloco só, com máscara causal\", _x, _w, atol=1e-10)\n"
        "# dois blocos de consultas x dois de chaves (tamanhos 4 e 5): a soma das contribuições\n"
        "_q, _k = torch.randn(2, 9, 3, generator=_g, dtype=torch.float64), torch.randn(2, 9, 3, generator=_g, dtype=torch.float64)\n"
        "_v, _do = torch.randn(2, 9, 5, generator=_g, dtype=torch.float64), torch.randn(2, 9, 5, generator=_g, dtype=torch.float64)\n"
        "_out, _lse, _grads = naive_gradients(_q, _k, _v, _do, causal=False)\n"
        "_D = (_do * _out).sum(-1)\n"
        "_dq, _dk, _dv = torch.zeros_like(_q), torch.zeros_like(_k), torch.zeros_like(_v)\n"
        "for _a, _b in [(0, 4), (4, 9)]:\n"
        "    for _c, _e in [(0, 4), (4, 9)]:\n"
        "        _r = _chamar(\"block_backward em blocos\", block_backward, _q[:, _a:_b], _k[:, _c:_e], _v[:, _c:_e], _do[:, _a:_b], _lse[:, _a:_b], _D[:, _a:_b])\n"
        "        _dq[:, _a:_b] += _r[0]; _dk[:, _c:_e] += _r[1]; _dv[:, _c:_e] += _r[2]\n"
        "for _n, _x, _w in zip((\"dq\", \"dk\", \"dv\"), (_dq, _dk, _dv), _grads):\n"
        "    conferir(f\"{_n}: soma das contribuições de 2 x 2 blocos\", _x, _w, atol=1e-10)\n"
        "### END HIDDEN TESTS",
        grade_id="test_block_backward",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 4
    nb.md(
        "## Tarefa 4 — o passo de volta completo (3 pontos)\n\n"
        "Implemente `flash_backward(q, k, v, out, lse, dout, causal=True, block=32)` devolvendo "
        "`(dq, dk, dv)`, os gradientes de $\\sum O \\odot dO$. Calcule $D = \\mathrm{rowsum}(dO \\odot O)$ "
        "uma vez; depois, como no FlashAttention-2, laço **externo** sobre blocos de chaves $j$ e laço "
        "**interno** sobre os blocos de consultas que enxergam esse bloco (com `causal=True`, só os que "
        "começam em $i_0 \\ge j_0$), somando as contribuições de `block_backward`. "
        "A matriz $T \\times T$ não pode aparecer.",
        grade_id="tarefa4_enunciado",
    )
    nb.solution(
        "def flash_backward(q, k, v, out, lse, dout, causal=True, block=32):\n"
        "    \"\"\"Gradientes (dq, dk, dv) recalculando P bloco a bloco.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    T = q.shape[-2]\n"
        "    D = (dout * out).sum(dim=-1)                        # (..., T)\n"
        "    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)\n"
        "    for j0 in range(0, T, block):\n"
        "        j1 = min(j0 + block, T)\n"
        "        for i0 in range(j0 if causal else 0, T, block):\n"
        "            i1 = min(i0 + block, T)\n"
        "            mask = None\n"
        "            if causal:\n"
        "                mask = torch.arange(j0, j1)[None, :] > torch.arange(i0, i1)[:, None]\n"
        "            dq_i, dk_j, dv_j = block_backward(q[..., i0:i1, :], k[..., j0:j1, :], v[..., j0:j1, :],\n"
        "                                              dout[..., i0:i1, :], lse[..., i0:i1], D[..., i0:i1], mask)\n"
        "            dq[..., i0:i1, :] += dq_i\n"
        "            dk[..., j0:j1, :] += dk_j\n"
        "            dv[..., j0:j1, :] += dv_j\n"
        "    return dq, dk, dv\n"
        "    ### END SOLUTION",
        grade_id="flash_backward",
    )
    nb.tests(
        "\"\"\"flash_backward dá os gradientes do autograd sobre a atenção ingênua.\"\"\"\n"
        "q, k, v, dout = (torch.randn(1, 2, 50, 8, dtype=torch.float64) for _ in range(4))\n"
        "for causal in (True, False):\n"
        "    out, lse, grads = naive_gradients(q, k, v, dout, causal)\n"
        "    res = _tupla(f\"flash_backward(causal={causal})\", flash_backward(q, k, v, out, lse, dout, causal=causal, block=16), 3)\n"
        "    for nome, g, w in zip((\"dq\", \"dk\", \"dv\"), res, grads):\n"
        "        conferir(f\"{nome} de flash_backward com T=50, block=16, causal={causal}\", g, w, atol=1e-10)\n"
        "print(\"Tarefa 4: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(104)\n"
        "for _lead, _T, _d, _dv, _b, _dt, _tol in [((), 1, 3, 2, 8, torch.float64, 1e-10), ((2,), 13, 4, 6, 5, torch.float64, 1e-10),\n"
        "                                        ((2, 2), 33, 8, 8, 8, torch.float32, 1e-4), ((1,), 20, 8, 8, 64, torch.float64, 1e-10)]:\n"
        "    for _causal in (True, False):\n"
        "        _q, _k = torch.randn(*_lead, _T, _d, generator=_g, dtype=_dt), torch.randn(*_lead, _T, _d, generator=_g, dtype=_dt)\n"
        "        _v, _do = torch.randn(*_lead, _T, _dv, generator=_g, dtype=_dt), torch.randn(*_lead, _T, _dv, generator=_g, dtype=_dt)\n"
        "        _out, _lse, _grads = naive_gradients(_q, _k, _v, _do, _causal)\n"
        "        _caso = f\"flash_backward com q{tuple(_q.shape)}, {_dt}, block={_b}, causal={_causal}\"\n"
        "        with _sem_atalhos():\n"
        "            _res = _tupla(_caso, _chamar(_caso, flash_backward, _q, _k, _v, _out, _lse, _do, causal=_causal, block=_b), 3)\n"
        "        for _n, _x, _w in zip((\"dq\", \"dk\", \"dv\"), _res, _grads):\n"
        "            conferir(f\"{_n} de {_caso}\", _x, _w, atol=_tol, rtol=_tol)  # float32: somas de ~33 termos\n"
        "_q, _k, _v, _do = (torch.randn(1, 256, 8, generator=_g) for _ in range(4))\n"
        "_out, _lse, _grads = naive_gradients(_q, _k, _v, _do, True)\n"
        "_res = _sem_matriz_TxT(\"flash_backward com T=256, block=32\", 256, flash_backward, _q, _k, _v, _out, _lse, _do, True, 32)\n"
        "conferir(\"dq de flash_backward com T=256, block=32\", _res[0], _grads[0], atol=1e-4)\n"
        "### END HIDDEN TESTS",
        grade_id="test_flash_backward",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 5
    nb.written(
        "## Tarefa 5 — pergunta aberta (2 pontos)\n\n"
        "O passo de ida guarda, para o passo de volta, só q, k, v, a saída e o lse. Por que guardar o lse "
        "(um número por linha) basta para reconstruir $P$ exatamente, sem repetir a softmax online? "
        "Compare a memória de guardar $P$ e de guardar o lse para uma cabeça com $T = 4096$ em float32, "
        "e diga o que se paga em troca.",
        "Como $P_{ij} = e^{S_{ij} - \\mathrm{lse}_i}$ e $S_{ij} = q_i \\cdot k_j / \\sqrt{d}$ é recalculável de "
        "q e k, o lse é o único dado da linha inteira que o passo de volta precisa: com ele cada bloco "
        "de $P$ sai exato e já normalizado, sem conhecer os outros blocos (não há máximo nem soma a "
        "acumular de novo). Guardar $P$: $4096^2 \\times 4$ bytes = 64 MiB por cabeça; guardar o lse: "
        "$4096 \\times 4$ bytes = 16 KiB, 4096 vezes menos. Em troca recalculamos $QK^\\top$ (e a "
        "exponencial) no passo de volta: mais FLOPs, muito menos leitura e escrita de memória.",
        grade_id="resposta_lse",
        points=2,
    )
    nb.entrega()
    return nb


# Respostas plausíveis e erradas (usadas nos testes): esquecer o termo D no
# passo de volta de um bloco.
ERRADO = {
    "block_backward": (
        "def block_backward(q_i, k_j, v_j, do_i, lse_i, D_i, mask=None):\n"
        "    scale = 1.0 / math.sqrt(q_i.shape[-1])\n"
        "    s = (q_i @ k_j.transpose(-2, -1)) * scale\n"
        "    if mask is not None:\n"
        "        s = s.masked_fill(mask, -inf)\n"
        "    p = torch.exp(s - lse_i[..., None])\n"
        "    ds = p * (do_i @ v_j.transpose(-2, -1))\n"
        "    return (ds @ k_j) * scale, (ds.transpose(-2, -1) @ q_i) * scale, p.transpose(-2, -1) @ do_i\n"
    ),
}
