"""Cap. 11: respostas plantadas e justas (o formato está em __init__.py).

Tarefa 1: o laço do passo de ida é da célula travada (flash_forward, na preparação); o aluno
escreve key_blocks (quais blocos de chaves ler), flash_step (o passo online) e flash_finish.
"""

from answers import Fair, Planted

_REF_STEP = (
    "def flash_step(state, q_i, k_j, v_j, mask=None):\n"
    "    m, l, acc = state\n"
    "    dt = m.dtype\n"
    "    s = (q_i.to(dt) @ k_j.to(dt).transpose(-2, -1)) / math.sqrt(q_i.shape[-1])\n"
    "    if mask is not None:\n"
    "        s = s.masked_fill(mask, -inf)\n"
    "    m_new = torch.maximum(m, s.amax(dim=-1))\n"
    "    p = torch.where(s == -inf, torch.zeros_like(s), torch.exp(s - m_new[..., None]))\n"
    "    alpha = torch.where(m == -inf, torch.zeros_like(m), torch.exp(m - m_new))\n"
    "    return m_new, l * alpha + p.sum(dim=-1), acc * alpha[..., None] + p @ v_j.to(dt)\n"
)
_REF_FINISH = (
    "def flash_finish(state):\n"
    "    m, l, acc = state\n"
    "    return acc / l[..., None], m + torch.log(l)\n"
)
_REF_BLOCKS = (
    "def key_blocks(i, n_blocks, causal=True):\n"
    "    return list(range(i + 1)) if causal else list(range(n_blocks))\n"
)


def _forward(blocks=_REF_BLOCKS, step=_REF_STEP, finish=_REF_FINISH):
    return {"flash_forward": blocks + "\n\n" + step + "\n\n" + finish}


