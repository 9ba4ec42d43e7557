"""Cap. 8: respostas plantadas e justas (o formato está em __init__.py)."""

from answers import Fair, Planted

# --- Tarefa 1: um passo do BPE -------------------------------------------------------------
_CONTAR = (
    "def contar_pares(pedacos):\n"
    "    pares = {}\n"
    "    for seq, freq in pedacos.items():\n"
    "        for par in zip(seq, seq[1:]):\n"
    "            pares[par] = pares.get(par, 0) + freq\n"
    "    return pares\n\n\n")
_FUNDIR = (
    "def fundir(seq, par, novo):\n"
    "    out, j = [], 0\n"
    "    while j < len(seq):\n"
    "        if j + 1 < len(seq) and (seq[j], seq[j + 1]) == tuple(par):\n"
    "            out.append(novo)\n"
    "            j += 2\n"
    "        else:\n"
    "            out.append(seq[j])\n"
    "            j += 1\n"
    "    return tuple(out)\n\n\n")
_PASSO = (
    "def passo_bpe(pedacos, novo):\n"
    "    pares = contar_pares(pedacos)\n"
    "    if not pares:\n"
    "        raise ValueError('sem pares')\n"
    "    par = min(pares, key=lambda p: (-pares[p], p))\n"
    "    novos = {}\n"
    "    for seq, freq in pedacos.items():\n"
    "        s = fundir(seq, par, novo)\n"
    "        novos[s] = novos.get(s, 0) + freq\n"
    "    return par, novos\n")

# --- Tarefa 3: a cabeça do token anterior ------------------------------------------------------
_NOTA = (
    "def pontuacao_anterior(pesos):\n"
    "    i = torch.arange(1, pesos.shape[-1])\n"
    "    return pesos[:, :, i, i - 1].mean(dim=(0, 2))\n\n\n")


def _perda_sem(corpo):
    """perda_sem_cabeca com a validação da cabeça e `corpo` (o modelo é `m`, a fatia é `c`)."""
    return (
        "def perda_sem_cabeca(semente, idx, cabeca, H=4, especial=0):\n"
        "    m = construir_modelo(semente, H=H, especial=especial)\n"
        "    if not 0 <= cabeca < m.H:\n"
        "        raise ValueError('cabeça inexistente')\n"
        "    c = slice(cabeca * m.d_k, (cabeca + 1) * m.d_k)\n" + corpo)


# --- Tarefa 4: sortear com temperatura ---------------------------------------------------------
_PROBS = (
    "def probabilidades(logits, temperatura):\n"
    "    if not temperatura > 0:\n"
    "        raise ValueError('temperatura')\n"
    "    z = logits / temperatura\n"
    "    e = (z - z.max(dim=-1, keepdim=True).values).exp()\n"
    "    return e / e.sum(dim=-1, keepdim=True)\n\n\n")
_AMOSTRAR = (
    "def amostrar(logits, temperatura, n, semente):\n"
    "    g = torch.Generator().manual_seed(semente)\n"
    "    return torch.multinomial(probabilidades(logits, temperatura), n, replacement=True, generator=g)\n")
_QUANTIS = (
    "def _quantis(logits, temperatura, n):\n"
    "    cdf = probabilidades(logits, temperatura).cumsum(0)\n"
    "    u = (torch.arange(n, dtype=cdf.dtype) + 0.5) / n\n"
    "    return torch.searchsorted(cdf, u).clamp(max=cdf.numel() - 1)\n\n\n")

# --- Tarefas 2, 4 e 5: o treino do BPE e as peças do treino do modelo ------------------------------
_FUSAO_COM = (
    "def fusao_incremental(pedacos, par, novo):\n"
    "    novos, variacao = [], {}\n"
    "    for seq, f in pedacos:\n"
    "        s = fundir(seq, par, novo)\n"
    "        novos.append(s)\n")
_LR = (
    "def passo_de_aprendizado(passo, lr_max, aquecimento, total, lr_min):\n"
    "    if passo < aquecimento:\n"
    "        return lr_max * (passo + 1) / aquecimento\n"
    "    f = min(1.0, (passo - aquecimento) / max(1, total - aquecimento))\n"
    "    return lr_min + 0.5 * (lr_max - lr_min) * (1 + math.cos(math.pi * f))\n\n\n")
