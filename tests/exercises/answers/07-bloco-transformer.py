"""Cap. 7: respostas plantadas e justas (o formato está em __init__.py)."""

from answers import Fair, Planted

_VALIDA_RMS = (
    "    if tuple(weight.shape) != (x.shape[-1],):\n"
    "        raise ValueError(f'weight {tuple(weight.shape)} e x {tuple(x.shape)}')\n")

_ROPE_CABECA = (
    "def rope(x, start=0, base=10000.0):\n"
    "    T, d = x.shape[-2], x.shape[-1]\n"
    "    if d % 2:\n"
    "        raise ValueError(f'd ímpar: {tuple(x.shape)}')\n")

_BLOCO_CABECA = "def decoder_block(x, p, n_heads, n_kv_heads, eps=1e-5):\n"

PLANTED = [
    # ---------------------------------------------------------------- tarefa 1
    Planted(
        why="F.rms_norm (o gabarito) no lugar da conta",
        cells={"rms_norm": (
            "import torch.nn.functional as F\n\n"
            "def rms_norm(x, weight, eps=1e-5):\n" + _VALIDA_RMS +
            "    xf = x.float() if x.dtype == torch.float16 else x\n"
            "    return F.rms_norm(xf, (x.shape[-1],), weight.to(xf.dtype), eps).to(x.dtype)\n")},
        zero=("test_rms_norm",),
    ),
    Planted(
        why="torch.nn.RMSNorm com o peso copiado",
        cells={"rms_norm": (
            "def rms_norm(x, weight, eps=1e-5):\n" + _VALIDA_RMS +
            "    xf = x.float() if x.dtype == torch.float16 else x\n"
            "    m = torch.nn.RMSNorm(x.shape[-1], eps=eps, dtype=xf.dtype)\n"
            "    with torch.no_grad():\n"
            "        m.weight.copy_(weight)\n"
            "        return m(xf).to(x.dtype)\n")},
        zero=("test_rms_norm",),
    ),
    Planted(
        why="torch.rms_norm por getattr (o nome não aparece no texto)",
        cells={"rms_norm": (
            "def rms_norm(x, weight, eps=1e-5):\n" + _VALIDA_RMS +
            "    f = getattr(torch, 'rms_' + 'norm')\n"
            "    xf = x.float() if x.dtype == torch.float16 else x\n"
            "    return f(xf, [x.shape[-1]], weight.to(xf.dtype), eps).to(x.dtype)\n")},
        zero=("test_rms_norm",),
    ),
    Planted(
        why="o operador aten da RMSNorm chamado direto (torch.ops.aten.rms_norm), que o despacho decompõe",
        cells={"rms_norm": (
            "def rms_norm(x, weight, eps=1e-5):\n" + _VALIDA_RMS +
            "    xf = x.float() if x.dtype == torch.float16 else x\n"
            "    return torch.ops.aten.rms_norm.default(xf, [x.shape[-1]], weight.to(xf.dtype), eps).to(x.dtype)\n")},
        zero=("test_rms_norm",),
    ),
    Planted(
        why="subtrai a média (é a LayerNorm sem viés, não a RMSNorm)",
        cells={"rms_norm": (
            "def rms_norm(x, weight, eps=1e-5):\n" + _VALIDA_RMS +
            "    xf = x.float() if x.dtype == torch.float16 else x\n"
            "    xc = xf - xf.mean(-1, keepdim=True)\n"
            "    return (xc * torch.rsqrt(xc.pow(2).mean(-1, keepdim=True) + eps) * weight.to(xf.dtype)).to(x.dtype)\n")},
        zero=("test_rms_norm",),
    ),
    # ---------------------------------------------------------------- tarefa 2
    Planted(
        why="dois laços em Python, sobre posições e pares, com math.cos/math.sin",
        cells={"rope": _ROPE_CABECA + (
            "    y = x.clone()\n"
            "    for t in range(T):\n"
            "        for i in range(d // 2):\n"
            "            a = (start + t) * base ** (-2 * i / d)\n"
            "            c, s = math.cos(a), math.sin(a)\n"
            "            x0, x1 = x[..., t, 2 * i].float() if x.dtype == torch.float16 else x[..., t, 2 * i], x[..., t, 2 * i + 1]\n"
            "            x1 = x1.to(x0.dtype)\n"
            "            y[..., t, 2 * i] = (x0 * c - x1 * s).to(x.dtype)\n"
            "            y[..., t, 2 * i + 1] = (x0 * s + x1 * c).to(x.dtype)\n"
            "    return y\n")},
        zero=("test_rope",),
    ),
    Planted(
        why="laço só sobre as posições (os pares vetorizados)",
        cells={"rope": _ROPE_CABECA + (
            "    calc = torch.float64 if x.dtype == torch.float64 else torch.float32\n"
            "    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
            "    xc = x.to(calc)\n"
            "    linhas = []\n"
            "    for t in range(T):\n"
            "        ang = (start + t) * theta\n"
            "        c, s = ang.cos().to(calc), ang.sin().to(calc)\n"
            "        x0, x1 = xc[..., t, 0::2], xc[..., t, 1::2]\n"
            "        linhas.append(torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), -1).flatten(-2))\n"
            "    return torch.stack(linhas, -2).to(x.dtype)\n")},
        zero=("test_rope",),
    ),
    Planted(
        why="frequências em float32, como no Llama/HF (erra na 7ª casa na posição 1000)",
        cells={"rope": _ROPE_CABECA + (
            "    inv_freq = 1.0 / base ** (torch.arange(0, d, 2).float() / d)\n"
            "    ang = torch.arange(start, start + T, dtype=torch.float64)[:, None] * inv_freq.double()\n"
            "    calc = torch.float64 if x.dtype == torch.float64 else torch.float32\n"
            "    c, s = ang.cos().to(calc), ang.sin().to(calc)\n"
            "    xc = x.to(calc)\n"
            "    x0, x1 = xc[..., 0::2], xc[..., 1::2]\n"
            "    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), -1).flatten(-2).to(x.dtype)\n")},
        zero=("test_rope",),
    ),
    Planted(
        why="pareia x_i com x_{i+d/2} (metade-metade) em vez de pares vizinhos",
        cells={"rope": _ROPE_CABECA + (
            "    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
            "    ang = torch.arange(start, start + T, dtype=torch.float64)[:, None] * theta\n"
            "    calc = torch.float64 if x.dtype == torch.float64 else torch.float32\n"
            "    c, s = ang.cos().to(calc), ang.sin().to(calc)\n"
            "    xc = x.to(calc)\n"
            "    x0, x1 = xc[..., :d // 2], xc[..., d // 2:]\n"
            "    return torch.cat((x0 * c - x1 * s, x0 * s + x1 * c), -1).to(x.dtype)\n")},
        zero=("test_rope",),
    ),
    # ---------------------------------------------------------------- tarefa 3
    Planted(
        why="ReLU no lugar da silu",
        cells={"swiglu": "def swiglu(x, W1, W3, W2):\n    return (torch.relu(x @ W1) * (x @ W3)) @ W2\n"},
        zero=("test_swiglu",),
    ),
    Planted(
        why="porta e valor trocados: silu(x W3) * (x W1)",
        cells={"swiglu": (
            "def swiglu(x, W1, W3, W2):\n"
            "    a = x @ W3\n"
            "    return (a * torch.sigmoid(a) * (x @ W1)) @ W2\n")},
        zero=("test_swiglu",),
    ),
    Planted(
        why="GELU no lugar da silu (parecida, mas outra função)",
        cells={"swiglu": (
            "import torch.nn.functional as F\n\n"
            "def swiglu(x, W1, W3, W2):\n"
            "    return (F.gelu(x @ W1) * (x @ W3)) @ W2\n")},
        zero=("test_swiglu",),
    ),
    # ---------------------------------------------------------------- tarefa 4
    Planted(
        why="esquece o resíduo da atenção",
        cells={"decoder_block": _BLOCO_CABECA + (
            "    h = rms_norm(x, p['norm1'], eps)\n"
            "    q = rope(split_heads(h @ p['W_q'], n_heads))\n"
            "    k = rope(split_heads(h @ p['W_k'], n_kv_heads))\n"
            "    v = split_heads(h @ p['W_v'], n_kv_heads)\n"
            "    a = merge_heads(gqa_causal_attention(q, k, v)) @ p['W_o']\n"
            "    return a + swiglu(rms_norm(a, p['norm2'], eps), p['W1'], p['W3'], p['W2'])\n")},
        zero=("test_decoder_block",),
    ),
    Planted(
        why="RoPE também em V",
        cells={"decoder_block": _BLOCO_CABECA + (
            "    h = rms_norm(x, p['norm1'], eps)\n"
            "    q = rope(split_heads(h @ p['W_q'], n_heads))\n"
            "    k = rope(split_heads(h @ p['W_k'], n_kv_heads))\n"
            "    v = rope(split_heads(h @ p['W_v'], n_kv_heads))\n"
            "    x = x + merge_heads(gqa_causal_attention(q, k, v)) @ p['W_o']\n"
            "    return x + swiglu(rms_norm(x, p['norm2'], eps), p['W1'], p['W3'], p['W2'])\n")},
        zero=("test_decoder_block",),
    ),
    Planted(
        why="pós-norma (normaliza depois de somar o resíduo) em vez de pré-norma",
        cells={"decoder_block": _BLOCO_CABECA + (
            "    q = rope(split_heads(x @ p['W_q'], n_heads))\n"
            "    k = rope(split_heads(x @ p['W_k'], n_kv_heads))\n"
            "    v = split_heads(x @ p['W_v'], n_kv_heads)\n"
            "    x = rms_norm(x + merge_heads(gqa_causal_attention(q, k, v)) @ p['W_o'], p['norm1'], eps)\n"
            "    return rms_norm(x + swiglu(x, p['W1'], p['W3'], p['W2']), p['norm2'], eps)\n")},
        zero=("test_decoder_block",),
    ),
    Planted(
        why="o SDPA do torch no lugar da gqa_causal_attention",
        cells={"decoder_block": "import torch.nn.functional as F\n\n" + _BLOCO_CABECA + (
            "    h = rms_norm(x, p['norm1'], eps)\n"
            "    q = rope(split_heads(h @ p['W_q'], n_heads))\n"
            "    k = rope(split_heads(h @ p['W_k'], n_kv_heads))\n"
            "    v = split_heads(h @ p['W_v'], n_kv_heads)\n"
            "    att = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)\n"
            "    x = x + merge_heads(att) @ p['W_o']\n"
            "    return x + swiglu(rms_norm(x, p['norm2'], eps), p['W1'], p['W3'], p['W2'])\n")},
        zero=("test_decoder_block",),
    ),
]

