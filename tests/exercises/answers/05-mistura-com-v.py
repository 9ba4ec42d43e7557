"""Cap. 5: respostas plantadas e justas (o formato está em __init__.py)."""

from answers import Fair, Planted

PLANTED = [
    Planted(
        why="o SDPA do torch (o oráculo dos testes) no lugar da atenção",
        cells={"atencao_causal": (
            "import torch.nn.functional as F\n\n"
            "def atencao_causal(q, k, v, start=0):\n"
            "    if q.shape[-1] != k.shape[-1]:\n"
            "        raise ValueError('d')\n"
            "    n, m = q.shape[-2], k.shape[-2]\n"
            "    pode = ~torch.triu(torch.ones(n, m, dtype=torch.bool), diagonal=start + 1)\n"
            "    return F.scaled_dot_product_attention(q, k, v, attn_mask=pode)\n")},
        zero=("test_atencao_causal",),
    ),
    Planted(
        why="a SDPA numa função auxiliar, só em float16 (o caso que antes não era observado)",
        cells={"atencao_causal": (
            "import torch.nn.functional as F\n\n"
            "def _rapida(q, k, v, start):\n"
            "    n, m = q.shape[-2], k.shape[-2]\n"
            "    pode = torch.arange(m)[None, :] <= start + torch.arange(n)[:, None]\n"
            "    return F.scaled_dot_product_attention(q, k, v, attn_mask=pode)\n\n"
            "def atencao_causal(q, k, v, start=0):\n"
            "    if q.shape[-1] != k.shape[-1]:\n"
            "        raise ValueError('d')\n"
            "    if q.dtype == torch.float16:\n"
            "        return _rapida(q, k, v, start)\n"
            "    n, m = q.shape[-2], k.shape[-2]\n"
            "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
            "    futuro = torch.arange(m)[None, :] > start + torch.arange(n)[:, None]\n"
            "    return misturar(torch.softmax(s.masked_fill(futuro, -inf), -1), v)\n")},
        zero=("test_atencao_causal",),
    ),
    Planted(
        why="o nn.MultiheadAttention com pesos identidade no lugar da atenção",
        cells={"atencao_causal": (
            "def atencao_causal(q, k, v, start=0):\n"
            "    if q.shape[-1] != k.shape[-1]:\n"
            "        raise ValueError('d')\n"
            "    d, dv, n, m = q.shape[-1], v.shape[-1], q.shape[-2], k.shape[-2]\n"
            "    mha = torch.nn.MultiheadAttention(d, 1, bias=False, kdim=d, vdim=dv, batch_first=True, dtype=q.dtype)\n"
            "    with torch.no_grad():\n"
            "        mha.q_proj_weight.copy_(torch.eye(d)); mha.k_proj_weight.copy_(torch.eye(d))\n"
            "        mha.v_proj_weight.copy_(torch.eye(d, dv)); mha.out_proj.weight.copy_(torch.eye(d, d))\n"
            "    futuro = torch.arange(m)[None, :] > start + torch.arange(n)[:, None]\n"
            "    lote = q.shape[:-2]\n"
            "    qq, kk, vv = (x.reshape(-1, *x.shape[-2:]) for x in (q, k, v))\n"
            "    out = mha(qq, kk, vv, attn_mask=futuro, need_weights=False)[0]\n"
            "    return out.reshape(*lote, n, -1)\n")},
        zero=("test_atencao_causal",),
    ),
    Planted(
        why="o oráculo _sdpa da preparação",
        cells={"atencao_causal": (
            "def atencao_causal(q, k, v, start=0):\n"
            "    if q.shape[-1] != k.shape[-1]:\n"
            "        raise ValueError('d')\n"
            "    return _sdpa(q, k, v, start).to(q.dtype)\n")},
        zero=("test_atencao_causal",),
    ),
    Planted(
        why="errada: esquece o start (a máscara de um quadrado sem cache)",
        cells={"atencao_causal": (
            "def atencao_causal(q, k, v, start=0):\n"
            "    if q.shape[-1] != k.shape[-1]:\n"
            "        raise ValueError('d')\n"
            "    n, m = q.shape[-2], k.shape[-2]\n"
            "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
            "    futuro = torch.arange(m)[None, :] > torch.arange(n)[:, None]\n"
            "    return misturar(torch.softmax(s.masked_fill(futuro, -inf), -1), v)\n")},
        zero=("test_atencao_causal",),
    ),
    Planted(
        why="a SDPA com q = k = 0 e os pesos como máscara aditiva (log): softmax(log A) = A",
        cells={"misturar": (
            "import torch.nn.functional as F\n\n"
            "def misturar(pesos, v):\n"
            "    if pesos.shape[-1] != v.shape[-2]:\n"
            "        raise ValueError(f'formas {tuple(pesos.shape)} e {tuple(v.shape)}')\n"
            "    zq = torch.zeros(*pesos.shape[:-1], 1, dtype=v.dtype)\n"
            "    zk = torch.zeros(*v.shape[:-1], 1, dtype=v.dtype)\n"
            "    return F.scaled_dot_product_attention(zq, zk, v, attn_mask=pesos.to(v.dtype).log())\n")},
        zero=("test_misturar",),
        free=("test_atencao_causal",),   # a atencao_causal usa esta misturar: a regra vê a SDPA lá também
    ),
    Planted(
        why="errada: sem a checagem de formas (o @ levanta RuntimeError, não ValueError)",
        cells={"misturar": (
            "def misturar(pesos, v):\n"
            "    return pesos @ v\n")},
        zero=("test_misturar",),
    ),
    Planted(
        why="sem atalho possível (a tarefa é o produto com difusão); errada: v desalinhado (unsqueeze(-2))",
        cells={"contribuicoes": (
            "def contribuicoes(pesos, v):\n"
            "    return pesos.unsqueeze(-1) * v.unsqueeze(-2)\n")},
        zero=("test_contribuicoes",),
    ),
    Planted(
        why="errada: soma em j (devolve a misturar, não as contribuições)",
        cells={"contribuicoes": (
            "def contribuicoes(pesos, v):\n"
            "    return (pesos.unsqueeze(-1) * v.unsqueeze(-3)).sum(-2, keepdim=True).expand(*pesos.shape, v.shape[-1])\n")},
        zero=("test_contribuicoes",),
    ),
]

