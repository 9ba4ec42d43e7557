"""Cap. 13, desafio (o kernel do FlashAttention inteiro): respostas plantadas e justas (o formato
está em __init__.py). O lançador `flash_forward` é uma célula travada DEPOIS da célula do
kernel: confere que `flash_fwd_kernel` é um kernel do Triton e cria O e LSE cheios de NaN."""

from answers import Fair, Planted

_ASSINATURA = '''@triton.jit
def flash_fwd_kernel(Q, K, V, O, LSE, N, d, scale, stride_bh, stride_n,
                     CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_D: tl.constexpr):
'''

_TODOS = ("test_desafio_sem_mascara", "test_desafio_causal", "test_desafio_float16")

PLANTED = [
    Planted(
        why="E2: kernel `pass` e flash_forward redefinido em PyTorch na mesma célula",
        cells={"flash_fwd_kernel": _ASSINATURA + "    pass\n" + '''

def flash_forward(q, k, v, causal=True, BLOCK=16):
    B, H, N, d = q.shape
    o = torch.empty_like(q)
    lse = torch.empty((B, H, N), dtype=torch.float32, device=q.device)
    for i in range(N):
        fim = i + 1 if causal else N
        s = (q[..., i:i + 1, :].float() @ k[..., :fim, :].float().transpose(-2, -1)) / math.sqrt(d)
        lse[..., i] = torch.logsumexp(s, -1)[..., 0]
        o[..., i:i + 1, :] = (torch.softmax(s, -1) @ v[..., :fim, :].float()).to(q.dtype)
    return o, lse
'''},
        zero=_TODOS,
    ),
    Planted(
        why="kernel que faz as contas mas não escreve nada (sem tl.store)",
        cells={"flash_fwd_kernel": _ASSINATURA + '''    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    q = tl.load(Q + bh * stride_bh + offs_m[:, None] * stride_n + offs_d[None, :],
                mask=(offs_m[:, None] < N) & (offs_d[None, :] < d), other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    for start_n in range(0, N, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + bh * stride_bh + offs_n[:, None] * stride_n + offs_d[None, :],
                    mask=(offs_n[:, None] < N) & (offs_d[None, :] < d), other=0.0)
        s = scale * tl.dot(q, tl.trans(k), input_precision="ieee")
        s = tl.where(offs_n[None, :] < N, s, float("-inf"))
        m_novo = tl.maximum(m_i, tl.max(s, 1))
        l_i = tl.exp(m_i - m_novo) * l_i + tl.sum(tl.exp(s - m_novo[:, None]), 1)
        m_i = m_novo
'''},
        zero=_TODOS,
    ),
    Planted(
        why="flash_fwd_kernel é um objeto Python cujo `[grade]` devolve a atenção em PyTorch (nada de Triton)",
        cells={"flash_fwd_kernel": '''class _Kernel:
    def __getitem__(self, grade):
        def lancar(q, k, v, o, lse, N, d, scale, sbh, sn, CAUSAL, BLOCK_M, BLOCK_N, BLOCK_D):
            s = (q.float() @ k.float().transpose(-2, -1)) * scale
            if CAUSAL:
                s = s.masked_fill(torch.ones(N, N, dtype=torch.bool).triu(1), float("-inf"))
            lse.copy_(torch.logsumexp(s, -1))
            o.copy_((torch.softmax(s, -1) @ v.float()).to(o.dtype))
        return lancar


flash_fwd_kernel = _Kernel()
'''},
        zero=_TODOS,
    ),
]

