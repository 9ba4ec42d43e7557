"""Cap. 10: respostas plantadas e justas (o formato está em __init__.py).

Os laços sobre os blocos são das células travadas (online_stats, online_softmax e
blocked_attention, na preparação); o aluno escreve o passo. Um passo que guarda os blocos numa
variável global e refaz a conta na linha inteira recebe blocos que viram NaN depois de usados (no
Jupyter) e estados montados pelos testes, de colunas que ele nunca viu (no Jupyter e na correção).
"""

from answers import Fair, Planted

PLANTED = [
    # --- tarefa 1: online_step ---
    Planted(
        why="esquece o fator de reescala e^(m_antigo - m): soma os termos novos ao l antigo",
        cells={"online_stats": (
            "def online_step(m, l, xb):\n"
            "    m_new = torch.maximum(m, xb.amax(dim=-1))\n"
            "    p = torch.where(xb == -inf, torch.zeros_like(xb), torch.exp(xb - m_new[..., None]))\n"
            "    return m_new, l + p.sum(dim=-1)\n")},
        zero=("test_online_stats",),
    ),
    Planted(
        why="guarda os blocos vistos numa global e refaz máximo e soma na linha inteira (três passadas, memória O(n))",
        cells={"online_stats": (
            "_vistos = []\n\n"
            "def online_step(m, l, xb):\n"
            "    if bool((m == -inf).all()):\n"
            "        _vistos.clear()\n"
            "    _vistos.append(xb)\n"
            "    x = torch.cat(_vistos, -1)\n"
            "    mm = x.amax(-1)\n"
            "    return mm, torch.exp(x - mm[..., None]).sum(-1)\n")},
        zero=("test_online_stats",),
    ),
    Planted(
        why="torch.logsumexp no lugar da soma corrente",
        cells={"online_stats": (
            "def online_step(m, l, xb):\n"
            "    m_new = torch.maximum(m, xb.amax(dim=-1))\n"
            "    lse = torch.logsumexp(torch.cat([(m + torch.log(l))[..., None], xb], -1), -1)\n"
            "    return m_new, torch.exp(lse - m_new)\n")},
        zero=("test_online_stats",),
    ),
    # --- tarefa 2: normalize_block ---
    Planted(
        why="softmax do bloco sozinho (ignora m e l da linha inteira)",
        cells={"online_softmax": (
            "def normalize_block(m, l, xb):\n"
            "    return torch.softmax(xb, dim=-1)\n")},
        zero=("test_online_softmax",),
    ),
    Planted(
        why="guarda os blocos da primeira passada (online_step) numa global e faz a softmax da linha inteira guardada",
        cells={
            "online_stats": (
                "_linha = []\n\n"
                "def online_step(m, l, xb):\n"
                "    if bool((m == -inf).all()):\n"
                "        _linha.clear()\n"
                "    _linha.append(xb.clone())\n"
                "    m_new = torch.maximum(m, xb.amax(dim=-1))\n"
                "    alpha = torch.where(m == -inf, torch.zeros_like(m), torch.exp(m - m_new))\n"
                "    p = torch.where(xb == -inf, torch.zeros_like(xb), torch.exp(xb - m_new[..., None]))\n"
                "    return m_new, l * alpha + p.sum(dim=-1)\n"),
            "online_softmax": (
                "_pos = [0]\n\n"
                "def normalize_block(m, l, xb):\n"
                "    x = torch.cat(_linha, -1)\n"
                "    mm = x.amax(-1, keepdim=True)\n"
                "    e = torch.exp(x - mm)\n"
                "    w = e / e.sum(-1, keepdim=True)\n"
                "    b = xb.shape[-1]\n"
                "    j = _pos[0] if _pos[0] + b <= x.shape[-1] else 0\n"
                "    _pos[0] = (j + b) % x.shape[-1]\n"
                "    return w[..., j:j + b].to(xb.dtype)\n"),
        },
        zero=("test_online_softmax",),
    ),
    Planted(
        why="normaliza pelo próprio bloco: exp(xb - m) dividido pela soma do bloco, não por l",
        cells={"online_softmax": (
            "def normalize_block(m, l, xb):\n"
            "    p = torch.exp(xb - m[..., None])\n"
            "    return p / p.sum(-1, keepdim=True)\n")},
        zero=("test_online_softmax",),
    ),
    # --- tarefa 3: merge ---
    Planted(
        why="junta as somas sem reescalar pelo novo máximo (a tarefa 4 continua com nota cheia)",
        cells={"merge": (
            "def merge(a, b):\n"
            "    m = torch.maximum(a[0], b[0])\n"
            "    return m, a[1] + b[1], a[2] + b[2]\n")},
        zero=("test_merge",),
    ),
    Planted(
        why="sem o caso do estado vazio: exp(-inf - (-inf)) dá nan",
        cells={"merge": (
            "def merge(a, b):\n"
            "    m = torch.maximum(a[0], b[0])\n"
            "    fa, fb = torch.exp(a[0] - m), torch.exp(b[0] - m)\n"
            "    return m, a[1] * fa + b[1] * fb, a[2] * fa[..., None] + b[2] * fb[..., None]\n")},
        zero=("test_merge",),
    ),
    # --- tarefa 4: attention_step ---
    Planted(
        why="guarda os blocos de chaves e valores numa global e faz a softmax comum sobre todas as chaves vistas",
        cells={"blocked_attention": (
            "_kv = []\n\n"
            "def attention_step(state, q, kj, vj):\n"
            "    if bool((state[0] == -inf).all()) or (_kv and _kv[0][0].shape[:-2] != kj.shape[:-2]):\n"
            "        _kv.clear()\n"
            "    _kv.append((kj, vj))\n"
            "    k = torch.cat([a for a, _ in _kv], -2)\n"
            "    v = torch.cat([b for _, b in _kv], -2)\n"
            "    return state_of(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), v)\n")},
        zero=("test_blocked_attention",),
    ),
    Planted(
        why="guarda os blocos e usa o SDPA do torch sobre as chaves vistas (estado inventado a partir da saída)",
        cells={"blocked_attention": (
            "import torch.nn.functional as F\n"
            "_kv = []\n\n"
            "def attention_step(state, q, kj, vj):\n"
            "    if bool((state[0] == -inf).all()):\n"
            "        _kv.clear()\n"
            "    _kv.append((kj.clone(), vj.clone()))\n"
            "    k = torch.cat([a for a, _ in _kv], -2)\n"
            "    v = torch.cat([b for _, b in _kv], -2)\n"
            "    out = F.scaled_dot_product_attention(q, k, v)\n"
            "    m = torch.zeros(q.shape[:-1], dtype=q.dtype)\n"
            "    return m, torch.ones_like(m), out\n")},
        zero=("test_blocked_attention",),
    ),
    Planted(
        why="esquece o 1/sqrt(d) nas pontuações",
        cells={"blocked_attention": (
            "def attention_step(state, q, kj, vj):\n"
            "    return merge(state, state_of(q @ kj.transpose(-2, -1), vj))\n")},
        zero=("test_blocked_attention",),
    ),
]

