"""Desafio opcional do capítulo 13 — o kernel inteiro do passo de ida do FlashAttention.

Uma tarefa à parte (`13-desafio-flashattention`), com pontos de bônus: o nbgrader não
tem "bônus" numa nota automática (só o `extra_credit` que o professor digita à mão no
formgrader), então o desafio é um caderno-tarefa separado, opcional, cujos pontos o
professor soma por fora. O caderno principal do capítulo 13 não muda de valor.

Menos andaime que a tarefa 4 do caderno principal: a célula do aluno começa em branco,
só com a assinatura do kernel. Quem lança o kernel é uma célula travada
(`flash_forward`), de modo que a resposta só pode ser um kernel Triton. Roda no
interpretador (TRITON_INTERPRET=1) com tamanhos pequenos (TRAPS.md: ~5 ms por programa
e bloco de chaves).
"""

from autograder.fontes.cap13 import FERRAMENTAS, SETUP, _c
from autograder.nbbuild import Notebook

SLUG = "13-desafio-flashattention"

LANCADOR = _c('''
    def flash_forward(q, k, v, causal=True, BLOCK=16):
        """q, k, v: (B, H, N, d) contíguos -> (saída (B, H, N, d) no dtype de q, lse (B, H, N) float32).

        Lança o SEU `flash_fwd_kernel` numa grade (cdiv(N, BLOCK), B * H): o programa (i, bh)
        cuida das consultas [i*BLOCK, (i+1)*BLOCK) da cabeça bh, e percorre as chaves em blocos
        de BLOCK (BLOCK_M = BLOCK_N = BLOCK).
        """
        q, k, v = (x.contiguous() for x in (q, k, v))
        B, H, N, d = q.shape
        o = torch.empty_like(q)
        lse = torch.empty((B, H, N), dtype=torch.float32, device=q.device)
        grid = (triton.cdiv(N, BLOCK), B * H)
        flash_fwd_kernel[grid](q, k, v, o, lse, N, d, 1.0 / math.sqrt(d), N * d, d,
                               CAUSAL=causal, BLOCK_M=BLOCK, BLOCK_N=BLOCK,
                               BLOCK_D=max(16, triton.next_power_of_2(d)))
        return o, lse
''')

KERNEL_TOPO = '''
    @triton.jit
    def flash_fwd_kernel(Q, K, V, O, LSE, N, d, scale, stride_bh, stride_n,
                         CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_D: tl.constexpr):
        """Programa (i, bh): O e LSE das consultas [i*BLOCK_M, (i+1)*BLOCK_M) da cabeça bh."""
        ### BEGIN SOLUTION
        start_m = tl.program_id(0) * BLOCK_M
        bh = tl.program_id(1)
        Q += bh * stride_bh
        K += bh * stride_bh
        V += bh * stride_bh
        O += bh * stride_bh
        offs_m = start_m + tl.arange(0, BLOCK_M)  # (BLOCK_M,)
        offs_d = tl.arange(0, BLOCK_D)  # (BLOCK_D,)
        m_ok = offs_m < N
        d_ok = offs_d < d
        q = tl.load(Q + offs_m[:, None] * stride_n + offs_d[None, :],
                    mask=m_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_M, BLOCK_D)
        m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
        l_i = tl.zeros((BLOCK_M,), tl.float32)
        acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)
        hi = N
        if CAUSAL:  # blocos inteiros acima da diagonal nem são lidos
            hi = tl.minimum(N, start_m + BLOCK_M)
'''

KERNEL_LACO = '''        for start_n in range(0, hi, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,)
            n_ok = offs_n < N
            kv_ok = n_ok[:, None] & d_ok[None, :]
            k = tl.load(K + offs_n[:, None] * stride_n + offs_d[None, :], mask=kv_ok, other=0.0)
            v = tl.load(V + offs_n[:, None] * stride_n + offs_d[None, :], mask=kv_ok, other=0.0)
            s = scale * tl.dot(q, tl.trans(k), input_precision="ieee")  # (BLOCK_M, BLOCK_N)
            permitido = n_ok[None, :]
            if CAUSAL:
                permitido = permitido & (offs_n[None, :] <= offs_m[:, None])
            s = tl.where(permitido, s, float("-inf"))
            m_novo = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp(s - m_novo[:, None])
            alfa = tl.exp(m_i - m_novo)
            l_i = alfa * l_i + tl.sum(p, 1)
            acc = alfa[:, None] * acc + tl.dot(p.to(v.dtype), v, input_precision="ieee")
            m_i = m_novo
'''