FAIR = [
    Fair(
        why="dois laços (os blocos inteiros abaixo da diagonal sem máscara causal, depois o da diagonal "
            "com ela), em base 2 (exp2 com log2(e))",
        cells={"flash_fwd_kernel": _ASSINATURA + '''    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    base = bh * stride_bh
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    m_ok = offs_m < N
    d_ok = offs_d < d
    q = tl.load(Q + base + offs_m[:, None] * stride_n + offs_d[None, :],
                mask=m_ok[:, None] & d_ok[None, :], other=0.0)
    LOG2E: tl.constexpr = 1.4426950408889634
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)
    if CAUSAL:
        fim_cheio = start_m  # blocos [0, start_m): todas as chaves valem para todas as consultas
    else:
        fim_cheio = N
    for start_n in range(0, fim_cheio, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_ok = offs_n < N
        k = tl.load(K + base + offs_n[:, None] * stride_n + offs_d[None, :], mask=n_ok[:, None] & d_ok[None, :], other=0.0)
        v = tl.load(V + base + offs_n[:, None] * stride_n + offs_d[None, :], mask=n_ok[:, None] & d_ok[None, :], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * (scale * LOG2E)
        s = tl.where(n_ok[None, :], s, float("-inf"))
        m_novo = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_novo[:, None])
        alfa = tl.exp2(m_i - m_novo)
        l_i = alfa * l_i + tl.sum(p, 1)
        acc = alfa[:, None] * acc + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m_i = m_novo
    if CAUSAL:  # o bloco da diagonal, com a máscara causal
        offs_n = start_m + tl.arange(0, BLOCK_N)
        n_ok = offs_n < N
        k = tl.load(K + base + offs_n[:, None] * stride_n + offs_d[None, :], mask=n_ok[:, None] & d_ok[None, :], other=0.0)
        v = tl.load(V + base + offs_n[:, None] * stride_n + offs_d[None, :], mask=n_ok[:, None] & d_ok[None, :], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * (scale * LOG2E)
        s = tl.where(n_ok[None, :] & (offs_n[None, :] <= offs_m[:, None]), s, float("-inf"))
        m_novo = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_novo[:, None])
        alfa = tl.exp2(m_i - m_novo)
        l_i = alfa * l_i + tl.sum(p, 1)
        acc = alfa[:, None] * acc + tl.dot(p.to(v.dtype), v, input_precision="ieee")
        m_i = m_novo
    tl.store(O + base + offs_m[:, None] * stride_n + offs_d[None, :], (acc / l_i[:, None]).to(O.dtype.element_ty),
             mask=m_ok[:, None] & d_ok[None, :])
    tl.store(LSE + bh * N + offs_m, (m_i + tl.log2(l_i)) / LOG2E, mask=m_ok)
'''},
    ),
    Fair(
        why="tudo em float32 (k e v convertidos, p sem conversão), q escalado antes do laço, máscaras "
            "por tl.where, o fim do laço por tl.where e um print na célula",
        cells={"flash_fwd_kernel": "print('kernel definido')\n\n\n" + _ASSINATURA + '''    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_D)
    Qp = Q + pid_bh * stride_bh + rows[:, None] * stride_n + cols[None, :]
    q = tl.load(Qp, mask=(rows[:, None] < N) & (cols[None, :] < d), other=0.0).to(tl.float32) * scale
    m_i = tl.zeros((BLOCK_M,), tl.float32) - float("inf")
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)
    hi = N
    if CAUSAL:
        ultimo = (pid_m + 1) * BLOCK_M
        hi = tl.where(ultimo < N, ultimo, N)
    for j in range(0, hi, BLOCK_N):
        keys = j + tl.arange(0, BLOCK_N)
        ok = (keys[:, None] < N) & (cols[None, :] < d)
        k = tl.load(K + pid_bh * stride_bh + keys[:, None] * stride_n + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        v = tl.load(V + pid_bh * stride_bh + keys[:, None] * stride_n + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        s = tl.dot(q, tl.trans(k), input_precision="ieee")
        vale = keys[None, :] < N
        if CAUSAL:
            vale = vale & (keys[None, :] <= rows[:, None])
        s = tl.where(vale, s, float("-inf"))
        m_novo = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_novo[:, None])
        alfa = tl.exp(m_i - m_novo)
        acc = acc * alfa[:, None] + tl.dot(p, v, input_precision="ieee")
        l_i = l_i * alfa + tl.sum(p, axis=1)
        m_i = m_novo
    tl.store(O + pid_bh * stride_bh + rows[:, None] * stride_n + cols[None, :],
             (acc / l_i[:, None]).to(O.dtype.element_ty), mask=(rows[:, None] < N) & (cols[None, :] < d))
    tl.store(LSE + pid_bh * N + rows, m_i + tl.log(l_i), mask=rows < N)
'''},
    ),
]
