"""Exercícios do capítulo 13 — Um kernel de GPU em Triton.

O aluno escreve kernels Triton de verdade: a softmax por linha, um bloco de
pontuações com tl.dot, o limite do laço causal e o laço da softmax online do
FlashAttention. Sem GPU, tudo roda no interpretador do Triton (a primeira
célula define TRITON_INTERPRET=1 antes de importar o triton), com tamanhos
pequenos: o caderno inteiro roda em segundos na CPU.
"""

from textwrap import dedent

from autograder.nbbuild import Notebook

SLUG = "13-kernel-triton"


def _c(src: str) -> str:
    return dedent(src).strip("\n")


SETUP = _c('''
    import math
    import os

    import numpy as np
    import torch

    NA_GPU = torch.cuda.is_available()
    if not NA_GPU:
        # Sem GPU, o interpretador do Triton executa os kernels na CPU (com NumPy).
        # A variável precisa existir ANTES do primeiro `import triton`.
        os.environ["TRITON_INTERPRET"] = "1"

    # Na GPU, tl.dot em float32 usaria TF32 (~3 dígitos) por padrão; "ieee" é float32 de
    # verdade, o mesmo que o interpretador faz. Os kernels também pedem isso no próprio
    # tl.dot (input_precision="ieee"); esta linha vale para quem esquecer.
    os.environ.setdefault("TRITON_F32_DEFAULT", "ieee")

    try:
        import triton
        import triton.language as tl
    except ImportError as e:
        raise ImportError(
            "Não consegui importar o triton. O capítulo 13 precisa de Linux com uma GPU NVIDIA "
            "(ou do Google Colab com GPU), ou do interpretador do Triton num Linux sem GPU "
            "(pip install triton). No Windows e no macOS, use o Colab."
        ) from e

    DEV = "cuda" if NA_GPU else "cpu"
    # tl.dot em float32 com input_precision="ieee": na GPU e no interpretador, a mesma tolerância.
    ATOL32 = 1e-5
    torch.manual_seed(0)
    print("Kernels rodando", "na GPU." if NA_GPU else "no interpretador do Triton (CPU): use tamanhos pequenos.")
''')

FERRAMENTAS = _c('''
    from contextlib import contextmanager


    @contextmanager
    def tarefa(nome):
        """Transforma um erro de dentro do kernel numa mensagem em português."""
        __tracebackhide__ = True
        try:
            yield
        except AssertionError:
            raise
        except Exception as e:  # erros do interpretador ou do compilador do Triton
            texto = f"{type(e).__name__}: {e}"
            if "NotImplementedError" in texto:
                raise FalhaNoTeste(
                    f"{nome}: o código ainda tem o `raise NotImplementedError`. "
                    "Complete a célula da tarefa (e rode-a de novo) antes dos testes."
                ) from None
            raise FalhaNoTeste(f"{nome}: o kernel deu erro ao rodar.\\n  {texto[:600]}") from e


    def sdpa(q, k, v, causal):
        """Oráculo: a atenção do torch, em float64."""
        q, k, v = (x.detach().double().cpu() for x in (q, k, v))
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


    def lse_direto(q, k, causal):
        """Oráculo do log-sum-exp: log sum_j exp(q_i · k_j / sqrt(d)), em float64."""
        q, k = q.detach().double().cpu(), k.detach().double().cpu()
        n = q.shape[-2]
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        if causal:
            s = s.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
        return torch.logsumexp(s, dim=-1)
''')

SOFTMAX = _c('''
    @triton.jit
    def softmax_kernel(X, Y, stride_x, stride_y, n_cols, BLOCK: tl.constexpr):
        """Um programa por linha: Y[linha, :] = softmax(X[linha, :])."""
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)  # (BLOCK,): BLOCK é a potência de 2 >= n_cols
        ### BEGIN SOLUTION
        mask = cols < n_cols
        x = tl.load(X + row * stride_x + cols, mask=mask, other=float("-inf")).to(tl.float32)
        z = x - tl.max(x, axis=0)  # estabilidade: o maior expoente vira 0
        e = tl.exp(z)
        y = e / tl.sum(e, axis=0)
        tl.store(Y + row * stride_y + cols, y.to(Y.dtype.element_ty), mask=mask)
        ### END SOLUTION


    def softmax_triton(x):
        """Softmax na última dimensão de x (M, n): um programa Triton por linha."""
        x = x.contiguous()
        M, n = x.shape
        y = torch.empty_like(x)
        softmax_kernel[(M,)](x, y, x.stride(0), y.stride(0), n, BLOCK=triton.next_power_of_2(n))
        return y
''')

