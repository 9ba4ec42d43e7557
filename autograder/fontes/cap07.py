"""Exercícios do capítulo 7 — O bloco transformer (RMSNorm, RoPE, SwiGLU, bloco pré-norma).

Oráculos: torch.nn.RMSNorm / F.rms_norm, a RoPE como multiplicação complexa
(testes ocultos) e propriedades (normas, diferença de posições), a forma
fechada de silu(a) = a·sigmoid(a), e um bloco montado com F.rms_norm, SDPA
com enable_gqa e F.silu.
"""

from autograder.fontes._modelo import IMPORTS, ROPE_ORACLE
from autograder.nbbuild import Notebook

SLUG = "07-bloco-transformer"

# Ferramentas do capítulo 6, dadas prontas (célula travada).
FERRAMENTAS = '''\
# Ferramentas do capítulo 6 (prontas): dividir/juntar cabeças e atenção causal com GQA.

def split_heads(x, n_heads):
    """(B, T, n_heads * d) -> (B, n_heads, T, d)."""
    B, T, D = x.shape
    return x.reshape(B, T, n_heads, D // n_heads).transpose(1, 2)


def merge_heads(x):
    """(B, H, T, d) -> (B, T, H * d)."""
    B, H, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d)


def gqa_causal_attention(q, k, v):
    """q (B, H, T, d); k, v (B, Hkv, T, d) -> (B, H, T, d). A consulta h usa a cabeça KV h // (H // Hkv)."""
    G = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(G, dim=1), v.repeat_interleave(G, dim=1)    # (B, H, T, d)
    T = q.shape[-2]
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])                    # (B, H, T, T)
    proibido = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return torch.softmax(s.masked_fill(proibido, float("-inf")), dim=-1) @ v


def block_params(D, H, Hkv, F_, generator, dtype=torch.float64):
    """Pesos aleatórios de um bloco (D, H cabeças, Hkv cabeças KV, MLP de largura F_)."""
    d_k = D // H
    def w(m, n):
        return torch.randn(m, n, generator=generator, dtype=dtype) / math.sqrt(m)
    return {
        "norm1": 1 + 0.1 * torch.randn(D, generator=generator, dtype=dtype),
        "W_q": w(D, H * d_k), "W_k": w(D, Hkv * d_k), "W_v": w(D, Hkv * d_k), "W_o": w(H * d_k, D),
        "norm2": 1 + 0.1 * torch.randn(D, generator=generator, dtype=dtype),
        "W1": w(D, F_), "W3": w(D, F_), "W2": w(F_, D),
    }
'''