PLANTED = [
    Planted(
        why="(revisão E3) guarda os blocos de chaves e valores numa global e faz a softmax comum sobre todas as "
            "chaves vistas: o estado é inventado a cada passo (sem a atualização online)",
        cells=_forward(step=(
            "_kv = []\n\n"
            "def flash_step(state, q_i, k_j, v_j, mask=None):\n"
            "    m, l, acc = state\n"
            "    if bool((m == -inf).all()) or (_kv and _kv[0][0].shape[:-2] != k_j.shape[:-2]):\n"
            "        _kv.clear()\n"
            "    _kv.append((k_j.to(m.dtype), v_j.to(m.dtype), mask))\n"
            "    k = torch.cat([a for a, _, _ in _kv], -2)\n"
            "    v = torch.cat([b for _, b, _ in _kv], -2)\n"
            "    s = q_i.to(m.dtype) @ k.transpose(-2, -1) / math.sqrt(q_i.shape[-1])\n"
            "    masks = [mk if mk is not None else torch.zeros(q_i.shape[-2], a.shape[-2], dtype=torch.bool)\n"
            "             for a, _, mk in _kv]\n"
            "    s = s.masked_fill(torch.cat(masks, -1), -inf)\n"
            "    mm = s.amax(-1)\n"
            "    p = torch.exp(s - mm[..., None])\n"
            "    return mm, p.sum(-1), p @ v\n")),
        zero=("test_flash_forward",),
    ),
    Planted(
        why="nenhum bloco pulado: lê todos os blocos de chaves e só aplica a máscara (NaN do futuro entra)",
        cells=_forward(blocks=(
            "def key_blocks(i, n_blocks, causal=True):\n"
            "    return list(range(n_blocks))\n")),
        zero=("test_flash_forward",),
    ),
    Planted(
        why="máscara depois da exponencial: o máximo inclui as chaves proibidas (uma chave futura enorme zera tudo)",
        cells=_forward(step=(
            "def flash_step(state, q_i, k_j, v_j, mask=None):\n"
            "    m, l, acc = state\n"
            "    dt = m.dtype\n"
            "    s = (q_i.to(dt) @ k_j.to(dt).transpose(-2, -1)) / math.sqrt(q_i.shape[-1])\n"
            "    m_new = torch.maximum(m, s.amax(dim=-1))\n"
            "    p = torch.exp(s - m_new[..., None])\n"
            "    if mask is not None:\n"
            "        p = p * (~mask)\n"
            "    alpha = torch.where(m == -inf, torch.zeros_like(m), torch.exp(m - m_new))\n"
            "    return m_new, l * alpha + p.sum(dim=-1), acc * alpha[..., None] + p @ v_j.to(dt)\n")),
        zero=("test_flash_forward",),
    ),
    Planted(
        why="torch.softmax e torch.logsumexp do bloco para montar o estado",
        cells=_forward(step=(
            "def flash_step(state, q_i, k_j, v_j, mask=None):\n"
            "    m, l, acc = state\n"
            "    dt = m.dtype\n"
            "    s = (q_i.to(dt) @ k_j.to(dt).transpose(-2, -1)) / math.sqrt(q_i.shape[-1])\n"
            "    if mask is not None:\n"
            "        s = s.masked_fill(mask, -inf)\n"
            "    lse_b = torch.logsumexp(s, -1)\n"
            "    o_b = torch.softmax(s, -1) @ v_j.to(dt)\n"
            "    m_new = torch.maximum(m, lse_b)\n"
            "    a = torch.where(m == -inf, torch.zeros_like(m), torch.exp(m - m_new))\n"
            "    b = torch.exp(lse_b - m_new)\n"
            "    return m_new, l * a + b, acc * a[..., None] + o_b * b[..., None]\n")),
        zero=("test_flash_forward",),
    ),
    Planted(
        why="lse sem o log: m + l",
        cells=_forward(finish=(
            "def flash_finish(state):\n"
            "    m, l, acc = state\n"
            "    return acc / l[..., None], m + l\n")),
        zero=("test_flash_forward",),
    ),
    Planted(
        why="(tarefa 2) metade do quadrado em vez do triângulo com a diagonal",
        cells={"causal_blocks": (
            "def causal_blocks(T, block):\n"
            "    nb = -(-T // block)\n"
            "    return nb * nb // 2, nb * nb - nb * nb // 2\n")},
        zero=("test_causal_blocks",),
    ),
    Planted(
        why="(tarefa 4) os gradientes pelo autograd do torch sobre a atenção ingênua",
        cells={"flash_backward": (
            "def flash_backward(q, k, v, out, lse, dout, causal=True, block=32):\n"
            "    q, k, v = (x.detach().clone().requires_grad_(True) for x in (q, k, v))\n"
            "    T = q.shape[-2]\n"
            "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
            "    if causal:\n"
            "        s = s.masked_fill(torch.arange(T)[None, :] > torch.arange(T)[:, None], -inf)\n"
            "    (torch.softmax(s, -1) @ v * dout).sum().backward()\n"
            "    return q.grad, k.grad, v.grad\n")},
        zero=("test_flash_backward",),
    ),
    Planted(
        why="(tarefa 3) esquece o D_i em dS: a tarefa 4 continua com nota cheia",
        cells={"block_backward": (
            "def block_backward(q_i, k_j, v_j, do_i, lse_i, D_i, mask=None):\n"
            "    scale = 1.0 / math.sqrt(q_i.shape[-1])\n"
            "    s = (q_i @ k_j.transpose(-2, -1)) * scale\n"
            "    if mask is not None:\n"
            "        s = s.masked_fill(mask, -inf)\n"
            "    p = torch.exp(s - lse_i[..., None])\n"
            "    ds = p * (do_i @ v_j.transpose(-2, -1))\n"
            "    return (ds @ k_j) * scale, (ds.transpose(-2, -1) @ q_i) * scale, p.transpose(-2, -1) @ do_i\n")},
        zero=("test_block_backward",),
    ),
]