KERNEL_FIM = '''        o = acc / l_i[:, None]
        tl.store(O + offs_m[:, None] * stride_n + offs_d[None, :], o.to(O.dtype.element_ty),
                 mask=m_ok[:, None] & d_ok[None, :])
        tl.store(LSE + bh * N + offs_m, m_i + tl.log(l_i), mask=m_ok)
        ### END SOLUTION
'''

KERNEL = _c(KERNEL_TOPO + KERNEL_LACO + KERNEL_FIM)


def build() -> Notebook:
    nb = Notebook(SLUG, "Capítulo 13 — Desafio opcional: o kernel do FlashAttention inteiro")
    nb.md(
        "**Opcional, vale pontos de bônus** (5 pontos, somados à parte pelo professor; este caderno "
        "é uma tarefa separada, e não fazê-lo não tira nada da nota do capítulo 13).\n\n"
        "No caderno principal você completou o corpo do laço de um kernel que já vinha montado. "
        "Aqui a célula começa em branco, só com a assinatura: escreva o passo de ida "
        "causal do FlashAttention inteira em Triton, como pede a tarefa de sistemas do CS336 "
        "(Stanford). O que o kernel precisa fazer:\n\n"
        "1. descobrir qual bloco de consultas e qual cabeça este programa cuida "
        "(`tl.program_id(0)`, `tl.program_id(1)`) e avançar os ponteiros até a cabeça "
        "(`stride_bh` elementos por cabeça, `stride_n` por posição; tudo contíguo);\n"
        "2. carregar o bloco de consultas com máscara (posições além de `N`, colunas além de `d`);\n"
        "3. percorrer as chaves em blocos de `BLOCK_N`, **pulando** com `CAUSAL` os blocos que "
        "ficam inteiros acima da diagonal (nem os carregue: um teste põe NaN neles);\n"
        "4. manter a softmax online ($m_i$, $\\ell_i$, acc), com a máscara causal dentro do bloco "
        "da diagonal;\n"
        "5. escrever $O = \\mathrm{acc}/\\ell_i$ no dtype de `O` e "
        "$\\mathrm{lse}_i = m_i + \\log \\ell_i$ em float32.\n\n"
        "Nos `tl.dot` em float32, passe `input_precision=\"ieee\"`; converta $p$ para o dtype de "
        "`v` antes do segundo `tl.dot`. Sem GPU, tudo roda no interpretador do Triton "
        "(a célula de preparação cuida disso). Use só `torch` e `triton`.",
        grade_id="instrucoes",
    )
    nb.setup(SETUP)
    nb.code(FERRAMENTAS, grade_id="ferramentas")
    nb.md(
        "## Como o seu kernel é chamado\n\n"
        "Esta célula (travada) lança o kernel. Os testes chamam `flash_forward`.",
        grade_id="lancador_enunciado",
    )
    nb.code(LANCADOR, grade_id="lancador")
    nb.md("## O seu kernel", grade_id="kernel_enunciado")
    nb.solution(KERNEL, grade_id="flash_fwd_kernel")
    nb.tests(
        _c('''
            """Sem máscara: saída igual ao SDPA e log-sum-exp igual ao direto."""
            q, k, v = (torch.randn(1, 2, 40, 16, device=DEV) for _ in range(3))  # N = 40 não é múltiplo de 16
            with tarefa("Desafio"):
                o, lse = flash_forward(q, k, v, causal=False)
            conferir("saída sem máscara", o, sdpa(q, k, v, False), atol=ATOL32 * 5)
            conferir("log-sum-exp sem máscara", lse, lse_direto(q, k, False), atol=ATOL32 * 5)
            ### BEGIN HIDDEN TESTS
            _g = torch.Generator().manual_seed(120)
            for (_B, _H, _N, _d, _bl) in [(1, 1, 1, 16, 16), (2, 2, 33, 24, 16), (1, 1, 70, 64, 32)]:
                _q, _k, _v = (torch.randn(_B, _H, _N, _d, generator=_g).to(DEV) for _ in range(3))
                with tarefa("Desafio"):
                    _o, _lse = flash_forward(_q, _k, _v, causal=False, BLOCK=_bl)
                conferir(f"saída sem máscara, B={_B}, H={_H}, N={_N}, d={_d}, bloco {_bl}", _o,
                         sdpa(_q, _k, _v, False), atol=ATOL32 * 5)
                conferir(f"log-sum-exp sem máscara, N={_N}, d={_d}", _lse, lse_direto(_q, _k, False), atol=ATOL32 * 5)
            ### END HIDDEN TESTS
        '''),
        grade_id="test_desafio_sem_mascara",
        points=2,
    )
    nb.tests(
        _c('''
            """Causal: saída e log-sum-exp certos, e os blocos acima da diagonal nem são lidos."""
            q, k, v = (torch.randn(1, 2, 40, 16, device=DEV) for _ in range(3))
            with tarefa("Desafio"):
                o, lse = flash_forward(q, k, v, causal=True)
            conferir("saída causal", o, sdpa(q, k, v, True), atol=ATOL32 * 5)
            conferir("log-sum-exp causal", lse, lse_direto(q, k, True), atol=ATOL32 * 5)
            ### BEGIN HIDDEN TESTS
            _g = torch.Generator().manual_seed(121)
            for (_B, _H, _N, _d, _bl) in [(1, 1, 1, 16, 16), (2, 2, 33, 24, 16), (1, 1, 70, 64, 32)]:
                _q, _k, _v = (torch.randn(_B, _H, _N, _d, generator=_g).to(DEV) for _ in range(3))
                with tarefa("Desafio"):
                    _o, _lse = flash_forward(_q, _k, _v, causal=True, BLOCK=_bl)
                conferir(f"saída causal, B={_B}, H={_H}, N={_N}, d={_d}, bloco {_bl}", _o,
                         sdpa(_q, _k, _v, True), atol=ATOL32 * 5)
                conferir(f"log-sum-exp causal, N={_N}, d={_d}", _lse, lse_direto(_q, _k, True), atol=ATOL32 * 5)
            # Chaves e valores NaN a partir da posição 16: as consultas 0-15 (o primeiro bloco de 16)
            # só enxergam as chaves 0-15, e os blocos seguintes não podem nem ser carregados.
            _q, _k, _v = (torch.randn(1, 1, 48, 16, generator=_g).to(DEV) for _ in range(3))
            _kb, _vb = _k.clone(), _v.clone()
            _kb[..., 16:, :] = float("nan")
            _vb[..., 16:, :] = float("nan")
            import warnings as _w
            with _w.catch_warnings(), tarefa("Desafio"):
                _w.simplefilter("ignore")
                _o, _ = flash_forward(_q, _kb, _vb, causal=True, BLOCK=16)
            conferir("consultas 0-15 com NaN nas chaves >= 16 (os blocos futuros foram pulados?)",
                     _o[..., :16, :], sdpa(_q[..., :16, :], _k[..., :16, :], _v[..., :16, :], True), atol=ATOL32 * 5)
            ### END HIDDEN TESTS
        '''),
        grade_id="test_desafio_causal",
        points=2,
    )
    nb.tests(
        _c('''
            """float16 entra e sai (contas em float32)."""
            q, k, v = (torch.randn(1, 2, 40, 32, device=DEV).half() for _ in range(3))
            with tarefa("Desafio"):
                o, lse = flash_forward(q, k, v, causal=True)
            assert o.dtype == torch.float16, f"flash_forward: esperava saída float16, veio {o.dtype}"
            conferir("saída em float16, causal", o, sdpa(q, k, v, True), atol=5e-3)  # float16: ~3 dígitos
            ### BEGIN HIDDEN TESTS
            _g = torch.Generator().manual_seed(122)
            _q, _k, _v = (torch.randn(2, 1, 50, 24, generator=_g).half().to(DEV) for _ in range(3))
            with tarefa("Desafio"):
                _o, _lse = flash_forward(_q, _k, _v, causal=False, BLOCK=32)
            assert _o.dtype == torch.float16, f"flash_forward: esperava saída float16, veio {_o.dtype}"
            conferir("saída em float16, sem máscara, N=50, d=24", _o, sdpa(_q, _k, _v, False), atol=5e-3)
            conferir("log-sum-exp em float16, sem máscara", _lse, lse_direto(_q, _k, False), atol=5e-3)
            ### END HIDDEN TESTS
        '''),
        grade_id="test_desafio_float16",
        points=1,
    )
    nb.entrega()
    return nb


# Resposta plausível e errada (usada nos testes): percorre todas as chaves mesmo com a
# máscara causal. Os valores saem certos (a máscara zera o futuro), mas os blocos acima da
# diagonal são lidos: o teste com NaN no futuro pega, e os outros passam (nota parcial).
ERRADO = {
    "flash_fwd_kernel": "\n".join(
        linha for linha in _c(KERNEL_TOPO.replace("hi = tl.minimum(N, start_m + BLOCK_M)", "hi = N")
                              + KERNEL_LACO + KERNEL_FIM).splitlines()
        if "### BEGIN SOLUTION" not in linha and "### END SOLUTION" not in linha
    ),
}
