"""Cap. 6: respostas plantadas e justas (o formato está em __init__.py)."""

from answers import Fair, Planted

# As soluções de referência, para montar variações (cada resposta troca células inteiras).
_SPLIT_MERGE = (
    "def split_heads(x, n_heads):\n"
    "    if x.ndim != 3:\n"
    "        raise ValueError(f'x deve ter forma (B, T, D), veio {tuple(x.shape)}')\n"
    "    B, T, D = x.shape\n"
    "    if D % n_heads != 0:\n"
    "        raise ValueError(f'D={D} não é múltiplo de n_heads={n_heads} ({tuple(x.shape)})')\n"
    "    return x.reshape(B, T, n_heads, D // n_heads).transpose(1, 2)\n\n\n"
    "def merge_heads(x):\n"
    "    B, H, T, d_k = x.shape\n"
    "    return x.transpose(1, 2).reshape(B, T, H * d_k)\n")

_VALIDA_GQA = (
    "    H, Hkv = q.shape[1], k.shape[1]\n"
    "    if v.shape[1] != Hkv:\n"
    "        raise ValueError(f'k{tuple(k.shape)} e v{tuple(v.shape)} com cabeças diferentes')\n"
    "    if H % Hkv != 0:\n"
    "        raise ValueError(f'H={H} não é múltiplo de Hkv={Hkv}')\n")

_REPEAT_KV = (
    "def repeat_kv(k, n_rep):\n"
    "    B, Hkv, T, d = k.shape\n"
    "    return k[:, :, None].expand(B, Hkv, n_rep, T, d).reshape(B, Hkv * n_rep, T, d)\n\n\n")