_CORTE = (
    "def cortar_gradientes(gradientes, max_norma):\n"
    "    norma = torch.sqrt(sum((g * g).sum() for g in gradientes))\n"
    "    fator = torch.clamp(max_norma / (norma + 1e-6), max=1.0)\n"
    "    return [g * fator for g in gradientes], float(norma)\n\n\n")
_ADAMW = (
    "def passo_adamw(parametros, gradientes, m, v, passo, lr, decaimento, beta1, beta2, eps):\n"
    "    ps, ms, vs = [], [], []\n"
    "    for p, g, m_i, v_i in zip(parametros, gradientes, m, v):\n"
    "        if p.dim() >= 2:\n"
    "            p = p * (1 - lr * decaimento)\n"
    "        m_i = beta1 * m_i + (1 - beta1) * g\n"
    "        v_i = beta2 * v_i + (1 - beta2) * g * g\n"
    "        ps.append(p - lr * (m_i / (1 - beta1 ** passo)) / (torch.sqrt(v_i / (1 - beta2 ** passo)) + eps))\n"
    "        ms.append(m_i)\n"
    "        vs.append(v_i)\n"
    "    return ps, ms, vs\n")

PLANTED = [
    # tarefa 1
    Planted(
        why="collections.Counter conta os pares (o enunciado pede um dict)",
        cells={"bpe": (
            "from collections import Counter\n\n\n"
            "def contar_pares(pedacos):\n"
            "    pares = Counter()\n"
            "    for seq, freq in pedacos.items():\n"
            "        for par in zip(seq, seq[1:]):\n"
            "            pares[par] += freq\n"
            "    return dict(pares)\n\n\n" + _FUNDIR + _PASSO)},
        zero=("test_bpe",),
    ),
    Planted(
        why="o par mais frequente por max(pares, key=pares.get): o empate vai para o primeiro visto",
        cells={"bpe": _CONTAR + _FUNDIR + _PASSO.replace(
            "min(pares, key=lambda p: (-pares[p], p))", "max(pares, key=pares.get)")},
        zero=("test_bpe",),
    ),
    Planted(
        why="pedaços que ficam iguais sobrescrevem a frequência em vez de somar",
        cells={"bpe": _CONTAR + _FUNDIR + _PASSO.replace(
            "novos[s] = novos.get(s, 0) + freq", "novos[s] = freq")},
        zero=("test_bpe",),
    ),
    # tarefa 2
    Planted(
        why="c(a) contado pelos tokens (inclui o último token do treino, que não começa par)",
        cells={"bigrama": (
            "def perda_bigrama(treino, validacao, V, k):\n"
            "    if not k > 0:\n"
            "        raise ValueError('k')\n"
            "    treino, validacao = torch.as_tensor(treino), torch.as_tensor(validacao)\n"
            "    c = torch.bincount(treino[:-1] * V + treino[1:], minlength=V * V).double().view(V, V)\n"
            "    uni = torch.bincount(treino, minlength=V).double()\n"
            "    a, b = validacao[:-1], validacao[1:]\n"
            "    return float(-((c[a, b] + k) / (uni[a] + k * V)).log().mean())\n")},
        zero=("test_bigrama",),
    ),
    Planted(
        why="o k só no numerador e no denominador sem o V (as probabilidades não somam 1)",
        cells={"bigrama": (
            "def perda_bigrama(treino, validacao, V, k):\n"
            "    if not k > 0:\n"
            "        raise ValueError('k')\n"
            "    treino, validacao = torch.as_tensor(treino), torch.as_tensor(validacao)\n"
            "    c = torch.bincount(treino[:-1] * V + treino[1:], minlength=V * V).double().view(V, V)\n"
            "    a, b = validacao[:-1], validacao[1:]\n"
            "    return float(-((c[a, b] + k) / (c.sum(1)[a] + k)).log().mean())\n")},
        zero=("test_bigrama",),
    ),
    # tarefa 3
    Planted(
        why="zera as colunas de W_O direto, sem gancho (a mesma perda, mexendo nos pesos)",
        cells={"cabeca": _NOTA + _perda_sem(
            "    with torch.no_grad():\n"
            "        m.w_o.weight[:, c] = 0\n"
            "    return perda(m, idx)\n")},
        zero=("test_cabeca",),
    ),
    Planted(
        why="um gancho que não faz nada, e as colunas de W_O zeradas por fora",
        cells={"cabeca": _NOTA + _perda_sem(
            "    g = m.w_o.register_forward_pre_hook(lambda mod, args: args)\n"
            "    with torch.no_grad():\n"
            "        m.w_o.weight[:, c] = 0\n"
            "    try:\n"
            "        return perda(m, idx)\n"
            "    finally:\n"
            "        g.remove()\n")},
        zero=("test_cabeca",),
    ),
    Planted(
        why="o gancho certo, mas nunca removido",
        cells={"cabeca": _NOTA + _perda_sem(
            "    def zerar(_mod, args):\n"
            "        x = args[0].clone()\n"
            "        x[..., c] = 0\n"
            "        return (x,)\n"
            "    m.w_o.register_forward_pre_hook(zerar)\n"
            "    return perda(m, idx)\n")},
        zero=("test_cabeca",),
    ),
    Planted(
        why="pontuacao_anterior divide pela quantidade de consultas T, não T - 1 (conta a consulta 0)",
        cells={"cabeca": (
            "def pontuacao_anterior(pesos):\n"
            "    T = pesos.shape[-1]\n"
            "    i = torch.arange(1, T)\n"
            "    return pesos[:, :, i, i - 1].sum(dim=2).mean(dim=0) / T\n\n\n") + _perda_sem(
            "    def zerar(_mod, args):\n"
            "        x = args[0].clone()\n"
            "        x[..., c] = 0\n"
            "        return (x,)\n"
            "    g = m.w_o.register_forward_pre_hook(zerar)\n"
            "    try:\n"
            "        return perda(m, idx)\n"
            "    finally:\n"
            "        g.remove()\n")},
        zero=("test_cabeca",),
    ),
    # tarefa 4
    Planted(
        why="amostrar devolve os n quantis da CDF: ordenados, sem sorteio, iguais para toda semente",
        cells={"temperatura": _PROBS + _QUANTIS + (
            "def amostrar(logits, temperatura, n, semente):\n"
            "    return _quantis(logits, temperatura, n)\n")},
        zero=("test_temperatura",),
    ),
    Planted(
        why="os quantis da CDF embaralhados pela semente: as contagens caem exatamente em n·p",
        cells={"temperatura": _PROBS + _QUANTIS + (
            "def amostrar(logits, temperatura, n, semente):\n"
            "    g = torch.Generator().manual_seed(semente)\n"
            "    return _quantis(logits, temperatura, n)[torch.randperm(n, generator=g)]\n")},
        zero=("test_temperatura",),
    ),
    Planted(
        why="um sorteio de verdade, mas devolvido ordenado",
        cells={"temperatura": _PROBS + (
            "def amostrar(logits, temperatura, n, semente):\n"
            "    g = torch.Generator().manual_seed(semente)\n"
            "    s = torch.multinomial(probabilidades(logits, temperatura), n, replacement=True, generator=g)\n"
            "    return s.sort().values\n")},
        zero=("test_temperatura",),
    ),
    Planted(
        why="amostrar ignora a semente (o gerador global, sem semear)",
        cells={"temperatura": _PROBS + (
            "def amostrar(logits, temperatura, n, semente):\n"
            "    return torch.multinomial(probabilidades(logits, temperatura), n, replacement=True)\n")},
        zero=("test_temperatura",),
    ),
    Planted(
        why="probabilidades é a torch.softmax pronta (o enunciado pede a conta subtraindo o máximo)",
        cells={"temperatura": (
            "def probabilidades(logits, temperatura):\n"
            "    if not temperatura > 0:\n"
            "        raise ValueError('temperatura')\n"
            "    return torch.softmax(logits / temperatura, dim=-1)\n\n\n" + _AMOSTRAR)},
        zero=("test_temperatura",),
    ),
    Planted(
        why="probabilidades por exp(z - logsumexp(z)): o máximo fica por conta do logsumexp pronto",
        cells={"temperatura": (
            "def probabilidades(logits, temperatura):\n"
            "    if not temperatura > 0:\n"
            "        raise ValueError('temperatura')\n"
            "    z = logits / temperatura\n"
            "    return (z - torch.logsumexp(z, dim=-1, keepdim=True)).exp()\n\n\n" + _AMOSTRAR)},
        zero=("test_temperatura",),
    ),
    # tarefa 2
    Planted(
        why="recontar: a variação é a contagem dos pares dos pedaços novos, não o que mudou",
        cells={"bpe_treino": _FUSAO_COM + (
            "        for p in zip(s, s[1:]):\n"
            "            variacao[p] = variacao.get(p, 0) + f\n"
            "    return novos, variacao\n")},
        zero=("test_bpe_treino",),
    ),
    Planted(
        why="tira só o par fundido e põe os pares com o token novo: esquece os vizinhos que a fusão desfaz",
        cells={"bpe_treino": _FUSAO_COM + (
            "        variacao[par] = variacao.get(par, 0) - (len(seq) - len(s)) * f\n"
            "        for p in zip(s, s[1:]):\n"
            "            if novo in p:\n"
            "                variacao[p] = variacao.get(p, 0) + f\n"
            "    return novos, variacao\n")},
        zero=("test_bpe_treino",),
    ),
    # tarefas 4 e 5 (o treino só roda com as peças da tarefa 4 certas)
    Planted(
        why="corta cada tensor pela sua própria norma, não pela norma global",
        cells={"pecas_treino": _LR + (
            "def cortar_gradientes(gradientes, max_norma):\n"
            "    out, total = [], 0.0\n"
            "    for g in gradientes:\n"
            "        n = torch.sqrt((g * g).sum())\n"
            "        total += float(n) ** 2\n"
            "        out.append(g * torch.clamp(max_norma / (n + 1e-6), max=1.0))\n"
            "    return out, math.sqrt(total)\n\n\n") + _ADAMW},
        zero=("test_pecas_treino", "test_treino"),
    ),
    Planted(
        why="o passo do AdamW pelo torch.optim.AdamW (com o estado m, v posto à mão)",
        cells={"pecas_treino": _LR + _CORTE + (
            "def passo_adamw(parametros, gradientes, m, v, passo, lr, decaimento, beta1, beta2, eps):\n"
            "    ps, ms, vs = [], [], []\n"
            "    for p, g, m_i, v_i in zip(parametros, gradientes, m, v):\n"
            "        q = p.detach().clone().requires_grad_(True)\n"
            "        opt = torch.optim.AdamW([q], lr=lr, betas=(beta1, beta2), eps=eps,\n"
            "                                weight_decay=decaimento if p.dim() >= 2 else 0.0)\n"
            "        opt.state[q] = {'step': torch.tensor(float(passo - 1)), 'exp_avg': m_i.clone(),\n"
            "                        'exp_avg_sq': v_i.clone()}\n"
            "        q.grad = g.clone()\n"
            "        opt.step()\n"
            "        ps.append(q.detach())\n"
            "        ms.append(opt.state[q]['exp_avg'])\n"
            "        vs.append(opt.state[q]['exp_avg_sq'])\n"
            "    return ps, ms, vs\n")},
        zero=("test_pecas_treino", "test_treino"),
    ),
    Planted(
        why="o passo do AdamW pela função do torch que os testes usam de oráculo (torch.optim.adamw.adamw), "
            "importada por um nome montado em pedaços",
        cells={"pecas_treino": _LR + _CORTE + (
            "import importlib\n"
            "_pronta = getattr(importlib.import_module('torch.' + 'op' + 'tim.adam' + 'w'), 'adam' + 'w')\n\n\n"
            "def passo_adamw(parametros, gradientes, m, v, passo, lr, decaimento, beta1, beta2, eps):\n"
            "    ps = [p.detach().clone() for p in parametros]\n"
            "    ms, vs = [x.clone() for x in m], [x.clone() for x in v]\n"
            "    for i, p in enumerate(ps):\n"
            "        _pronta([p], [gradientes[i].clone()], [ms[i]], [vs[i]], [], [torch.tensor(float(passo - 1))],\n"
            "           foreach=False, amsgrad=False, beta1=beta1, beta2=beta2, lr=lr,\n"
            "           weight_decay=decaimento if p.dim() >= 2 else 0.0, eps=eps, maximize=False)\n"
            "    return ps, ms, vs\n")},
        zero=("test_pecas_treino", "test_treino"),
    ),
]

