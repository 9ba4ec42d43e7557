"""Cap. 3: respostas plantadas e justas (o formato está em __init__.py)."""

from answers import Fair, Planted

_CONFERE = (
    "    for nome, valor in (('n', n), ('start', start)):\n"
    "        if isinstance(valor, bool) or not isinstance(valor, int) or valor < 0:\n"
    "            raise ValueError(f'{nome} inválido: {valor!r}')\n"
    "    m = start + n if m is None else m\n"
    "    if isinstance(m, bool) or not isinstance(m, int) or m < 0:\n"
    "        raise ValueError(f'm inválido: {m!r}')\n")

PLANTED = [
    Planted(
        why="torch.triu (o oráculo dos testes) no lugar da comparação de índices",
        cells={"mascara_causal": (
            "def mascara_causal(n, m=None, start=0):\n" + _CONFERE +
            "    return torch.triu(torch.ones(n, m, dtype=torch.bool), diagonal=start + 1)\n")},
        zero=("test_mascara_causal",),
    ),
    Planted(
        why="a triangular do NumPy, convertida para torch (o despacho do torch não a vê; a regra de texto vê)",
        cells={"mascara_causal": (
            "def mascara_causal(n, m=None, start=0):\n" + _CONFERE +
            "    return torch.from_numpy(np.triu(np.ones((n, m), dtype=bool), k=start + 1))\n")},
        zero=("test_mascara_causal",),
    ),
    Planted(
        why="o método .tril() escondido numa função auxiliar, com a negação",
        cells={"mascara_causal": (
            "def _baixo(n, m, start):\n"
            "    metodo = 'tr' + 'il'\n"
            "    return getattr(torch.ones(n, m), metodo)(start).bool()\n\n"
            "def mascara_causal(n, m=None, start=0):\n" + _CONFERE +
            "    return ~_baixo(n, m, start)\n")},
        zero=("test_mascara_causal",),
    ),
    Planted(
        why="o oráculo _proibido da preparação",
        cells={"mascara_causal": (
            "def mascara_causal(n, m=None, start=0):\n" + _CONFERE +
            "    return _proibido(n, m, start)\n")},
        zero=("test_mascara_causal",),
    ),
    Planted(
        why="errada: masked_fill_ no lugar (altera s)",
        cells={"aplicar_mascara": (
            "def aplicar_mascara(s, mascara):\n"
            "    if tuple(s.shape[-2:]) != tuple(mascara.shape):\n"
            "        raise ValueError('formas')\n"
            "    return s.masked_fill_(mascara, float('-inf'))\n")},
        zero=("test_aplicar_mascara",),
    ),
    Planted(
        why="errada: -1e9 no lugar de -inf",
        cells={"aplicar_mascara": (
            "def aplicar_mascara(s, mascara):\n"
            "    if tuple(s.shape[-2:]) != tuple(mascara.shape):\n"
            "        raise ValueError('formas')\n"
            "    return s.masked_fill(mascara, -1e9)\n")},
        zero=("test_aplicar_mascara",),
    ),
    Planted(
        why="errada: ignora o start (máscara de um quadrado sem cache)",
        cells={"pesos_causais": (
            "def pesos_causais(s, start=0):\n"
            "    n, m = s.shape[-2], s.shape[-1]\n"
            "    return torch.softmax(aplicar_mascara(s, mascara_causal(n, m)), dim=-1)\n")},
        zero=("test_pesos_causais",),
    ),
    Planted(
        why="errada: softmax nas colunas (dim=-2)",
        cells={"pesos_causais": (
            "def pesos_causais(s, start=0):\n"
            "    n, m = s.shape[-2], s.shape[-1]\n"
            "    return torch.softmax(aplicar_mascara(s, mascara_causal(n, m, start)), dim=-2)\n")},
        zero=("test_pesos_causais",),
    ),
    Planted(
        why="não testa a causalidade: confere se f é a atenção causal do torch nestas entradas",
        cells={"respeita_causalidade": (
            "def respeita_causalidade(f, q, k, v):\n"
            "    esperado = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
            "    return bool(torch.allclose(f(q, k, v).to(esperado.dtype), esperado, atol=1e-3))\n")},
        zero=("test_respeita_causalidade",),
    ),
    Planted(
        why="pelo autograd (f chega sem grafo, no Jupyter e na correção)",
        cells={"respeita_causalidade": (
            "def respeita_causalidade(f, q, k, v):\n"
            "    T = q.shape[-2]\n"
            "    xs = [x.detach().clone().requires_grad_(True) for x in (q, k, v)]\n"
            "    saida = f(*xs)\n"
            "    for t in range(T):\n"
            "        gs = torch.autograd.grad(saida[t].sum(), xs, retain_graph=True, allow_unused=True)\n"
            "        if any(g is not None and bool(g[t + 1:].abs().sum() > 0) for g in gs):\n"
            "            return False\n"
            "    return True\n")},
        zero=("test_respeita_causalidade",),
    ),
    Planted(
        why="perturbação conferida com allclose, não bit a bit (perde um vazamento pequeno)",
        cells={"respeita_causalidade": (
            "def respeita_causalidade(f, q, k, v):\n"
            "    saida = f(q, k, v)\n"
            "    for t in range(q.shape[-2] - 1):\n"
            "        q2, k2, v2 = q.clone(), k.clone(), v.clone()\n"
            "        for x in (q2, k2, v2):\n"
            "            x[t + 1:] = 100 * torch.randn_like(x[t + 1:])\n"
            "        if not torch.allclose(f(q2, k2, v2)[: t + 1], saida[: t + 1]):\n"
            "            return False\n"
            "    return True\n")},
        zero=("test_respeita_causalidade",),
    ),
    Planted(
        why="perturba só v (não vê o vazamento pelas consultas)",
        cells={"respeita_causalidade": (
            "def respeita_causalidade(f, q, k, v):\n"
            "    saida = f(q, k, v)\n"
            "    for t in range(q.shape[-2] - 1):\n"
            "        v2 = v.clone()\n"
            "        v2[t + 1:] = 100 * torch.randn_like(v2[t + 1:])\n"
            "        if not torch.equal(f(q, k, v2)[: t + 1], saida[: t + 1]):\n"
            "            return False\n"
            "    return True\n")},
        zero=("test_respeita_causalidade",),
    ),
]