FAIR = [
    Fair(
        why="blocos na ordem inversa (diagonal primeiro), contas em float64 dentro do passo, pula no passo os blocos "
            "todos mascarados, lse com log1p, prints",
        cells=_forward(
            blocks=(
                "def key_blocks(i, n_blocks, causal=True):\n"
                "    ultimo = i if causal else n_blocks - 1\n"
                "    print('bloco de consultas', i)\n"
                "    return [j for j in range(ultimo, -1, -1)]\n"),
            step=(
                "def flash_step(state, q_i, k_j, v_j, mask=None):\n"
                "    m, l, acc = (t.double() for t in state)\n"
                "    q, k, v = q_i.double(), k_j.double(), v_j.double()\n"
                "    if mask is not None and bool(mask.all()):\n"
                "        return state\n"
                "    s = torch.einsum('...id,...jd->...ij', q, k) * q.shape[-1] ** -0.5\n"
                "    if mask is not None:\n"
                "        s = torch.where(mask, torch.full_like(s, -inf), s)\n"
                "    m_new = torch.maximum(m, s.max(dim=-1).values)\n"
                "    p = torch.exp(s - m_new.unsqueeze(-1)).nan_to_num(0.0)\n"
                "    alpha = torch.exp(m - m_new).nan_to_num(0.0)\n"
                "    dt = state[0].dtype\n"
                "    out = (m_new, l * alpha + p.sum(-1), acc * alpha.unsqueeze(-1) + torch.matmul(p, v))\n"
                "    return tuple(t.to(dt) for t in out)\n"),
            finish=(
                "def flash_finish(state):\n"
                "    m, l, acc = state\n"
                "    out = acc / l.unsqueeze(-1)\n"
                "    lse = m + torch.log1p(l - 1)\n"
                "    return out, lse\n"),
        ),
    ),
    Fair(
        why="passo escrito como estado do bloco + junção (merge), alterando o estado no lugar, tupla de blocos",
        cells=_forward(
            blocks=(
                "def key_blocks(i, n_blocks, causal=True):\n"
                "    n = min(i + 1, n_blocks) if causal else n_blocks\n"
                "    return tuple(range(n))\n"),
            step=(
                "def _junta(m, l, acc, mb, lb, accb):\n"
                "    mn = torch.maximum(m, mb)\n"
                "    fa = torch.where(m == -inf, torch.zeros_like(mn), torch.exp(m - mn))\n"
                "    fb = torch.where(mb == -inf, torch.zeros_like(mn), torch.exp(mb - mn))\n"
                "    return mn, l * fa + lb * fb, acc * fa[..., None] + accb * fb[..., None]\n\n"
                "def flash_step(state, q_i, k_j, v_j, mask=None):\n"
                "    m, l, acc = state\n"
                "    scale = 1.0 / math.sqrt(q_i.shape[-1])\n"
                "    s = (q_i.to(m.dtype) * scale) @ k_j.to(m.dtype).transpose(-2, -1)\n"
                "    if mask is not None:\n"
                "        s.masked_fill_(mask, -inf)\n"
                "    mb = s.amax(-1)\n"
                "    pb = torch.exp(s - torch.where(mb == -inf, torch.zeros_like(mb), mb)[..., None])\n"
                "    mn, ln, accn = _junta(m, l, acc, mb, pb.sum(-1), pb @ v_j.to(m.dtype))\n"
                "    m.copy_(mn); l.copy_(ln); acc.copy_(accn)\n"
                "    return m, l, acc\n"),
        ),
    ),
]