SCORES = _c('''
    @triton.jit
    def scores_kernel(Q, K, S, n, m, d, scale, stride_q, stride_k, stride_s,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
        """O programa (i, j) calcula o bloco S[i*BLOCK_M : (i+1)*BLOCK_M, j*BLOCK_N : (j+1)*BLOCK_N]."""
        offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)  # (BLOCK_M,) linhas de Q
        offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)  # (BLOCK_N,) linhas de K
        offs_d = tl.arange(0, BLOCK_D)  # (BLOCK_D,) colunas; BLOCK_D >= d
        ### BEGIN SOLUTION
        d_ok = offs_d[None, :] < d
        q = tl.load(Q + offs_m[:, None] * stride_q + offs_d[None, :],
                    mask=(offs_m[:, None] < n) & d_ok, other=0.0)  # (BLOCK_M, BLOCK_D)
        k = tl.load(K + offs_n[:, None] * stride_k + offs_d[None, :],
                    mask=(offs_n[:, None] < m) & d_ok, other=0.0)  # (BLOCK_N, BLOCK_D)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale  # (BLOCK_M, BLOCK_N); "ieee": sem TF32
        tl.store(S + offs_m[:, None] * stride_s + offs_n[None, :], s,
                 mask=(offs_m[:, None] < n) & (offs_n[None, :] < m))
        ### END SOLUTION


    def scores_triton(q, k, BLOCK=16):
        """S = q kᵀ / sqrt(d) para q (n, d) e k (m, d), em blocos BLOCK x BLOCK (float32)."""
        q, k = q.contiguous(), k.contiguous()
        n, d = q.shape
        m = k.shape[0]
        s = torch.empty((n, m), dtype=torch.float32, device=q.device)
        grid = (triton.cdiv(n, BLOCK), triton.cdiv(m, BLOCK))
        scores_kernel[grid](q, k, s, n, m, d, 1.0 / math.sqrt(d), q.stride(0), k.stride(0), s.stride(0),
                            BLOCK_M=BLOCK, BLOCK_N=BLOCK, BLOCK_D=max(16, triton.next_power_of_2(d)))
        return s
''')

LIMITE = _c('''
    @triton.jit
    def limite_chaves(start_m, N, BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr):
        """Fim (exclusivo) das chaves que as consultas [start_m, start_m + BLOCK_M) precisam ler."""
        ### BEGIN SOLUTION
        fim = N
        if CAUSAL:  # a última consulta do bloco é start_m + BLOCK_M - 1
            fim = tl.minimum(N, start_m + BLOCK_M)
        return fim
        ### END SOLUTION


    # Pronto, não precisa mudar: lança um programa por bloco de consultas, cada um chama a sua
    # limite_chaves e guarda o resultado. Os testes usam esta função (uma função @triton.jit
    # só roda dentro de um kernel).
    @triton.jit
    def _sonda_limite(OUT, N, BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr):
        pid = tl.program_id(0)
        tl.store(OUT + pid, limite_chaves(pid * BLOCK_M, N, BLOCK_M, CAUSAL))


    def limites(N, BLOCK_M, causal):
        """O fim do laço de chaves de cada bloco de consultas, segundo a sua limite_chaves."""
        out = torch.full((triton.cdiv(N, BLOCK_M),), -1, dtype=torch.int32, device=DEV)
        _sonda_limite[(out.numel(),)](out, N, BLOCK_M=BLOCK_M, CAUSAL=causal)
        return out
''')

