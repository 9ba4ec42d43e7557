"""Cap. 13 (kernels Triton): respostas plantadas e justas (o formato está em __init__.py).

O aluno escreve só os kernels `@triton.jit`; os lançadores são células travadas logo depois
das dele (conferem que o objeto lançado é um kernel do Triton e criam a saída cheia de NaN)."""

from answers import Fair, Planted

# ----------------------------------------------------------------------------- pedaços
_SONDA = '''

@triton.jit
def _sonda_limite(OUT, N, BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr):
    pid = tl.program_id(0)
    tl.store(OUT + pid, limite_chaves(pid * BLOCK_M, N, BLOCK_M, CAUSAL))
'''

_SCORES_CERTO = '''@triton.jit
def scores_kernel(Q, K, S, n, m, d, scale, stride_q, stride_k, stride_s,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d[None, :] < d
    q = tl.load(Q + offs_m[:, None] * stride_q + offs_d[None, :], mask=(offs_m[:, None] < n) & d_ok, other=0.0)
    k = tl.load(K + offs_n[:, None] * stride_k + offs_d[None, :], mask=(offs_n[:, None] < m) & d_ok, other=0.0)
    s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
    tl.store(S + offs_m[:, None] * stride_s + offs_n[None, :], s, mask=(offs_m[:, None] < n) & (offs_n[None, :] < m))
'''

_FLASH_VAZIO = '''@triton.jit
def flash_kernel(Q, K, V, O, LSE, LIMITES, N, d, scale, stride_bh, stride_n,
                 CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_D: tl.constexpr, USAR_LIMITES: tl.constexpr):
    pass
'''

# A atenção em PyTorch, linha por linha (a resposta preguiçosa da revisão, E1, tarefa 4).
_ATENCAO_TORCH = '''

def flash_attention_triton(q, k, v, causal=True, BLOCK=16, limites=None):
    B, H, N, d = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((B, H, N), dtype=torch.float32, device=q.device)
    for i in range(N):
        fim = i + 1 if causal else N
        s = (q[..., i:i + 1, :].float() @ k[..., :fim, :].float().transpose(-2, -1)) / math.sqrt(d)
        lse[..., i] = torch.logsumexp(s, -1)[..., 0]
        o[..., i:i + 1, :] = (torch.softmax(s, -1) @ v[..., :fim, :].float()).to(q.dtype)
    return o, lse
'''