PLANTED = [
    # ---------------------------------------------------------------- tarefa 1
    Planted(
        why="reshape direto para (B, H, T, d_k), sem transpose: forma certa, conteúdo errado",
        cells={"split_merge": (
            "def split_heads(x, n_heads):\n"
            "    if x.ndim != 3 or x.shape[-1] % n_heads:\n"
            "        raise ValueError(f'forma {tuple(x.shape)}')\n"
            "    B, T, D = x.shape\n"
            "    return x.reshape(B, n_heads, T, D // n_heads)\n\n\n"
            "def merge_heads(x):\n"
            "    B, H, T, d_k = x.shape\n"
            "    return x.reshape(B, T, H * d_k)\n")},
        zero=("test_split_merge",),
    ),
    Planted(
        why="view depois do transpose em merge_heads: o tensor não é contíguo e view não junta dimensões",
        cells={"split_merge": _SPLIT_MERGE.replace(
            "    return x.transpose(1, 2).reshape(B, T, H * d_k)\n",
            "    return x.transpose(1, 2).view(B, T, H * d_k)\n")},
        zero=("test_split_merge",),
        # a multi_head_attention de referência chama esta merge_heads, que levanta: a tarefa 2 não tem
        # resultado a conferir (a mensagem aponta para a tarefa 1); o kernel do aluno não pode trocá-la
        free=("test_mha",),
    ),
    # ---------------------------------------------------------------- tarefa 2
    Planted(
        why="o gabarito do teste (nn.MultiheadAttention com os pesos copiados) como resposta",
        cells={"mha": (
            "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
            "    B, T, D = x.shape\n"
            "    ref = torch.nn.MultiheadAttention(D, n_heads, bias=False, batch_first=True, dtype=x.dtype)\n"
            "    with torch.no_grad():\n"
            "        ref.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T]))\n"
            "        ref.out_proj.weight.copy_(W_o.T)\n"
            "        proibido = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)\n"
            "        return ref(x, x, x, attn_mask=proibido, need_weights=False)[0]\n")},
        zero=("test_mha",),
    ),
    Planted(
        why="SDPA nas cabeças divididas (a atenção pronta faz o núcleo da tarefa)",
        cells={"mha": (
            "import torch.nn.functional as F\n\n"
            "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
            "    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))\n"
            "    return merge_heads(F.scaled_dot_product_attention(q, k, v, is_causal=True)) @ W_o\n")},
        zero=("test_mha",),
    ),
    Planted(
        why="o operador aten do SDPA chamado direto, por getattr (o nome não aparece inteiro no texto)",
        cells={"mha": (
            "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
            "    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))\n"
            "    f = getattr(torch.ops.aten, 'scaled_dot_' + 'product_attention')\n"
            "    return merge_heads(f(q, k, v, is_causal=True)) @ W_o\n")},
        zero=("test_mha",),
    ),
    Planted(
        why="laço sobre as cabeças escondido num map (a regra de sintaxe antiga não via)",
        cells={"mha": (
            "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
            "    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))\n"
            "    T = x.shape[1]\n"
            "    proibido = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)\n"
            "    def cabeca(h):\n"
            "        s = q[:, h] @ k[:, h].transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
            "        return torch.softmax(s.masked_fill(proibido, float('-inf')), -1) @ v[:, h]\n"
            "    return merge_heads(torch.stack(list(map(cabeca, range(n_heads))), 1)) @ W_o\n")},
        zero=("test_mha",),
    ),
    Planted(
        why="laço for sobre as cabeças numa função auxiliar, por recursão",
        cells={"mha": (
            "def _cabecas(q, k, v, h, T):\n"
            "    if h == q.shape[1]:\n"
            "        return []\n"
            "    s = q[:, h] @ k[:, h].transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
            "    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float('-inf'))\n"
            "    return [torch.softmax(s, -1) @ v[:, h]] + _cabecas(q, k, v, h + 1, T)\n\n\n"
            "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
            "    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))\n"
            "    return merge_heads(torch.stack(_cabecas(q, k, v, 0, x.shape[1]), 1)) @ W_o\n")},
        zero=("test_mha",),
    ),
    Planted(
        why="esquece a máscara causal (a saída vê o futuro)",
        cells={"mha": (
            "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
            "    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))\n"
            "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
            "    return merge_heads(torch.softmax(s, -1) @ v) @ W_o\n")},
        zero=("test_mha",),
    ),
    # ---------------------------------------------------------------- tarefa 3
    Planted(
        why="o gabarito do teste (SDPA com enable_gqa) como resposta",
        cells={"gqa": (
            "import torch.nn.functional as F\n\n"
            "def repeat_kv(k, n_rep):\n"
            "    return k.repeat_interleave(n_rep, dim=1)\n\n\n"
            "def gqa_attention(q, k, v):\n" + _VALIDA_GQA +
            "    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)\n")},
        zero=("test_gqa",),
    ),
    Planted(
        why="repeat_kv escrito, mas a atenção é o SDPA",
        cells={"gqa": (
            "import torch.nn.functional as F\n\n" + _REPEAT_KV +
            "def gqa_attention(q, k, v):\n" + _VALIDA_GQA +
            "    G = H // Hkv\n"
            "    return F.scaled_dot_product_attention(q, repeat_kv(k, G), repeat_kv(v, G), is_causal=True)\n")},
        zero=("test_gqa",),
    ),
    Planted(
        why="repeat no lugar de repeat_interleave: grupos trocados (KV0, KV1, KV0, KV1)",
        cells={"gqa": (
            "def repeat_kv(k, n_rep):\n"
            "    return k.repeat(1, n_rep, 1, 1)\n\n\n"
            "def gqa_attention(q, k, v):\n" + _VALIDA_GQA +
            "    G = H // Hkv\n"
            "    k, v = repeat_kv(k, G), repeat_kv(v, G)\n"
            "    T = q.shape[-2]\n"
            "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
            "    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float('-inf'))\n"
            "    return torch.softmax(s, -1) @ v\n")},
        zero=("test_gqa",),
    ),
    # ---------------------------------------------------------------- tarefa 4
    Planted(
        why="os FLOPs e parâmetros medidos (FlopCounterMode e nn.Linear em tensores meta), não contados",
        cells={"custos": (
            "from torch.utils.flop_counter import FlopCounterMode\n\n"
            "def attention_params(D, H, Hkv):\n"
            "    d_k = D // H\n"
            "    cs = [torch.nn.Linear(D, H * d_k, bias=False, device='meta'), torch.nn.Linear(D, Hkv * d_k, bias=False, device='meta'),\n"
            "          torch.nn.Linear(D, Hkv * d_k, bias=False, device='meta'), torch.nn.Linear(H * d_k, D, bias=False, device='meta')]\n"
            "    return int(sum(p.numel() for c in cs for p in c.parameters()))\n\n\n"
            "def attention_flops(B, T, D, H, Hkv):\n"
            "    d_k = D // H\n"
            "    e = dict(device='meta')\n"
            "    x = torch.empty(B, T, D, **e)\n"
            "    Wq, Wk, Wv, Wo = (torch.empty(D, H * d_k, **e), torch.empty(D, Hkv * d_k, **e),\n"
            "                      torch.empty(D, Hkv * d_k, **e), torch.empty(H * d_k, D, **e))\n"
            "    with FlopCounterMode(display=False) as fc:\n"
            "        q = (x @ Wq).view(B, T, H, d_k).transpose(1, 2)\n"
            "        k = (x @ Wk).view(B, T, Hkv, d_k).transpose(1, 2).repeat_interleave(H // Hkv, dim=1)\n"
            "        v = (x @ Wv).view(B, T, Hkv, d_k).transpose(1, 2).repeat_interleave(H // Hkv, dim=1)\n"
            "        a = q @ k.transpose(-2, -1)\n"
            "        (a @ v).transpose(1, 2).reshape(B, T, H * d_k) @ Wo\n"
            "    return int(fc.get_total_flops())\n")},
        zero=("test_custos",),
    ),
    Planted(
        why="a fórmula certa, mas em float (d_k = D / H): perde os últimos dígitos dos números grandes",
        cells={"custos": (
            "def attention_params(D, H, Hkv):\n"
            "    d_k = D / H\n"
            "    return int(D * H * d_k + 2 * D * Hkv * d_k + H * d_k * D)\n\n\n"
            "def attention_flops(B, T, D, H, Hkv):\n"
            "    d_k = D / H\n"
            "    return int(4 * B * T * D * H * d_k + 4 * B * T * D * Hkv * d_k + 4 * B * H * T * T * d_k)\n")},
        zero=("test_custos",),
    ),
    Planted(
        why="esquece que K e V têm só Hkv cabeças",
        cells={"custos": (
            "def attention_params(D, H, Hkv):\n"
            "    return 4 * D * D\n\n\n"
            "def attention_flops(B, T, D, H, Hkv):\n"
            "    return 2 * B * T * 4 * D * D + 4 * B * T * T * D\n")},
        zero=("test_custos",),
    ),
]