# Tarefas 2 a 4 (contagem dos blocos, passo de volta de um par de blocos, passo de volta completo):
# outras maneiras certas de escrever cada uma.
FAIR += [
    Fair(
        why="contagem por laços sobre os pares de blocos; passo de volta em float64 com einsum e torch.where; "
            "passo completo com as consultas no laço de fora e a máscara por comparação de índices",
        cells={
            "causal_blocks": (
                "def causal_blocks(T, block):\n"
                "    n = math.ceil(T / block)\n"
                "    feitos = sum(1 for i in range(n) for j in range(n) if j <= i)\n"
                "    print('blocos:', n, 'x', n)\n"
                "    return feitos, n * n - feitos\n"),
            "block_backward": (
                "def block_backward(q_i, k_j, v_j, do_i, lse_i, D_i, mask=None):\n"
                "    dt = q_i.dtype\n"
                "    q, k, v, do = (t.double() for t in (q_i, k_j, v_j, do_i))\n"
                "    c = 1.0 / math.sqrt(q.shape[-1])\n"
                "    s = torch.einsum('...id,...jd->...ij', q, k) * c\n"
                "    p = torch.exp(s - lse_i.double().unsqueeze(-1))\n"
                "    if mask is not None:\n"
                "        p = torch.where(mask, torch.zeros_like(p), p)\n"
                "    dv = torch.einsum('...ij,...id->...jd', p, do)\n"
                "    dp = torch.einsum('...id,...jd->...ij', do, v)\n"
                "    ds = p * (dp - D_i.double().unsqueeze(-1))\n"
                "    dq = torch.einsum('...ij,...jd->...id', ds, k) * c\n"
                "    dk = torch.einsum('...ij,...id->...jd', ds, q) * c\n"
                "    return dq.to(dt), dk.to(dt), dv.to(dt)\n"),
            "flash_backward": (
                "def flash_backward(q, k, v, out, lse, dout, causal=True, block=32):\n"
                "    T = q.shape[-2]\n"
                "    D = torch.einsum('...td,...td->...t', dout, out)\n"
                "    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)\n"
                "    for i0 in range(0, T, block):\n"
                "        i1 = min(i0 + block, T)\n"
                "        ultimo = i1 if causal else T\n"
                "        for j0 in range(0, ultimo, block):\n"
                "            j1 = min(j0 + block, T)\n"
                "            futuro = (torch.arange(j0, j1).unsqueeze(0) > torch.arange(i0, i1).unsqueeze(1)) if causal else None\n"
                "            a, b, c = block_backward(q[..., i0:i1, :], k[..., j0:j1, :], v[..., j0:j1, :],\n"
                "                                     dout[..., i0:i1, :], lse[..., i0:i1], D[..., i0:i1], futuro)\n"
                "            dq[..., i0:i1, :] += a\n"
                "            dk[..., j0:j1, :] += b\n"
                "            dv[..., j0:j1, :] += c\n"
                "    return dq, dk, dv\n"),
        },
    ),
    Fair(
        why="contagem pela fórmula com divmod; passo de volta com .mT e a máscara somada como −∞; "
            "passo completo acumulando em listas e somando no fim",
        cells={
            "causal_blocks": (
                "def causal_blocks(T, block):\n"
                "    q, r = divmod(T, block)\n"
                "    n = q + (1 if r else 0)\n"
                "    return n * (n + 1) // 2, n * (n - 1) // 2\n"),
            "block_backward": (
                "def block_backward(q_i, k_j, v_j, do_i, lse_i, D_i, mask=None):\n"
                "    escala = q_i.shape[-1] ** -0.5\n"
                "    s = q_i @ k_j.mT * escala\n"
                "    if mask is not None:\n"
                "        s = s + torch.zeros_like(s).masked_fill(mask, float('-inf'))\n"
                "    p = (s - lse_i.unsqueeze(-1)).exp()\n"
                "    ds = p * (do_i @ v_j.mT - D_i.unsqueeze(-1))\n"
                "    return ds @ k_j * escala, ds.mT @ q_i * escala, p.mT @ do_i\n"),
            "flash_backward": (
                "def flash_backward(q, k, v, out, lse, dout, causal=True, block=32):\n"
                "    T = q.shape[-2]\n"
                "    D = (dout * out).sum(-1)\n"
                "    partes_q = {i0: [] for i0 in range(0, T, block)}\n"
                "    partes_k = {j0: [] for j0 in range(0, T, block)}\n"
                "    partes_v = {j0: [] for j0 in range(0, T, block)}\n"
                "    for j0 in range(0, T, block):\n"
                "        j1 = min(j0 + block, T)\n"
                "        for i0 in range(0, T, block):\n"
                "            i1 = min(i0 + block, T)\n"
                "            if causal and i1 <= j0:\n"
                "                continue\n"
                "            m = (torch.arange(j0, j1)[None, :] > torch.arange(i0, i1)[:, None]) if causal else None\n"
                "            a, b, c = block_backward(q[..., i0:i1, :], k[..., j0:j1, :], v[..., j0:j1, :],\n"
                "                                     dout[..., i0:i1, :], lse[..., i0:i1], D[..., i0:i1], m)\n"
                "            partes_q[i0].append(a)\n"
                "            partes_k[j0].append(b)\n"
                "            partes_v[j0].append(c)\n"
                "    dq = torch.cat([sum(partes_q[i0]) for i0 in sorted(partes_q)], dim=-2)\n"
                "    dk = torch.cat([sum(partes_k[j0]) for j0 in sorted(partes_k)], dim=-2)\n"
                "    dv = torch.cat([sum(partes_v[j0]) for j0 in sorted(partes_v)], dim=-2)\n"
                "    return dq, dk, dv\n"),
        },
    ),
]