PLANTED = [
    Planted(
        why="E1, tarefa 1: @triton.jit vazio e o lançador softmax_triton em PyTorch na mesma célula",
        cells={"softmax_kernel": (
            "@triton.jit\n"
            "def softmax_kernel(X, Y, stride_x, stride_y, n_cols, BLOCK: tl.constexpr):\n"
            "    pass\n\n\n"
            "def softmax_triton(x):\n"
            "    return torch.softmax(x.float(), dim=-1).to(x.dtype)\n")},
        zero=("test_softmax_kernel",),
    ),
    Planted(
        why="tarefa 1: o kernel calcula a softmax mas não escreve nada (sem tl.store)",
        cells={"softmax_kernel": (
            "@triton.jit\n"
            "def softmax_kernel(X, Y, stride_x, stride_y, n_cols, BLOCK: tl.constexpr):\n"
            "    row = tl.program_id(0)\n"
            "    cols = tl.arange(0, BLOCK)\n"
            "    x = tl.load(X + row * stride_x + cols, mask=cols < n_cols, other=float('-inf')).to(tl.float32)\n"
            "    e = tl.exp(x - tl.max(x, axis=0))\n"
            "    y = e / tl.sum(e, axis=0)\n")},
        zero=("test_softmax_kernel",),
    ),
    Planted(
        why="tarefa 1 com o lançador redefinido em PyTorch numa célula posterior (a da tarefa 2): "
            "o teste usa o lançador do professor",
        cells={
            "softmax_kernel": (
                "@triton.jit\n"
                "def softmax_kernel(X, Y, stride_x, stride_y, n_cols, BLOCK: tl.constexpr):\n"
                "    pass\n"),
            "scores_kernel": _SCORES_CERTO + (
                "\n\ndef softmax_triton(x):\n"
                "    return torch.softmax(x, dim=-1)\n"),
        },
        zero=("test_softmax_kernel",),
    ),
    Planted(
        why="E1, tarefa 2: @triton.jit vazio e o lançador scores_triton em PyTorch",
        cells={"scores_kernel": (
            "@triton.jit\n"
            "def scores_kernel(Q, K, S, n, m, d, scale, stride_q, stride_k, stride_s,\n"
            "                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):\n"
            "    pass\n\n\n"
            "def scores_triton(q, k, BLOCK=16):\n"
            "    return (q.float() @ k.float().T) / math.sqrt(q.shape[-1])\n")},
        zero=("test_scores_kernel",),
    ),
    Planted(
        why="E1, tarefa 3: limite_chaves vazia e o lançador limites em PyTorch",
        cells={"limite_chaves": (
            "@triton.jit\n"
            "def limite_chaves(start_m, N, BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr):\n"
            "    pass\n" + _SONDA + "\n\n"
            "def limites(N, BLOCK_M, causal):\n"
            "    nb = -(-N // BLOCK_M)\n"
            "    return torch.tensor([min((i + 1) * BLOCK_M, N) if causal else N for i in range(nb)],\n"
            "                        dtype=torch.int32)\n")},
        zero=("test_limite_chaves",),
    ),
    Planted(
        why="tarefa 3: a sonda trocada por um objeto Python que preenche OUT com o PyTorch (nada de Triton)",
        cells={"limite_chaves": (
            "@triton.jit\n"
            "def limite_chaves(start_m, N, BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr):\n"
            "    return N\n\n\n"
            "class _Sonda:\n"
            "    def __getitem__(self, grade):\n"
            "        def lancar(out, N, BLOCK_M, CAUSAL):\n"
            "            for i in range(out.numel()):\n"
            "                out[i] = min((i + 1) * BLOCK_M, N) if CAUSAL else N\n"
            "        return lancar\n\n\n"
            "_sonda_limite = _Sonda()\n")},
        zero=("test_limite_chaves",),
    ),
    Planted(
        why="E1, tarefa 4: @triton.jit vazio e flash_attention_triton em PyTorch (softmax por linha)",
        cells={"flash_kernel": _FLASH_VAZIO + _ATENCAO_TORCH},
        zero=("test_flash_kernel",),
    ),
    Planted(
        why="tarefa 4: flash_kernel é um objeto Python cujo `[grade]` devolve a atenção em PyTorch",
        cells={"flash_kernel": (
            "class _Kernel:\n"
            "    def __getitem__(self, grade):\n"
            "        def lancar(q, k, v, o, lse, limites, N, d, scale, sbh, sn, CAUSAL, BLOCK_M, BLOCK_N,\n"
            "                   BLOCK_D, USAR_LIMITES):\n"
            "            s = (q.float() @ k.float().transpose(-2, -1)) * scale\n"
            "            if CAUSAL:\n"
            "                s = s.masked_fill(torch.ones(N, N, dtype=torch.bool).triu(1), float('-inf'))\n"
            "            lse.copy_(torch.logsumexp(s, -1))\n"
            "            o.copy_((torch.softmax(s, -1) @ v.float()).to(o.dtype))\n"
            "        return lancar\n\n\n"
            "flash_kernel = _Kernel()\n")},
        zero=("test_flash_kernel",),
    ),
]