FLASH_TOPO = '''
    @triton.jit
    def flash_kernel(Q, K, V, O, LSE, LIMITES, N, d, scale, stride_bh, stride_n,
                     CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_D: tl.constexpr, USAR_LIMITES: tl.constexpr):
        """Programa (i, bh): as consultas [i*BLOCK_M, (i+1)*BLOCK_M) da cabeça bh."""
        start_m = tl.program_id(0) * BLOCK_M
        bh = tl.program_id(1)
        Q += bh * stride_bh  # q, k, v, o contíguos (B, H, N, d): a cabeça bh começa aqui
        K += bh * stride_bh
        V += bh * stride_bh
        O += bh * stride_bh
        offs_m = start_m + tl.arange(0, BLOCK_M)  # (BLOCK_M,) posições das consultas
        offs_d = tl.arange(0, BLOCK_D)
        m_ok = offs_m < N
        d_ok = offs_d < d
        q = tl.load(Q + offs_m[:, None] * stride_n + offs_d[None, :],
                    mask=m_ok[:, None] & d_ok[None, :], other=0.0)  # (BLOCK_M, BLOCK_D)

        m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)  # máximo corrente de cada linha
        l_i = tl.zeros((BLOCK_M,), tl.float32)  # soma corrente de exp(s - m_i)
        acc = tl.zeros((BLOCK_M, BLOCK_D), tl.float32)  # soma corrente de exp(s - m_i) · v

        if USAR_LIMITES:  # limites prontos, calculados fora do kernel (os testes da tarefa 4 usam)
            hi = tl.load(LIMITES + tl.program_id(0))
        else:  # a sua função da tarefa 3
            hi = limite_chaves(start_m, N, BLOCK_M, CAUSAL)
        for start_n in range(0, hi, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)  # (BLOCK_N,) posições das chaves
            n_ok = offs_n < N
'''

FLASH_LACO_CERTO = '''            ### BEGIN SOLUTION
            mascara_kv = n_ok[:, None] & d_ok[None, :]
            k = tl.load(K + offs_n[:, None] * stride_n + offs_d[None, :], mask=mascara_kv, other=0.0)
            v = tl.load(V + offs_n[:, None] * stride_n + offs_d[None, :], mask=mascara_kv, other=0.0)
            s = scale * tl.dot(q, tl.trans(k), input_precision="ieee")  # (BLOCK_M, BLOCK_N)
            permitido = n_ok[None, :]
            if CAUSAL:  # a consulta i vê as chaves j <= i
                permitido = permitido & (offs_m[:, None] >= offs_n[None, :])
            s = tl.where(permitido, s, -float("inf"))
            m_novo = tl.maximum(m_i, tl.max(s, 1))
            p = tl.exp(s - m_novo[:, None])
            alfa = tl.exp(m_i - m_novo)  # quanto encolher o que já foi somado
            l_i = alfa * l_i + tl.sum(p, 1)
            acc = alfa[:, None] * acc + tl.dot(p.to(v.dtype), v, input_precision="ieee")
            m_i = m_novo
            ### END SOLUTION
'''

# Resposta plausível e errada: esquece de reescalar o acumulador por alpha
# quando o máximo muda (usada nos testes do pipeline).
FLASH_LACO_ERRADO = FLASH_LACO_CERTO.replace(
    "acc = alfa[:, None] * acc + tl.dot(", "acc = acc + tl.dot("
)

FLASH_FIM = '''
        ### BEGIN SOLUTION
        o = acc / l_i[:, None]
        lse = m_i + tl.log(l_i)
        ### END SOLUTION
        tl.store(O + offs_m[:, None] * stride_n + offs_d[None, :], o.to(O.dtype.element_ty),
                 mask=m_ok[:, None] & d_ok[None, :])
        tl.store(LSE + bh * N + offs_m, lse, mask=m_ok)


    def flash_attention_triton(q, k, v, causal=True, BLOCK=16, limites=None):
        """q, k, v: (B, H, N, d) -> (saída (B, H, N, d), lse (B, H, N) em float32).

        `limites`: opcional, um tensor int32 com o fim do laço de chaves de cada bloco de
        consultas (o que `limite_chaves` devolve). Sem ele, o kernel chama `limite_chaves`.
        """
        q, k, v = (x.contiguous() for x in (q, k, v))
        B, H, N, d = q.shape
        o = torch.empty_like(q)
        lse = torch.empty((B, H, N), dtype=torch.float32, device=q.device)
        grid = (triton.cdiv(N, BLOCK), B * H)
        if limites is not None and tuple(limites.shape) != (grid[0],):
            raise ValueError(f"limites: esperava um valor por bloco de consultas, forma ({grid[0]},); "
                             f"veio {tuple(limites.shape)}.")
        flash_kernel[grid](q, k, v, o, lse, lse if limites is None else limites.to(torch.int32),
                           N, d, 1.0 / math.sqrt(d), N * d, d,
                           CAUSAL=causal, BLOCK_M=BLOCK, BLOCK_N=BLOCK,
                           BLOCK_D=max(16, triton.next_power_of_2(d)), USAR_LIMITES=limites is not None)
        return o, lse
'''