# Tarefas 5 e 6 (a máscara como função; o laço em blocos com uma máscara qualquer): o laço é da célula
# travada (flash_forward_mask); o aluno escreve as funções de máscara e block_mask (ler o bloco? com que máscara?).
PLANTED += [
    Planted(
        why="(tarefa 5) a janela deslizante só com a máscara causal (esquece a largura w); os ralos também",
        cells={"funcoes_de_mascara": (
            "def sliding_window(w):\n"
            "    def mask_mod(q_idx, kv_idx):\n"
            "        return kv_idx <= q_idx\n"
            "    return mask_mod\n\n\n"
            "def with_sinks(n_sinks, w):\n"
            "    janela = sliding_window(w)\n"
            "    def mask_mod(q_idx, kv_idx):\n"
            "        return janela(q_idx, kv_idx) | ((kv_idx < n_sinks) & (kv_idx <= q_idx))\n"
            "    return mask_mod\n")},
        zero=("test_funcoes_de_mascara",),
    ),
    Planted(
        why="(tarefa 6) pergunta a mask_mod pelo bloco e aplica a máscara, mas lê todos os blocos (nenhum é pulado)",
        cells={"block_mask": (
            "def block_mask(mask_mod, i0, i1, j0, j1):\n"
            "    visivel = mask_mod(torch.arange(i0, i1)[:, None], torch.arange(j0, j1)[None, :])\n"
            "    return True, ~visivel\n")},
        zero=("test_block_mask",),
    ),
    Planted(
        why="(tarefa 6) pula só os blocos do futuro (a regra causal), não os que a janela ou os documentos escondem",
        cells={"block_mask": (
            "def block_mask(mask_mod, i0, i1, j0, j1):\n"
            "    visivel = mask_mod(torch.arange(i0, i1)[:, None], torch.arange(j0, j1)[None, :])\n"
            "    return j0 <= i1 - 1, ~visivel\n")},
        zero=("test_block_mask",),
    ),
]

FAIR += [
    Fair(
        why="máscaras pela diferença q - kv e torch.logical_or; block_mask com os pares achatados (uma pergunta de bq·bk índices), prints, "
            "`ler` como tensor de dimensão 0 e a máscara sempre presente (também nos blocos cheios)",
        cells={
            "funcoes_de_mascara": (
                "def sliding_window(w):\n"
                "    return lambda q_idx, kv_idx: ((q_idx - kv_idx) >= 0) & ((q_idx - kv_idx) < w)\n\n\n"
                "def with_sinks(n_sinks, w):\n"
                "    def mask_mod(q_idx, kv_idx):\n"
                "        d = q_idx - kv_idx\n"
                "        return torch.logical_and(d >= 0, torch.logical_or(d < w, kv_idx < n_sinks))\n"
                "    return mask_mod\n"),
            "block_mask": (
                "def block_mask(mask_mod, i0, i1, j0, j1):\n"
                "    bq, bk = i1 - i0, j1 - j0\n"
                "    qs = torch.arange(i0, i1).repeat_interleave(bk)   # os pares achatados, um por linha\n"
                "    ks = torch.arange(j0, j1).repeat(bq)\n"
                "    proibida = ~mask_mod(qs, ks).reshape(bq, bk)\n"
                "    if i0 == j0 == 0:\n"
                "        print('primeiro bloco, pares visíveis:', int((~proibida).sum()))\n"
                "    return (~proibida).any(), proibida\n"),
        },
    ),
]