# ----------------------------------------------------------------------------- justas
FAIR = [
    Fair(
        why="exp2 com log2(e), máscara por tl.where depois do load, conversão implícita no store; "
            "scores com o d percorrido em blocos de 16 (outro bloco interno) e acumulação em float32; "
            "limite por tl.where; FlashAttention em base 2",
        cells={
            "softmax_kernel": (
                "@triton.jit\n"
                "def softmax_kernel(X, Y, stride_x, stride_y, n_cols, BLOCK: tl.constexpr):\n"
                "    row = tl.program_id(0)\n"
                "    cols = tl.arange(0, BLOCK)\n"
                "    ok = cols < n_cols\n"
                "    x = tl.load(X + row * stride_x + cols, mask=ok, other=0.0).to(tl.float32)\n"
                "    x = tl.where(ok, x, float('-inf'))\n"
                "    LOG2E: tl.constexpr = 1.4426950408889634\n"
                "    e = tl.exp2((x - tl.max(x, axis=0)) * LOG2E)\n"
                "    total = tl.sum(e, axis=0)\n"
                "    tl.store(Y + row * stride_y + cols, e * (1.0 / total), mask=ok)\n"),
            "scores_kernel": (
                "@triton.jit\n"
                "def scores_kernel(Q, K, S, n, m, d, scale, stride_q, stride_k, stride_s,\n"
                "                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):\n"
                "    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)\n"
                "    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)\n"
                "    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)\n"
                "    for c in range(0, BLOCK_D, 16):\n"
                "        offs_c = c + tl.arange(0, 16)\n"
                "        q = tl.load(Q + offs_m[:, None] * stride_q + offs_c[None, :],\n"
                "                    mask=(offs_m[:, None] < n) & (offs_c[None, :] < d), other=0.0)\n"
                "        k = tl.load(K + offs_n[:, None] * stride_k + offs_c[None, :],\n"
                "                    mask=(offs_n[:, None] < m) & (offs_c[None, :] < d), other=0.0)\n"
                "        acc += tl.dot(q, tl.trans(k), input_precision=\"ieee\")\n"
                "    tl.store(S + offs_m[:, None] * stride_s + offs_n[None, :], acc * scale,\n"
                "             mask=(offs_m[:, None] < n) & (offs_n[None, :] < m))\n"),
            "limite_chaves": (
                "@triton.jit\n"
                "def limite_chaves(start_m, N, BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr):\n"
                "    fim = N\n"
                "    if CAUSAL:\n"
                "        ultimo = start_m + BLOCK_M\n"
                "        fim = tl.where(ultimo < N, ultimo, N)\n"
                "    return fim\n" + _SONDA),
            "flash_kernel": (
                "@triton.jit\n"
                "def flash_kernel(Q, K, V, O, LSE, LIMITES, N, d, scale, stride_bh, stride_n,\n"
                "                 CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,\n"
                "                 BLOCK_D: tl.constexpr, USAR_LIMITES: tl.constexpr):\n"
                "    start_m = tl.program_id(0) * BLOCK_M\n"
                "    bh = tl.program_id(1)\n"
                "    base = bh * stride_bh\n"
                "    offs_m = start_m + tl.arange(0, BLOCK_M)\n"
                "    offs_d = tl.arange(0, BLOCK_D)\n"
                "    m_ok = offs_m < N\n"
                "    d_ok = offs_d < d\n"
                "    q = tl.load(Q + base + offs_m[:, None] * stride_n + offs_d[None, :],\n"
                "                mask=m_ok[:, None] & d_ok[None, :], other=0.0)\n"
                "    LOG2E: tl.constexpr = 1.4426950408889634\n"
                "    qk_scale = scale * LOG2E\n"
                "    m_i = tl.zeros((BLOCK_M,), tl.float32) - float('inf')\n"
                "    l_i = tl.zeros((BLOCK_M,), tl.float32)\n"
                "    acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)\n"
                "    if USAR_LIMITES:\n"
                "        hi = tl.load(LIMITES + tl.program_id(0))\n"
                "    else:\n"
                "        hi = limite_chaves(start_m, N, BLOCK_M, CAUSAL)\n"
                "    for start_n in range(0, hi, BLOCK_N):\n"
                "        offs_n = start_n + tl.arange(0, BLOCK_N)\n"
                "        n_ok = offs_n < N\n"
                "        k = tl.load(K + base + offs_n[:, None] * stride_n + offs_d[None, :],\n"
                "                    mask=n_ok[:, None] & d_ok[None, :], other=0.0)\n"
                "        v = tl.load(V + base + offs_n[:, None] * stride_n + offs_d[None, :],\n"
                "                    mask=n_ok[:, None] & d_ok[None, :], other=0.0)\n"
                "        s2 = tl.dot(q, tl.trans(k), input_precision=\"ieee\") * qk_scale  # em base 2\n"
                "        ok = n_ok[None, :] & (offs_m[:, None] >= 0)  # (BLOCK_M, BLOCK_N)\n"
                "        if CAUSAL:\n"
                "            ok = ok & (offs_n[None, :] <= offs_m[:, None])\n"
                "        s2 = tl.where(ok, s2, float('-inf'))\n"
                "        m_novo = tl.maximum(m_i, tl.max(s2, 1))\n"
                "        p = tl.exp2(s2 - m_novo[:, None])\n"
                "        alfa = tl.exp2(m_i - m_novo)\n"
                "        l_i = l_i * alfa + tl.sum(p, 1)\n"
                "        acc = acc * alfa[:, None]\n"
                "        acc += tl.dot(p.to(v.dtype), v, input_precision=\"ieee\")\n"
                "        m_i = m_novo\n"
                "    o = acc / l_i[:, None]\n"
                "    lse = (m_i + tl.log2(l_i)) / LOG2E\n"
                "    tl.store(O + base + offs_m[:, None] * stride_n + offs_d[None, :], o.to(O.dtype.element_ty),\n"
                "             mask=m_ok[:, None] & d_ok[None, :])\n"
                "    tl.store(LSE + bh * N + offs_m, lse, mask=m_ok)\n"),
        },
    ),
    Fair(
        why="softmax em float64 com máscara no load; kᵀ carregado já transposto pelos ponteiros; "
            "limite com tl.minimum invertido; FlashAttention com acumulação toda em float32 "
            "(k e v convertidos), q escalado antes do laço e prints na célula",
        cells={
            "softmax_kernel": (
                "print('definindo o kernel da softmax')\n\n\n"
                "@triton.jit\n"
                "def softmax_kernel(X, Y, stride_x, stride_y, n_cols, BLOCK: tl.constexpr):\n"
                "    row = tl.program_id(0)\n"
                "    cols = tl.arange(0, BLOCK)\n"
                "    x = tl.load(X + row * stride_x + cols, mask=cols < n_cols, other=-float('inf'))\n"
                "    x = x.to(tl.float64)\n"
                "    e = tl.exp(x - tl.max(x, axis=0))\n"
                "    y = e / tl.sum(e, axis=0)\n"
                "    tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=cols < n_cols)\n"),
            "scores_kernel": (
                "@triton.jit\n"
                "def scores_kernel(Q, K, S, n, m, d, scale, stride_q, stride_k, stride_s,\n"
                "                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):\n"
                "    i = tl.program_id(0)\n"
                "    j = tl.program_id(1)\n"
                "    rows = i * BLOCK_M + tl.arange(0, BLOCK_M)\n"
                "    cols = j * BLOCK_N + tl.arange(0, BLOCK_N)\n"
                "    dd = tl.arange(0, BLOCK_D)\n"
                "    q = tl.load(Q + rows[:, None] * stride_q + dd[None, :],\n"
                "                mask=(rows[:, None] < n) & (dd[None, :] < d), other=0.0)\n"
                "    kt = tl.load(K + cols[None, :] * stride_k + dd[:, None],  # (BLOCK_D, BLOCK_N): kᵀ\n"
                "                 mask=(cols[None, :] < m) & (dd[:, None] < d), other=0.0)\n"
                "    s = tl.dot(q, kt, input_precision=\"ieee\")\n"
                "    s = s * scale\n"
                "    ok = (rows[:, None] < n) & (cols[None, :] < m)\n"
                "    tl.store(S + rows[:, None] * stride_s + cols[None, :], s, mask=ok)\n"),
            "limite_chaves": (
                "@triton.jit\n"
                "def limite_chaves(start_m, N, BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr):\n"
                "    if CAUSAL:\n"
                "        fim = tl.minimum(start_m + BLOCK_M, N)\n"
                "    else:\n"
                "        fim = N\n"
                "    return fim\n" + _SONDA),
            "flash_kernel": (
                "@triton.jit\n"
                "def flash_kernel(Q, K, V, O, LSE, LIMITES, N, d, scale, stride_bh, stride_n,\n"
                "                 CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,\n"
                "                 BLOCK_D: tl.constexpr, USAR_LIMITES: tl.constexpr):\n"
                "    start_m = tl.program_id(0) * BLOCK_M\n"
                "    bh = tl.program_id(1)\n"
                "    Q += bh * stride_bh\n"
                "    K += bh * stride_bh\n"
                "    V += bh * stride_bh\n"
                "    O += bh * stride_bh\n"
                "    offs_m = start_m + tl.arange(0, BLOCK_M)\n"
                "    offs_d = tl.arange(0, BLOCK_D)\n"
                "    m_ok = offs_m < N\n"
                "    d_ok = offs_d < d\n"
                "    q = tl.load(Q + offs_m[:, None] * stride_n + offs_d[None, :],\n"
                "                mask=m_ok[:, None] & d_ok[None, :], other=0.0).to(tl.float32) * scale\n"
                "    m_i = tl.full((BLOCK_M,), float('-inf'), tl.float32)\n"
                "    l_i = tl.zeros((BLOCK_M,), tl.float32)\n"
                "    acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)\n"
                "    if USAR_LIMITES:\n"
                "        hi = tl.load(LIMITES + tl.program_id(0))\n"
                "    else:\n"
                "        hi = limite_chaves(start_m, N, BLOCK_M, CAUSAL)\n"
                "    for start_n in range(0, hi, BLOCK_N):\n"
                "        offs_n = start_n + tl.arange(0, BLOCK_N)\n"
                "        n_ok = offs_n < N\n"
                "        kv_ok = n_ok[:, None] & d_ok[None, :]\n"
                "        k = tl.load(K + offs_n[:, None] * stride_n + offs_d[None, :], mask=kv_ok, other=0.0).to(tl.float32)\n"
                "        v = tl.load(V + offs_n[:, None] * stride_n + offs_d[None, :], mask=kv_ok, other=0.0).to(tl.float32)\n"
                "        s = tl.dot(q, tl.trans(k), input_precision=\"ieee\")\n"
                "        s = tl.where(n_ok[None, :], s, float('-inf'))\n"
                "        if CAUSAL:\n"
                "            s = tl.where(offs_m[:, None] >= offs_n[None, :], s, float('-inf'))\n"
                "        m_novo = tl.maximum(m_i, tl.max(s, axis=1))\n"
                "        p = tl.exp(s - m_novo[:, None])\n"
                "        alfa = tl.exp(m_i - m_novo)\n"
                "        l_i = alfa * l_i + tl.sum(p, axis=1)\n"
                "        acc = alfa[:, None] * acc + tl.dot(p, v, input_precision=\"ieee\")\n"
                "        m_i = m_novo\n"
                "    o = acc / l_i[:, None]\n"
                "    lse = m_i + tl.log(l_i)\n"
                "    tl.store(O + offs_m[:, None] * stride_n + offs_d[None, :], o.to(O.dtype.element_ty),\n"
                "             mask=m_ok[:, None] & d_ok[None, :])\n"
                "    tl.store(LSE + bh * N + offs_m, lse, mask=m_ok)\n"),
        },
    ),
]