FAIR = [
    Fair(
        why="rms_norm com sqrt(soma/D + eps) em float64; RoPE com números complexos; swiglu com F.silu; "
            "bloco com funções auxiliares e prints",
        cells={
            "rms_norm": (
                "def rms_norm(x, weight, eps=1e-5):\n"
                "    D = x.shape[-1]\n"
                "    if weight.shape != (D,):\n"
                "        raise ValueError(f'weight deveria ser ({D},), veio {tuple(weight.shape)}')\n"
                "    x64 = x.double()\n"
                "    rms = torch.sqrt((x64 * x64).sum(dim=-1, keepdim=True) / D + eps)\n"
                "    return (x64 / rms * weight.double()).to(x.dtype)\n"),
            "rope": _ROPE_CABECA + (
                "    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)     # (d/2,)\n"
                "    pos = torch.arange(start, start + T, dtype=torch.float64)             # (T,)\n"
                "    giro = torch.polar(torch.ones(T, d // 2, dtype=torch.float64), torch.outer(pos, theta))\n"
                "    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], d // 2, 2).contiguous())\n"
                "    return torch.view_as_real(z * giro).reshape(x.shape).to(x.dtype)\n"),
            "swiglu": (
                "import torch.nn.functional as F\n\n"
                "def swiglu(x, W1, W3, W2):\n"
                "    return (F.silu(x @ W1) * (x @ W3)) @ W2\n"),
            "decoder_block": (
                "def _atencao(h, p, n_heads, n_kv_heads):\n"
                "    q = rope(split_heads(h @ p['W_q'], n_heads))\n"
                "    k = rope(split_heads(h @ p['W_k'], n_kv_heads))\n"
                "    v = split_heads(h @ p['W_v'], n_kv_heads)\n"
                "    return merge_heads(gqa_causal_attention(q, k, v)) @ p['W_o']\n\n\n"
                "def _mlp(h, p):\n"
                "    return swiglu(h, p['W1'], p['W3'], p['W2'])\n\n\n"
                "def decoder_block(x, p, n_heads, n_kv_heads, eps=1e-5):\n"
                "    print('bloco', tuple(x.shape))\n"
                "    x = x + _atencao(rms_norm(x, p['norm1'], eps), p, n_heads, n_kv_heads)\n"
                "    return torch.add(x, _mlp(rms_norm(x, p['norm2'], eps), p))\n"),
        },
    ),
    Fair(
        why="rms_norm com linalg.vector_norm; RoPE no estilo rotate_half intercalado com repeat_interleave e "
            "frequências 1/base^(2i/d) em float64; swiglu com a / (1 + exp(-a)) e einsum; bloco com "
            "unflatten/transpose no lugar de split_heads",
        cells={
            "rms_norm": (
                "def rms_norm(x, weight, eps=1e-5):\n"
                "    if weight.ndim != 1 or weight.shape[0] != x.shape[-1]:\n"
                "        raise ValueError('formas: weight ' + str(tuple(weight.shape)) + ', x ' + str(tuple(x.shape)))\n"
                "    xf = x.to(torch.float32) if x.dtype in (torch.float16, torch.bfloat16) else x\n"
                "    D = xf.shape[-1]\n"
                "    rms = torch.sqrt(torch.linalg.vector_norm(xf, dim=-1, keepdim=True) ** 2 / D + eps)\n"
                "    return (xf / rms * weight.to(xf.dtype)).to(x.dtype)\n"),
            "rope": _ROPE_CABECA + (
                "    inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))\n"
                "    ang = torch.outer(torch.arange(start, start + T, dtype=torch.float64), inv).repeat_interleave(2, -1)\n"
                "    calc = torch.float64 if x.dtype == torch.float64 else torch.float32\n"
                "    xc = x.to(calc)\n"
                "    girado = torch.stack((-xc[..., 1::2], xc[..., 0::2]), -1).flatten(-2)   # (-x1, x0, -x3, x2, ...)\n"
                "    return (xc * ang.cos().to(calc) + girado * ang.sin().to(calc)).to(x.dtype)\n"),
            "swiglu": (
                "def swiglu(x, W1, W3, W2):\n"
                "    a = torch.einsum('...d,df->...f', x, W1)\n"
                "    b = torch.einsum('...d,df->...f', x, W3)\n"
                "    return torch.einsum('...f,fd->...d', a / (1 + torch.exp(-a)) * b, W2)\n"),
            "decoder_block": (
                "def decoder_block(x, p, n_heads, n_kv_heads, eps=1e-5):\n"
                "    B, T, D = x.shape\n"
                "    h = rms_norm(x, p['norm1'], eps)\n"
                "    q = rope((h @ p['W_q']).unflatten(-1, (n_heads, -1)).transpose(1, 2))\n"
                "    k = rope((h @ p['W_k']).unflatten(-1, (n_kv_heads, -1)).transpose(1, 2))\n"
                "    v = (h @ p['W_v']).unflatten(-1, (n_kv_heads, -1)).transpose(1, 2)\n"
                "    o = gqa_causal_attention(q, k, v).transpose(1, 2).reshape(B, T, -1)\n"
                "    x = x + o @ p['W_o']\n"
                "    x = x + swiglu(rms_norm(x, p['norm2'], eps), p['W1'], p['W3'], p['W2'])\n"
                "    return x\n"),
        },
    ),
]