FAIR = [
    Fair(
        why="tarefa 2 com um gerador sobre as três projeções; tarefa 1 com compreensões sobre as cabeças "
            "(split com stack de fatias, merge com cat); tarefa 4 com math.prod",
        cells={
            "split_merge": (
                "def split_heads(x, n_heads):\n"
                "    if x.ndim != 3:\n"
                "        raise ValueError(f'esperava (B, T, D), veio {tuple(x.shape)}')\n"
                "    B, T, D = x.shape\n"
                "    if D % n_heads:\n"
                "        raise ValueError(f'D={D} não divide em {n_heads} cabeças: {tuple(x.shape)}')\n"
                "    d_k = D // n_heads\n"
                "    return torch.stack([x[:, :, h * d_k:(h + 1) * d_k] for h in range(n_heads)], 1)  # (B, H, T, d_k)\n\n\n"
                "def merge_heads(x):\n"
                "    return torch.cat([x[:, h] for h in range(x.shape[1])], dim=-1)   # (B, T, H*d_k)\n"),
            "mha": (
                "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
                "    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))\n"
                "    T, d_k = q.shape[-2], q.shape[-1]\n"
                "    s = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n"
                "    proibido = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)\n"
                "    return merge_heads(torch.softmax(s.masked_fill(proibido, float('-inf')), -1) @ v) @ W_o\n"),
            "custos": (
                "import math\n\n"
                "def attention_params(D, H, Hkv):\n"
                "    d_k = D // H\n"
                "    formas = [(D, H * d_k), (D, Hkv * d_k), (D, Hkv * d_k), (H * d_k, D)]\n"
                "    return sum(math.prod(f) for f in formas)\n\n\n"
                "def attention_flops(B, T, D, H, Hkv):\n"
                "    d_k = D // H\n"
                "    produtos = [(B * T, D, H * d_k), (B * T, D, Hkv * d_k), (B * T, D, Hkv * d_k),\n"
                "                (B * H * T, d_k, T), (B * H * T, T, d_k), (B * T, H * d_k, D)]\n"
                "    print('produtos:', len(produtos))\n"
                "    return sum(2 * math.prod(p) for p in produtos)\n"),
        },
    ),
    Fair(
        why="tarefa 1 com unflatten/flatten e prints; tarefa 2 com as projeções fundidas (cat + split), einsum, "
            "torch.where e a conta em float64 devolvida no dtype da entrada; tarefa 3 agrupando as consultas "
            "(B, Hkv, G, T, d) sem repetir k e v, repeat_kv com unsqueeze + repeat + view",
        cells={
            "split_merge": (
                "def split_heads(x, n_heads):\n"
                "    if x.dim() != 3 or x.shape[-1] % n_heads != 0:\n"
                "        raise ValueError(f'forma inválida: {tuple(x.shape)} com {n_heads} cabeças')\n"
                "    print('split', tuple(x.shape), n_heads)\n"
                "    return x.unflatten(-1, (n_heads, -1)).permute(0, 2, 1, 3)   # (B, H, T, d_k)\n\n\n"
                "def merge_heads(x):\n"
                "    return x.permute(0, 2, 1, 3).flatten(-2)                   # (B, T, H*d_k)\n"),
            "mha": (
                "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
                "    D = x.shape[-1]\n"
                "    x64 = x.double()\n"
                "    qkv = x64 @ torch.cat([W_q, W_k, W_v], dim=1).double()      # (B, T, 3D)\n"
                "    q, k, v = (split_heads(t, n_heads) for t in qkv.split(D, dim=-1))\n"
                "    s = torch.einsum('bhid,bhjd->bhij', q, k) / q.shape[-1] ** 0.5\n"
                "    T = x.shape[1]\n"
                "    pode = torch.arange(T)[:, None] >= torch.arange(T)[None, :]\n"
                "    s = torch.where(pode, s, torch.tensor(float('-inf'), dtype=s.dtype))\n"
                "    a = torch.exp(s - s.amax(-1, keepdim=True))\n"
                "    a = a / a.sum(-1, keepdim=True)\n"
                "    o = torch.einsum('bhij,bhjd->bhid', a, v)\n"
                "    return (merge_heads(o) @ W_o.double()).to(x.dtype)\n"),
            "gqa": (
                "def repeat_kv(k, n_rep):\n"
                "    B, Hkv, T, d = k.shape\n"
                "    return k.unsqueeze(2).repeat(1, 1, n_rep, 1, 1).view(B, Hkv * n_rep, T, d)\n\n\n"
                "def gqa_attention(q, k, v):\n"
                "    B, H, T, d = q.shape\n"
                "    Hkv = k.shape[1]\n"
                "    if v.shape[1] != Hkv or H % Hkv:\n"
                "        raise ValueError(f'cabeças: q{tuple(q.shape)}, k{tuple(k.shape)}, v{tuple(v.shape)}')\n"
                "    qg = q.view(B, Hkv, H // Hkv, T, d)                       # consultas agrupadas\n"
                "    s = qg @ k.unsqueeze(2).transpose(-2, -1) / math.sqrt(d)   # (B, Hkv, G, T, T)\n"
                "    futuro = torch.ones(T, T, dtype=torch.bool).triu(1)\n"
                "    a = s.masked_fill(futuro, float('-inf')).softmax(-1)\n"
                "    return (a @ v.unsqueeze(2)).reshape(B, H, T, d)\n"),
        },
    ),
    Fair(
        why="tarefa 1 com laços for que preenchem um tensor novo; tarefa 3 com repeat_interleave e a máscara "
            "por comparação de índices; tarefa 4 com uma função auxiliar",
        cells={
            "split_merge": (
                "def split_heads(x, n_heads):\n"
                "    if len(x.shape) != 3:\n"
                "        raise ValueError('x precisa de 3 dimensões, veio ' + str(tuple(x.shape)))\n"
                "    B, T, D = x.shape\n"
                "    if D % n_heads:\n"
                "        raise ValueError(f'{D} não é múltiplo de {n_heads}; forma {tuple(x.shape)}')\n"
                "    d_k = D // n_heads\n"
                "    out = x.new_empty(B, n_heads, T, d_k)\n"
                "    for h in range(n_heads):\n"
                "        out[:, h] = x[:, :, h * d_k:(h + 1) * d_k]\n"
                "    return out\n\n\n"
                "def merge_heads(x):\n"
                "    B, H, T, d_k = x.shape\n"
                "    out = x.new_empty(B, T, H * d_k)\n"
                "    for h in range(H):\n"
                "        out[:, :, h * d_k:(h + 1) * d_k] = x[:, h]\n"
                "    return out\n"),
            "gqa": (
                "def repeat_kv(k, n_rep):\n"
                "    return torch.repeat_interleave(k, n_rep, dim=1)\n\n\n"
                "def gqa_attention(q, k, v):\n" + _VALIDA_GQA +
                "    k, v = repeat_kv(k, H // Hkv), repeat_kv(v, H // Hkv)\n"
                "    T = q.shape[-2]\n"
                "    i = torch.arange(T)\n"
                "    s = (q @ k.mT) * q.shape[-1] ** -0.5\n"
                "    s = s.masked_fill(i[None, :] > i[:, None], -math.inf)\n"
                "    return torch.nn.functional.softmax(s, dim=-1) @ v\n"),
            "custos": (
                "def _mm(m, k, n):\n"
                "    return 2 * m * k * n\n\n\n"
                "def attention_params(D, H, Hkv):\n"
                "    d_k = D // H\n"
                "    return 2 * D * H * d_k + 2 * D * Hkv * d_k\n\n\n"
                "def attention_flops(B, T, D, H, Hkv):\n"
                "    d_k = D // H\n"
                "    proj = _mm(B * T, D, H * d_k) * 2 + _mm(B * T, D, Hkv * d_k) * 2\n"
                "    nucleo = _mm(T, d_k, T) * B * H + _mm(T, T, d_k) * B * H\n"
                "    return proj + nucleo\n"),
        },
    ),
]