FAIR = [
    Fair(
        why="máscara por laços de Python; torch.where com -inf do tipo de s; pesos com F.softmax; "
            "uma posição perturbada de cada vez, com gerador próprio",
        cells={
            "mascara_causal": (
                "def mascara_causal(n, m=None, start=0):\n" + _CONFERE +
                "    M = torch.zeros(n, m, dtype=torch.bool)\n"
                "    for i in range(n):\n"
                "        for j in range(m):\n"
                "            if j > start + i:\n"
                "                M[i, j] = True\n"
                "    print('máscara', n, m, start)\n"
                "    return M\n"),
            "aplicar_mascara": (
                "def aplicar_mascara(s, mascara):\n"
                "    if s.shape[-2:] != mascara.shape:\n"
                "        raise ValueError(f'máscara {tuple(mascara.shape)} e pontuações {tuple(s.shape)}')\n"
                "    return torch.where(mascara, torch.tensor(float('-inf'), dtype=s.dtype), s)\n"),
            "pesos_causais": (
                "def pesos_causais(s, start=0):\n"
                "    M = mascara_causal(s.shape[-2], s.shape[-1], start)\n"
                "    return F.softmax(aplicar_mascara(s, M), dim=-1)\n"),
            "respeita_causalidade": (
                "def respeita_causalidade(f, q, k, v):\n"
                "    g = torch.Generator().manual_seed(1234)\n"
                "    base = f(q, k, v)\n"
                "    for j in range(1, q.shape[-2]):\n"
                "        novos = []\n"
                "        for x in (q, k, v):\n"
                "            y = x.clone()\n"
                "            y[j] = 1000 * torch.randn(y[j].shape, generator=g).to(y.dtype)\n"
                "            novos.append(y)\n"
                "        if not torch.equal(f(*novos)[:j], base[:j]):\n"
                "            return False\n"
                "    return True\n"),
        },
    ),
    Fair(
        why="máscara por arange com broadcast e ge/logical_not; cópia com índice booleano; máscara aditiva",
        cells={
            "mascara_causal": (
                "def mascara_causal(n, m=None, start=0):\n" + _CONFERE +
                "    i = torch.arange(n).reshape(n, 1)\n"
                "    j = torch.arange(m).reshape(1, m)\n"
                "    return torch.logical_not(start + i >= j)\n"),
            "aplicar_mascara": (
                "def aplicar_mascara(s, mascara):\n"
                "    if list(s.shape[-2:]) != list(mascara.shape):\n"
                "        raise ValueError('as duas últimas dimensões de s têm de ser as da máscara')\n"
                "    r = s.clone()\n"
                "    r[..., mascara] = float('-inf')\n"
                "    return r\n"),
            "pesos_causais": (
                "def pesos_causais(s, start=0):\n"
                "    n, m = s.shape[-2:]\n"
                "    aditiva = torch.zeros(n, m, dtype=s.dtype).masked_fill(mascara_causal(n, m, start), float('-inf'))\n"
                "    return torch.softmax(s + aditiva, dim=-1)\n"),
            "respeita_causalidade": (
                "def _perturbado(x, t):\n"
                "    y = x.clone()\n"
                "    y[t + 1:] = y[t + 1:] * 50 + 7\n"
                "    return y\n\n"
                "def respeita_causalidade(f, q, k, v):\n"
                "    saida = f(q, k, v)\n"
                "    return all(torch.equal(f(_perturbado(q, t), _perturbado(k, t), _perturbado(v, t))[: t + 1], saida[: t + 1])\n"
                "               for t in range(q.shape[-2] - 1))\n"),
        },
    ),
]