FAIR = [
    Fair(
        why="contas em float64 com torch.where em outra ordem, prints, normalização por multiplicação, passo sem merge",
        cells={
            "online_stats": (
                "def online_step(m, l, xb):\n"
                "    dt = xb.dtype\n"
                "    m64, l64, x64 = m.double(), l.double(), xb.double()\n"
                "    bloco_max = x64.max(dim=-1).values\n"
                "    m_new = torch.where(bloco_max > m64, bloco_max, m64)\n"
                "    alpha = torch.exp(m64 - m_new).nan_to_num(0.0)\n"
                "    p = torch.exp(x64 - m_new.unsqueeze(-1)).nan_to_num(0.0)\n"
                "    print('bloco', tuple(xb.shape))\n"
                "    return m_new.to(dt), (l64 * alpha + p.sum(-1)).to(dt)\n"),
            "online_softmax": (
                "def normalize_block(m, l, xb):\n"
                "    dt = torch.promote_types(xb.dtype, torch.float32)  # float16 sobe para float32\n"
                "    inv = 1.0 / l.to(dt)\n"
                "    return (torch.exp(xb.to(dt) - m.to(dt).unsqueeze(-1)) * inv.unsqueeze(-1)).to(xb.dtype)\n"),
            "merge": (
                "def merge(a, b):\n"
                "    (ma, la, acca), (mb, lb, accb) = a, b\n"
                "    m = torch.max(ma, mb)\n"
                "    def fator(x):\n"
                "        f = torch.exp(x - m)\n"
                "        f[x == -inf] = 0.0\n"
                "        return f\n"
                "    fa, fb = fator(ma), fator(mb)\n"
                "    return m, fa * la + fb * lb, fa.unsqueeze(-1) * acca + fb.unsqueeze(-1) * accb\n"),
            "blocked_attention": (
                "def attention_step(state, q, kj, vj):\n"
                "    m, l, acc = state\n"
                "    s = torch.einsum('...nd,...bd->...nb', q, kj) * q.shape[-1] ** -0.5\n"
                "    m_new = torch.maximum(m, s.amax(-1))\n"
                "    alpha = torch.where(torch.isinf(m), torch.zeros_like(m), torch.exp(m - m_new))\n"
                "    p = torch.exp(s - m_new[..., None])\n"
                "    return m_new, l * alpha + p.sum(-1), acc * alpha[..., None] + p @ vj\n"),
        },
    ),
    Fair(
        why="passos que alteram o estado no lugar (copy_, mul_), divisão em dois passos, merge com helper",
        cells={
            "online_stats": (
                "def _fator(antigo, novo):\n"
                "    return torch.where(antigo == -inf, torch.zeros_like(novo), torch.exp(antigo - novo))\n\n"
                "def online_step(m, l, xb):\n"
                "    m_new = torch.maximum(m, xb.amax(dim=-1))\n"
                "    l.mul_(_fator(m, m_new))\n"
                "    l.add_(torch.exp(xb - m_new[..., None]).masked_fill(xb == -inf, 0.0).sum(-1))\n"
                "    m.copy_(m_new)\n"
                "    return m, l\n"),
            "online_softmax": (
                "def normalize_block(m, l, xb):\n"
                "    w = xb - m[..., None]\n"
                "    w = w.exp()\n"
                "    return w / l[..., None]\n"),
            "blocked_attention": (
                "def pontuacoes(q, kj):\n"
                "    return (q / math.sqrt(q.shape[-1])) @ kj.transpose(-2, -1)\n\n"
                "def attention_step(state, q, kj, vj):\n"
                "    bloco = state_of(pontuacoes(q, kj), vj)\n"
                "    return merge(bloco, state)\n"),
        },
    ),
]