FLASH = _c(FLASH_TOPO + FLASH_LACO_CERTO + FLASH_FIM)


def build() -> Notebook:
    nb = Notebook(SLUG, "Capítulo 13 — Um kernel de GPU em Triton")
    nb.md(
        "Neste caderno você escreve kernels Triton de verdade: a softmax de uma linha, um bloco de "
        "pontuações com `tl.dot`, o limite do laço causal e, por fim, o laço da softmax online que "
        "é o coração do FlashAttention.\n\n"
        "**Sem GPU?** Sem problema: a primeira célula liga o *interpretador* do Triton "
        "(`TRITON_INTERPRET=1`, definido antes de importar o `triton`), que executa o mesmo "
        "kernel na CPU com NumPy. É lento (alguns milissegundos por programa), por isso os testes "
        "usam tamanhos pequenos. Se você mudar essa célula ou importar o `triton` antes dela, "
        "reinicie o kernel do Jupyter.\n\n"
        "**Como trabalhar.** Complete as partes marcadas com `# SEU CÓDIGO AQUI` (apague a linha "
        "`raise NotImplementedError`), rode a célula e depois a célula de testes logo abaixo. "
        "As mensagens dizem o que se esperava e o que veio. Na correção, testes ocultos também "
        "rodam (N que não é múltiplo do bloco, N = 1, float16, com e sem máscara causal).\n\n"
        "Não apague nem edite as células de teste. Use só `numpy`, `torch` e `triton`.\n\n"
        "Lembretes do modelo de programação:\n\n"
        "- um kernel `@triton.jit` roda como muitos **programas** independentes; "
        "`tl.program_id(eixo)` diz qual programa é este;\n"
        "- cada programa trabalha com **blocos**: `tl.arange(0, BLOCK)` (BLOCK potência de 2) "
        "gera os índices, e ponteiro + índices endereça um bloco inteiro;\n"
        "- `tl.load(ptrs, mask=..., other=...)` carrega só onde a máscara é verdadeira e põe "
        "`other` no resto; `tl.store(ptrs, valores, mask=...)` escreve só onde a máscara deixa;\n"
        "- `tl.dot(a, b)` multiplica blocos (cada dimensão >= 16; em float32, passe "
        "`input_precision=\"ieee\"` para não cair no TF32 de uma GPU); `tl.trans(k)` transpõe; "
        "`tl.max`, `tl.sum` reduzem num eixo; `tl.where(cond, a, b)` escolhe elemento a elemento.",
        grade_id="instrucoes",
    )
    nb.setup(SETUP)
    nb.code(FERRAMENTAS, grade_id="ferramentas")

    # ---------------------------------------------------------------- tarefa 1
    nb.md(
        "## Tarefa 1 — softmax fundida, um programa por linha (2 pontos)\n\n"
        "Complete `softmax_kernel`: o programa `row` carrega a linha inteira num bloco de `BLOCK` "
        "posições (as que passam de `n_cols` entram como $-\\infty$, que vira $e^{-\\infty} = 0$), "
        "converte para float32, subtrai o máximo, exponencia, divide pela soma e escreve a linha "
        "no dtype de `Y` (`Y.dtype.element_ty`).\n\n"
        "$$\\mathrm{softmax}(x)_j = \\frac{e^{x_j - \\max_k x_k}}{\\sum_{k} e^{x_k - \\max_k x_k}}$$\n\n"
        "Tudo acontece nos registradores: a linha é lida da memória uma vez e escrita uma vez.",
        grade_id="tarefa1_enunciado",
    )
    nb.solution(SOFTMAX, grade_id="softmax_kernel")
    nb.tests(
        _c('''
            """softmax_triton coincide com torch.softmax, inclusive com n que não é potência de 2."""
            x = torch.randn(5, 100, device=DEV)
            with tarefa("Tarefa 1"):
                y = softmax_triton(x)
            conferir("softmax_triton em (5, 100)", y, torch.softmax(x, dim=-1), atol=1e-6)
            print("Tarefa 1: testes visíveis passaram.")
            ### BEGIN HIDDEN TESTS
            _g = torch.Generator().manual_seed(12)
            for _shape in [(1, 1), (7, 33), (2, 257)]:
                _x = torch.randn(*_shape, generator=_g).to(DEV)
                with tarefa("Tarefa 1"):
                    conferir(f"softmax_triton em {_shape}", softmax_triton(_x), torch.softmax(_x, -1), atol=1e-6)
            # Valores grandes: sem subtrair o máximo, exp(1000) vira inf e o resultado, NaN.
            _x = (torch.randn(3, 50, generator=_g) * 1000).to(DEV)
            with tarefa("Tarefa 1"):
                conferir("softmax_triton com valores ~1000 (subtraiu o máximo?)", softmax_triton(_x),
                         torch.softmax(_x.double(), -1), atol=1e-6)
            # Posições mascaradas (-inf) dão peso 0.
            _x = torch.randn(4, 20, generator=_g).to(DEV)
            _x[:, 15:] = float("-inf")
            with tarefa("Tarefa 1"):
                conferir("softmax_triton com -inf nas últimas colunas", softmax_triton(_x), torch.softmax(_x, -1), atol=1e-6)
            # float16 entra, float16 sai (conta feita em float32).
            _x16 = torch.randn(3, 100, generator=_g).half().to(DEV)
            with tarefa("Tarefa 1"):
                _y16 = softmax_triton(_x16)
            assert _y16.dtype == torch.float16, f"softmax_triton: com entrada float16 esperava saída float16, veio {_y16.dtype}"
            conferir("softmax_triton em float16", _y16, torch.softmax(_x16.float(), -1), atol=1e-3)  # float16: ~3 dígitos
            ### END HIDDEN TESTS
        '''),
        grade_id="test_softmax_kernel",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 2
    nb.md(
        "## Tarefa 2 — um bloco de pontuações com `tl.dot` (2 pontos)\n\n"
        "O kernel ingênuo em CUDA do capítulo usa uma thread por pontuação "
        "(`scores[i][j] = dot(Q[i], K[j]) * (1.0f / sqrtf(d_k))`). Em Triton, um programa calcula "
        "um **bloco** $S_{IJ} = Q_I K_J^\\top / \\sqrt{d}$ de `BLOCK_M x BLOCK_N` pontuações com "
        "um único `tl.dot`.\n\n"
        "Complete `scores_kernel`: carregue o bloco de `Q` (`BLOCK_M x BLOCK_D`) e o de `K` "
        "(`BLOCK_N x BLOCK_D`) com máscaras (linhas além de `n` ou `m` e colunas além de `d` "
        "entram como 0, que não muda nenhum produto escalar), calcule "
        "`tl.dot(q, tl.trans(k)) * scale` e guarde só as posições válidas de `S`. "
        "Os tensores são contíguos: o elemento `[i, c]` de `Q` fica em `Q + i * stride_q + c`.",
        grade_id="tarefa2_enunciado",
    )
    nb.solution(SCORES, grade_id="scores_kernel")
    nb.tests(
        _c('''
            """scores_triton coincide com q kᵀ / sqrt(d) mesmo quando n e m não são múltiplos do bloco."""
            q, k = torch.randn(37, 16, device=DEV), torch.randn(45, 16, device=DEV)
            with tarefa("Tarefa 2"):
                s = scores_triton(q, k)
            conferir("scores_triton com q (37, 16) e k (45, 16)", s, q @ k.T / math.sqrt(16), atol=ATOL32)
            print("Tarefa 2: testes visíveis passaram.")
            ### BEGIN HIDDEN TESTS
            _g = torch.Generator().manual_seed(22)
            for (_n, _m, _d) in [(1, 1, 16), (16, 16, 32), (20, 3, 24), (50, 33, 64)]:
                _q, _k = torch.randn(_n, _d, generator=_g).to(DEV), torch.randn(_m, _d, generator=_g).to(DEV)
                with tarefa("Tarefa 2"):
                    conferir(f"scores_triton com n={_n}, m={_m}, d={_d}", scores_triton(_q, _k),
                             _q.double() @ _k.double().T / math.sqrt(_d), atol=ATOL32 * 5)
            _q16, _k16 = torch.randn(30, 32, generator=_g).half().to(DEV), torch.randn(20, 32, generator=_g).half().to(DEV)
            with tarefa("Tarefa 2"):
                conferir("scores_triton em float16", scores_triton(_q16, _k16),
                         _q16.double() @ _k16.double().T / math.sqrt(32), atol=1e-3)  # produto exato, soma em float32
            ### END HIDDEN TESTS
        '''),
        grade_id="test_scores_kernel",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 3
    nb.md(
        "## Tarefa 3 — até onde ler as chaves (1 ponto)\n\n"
        "Com a máscara causal, a consulta $i$ só vê as chaves $j \\le i$. O bloco de consultas "
        "$[\\mathtt{start\\_m}, \\mathtt{start\\_m} + \\mathtt{BLOCK\\_M})$ não precisa, então, "
        "nem **carregar** as chaves a partir de $\\mathtt{start\\_m} + \\mathtt{BLOCK\\_M}$: esses "
        "blocos são pulados (metade do trabalho, para N grande). Sem máscara, todas as `N` chaves "
        "são lidas.\n\n"
        "Complete `limite_chaves`, que devolve o fim (exclusivo) do laço de chaves: "
        "$\\min(\\mathtt{start\\_m} + \\mathtt{BLOCK\\_M}, N)$ com `CAUSAL`, senão $N$. "
        "(`if CAUSAL:` é resolvido na compilação, porque `CAUSAL` é `tl.constexpr`; use "
        "`tl.minimum`.)",
        grade_id="tarefa3_enunciado",
    )
    nb.solution(LIMITE, grade_id="limite_chaves")
    nb.tests(
        _c('''
            """limite_chaves: min(start_m + BLOCK_M, N) com máscara causal, N sem ela."""
            with tarefa("Tarefa 3"):
                _causal, _sem = limites(50, 16, True), limites(50, 16, False)
            conferir("limite_chaves com N=50, BLOCK_M=16, causal", _causal,
                     torch.tensor([16, 32, 48, 50], dtype=torch.int32))
            conferir("limite_chaves com N=50, BLOCK_M=16, sem máscara", _sem,
                     torch.tensor([50, 50, 50, 50], dtype=torch.int32))
            print("Tarefa 3: testes visíveis passaram.")
            ### BEGIN HIDDEN TESTS
            for (_N, _bm) in [(1, 16), (64, 16), (17, 32), (100, 32)]:
                _nb = -(-_N // _bm)
                with tarefa("Tarefa 3"):
                    _causal, _sem = limites(_N, _bm, True), limites(_N, _bm, False)
                conferir(f"limite_chaves com N={_N}, BLOCK_M={_bm}, causal", _causal,
                         torch.tensor([min((_i + 1) * _bm, _N) for _i in range(_nb)], dtype=torch.int32))
                conferir(f"limite_chaves com N={_N}, BLOCK_M={_bm}, sem máscara", _sem,
                         torch.full((_nb,), _N, dtype=torch.int32))
            ### END HIDDEN TESTS
        '''),
        grade_id="test_limite_chaves",
        points=1,
    )

    # ---------------------------------------------------------------- tarefa 4
    nb.md(
        "## Tarefa 4 — o laço do FlashAttention (4 pontos)\n\n"
        "Cada programa cuida de `BLOCK_M` consultas de uma cabeça e percorre as chaves em blocos "
        "de `BLOCK_N`, sem nunca montar a matriz $N \\times N$. Para cada bloco de chaves, "
        "complete o corpo do laço:\n\n"
        "1. carregue os blocos de `K` e `V` (`BLOCK_N x BLOCK_D`) com máscara (`n_ok` nas linhas, "
        "`d_ok` nas colunas, `other=0.0`);\n"
        "2. pontuações $s = q k^\\top \\cdot \\mathtt{scale}$ com `tl.dot`;\n"
        "3. máscara: chaves além de `N` sempre; com `CAUSAL`, também as chaves $j > i$ "
        "(permitidas: `offs_n[None, :] <= offs_m[:, None]`); nas proibidas, $s = -\\infty$;\n"
        "4. softmax online (capítulo 10): $m_{novo} = \\max(m_i, \\max_j s_{ij})$, "
        "$p = e^{s - m_{novo}}$, $\\alpha = e^{m_i - m_{novo}}$, "
        "$\\ell_i \\leftarrow \\alpha\\,\\ell_i + \\sum_j p_{ij}$, "
        "$\\mathrm{acc} \\leftarrow \\alpha\\,\\mathrm{acc} + p\\,v$ "
        "(converta `p` para o dtype de `v` antes do `tl.dot`: os dois operandos precisam do mesmo "
        "tipo) e $m_i \\leftarrow m_{novo}$.\n\n"
        "Depois do laço, normalize a saída, $o = \\mathrm{acc} / \\ell_i$, e calcule o "
        "log-sum-exp de cada linha, $\\mathrm{lse}_i = m_i + \\log \\ell_i$, que o passo de volta "
        "usa para recalcular as probabilidades sem guardá-las.\n\n"
        "Nos `tl.dot` em float32, passe `input_precision=\"ieee\"`: numa GPU o padrão é TF32 (uns 3 "
        "dígitos), e os testes usam a tolerância de float32 (no interpretador não muda nada).\n\n"
        "Os testes desta tarefa passam a `flash_attention_triton` o argumento `limites` com o fim "
        "certo do laço de cada bloco de consultas, calculado fora do kernel: assim um erro na tarefa 3 "
        "não custa de novo aqui. Sem `limites`, o kernel usa a sua `limite_chaves`.",
        grade_id="tarefa4_enunciado",
    )
    nb.solution(FLASH, grade_id="flash_kernel")
    nb.tests(
        _c('''
            """flash_attention_triton coincide com o SDPA do torch (saída) e com o log-sum-exp direto."""
            def limites_certos(N, BLOCK, causal):
                """O fim do laço de chaves de cada bloco de consultas, calculado aqui, fora do kernel."""
                fins = [min((i + 1) * BLOCK, N) if causal else N for i in range(-(-N // BLOCK))]
                return torch.tensor(fins, dtype=torch.int32, device=DEV)


            q, k, v = (torch.randn(1, 2, 50, 16, device=DEV) for _ in range(3))  # (B, H, N, d), N = 50 não é múltiplo de 16
            for causal in (True, False):
                with tarefa("Tarefa 4"):
                    o, lse = flash_attention_triton(q, k, v, causal=causal, limites=limites_certos(50, 16, causal))
                conferir(f"saída com causal={causal}", o, sdpa(q, k, v, causal), atol=ATOL32 * 5)
                conferir(f"log-sum-exp com causal={causal}", lse, lse_direto(q, k, causal), atol=ATOL32 * 5)
            try:  # só informação: o kernel com a SUA limite_chaves (tarefa 3) não vale pontos aqui
                with tarefa("Tarefa 4 com a sua limite_chaves"):
                    o, _ = flash_attention_triton(q, k, v, causal=True)
                conferir("saída com a sua limite_chaves", o, sdpa(q, k, v, True), atol=ATOL32 * 5)
                print("Com a sua limite_chaves (tarefa 3), o kernel também confere.")
            except AssertionError as e:
                print(f"Aviso (não tira pontos desta tarefa): com a sua limite_chaves, o kernel não confere.\\n  {e}")
            print("Tarefa 4: testes visíveis passaram.")
            ### BEGIN HIDDEN TESTS
            _g = torch.Generator().manual_seed(42)
            for (_B, _H, _N, _d, _bl) in [(1, 1, 1, 16, 16), (2, 1, 64, 32, 16), (1, 2, 100, 24, 32)]:
                _q, _k, _v = (torch.randn(_B, _H, _N, _d, generator=_g).to(DEV) for _ in range(3))
                for _causal in (True, False):
                    with tarefa("Tarefa 4"):
                        _o, _lse = flash_attention_triton(_q, _k, _v, causal=_causal, BLOCK=_bl,
                                                          limites=limites_certos(_N, _bl, _causal))
                    conferir(f"saída com B={_B}, H={_H}, N={_N}, d={_d}, bloco {_bl}, causal={_causal}",
                             _o, sdpa(_q, _k, _v, _causal), atol=ATOL32 * 5)
                    conferir(f"log-sum-exp com N={_N}, d={_d}, causal={_causal}", _lse,
                             lse_direto(_q, _k, _causal), atol=ATOL32 * 5)
            # float16: entradas e saída em float16, contas em float32.
            _q, _k, _v = (torch.randn(1, 2, 40, 32, generator=_g).half().to(DEV) for _ in range(3))
            with tarefa("Tarefa 4"):
                _o, _ = flash_attention_triton(_q, _k, _v, causal=True, limites=limites_certos(40, 16, True))
            assert _o.dtype == torch.float16, f"flash_attention_triton: esperava saída float16, veio {_o.dtype}"
            conferir("saída em float16, causal", _o, sdpa(_q, _k, _v, True), atol=5e-3)  # float16: ~3 dígitos
            # Blocos acima da diagonal não são lidos: chaves e valores NaN a partir da posição 16
            # não podem contaminar as consultas 0-15 (que só enxergam as chaves 0-15).
            _q, _k, _v = (torch.randn(1, 1, 48, 16, generator=_g).to(DEV) for _ in range(3))
            _kb, _vb = _k.clone(), _v.clone()
            _kb[..., 16:, :] = float("nan")
            _vb[..., 16:, :] = float("nan")
            import warnings as _w
            with _w.catch_warnings(), tarefa("Tarefa 4"):
                _w.simplefilter("ignore")
                _o, _ = flash_attention_triton(_q, _kb, _vb, causal=True, limites=limites_certos(48, 16, True))
            conferir("saída das consultas 0-15 com NaN nas chaves >= 16 (os blocos futuros foram pulados?)",
                     _o[..., :16, :], sdpa(_q[..., :16, :], _k[..., :16, :], _v[..., :16, :], True), atol=ATOL32 * 5)
            ### END HIDDEN TESTS
        '''),
        grade_id="test_flash_kernel",
        points=4,
    )

    # ---------------------------------------------------------------- tarefa 5
    nb.written(
        "## Tarefa 5 — pergunta aberta (2 pontos)\n\n"
        "O kernel guarda o log-sum-exp (um número por consulta) e não a matriz de probabilidades "
        "$P$. Para uma cabeça com $N = 8192$, $d = 128$ e float16, quantos bytes ocupariam $P$ e "
        "o log-sum-exp (em float32)? Como o passo de volta obtém $P$ sem tê-la guardado, e por "
        "que isso compensa numa GPU?",
        "$P$ tem $N^2 = 67.108.864$ elementos: 128 MiB em float16, por cabeça e por camada. O "
        "log-sum-exp tem $N = 8192$ números float32: 32 KiB. O passo de volta recalcula cada bloco "
        "$P_{IJ} = \\exp(Q_I K_J^\\top/\\sqrt{d} - \\mathrm{lse}_I)$ a partir de Q, K e do lse, "
        "que já estão à mão. Recalcular custa FLOPs (baratos nos tensor cores), enquanto guardar e "
        "reler $P$ custaria tráfego de memória (caro: a GPU faz centenas de FLOPs no tempo de "
        "mover um byte), além de memória que limitaria N.",
        grade_id="resposta_lse",
        points=2,
    )
    nb.entrega()
    return nb


ERRADO = {
    "flash_kernel": "\n".join(
        linha for linha in _c(FLASH_TOPO + FLASH_LACO_ERRADO + FLASH_FIM).splitlines()
        if "### BEGIN SOLUTION" not in linha and "### END SOLUTION" not in linha
    ),
}