# Tarefa 5 (a janela deslizante no kernel): o aluno escreve inicio_chaves e permitidas (@triton.jit); a sonda
# pronta da mesma célula as chama em cada par de blocos, e o lançador travado janela_triton passa JANELA.
_SONDA_JANELA = '''

@triton.jit
def _sonda_janela(LO, MASCARA, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, JANELA: tl.constexpr):
    i = tl.program_id(0)
    offs_m = i * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(LO + i, inicio_chaves(i * BLOCK_M, BLOCK_N, JANELA))
    ok = permitidas(offs_m, offs_n, N, JANELA)
    tl.store(MASCARA + offs_m[:, None] * N + offs_n[None, :], ok.to(tl.int32),
             mask=(offs_m[:, None] < N) & (offs_n[None, :] < N))
'''

_PERMITIDAS_CERTO = '''

@triton.jit
def permitidas(offs_m, offs_n, N, JANELA: tl.constexpr):
    ok = (offs_n[None, :] < N) & (offs_n[None, :] <= offs_m[:, None])
    if JANELA > 0:
        ok = ok & (offs_n[None, :] > offs_m[:, None] - JANELA)
    return ok
'''

PLANTED += [
    Planted(
        why="tarefa 5: nada de janela no kernel: o laço sempre desde 0 e só a máscara causal",
        cells={"janela_kernel": (
            "@triton.jit\n"
            "def inicio_chaves(start_m, BLOCK_N: tl.constexpr, JANELA: tl.constexpr):\n"
            "    return 0\n\n\n"
            "@triton.jit\n"
            "def permitidas(offs_m, offs_n, N, JANELA: tl.constexpr):\n"
            "    return (offs_n[None, :] < N) & (offs_n[None, :] <= offs_m[:, None])\n" + _SONDA_JANELA)},
        zero=("test_janela_kernel",),
    ),
    Planted(
        why="tarefa 5: a janela só na máscara; o laço continua desde 0 (os blocos antes da janela são lidos)",
        cells={"janela_kernel": (
            "@triton.jit\n"
            "def inicio_chaves(start_m, BLOCK_N: tl.constexpr, JANELA: tl.constexpr):\n"
            "    return start_m * 0\n" + _PERMITIDAS_CERTO + _SONDA_JANELA)},
        zero=("test_janela_kernel",),
    ),
]

FAIR += [
    Fair(
        why="tarefa 5: começo do laço pelo índice do bloco (tl.where e divisão inteira), máscara montada com "
            "tl.where a partir da diferença i - j",
        cells={"janela_kernel": (
            "@triton.jit\n"
            "def inicio_chaves(start_m, BLOCK_N: tl.constexpr, JANELA: tl.constexpr):\n"
            "    if JANELA > 0:\n"
            "        primeira = start_m - (JANELA - 1)\n"
            "        bloco = tl.where(primeira > 0, primeira, 0) // BLOCK_N\n"
            "        return bloco * BLOCK_N\n"
            "    else:\n"
            "        return start_m * 0\n\n\n"
            "@triton.jit\n"
            "def permitidas(offs_m, offs_n, N, JANELA: tl.constexpr):\n"
            "    dif = offs_m[:, None] - offs_n[None, :]\n"
            "    ok = tl.where(dif >= 0, 1, 0) * tl.where(offs_n[None, :] < N, 1, 0)\n"
            "    if JANELA > 0:\n"
            "        ok = ok * tl.where(dif < JANELA, 1, 0)\n"
            "    return ok != 0\n" + _SONDA_JANELA)},
    ),
]