FAIR = [
    Fair(
        why="einsum em float64 com prints, máscara por torch.where",
        cells={
            "misturar": (
                "def misturar(pesos, v):\n"
                "    if pesos.shape[-1] != v.shape[-2]:\n"
                "        raise ValueError(f'formas {tuple(pesos.shape)} e {tuple(v.shape)}')\n"
                "    print('misturando', tuple(pesos.shape))\n"
                "    return torch.einsum('...nm,...md->...nd', pesos.double(), v.double()).to(v.dtype)\n"),
            "contribuicoes": (
                "def contribuicoes(pesos, v):\n"
                "    return torch.einsum('...nm,...md->...nmd', pesos, v)\n"),
        },
    ),
    Fair(
        why="laço sobre as chaves j na misturar; atenção com torch.where, F.softmax e máscara por tril; "
            "contribuições por índices None",
        cells={
            "misturar": (
                "def misturar(pesos, v):\n"
                "    m = v.shape[-2]\n"
                "    if pesos.shape[-1] != m:\n"
                "        raise ValueError(f'pesos {list(pesos.shape)} e v {list(v.shape)}: m diferente')\n"
                "    saida = torch.zeros(*torch.broadcast_shapes(pesos.shape[:-1], v.shape[:-2] + (1,)), v.shape[-1], dtype=v.dtype)\n"
                "    for j in range(m):\n"
                "        saida = saida + pesos[..., :, j:j + 1] * v[..., j:j + 1, :]\n"
                "    return saida\n"),
            "atencao_causal": (
                "import torch.nn.functional as F\n\n"
                "def atencao_causal(q, k, v, start=0):\n"
                "    if q.size(-1) != k.size(-1):\n"
                "        raise ValueError(f'd de q {q.size(-1)} e de k {k.size(-1)}')\n"
                "    n, m = q.size(-2), k.size(-2)\n"
                "    pode = torch.ones(n, m, dtype=torch.bool).tril(diagonal=start)\n"
                "    s = torch.matmul(q, k.mT) * q.size(-1) ** -0.5\n"
                "    s = torch.where(pode, s, torch.tensor(float('-inf'), dtype=s.dtype))\n"
                "    return misturar(F.softmax(s, dim=-1), v)\n"),
            "contribuicoes": (
                "def contribuicoes(pesos, v):\n"
                "    return pesos[..., :, :, None] * v[..., None, :, :]\n"),
        },
    ),
    Fair(
        why="atenção em float64 por dentro, com masked_fill_ numa cópia e uma função auxiliar para a máscara",
        cells={
            "atencao_causal": (
                "def _futuro(n, m, start):\n"
                "    return torch.arange(m).view(1, m) - torch.arange(n).view(n, 1) > start\n\n"
                "def atencao_causal(q, k, v, start=0):\n"
                "    if q.shape[-1] != k.shape[-1]:\n"
                "        raise ValueError(f'q {tuple(q.shape)} e k {tuple(k.shape)}')\n"
                "    qd, kd, vd = q.double(), k.double(), v.double()\n"
                "    s = (qd @ kd.transpose(-2, -1)) / math.sqrt(q.shape[-1])\n"
                "    s.masked_fill_(_futuro(q.shape[-2], k.shape[-2], start), -math.inf)\n"
                "    return misturar(torch.softmax(s, -1), vd).to(q.dtype)\n"),
        },
    ),
]