def build() -> Notebook:
    nb = Notebook(SLUG, "Capítulo 7 — O bloco transformer")
    nb.md(
        "Neste caderno você vai escrever as peças de um bloco decodificador moderno — RMSNorm, "
        "RoPE e o MLP SwiGLU — e montar o bloco pré-norma completo:\n\n"
        "$$h = x + \\operatorname{Atenção}(\\operatorname{RMSNorm}_1(x)), \\qquad "
        "y = h + \\operatorname{SwiGLU}(\\operatorname{RMSNorm}_2(h)).$$\n\n"
        "**Como trabalhar.** Complete as células marcadas com `# SEU CÓDIGO AQUI` (apague a linha "
        "`raise NotImplementedError`). Logo abaixo de cada uma há uma célula de testes: rode-a. "
        "Se algo estiver errado, a mensagem diz o que se esperava e o que veio. Na correção, "
        "testes ocultos (formas aleatórias, $T = 1$, tamanhos ímpares, float16 e float64, entradas "
        "inválidas) também rodam.\n\n"
        "Não apague nem edite as células de teste. Use só `numpy` e `torch` (sem `torch.nn.RMSNorm`, "
        "`F.rms_norm` nem `scaled_dot_product_attention` nas respostas: eles são os gabaritos).",
        grade_id="instrucoes",
    )
    nb.setup(IMPORTS)
    nb.code(FERRAMENTAS, grade_id="ferramentas")

    # ---------------------------------------------------------------- tarefa 1
    nb.md(
        "## Tarefa 1 — RMSNorm (2 pontos)\n\n"
        "$$\\operatorname{RMSNorm}(x) = \\frac{x}{\\sqrt{\\tfrac{1}{D}\\sum_{t=1}^{D} x_t^2 + "
        "\\varepsilon}} \\odot w,$$\n\n"
        "aplicada à última dimensão de `x` `(..., D)`, com o peso `w` `(D,)`. Sem subtrair a média "
        "(é isso que a diferencia da LayerNorm).\n\n"
        "- Se `weight` não tiver forma `(D,)`, levante `ValueError` dizendo as duas formas.\n"
        "- Devolva o mesmo dtype da entrada. Em float16, o quadrado de 300 já passa do maior float16 "
        "(65504): faça a conta em float32 e volte para float16 no fim.",
        grade_id="tarefa1_enunciado",
    )
    nb.solution(
        "def rms_norm(x, weight, eps=1e-5):\n"
        "    \"\"\"x (..., D), weight (D,) -> (..., D).\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    if tuple(weight.shape) != (x.shape[-1],):\n"
        "        raise ValueError(f\"weight deve ter forma ({x.shape[-1]},), veio {tuple(weight.shape)} (x {tuple(x.shape)})\")\n"
        "    xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x\n"
        "    inv_rms = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)   # (..., 1)\n"
        "    return (xf * inv_rms * weight.to(xf.dtype)).to(x.dtype)\n"
        "    ### END SOLUTION",
        grade_id="rms_norm",
    )
    nb.tests(
        "\"\"\"rms_norm igual a torch.nn.RMSNorm.\"\"\"\n"
        "g = torch.Generator().manual_seed(70)\n"
        "x = torch.randn(2, 5, 16, generator=g, dtype=torch.float64) * 3\n"
        "w = torch.randn(16, generator=g, dtype=torch.float64)\n"
        "ref = torch.nn.RMSNorm(16, eps=1e-5, dtype=torch.float64)\n"
        "with torch.no_grad():\n"
        "    ref.weight.copy_(w)\n"
        "    esperado = ref(x)\n"
        "conferir(\"rms_norm com x (2, 5, 16)\", _chamar(\"rms_norm\", rms_norm, x, w), esperado, atol=1e-12)\n"
        "conferir_erro(\"rms_norm com weight (15,) e x (..., 16)\", rms_norm, x, torch.ones(15, dtype=torch.float64))\n"
        "print(\"Tarefa 1: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(71)\n"
        "for _shape in [(1,), (7,), (1, 1, 3), (4, 33), (2, 3, 1, 9)]:\n"
        "    _x = torch.randn(_shape, generator=_g, dtype=torch.float64)\n"
        "    _w = torch.randn(_shape[-1], generator=_g, dtype=torch.float64)\n"
        "    for _eps in (1e-5, 1e-2):\n"
        "        conferir(f\"rms_norm com x {_shape}, eps={_eps}\", _chamar(\"rms_norm\", rms_norm, _x, _w, _eps),\n"
        "                 F.rms_norm(_x, (_shape[-1],), _w, _eps), atol=1e-12)\n"
        "_x32 = torch.randn(3, 64, generator=_g)\n"
        "conferir(\"rms_norm em float32\", _tipo(\"rms_norm em float32\", _chamar(\"rms_norm\", rms_norm, _x32, torch.ones(64)), torch.float32),\n"
        "         F.rms_norm(_x32, (64,), torch.ones(64), 1e-5), atol=1e-6)\n"
        "_x16 = (torch.randn(4, 32, generator=_g) * 300).half()            # x² passa de 65504\n"
        "_y16 = _tipo(\"rms_norm em float16\", _chamar(\"rms_norm em float16\", rms_norm, _x16, torch.ones(32).half()), torch.float16)\n"
        "conferir(\"rms_norm em float16 com valores ~300 (faça a conta em float32)\", _y16.float(),\n"
        "         F.rms_norm(_x16.float(), (32,), None, 1e-5), atol=1e-2, rtol=1e-2)   # float16: ~3 dígitos\n"
        "conferir_erro(\"rms_norm com weight (4, 4) e x (..., 16)\", rms_norm, torch.ones(2, 16), torch.ones(4, 4))\n"
        "### END HIDDEN TESTS",
        grade_id="test_rms_norm",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 2
    nb.md(
        "## Tarefa 2 — RoPE (3 pontos)\n\n"
        "A RoPE gira cada par de coordenadas **vizinhas** $(x_{2i}, x_{2i+1})$ da linha que está na "
        "posição $p$ pelo ângulo $p\\,\\theta_i$, com $\\theta_i = \\text{base}^{-2i/d}$, "
        "$i = 0, \\dots, d/2 - 1$:\n\n"
        "$$\\begin{pmatrix} y_{2i} \\\\ y_{2i+1} \\end{pmatrix} = "
        "\\begin{pmatrix} \\cos p\\theta_i & -\\sin p\\theta_i \\\\ \\sin p\\theta_i & \\cos p\\theta_i "
        "\\end{pmatrix} \\begin{pmatrix} x_{2i} \\\\ x_{2i+1} \\end{pmatrix}.$$\n\n"
        "Implemente `rope(x, start=0, base=10000.0)` para `x` `(..., T, d)`: a linha `t` está na "
        "posição `p = start + t`.\n\n"
        "- Os pares são vizinhos, $(x_0, x_1), (x_2, x_3), \\dots$ Algumas bibliotecas pareiam "
        "$x_i$ com $x_{i + d/2}$; aqui não.\n"
        "- `d` ímpar: levante `ValueError`. Devolva o mesmo dtype da entrada (em float16, calcule em "
        "float32).\n"
        "- Sem laço sobre posições ou pares: monte os ângulos `(T, d/2)` de uma vez.",
        grade_id="tarefa2_enunciado",
    )
    nb.solution(
        "def rope(x, start=0, base=10000.0):\n"
        "    \"\"\"Gira os pares (x[2i], x[2i+1]) da linha t pelo ângulo (start + t) * base^(-2i/d).\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    T, d = x.shape[-2], x.shape[-1]\n"
        "    if d % 2 != 0:\n"
        "        raise ValueError(f\"a RoPE gira pares: d deve ser par, veio d={d} (forma {tuple(x.shape)})\")\n"
        "    calc = torch.float64 if x.dtype == torch.float64 else torch.float32\n"
        "    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)       # (d/2,)\n"
        "    pos = torch.arange(start, start + T, dtype=torch.float64)               # (T,)\n"
        "    ang = pos[:, None] * theta[None, :]                                     # (T, d/2)\n"
        "    cos, sin = ang.cos().to(calc), ang.sin().to(calc)\n"
        "    xc = x.to(calc)\n"
        "    x0, x1 = xc[..., 0::2], xc[..., 1::2]                                   # (..., T, d/2)\n"
        "    y = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)    # (..., T, d/2, 2)\n"
        "    return y.flatten(-2).to(x.dtype)                                         # (..., T, d)\n"
        "    ### END SOLUTION",
        grade_id="rope",
    )
    nb.tests(
        "\"\"\"rope: o caso d=2 em forma fechada, normas preservadas, só a diferença de posições importa.\"\"\"\n"
        "e0 = torch.tensor([[1.0, 0.0]], dtype=torch.float64)                 # (T=1, d=2)\n"
        "for p in (0, 1, 5):\n"
        "    conferir(f\"rope([1, 0], start={p}) = [cos {p}, sin {p}]\", _chamar(\"rope\", rope, e0, p),\n"
        "             torch.tensor([[math.cos(p), math.sin(p)]], dtype=torch.float64), atol=1e-12)\n"
        "e1 = torch.tensor([[0.0, 1.0, 0.0, 0.0]], dtype=torch.float64)       # d=4: só o 1º par (x0, x1) = (0, 1) gira\n"
        "conferir(\"rope([0, 1, 0, 0], start=1) = [-sin 1, cos 1, 0, 0] (pares vizinhos)\", _chamar(\"rope\", rope, e1, 1),\n"
        "         torch.tensor([[-math.sin(1), math.cos(1), 0.0, 0.0]], dtype=torch.float64), atol=1e-12)\n"
        "g = torch.Generator().manual_seed(72)\n"
        "x = torch.randn(3, 10, 8, generator=g, dtype=torch.float64)          # (B, T, d)\n"
        "y = _forma(\"rope(x) com x (3, 10, 8)\", _chamar(\"rope\", rope, x), (3, 10, 8))\n"
        "conferir(\"rope preserva a norma de cada linha\", y.norm(dim=-1), x.norm(dim=-1), atol=1e-12)\n"
        "conferir(\"rope(x[:, 4:], start=4) = rope(x)[:, 4:]\", _chamar(\"rope\", rope, x[:, 4:], 4), y[:, 4:], atol=1e-12)\n"
        "q, k = torch.randn(1, 8, generator=g, dtype=torch.float64), torch.randn(1, 8, generator=g, dtype=torch.float64)\n"
        "pontos = [float(rope(q, p + 3) @ rope(k, p).T) for p in (0, 7, 50)]\n"
        "conferir(\"q·k depois da RoPE com a consulta 3 posições à frente, em p = 0, 7, 50\", torch.tensor(pontos), torch.full((3,), pontos[0]), atol=1e-10)\n"
        "conferir_erro(\"rope com d=5\", rope, torch.zeros(4, 5))\n"
        "print(\"Tarefa 2: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        + ROPE_ORACLE +
        "_g = torch.Generator().manual_seed(73)\n"
        "for _shape, _start in [((1, 2), 0), ((1, 32), 1000), ((5, 6), 3), ((2, 3, 17, 32), 11), ((4, 1, 64), 0)]:\n"
        "    _x = torch.randn(_shape, generator=_g, dtype=torch.float64)\n"
        "    conferir(f\"rope com x {_shape}, start={_start}\", _chamar(\"rope\", rope, _x, _start), _rope_complexa(_x, _start), atol=1e-10)\n"
        "_x = torch.randn(6, 16, generator=_g, dtype=torch.float64)\n"
        "conferir(\"rope com base=500\", _chamar(\"rope\", rope, _x, 2, 500.0), _rope_complexa(_x, 2, 500.0), atol=1e-10)\n"
        "_x32 = torch.randn(2, 9, 16, generator=_g)\n"
        "conferir(\"rope em float32\", _tipo(\"rope em float32\", _chamar(\"rope\", rope, _x32, 5), torch.float32), _rope_complexa(_x32, 5), atol=1e-5)\n"
        "_x16 = torch.randn(8, 32, generator=_g).half()\n"
        "conferir(\"rope em float16\", _tipo(\"rope em float16\", _chamar(\"rope\", rope, _x16, 100), torch.float16).float(),\n"
        "         _rope_complexa(_x16, 100), atol=1e-2, rtol=1e-2)   # float16: ~3 dígitos\n"
        "conferir_erro(\"rope com d=1\", rope, torch.zeros(2, 3, 1))\n"
        "### END HIDDEN TESTS",
        grade_id="test_rope",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 3
    nb.md(
        "## Tarefa 3 — MLP SwiGLU (2 pontos)\n\n"
        "$$\\operatorname{SwiGLU}(x) = \\big(\\operatorname{silu}(x W_1) \\odot (x W_3)\\big) W_2, "
        "\\qquad \\operatorname{silu}(a) = a\\,\\sigma(a) = \\frac{a}{1 + e^{-a}},$$\n\n"
        "com `W1` e `W3` `(D, F)` e `W2` `(F, D)`; `x` `(..., D)`. O primeiro ramo é a **porta**, "
        "o segundo o **valor**. Sem viés. Preserve o dtype.",
        grade_id="tarefa3_enunciado",
    )
    nb.solution(
        "def swiglu(x, W1, W3, W2):\n"
        "    \"\"\"(..., D) -> (..., D) passando por uma largura oculta F.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    a = x @ W1                                  # (..., F) porta\n"
        "    b = x @ W3                                  # (..., F) valor\n"
        "    return (a * torch.sigmoid(a) * b) @ W2      # (..., D)\n"
        "    ### END SOLUTION",
        grade_id="swiglu",
    )
    nb.tests(
        "\"\"\"swiglu igual à forma fechada silu(a) = a / (1 + exp(-a)).\"\"\"\n"
        "g = torch.Generator().manual_seed(74)\n"
        "x = torch.randn(2, 3, 8, generator=g, dtype=torch.float64)\n"
        "W1, W3, W2 = torch.randn(8, 12, generator=g, dtype=torch.float64), torch.randn(8, 12, generator=g, dtype=torch.float64), torch.randn(12, 8, generator=g, dtype=torch.float64)\n"
        "a = x @ W1\n"
        "conferir(\"swiglu com x (2, 3, 8) e F=12\", _chamar(\"swiglu\", swiglu, x, W1, W3, W2), (a / (1 + torch.exp(-a)) * (x @ W3)) @ W2, atol=1e-10)\n"
        "print(\"Tarefa 3: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(75)\n"
        "for (_lead, _D, _F) in [((1,), 1, 1), ((5,), 7, 13), ((2, 1), 16, 3), ((3, 4), 9, 24)]:\n"
        "    _x = torch.randn(*_lead, _D, generator=_g, dtype=torch.float64) * 4\n"
        "    _W1, _W3, _W2 = torch.randn(_D, _F, generator=_g, dtype=torch.float64), torch.randn(_D, _F, generator=_g, dtype=torch.float64), torch.randn(_F, _D, generator=_g, dtype=torch.float64)\n"
        "    _a = _x @ _W1\n"
        "    conferir(f\"swiglu com x {(*_lead, _D)} e F={_F}\", _chamar(\"swiglu\", swiglu, _x, _W1, _W3, _W2),\n"
        "             (_a / (1 + torch.exp(-_a)) * (_x @ _W3)) @ _W2, atol=1e-9)\n"
        "_x32 = torch.randn(4, 6, generator=_g)\n"
        "_tipo(\"swiglu em float32\", _chamar(\"swiglu\", swiglu, _x32, torch.ones(6, 5), torch.ones(6, 5), torch.ones(5, 6)), torch.float32)\n"
        "### END HIDDEN TESTS",
        grade_id="test_swiglu",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 4
    nb.md(
        "## Tarefa 4 — o bloco pré-norma (4 pontos)\n\n"
        "Implemente `decoder_block(x, p, n_heads, n_kv_heads, eps=1e-5)` para `x` `(B, T, D)` e o "
        "dicionário de pesos `p` de `block_params` (chaves `norm1`, `W_q`, `W_k`, `W_v`, `W_o`, "
        "`norm2`, `W1`, `W3`, `W2`):\n\n"
        "1. `h = rms_norm(x, p[\"norm1\"])`;\n"
        "2. $Q = hW_Q$ em `n_heads` cabeças, $K = hW_K$ e $V = hW_V$ em `n_kv_heads` cabeças;\n"
        "3. RoPE em $Q$ e em $K$ (não em $V$), posições a partir de 0;\n"
        "4. atenção causal com GQA (`gqa_causal_attention`), concatenação e $W_O$; some a `x` "
        "(resíduo);\n"
        "5. `rms_norm` com `p[\"norm2\"]`, `swiglu` e some de novo (resíduo).\n\n"
        "Use as suas funções das tarefas anteriores e as ferramentas prontas do começo do caderno.",
        grade_id="tarefa4_enunciado",
    )
    nb.solution(
        "def decoder_block(x, p, n_heads, n_kv_heads, eps=1e-5):\n"
        "    \"\"\"Bloco decodificador pré-norma: (B, T, D) -> (B, T, D).\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    h = rms_norm(x, p[\"norm1\"], eps)                    # (B, T, D)\n"
        "    q = rope(split_heads(h @ p[\"W_q\"], n_heads))        # (B, H, T, d_k)\n"
        "    k = rope(split_heads(h @ p[\"W_k\"], n_kv_heads))     # (B, Hkv, T, d_k)\n"
        "    v = split_heads(h @ p[\"W_v\"], n_kv_heads)           # (B, Hkv, T, d_k)\n"
        "    x = x + merge_heads(gqa_causal_attention(q, k, v)) @ p[\"W_o\"]   # (B, T, D)\n"
        "    return x + swiglu(rms_norm(x, p[\"norm2\"], eps), p[\"W1\"], p[\"W3\"], p[\"W2\"])\n"
        "    ### END SOLUTION",
        grade_id="decoder_block",
    )
    nb.tests(
        "\"\"\"decoder_block: T=1 contra as peças do torch, causalidade e resíduo.\"\"\"\n"
        "def _bloco_torch_T1(x, p, H, Hkv, eps=1e-5):\n"
        "    # Com T = 1 a RoPE na posição 0 é a identidade: ela não aparece aqui.\n"
        "    h = F.rms_norm(x, (x.shape[-1],), p[\"norm1\"], eps)\n"
        "    q, k, v = (h @ p[n] for n in (\"W_q\", \"W_k\", \"W_v\"))\n"
        "    att = F.scaled_dot_product_attention(q.unflatten(-1, (H, -1)).transpose(1, 2), k.unflatten(-1, (Hkv, -1)).transpose(1, 2),\n"
        "                                         v.unflatten(-1, (Hkv, -1)).transpose(1, 2), is_causal=True, enable_gqa=True)\n"
        "    x = x + att.transpose(1, 2).flatten(-2) @ p[\"W_o\"]\n"
        "    u = F.rms_norm(x, (x.shape[-1],), p[\"norm2\"], eps)\n"
        "    return x + (F.silu(u @ p[\"W1\"]) * (u @ p[\"W3\"])) @ p[\"W2\"]\n"
        "\n"
        "g = torch.Generator().manual_seed(76)\n"
        "p = block_params(16, 4, 2, 24, g)\n"
        "x1 = torch.randn(3, 1, 16, generator=g, dtype=torch.float64)\n"
        "conferir(\"decoder_block com T=1, D=16, 4 cabeças, 2 KV\", _chamar(\"decoder_block\", decoder_block, x1, p, 4, 2), _bloco_torch_T1(x1, p, 4, 2), atol=1e-10)\n"
        "x = torch.randn(2, 7, 16, generator=g, dtype=torch.float64)\n"
        "y = _forma(\"decoder_block com x (2, 7, 16)\", _chamar(\"decoder_block\", decoder_block, x, p, 4, 2), (2, 7, 16))\n"
        "x2 = x.clone(); x2[:, 5:] = 10.0\n"
        "conferir(\"mudar as posições 5 e 6 não muda as saídas 0 a 4 (causalidade)\", _chamar(\"decoder_block\", decoder_block, x2, p, 4, 2)[:, :5], y[:, :5], atol=1e-12)\n"
        "p0 = dict(p, W_o=torch.zeros_like(p[\"W_o\"]), W2=torch.zeros_like(p[\"W2\"]))\n"
        "conferir(\"com W_o = 0 e W2 = 0 o bloco é a identidade (só os resíduos)\", _chamar(\"decoder_block\", decoder_block, x, p0, 4, 2), x, atol=0, rtol=0)\n"
        "print(\"Tarefa 4: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        + ROPE_ORACLE +
        "def _bloco_torch(x, p, H, Hkv, eps=1e-5):\n"
        "    h = F.rms_norm(x, (x.shape[-1],), p[\"norm1\"], eps)\n"
        "    q = _rope_complexa((h @ p[\"W_q\"]).unflatten(-1, (H, -1)).transpose(1, 2))\n"
        "    k = _rope_complexa((h @ p[\"W_k\"]).unflatten(-1, (Hkv, -1)).transpose(1, 2))\n"
        "    v = (h @ p[\"W_v\"]).unflatten(-1, (Hkv, -1)).transpose(1, 2)\n"
        "    att = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)\n"
        "    x = x + att.transpose(1, 2).flatten(-2) @ p[\"W_o\"]\n"
        "    u = F.rms_norm(x, (x.shape[-1],), p[\"norm2\"], eps)\n"
        "    return x + (F.silu(u @ p[\"W1\"]) * (u @ p[\"W3\"])) @ p[\"W2\"]\n"
        "\n"
        "_g = torch.Generator().manual_seed(77)\n"
        "for (_B, _T, _D, _H, _Hkv, _F) in [(2, 9, 16, 4, 2, 24), (1, 13, 24, 4, 1, 7), (3, 5, 12, 2, 2, 30), (1, 33, 32, 8, 4, 48), (2, 2, 8, 4, 4, 5)]:\n"
        "    _p = block_params(_D, _H, _Hkv, _F, _g)\n"
        "    _x = torch.randn(_B, _T, _D, generator=_g, dtype=torch.float64)\n"
        "    _nome = f\"decoder_block com x {(_B, _T, _D)}, H={_H}, Hkv={_Hkv}, F={_F}\"\n"
        "    conferir(_nome, _chamar(_nome, decoder_block, _x, _p, _H, _Hkv), _bloco_torch(_x, _p, _H, _Hkv), atol=1e-9)\n"
        "_p = block_params(16, 4, 2, 24, _g, torch.float32)\n"
        "_x = torch.randn(2, 20, 16, generator=_g)\n"
        "conferir(\"decoder_block em float32\", _tipo(\"decoder_block em float32\", _chamar(\"decoder_block\", decoder_block, _x, _p, 4, 2), torch.float32),\n"
        "         _bloco_torch(_x.double(), {n: t.double() for n, t in _p.items()}, 4, 2), atol=1e-4, rtol=1e-4)   # float32 em 2 resíduos\n"
        "### END HIDDEN TESTS",
        grade_id="test_decoder_block",
        points=4,
    )

    # ---------------------------------------------------------------- tarefa 5
    nb.written(
        "## Tarefa 5 — pergunta aberta (2 pontos)\n\n"
        "Depois da RoPE, o produto escalar entre a consulta da posição $p$ e a chave da posição $r$ "
        "depende só de $p - r$, e não de $p$ e $r$ separados (a tarefa 2 conferiu isso numericamente). "
        "Explique por quê, em duas ou três frases, usando o fato de que cada par de coordenadas é "
        "girado por uma rotação.",
        "Cada par é girado por uma rotação $R(p\\theta_i)$, e rotações são ortogonais e se compõem "
        "somando ângulos: $R(a)^\\top R(b) = R(b - a)$. Então, em cada par, "
        "$(R(p\\theta_i) q)\\cdot(R(r\\theta_i) k) = q^\\top R(p\\theta_i)^\\top R(r\\theta_i) k = "
        "q^\\top R((r - p)\\theta_i) k$, que só depende de $p - r$. Somando sobre os pares, o "
        "produto escalar inteiro também; e como rotações preservam normas, a RoPE não muda o "
        "tamanho de $q$ e $k$.",
        grade_id="resposta_rope",
        points=2,
    )
    nb.entrega()
    return nb


# Resposta plausível e errada (usada nos testes do pipeline): a RoPE com os
# pares (x_i, x_{i+d/2}) em vez de vizinhos. Preserva normas e só vê
# diferenças de posição (passa nos testes visíveis), mas não é a rotação pedida.
ERRADO = {
    "rope": (
        "def rope(x, start=0, base=10000.0):\n"
        "    T, d = x.shape[-2], x.shape[-1]\n"
        "    if d % 2:\n"
        "        raise ValueError(\"d ímpar\")\n"
        "    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
        "    ang = torch.arange(start, start + T, dtype=torch.float64)[:, None] * theta\n"
        "    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)\n"
        "    x0, x1 = x[..., : d // 2], x[..., d // 2:]\n"
        "    return torch.cat((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)\n"
    ),
}