FAIR = [
    Fair(
        why="BPE com defaultdict e max(sorted(...)); bigrama em Python puro com dicts; diagonal(offset=-1); "
            "gancho que multiplica por uma máscara; sorteio por rand + searchsorted",
        cells={
            "bpe": (
                "from collections import defaultdict\n\n\n"
                "def contar_pares(pedacos):\n"
                "    pares = defaultdict(int)\n"
                "    for seq, freq in pedacos.items():\n"
                "        for i in range(len(seq) - 1):\n"
                "            pares[seq[i], seq[i + 1]] += freq\n"
                "    return dict(pares)\n\n\n"
                "def fundir(seq, par, novo):\n"
                "    seq, out, i = list(seq), [], 0\n"
                "    while i < len(seq):\n"
                "        if seq[i:i + 2] == list(par):\n"
                "            out.append(novo)\n"
                "            i += 2\n"
                "            continue\n"
                "        out.append(seq[i])\n"
                "        i += 1\n"
                "    return tuple(out)\n\n\n"
                "def passo_bpe(pedacos, novo):\n"
                "    pares = contar_pares(pedacos)\n"
                "    if len(pares) == 0:\n"
                "        raise ValueError('nenhum par')\n"
                "    par = max(sorted(pares), key=pares.get)   # o primeiro máximo na ordem: o menor par\n"
                "    novos = defaultdict(int)\n"
                "    for seq, freq in pedacos.items():\n"
                "        novos[fundir(seq, par, novo)] += freq\n"
                "    return par, dict(novos)\n"),
            "bigrama": (
                "import math as _m\n\n\n"
                "def perda_bigrama(treino, validacao, V, k):\n"
                "    if k <= 0:\n"
                "        raise ValueError(f'k = {k}')\n"
                "    tr = [int(t) for t in treino]\n"
                "    va = [int(t) for t in validacao]\n"
                "    pares, inicio = {}, {}\n"
                "    for a, b in zip(tr, tr[1:]):\n"
                "        pares[(a, b)] = pares.get((a, b), 0) + 1\n"
                "        inicio[a] = inicio.get(a, 0) + 1\n"
                "    total = 0.0\n"
                "    for a, b in zip(va, va[1:]):\n"
                "        total -= _m.log((pares.get((a, b), 0) + k) / (inicio.get(a, 0) + k * V))\n"
                "    return total / (len(va) - 1)\n"),
            "cabeca": (
                "def pontuacao_anterior(pesos):\n"
                "    return pesos.diagonal(offset=-1, dim1=-2, dim2=-1).mean(dim=(0, 2))\n\n\n"
                + _perda_sem(
                    "    mascara = torch.ones(m.H * m.d_k, dtype=torch.float64)\n"
                    "    mascara[c] = 0\n"
                    "    alca = m.w_o.register_forward_pre_hook(lambda mod, args: (args[0] * mascara,))\n"
                    "    valor = perda(m, idx)\n"
                    "    alca.remove()\n"
                    "    return valor\n")),
            "temperatura": (
                "def probabilidades(logits, temperatura):\n"
                "    if temperatura <= 0:\n"
                "        raise ValueError('a temperatura deve ser positiva')\n"
                "    z = logits.double() / temperatura\n"
                "    z = z - z.amax(-1, keepdim=True)\n"
                "    p = torch.exp(z)\n"
                "    return (p / p.sum(-1, keepdim=True)).to(logits.dtype)\n\n\n"
                "def amostrar(logits, temperatura, n, semente):\n"
                "    g = torch.Generator()\n"
                "    g.manual_seed(semente)\n"
                "    cdf = probabilidades(logits, temperatura).cumsum(0)\n"
                "    u = torch.rand(n, generator=g, dtype=cdf.dtype) * cdf[-1]\n"
                "    return torch.searchsorted(cdf, u, right=True).clamp(max=cdf.numel() - 1)\n"),
        },
    ),
    Fair(
        why="BPE com laços e prints; bigrama com np.add.at; pontuação num laço de somas; gancho no lugar "
            "que devolve None (alça como gerenciador de contexto); torch.manual_seed + Categorical",
        cells={
            "bpe": (
                "def contar_pares(pedacos):\n"
                "    contagem = dict()\n"
                "    for seq in pedacos:\n"
                "        for i in range(1, len(seq)):\n"
                "            chave = (seq[i - 1], seq[i])\n"
                "            if chave in contagem:\n"
                "                contagem[chave] += pedacos[seq]\n"
                "            else:\n"
                "                contagem[chave] = pedacos[seq]\n"
                "    return contagem\n\n\n"
                "def fundir(seq, par, novo):\n"
                "    resultado = ()\n"
                "    i = 0\n"
                "    while i < len(seq):\n"
                "        if i < len(seq) - 1 and seq[i] == par[0] and seq[i + 1] == par[1]:\n"
                "            resultado += (novo,)\n"
                "            i += 2\n"
                "        else:\n"
                "            resultado += (seq[i],)\n"
                "            i += 1\n"
                "    return resultado\n\n\n"
                "def passo_bpe(pedacos, novo):\n"
                "    pares = contar_pares(pedacos)\n"
                "    if not pares:\n"
                "        raise ValueError('todos os pedaços têm um token só')\n"
                "    maior = max(pares.values())\n"
                "    par = sorted(p for p, c in pares.items() if c == maior)[0]\n"
                "    print('fundindo', par, 'visto', maior, 'vezes')\n"
                "    novos = {}\n"
                "    for seq, freq in pedacos.items():\n"
                "        s = fundir(seq, par, novo)\n"
                "        novos[s] = novos.get(s, 0) + freq\n"
                "    return par, novos\n"),
            "bigrama": (
                "def perda_bigrama(treino, validacao, V, k):\n"
                "    if not k > 0:\n"
                "        raise ValueError('k precisa ser positivo')\n"
                "    tr = np.asarray(treino, dtype=np.int64)\n"
                "    va = np.asarray(validacao, dtype=np.int64)\n"
                "    c = np.zeros((V, V))\n"
                "    np.add.at(c, (tr[:-1], tr[1:]), 1.0)\n"
                "    p = (c + k) / (c.sum(axis=1, keepdims=True) + k * V)\n"
                "    return float(-np.log(p[va[:-1], va[1:]]).mean())\n"),
            "cabeca": (
                "def pontuacao_anterior(pesos):\n"
                "    B, H, T, _ = pesos.shape\n"
                "    total = torch.zeros(H, dtype=pesos.dtype)\n"
                "    for i in range(1, T):\n"
                "        total = total + pesos[:, :, i, i - 1].sum(dim=0)\n"
                "    return total / (B * (T - 1))\n\n\n"
                + _perda_sem(
                    "    def zerar(_mod, args):\n"
                    "        args[0][..., c] = 0.0\n"
                    "    with m.w_o.register_forward_pre_hook(zerar):\n"
                    "        resultado = perda(m, idx)\n"
                    "    return resultado\n")),
            "temperatura": (
                "def probabilidades(logits, temperatura):\n"
                "    if not temperatura > 0:\n"
                "        raise ValueError('temperatura')\n"
                "    z = logits / temperatura\n"
                "    m, _ = torch.max(z, dim=-1, keepdim=True)\n"
                "    e = torch.exp(z - m)\n"
                "    return e / torch.sum(e, dim=-1, keepdim=True)\n\n\n"
                "def amostrar(logits, temperatura, n, semente):\n"
                "    torch.manual_seed(semente)\n"
                "    dist = torch.distributions.Categorical(probs=probabilidades(logits, temperatura))\n"
                "    return dist.sample((n,))\n"),
        },
    ),
    Fair(
        why="gancho com with_kwargs=True que devolve (args, kwargs); sorteio pelo truque de Gumbel-max "
            "(argmax de log p + ruído de Gumbel), em float32",
        cells={
            "temperatura": _PROBS + (
                "def amostrar(logits, temperatura, n, semente):\n"
                "    g = torch.Generator().manual_seed(semente)\n"
                "    logp = probabilidades(logits, temperatura).float().log()\n"
                "    u = torch.rand(n, logp.numel(), generator=g).clamp(1e-12, 1 - 1e-7)\n"
                "    return (logp - (-u.log()).log()).argmax(dim=-1)\n"),
            "cabeca": _NOTA + _perda_sem(
                "    def zerar(_mod, args, kwargs):\n"
                "        x = args[0].clone()\n"
                "        x[..., c] = 0\n"
                "        return (x,), kwargs\n"
                "    alca = m.w_o.register_forward_pre_hook(zerar, with_kwargs=True)\n"
                "    try:\n"
                "        return perda(m, idx)\n"
                "    finally:\n"
                "        alca.remove()\n"),
        },
    ),
    Fair(
        why="tarefa 2 com Counter (a diferença dos pares de antes e de depois) e pedaços devolvidos como "
            "listas; tarefa 4 com o progresso do cosseno por clamp, a norma por torch.linalg.vector_norm, o "
            "corte no lugar (mul_) e a norma devolvida como tensor, e o AdamW no lugar, com a correção de viés "
            "dobrada no passo",
        cells={
            "bpe_treino": (
                "from collections import Counter\n\n\n"
                "def fusao_incremental(pedacos, par, novo):\n"
                "    a, b = par\n"
                "    novos, total = [], Counter()\n"
                "    for seq, freq in pedacos:\n"
                "        out, pular = [], False\n"
                "        for i, t in enumerate(seq):\n"
                "            if pular:\n"
                "                pular = False\n"
                "                continue\n"
                "            if t == a and i + 1 < len(seq) and seq[i + 1] == b:\n"
                "                out.append(novo)\n"
                "                pular = True\n"
                "            else:\n"
                "                out.append(t)\n"
                "        antes, depois = Counter(zip(seq, seq[1:])), Counter(zip(out, out[1:]))\n"
                "        for p in set(antes) | set(depois):\n"
                "            total[p] += (depois[p] - antes[p]) * freq\n"
                "        novos.append(out)\n"
                "    return novos, {p: d for p, d in total.items() if d}\n"),
            "pecas_treino": (
                "def passo_de_aprendizado(passo, lr_max, aquecimento, total, lr_min):\n"
                "    if passo >= aquecimento:\n"
                "        progresso = (passo - aquecimento) / max(total - aquecimento, 1)\n"
                "        progresso = max(0.0, min(progresso, 1.0))\n"
                "        cosseno = (1.0 + math.cos(progresso * math.pi)) / 2.0\n"
                "        return lr_min + (lr_max - lr_min) * cosseno\n"
                "    return (passo + 1) * lr_max / aquecimento\n\n\n"
                "def cortar_gradientes(gradientes, max_norma):\n"
                "    normas = torch.stack([torch.linalg.vector_norm(g) for g in gradientes])\n"
                "    norma = torch.linalg.vector_norm(normas)\n"
                "    if norma > max_norma:\n"
                "        for g in gradientes:\n"
                "            g.mul_(max_norma / (norma + 1e-6))\n"
                "    return gradientes, norma\n\n\n"
                "def passo_adamw(parametros, gradientes, m, v, passo, lr, decaimento, beta1, beta2, eps):\n"
                "    c1, c2 = 1 - beta1 ** passo, 1 - beta2 ** passo\n"
                "    tamanho = lr * math.sqrt(c2) / c1\n"
                "    saida = ([], [], [])\n"
                "    for p, g, m_i, v_i in zip(parametros, gradientes, m, v):\n"
                "        p, m_i, v_i = p.clone(), m_i.clone(), v_i.clone()\n"
                "        if p.ndim > 1:\n"
                "            p.mul_(1 - lr * decaimento)\n"
                "        m_i.mul_(beta1).add_(g * (1 - beta1))\n"
                "        v_i.mul_(beta2).add_(g * g * (1 - beta2))\n"
                "        p.sub_(tamanho * m_i / (v_i.sqrt() + eps * math.sqrt(c2)))\n"
                "        for lista, x in zip(saida, (p, m_i, v_i)):\n"
                "            lista.append(x)\n"
                "    return saida\n"),
        },
    ),
]
