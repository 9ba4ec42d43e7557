"""Exercícios do capítulo 6 — Atenção multi-cabeça, MQA e GQA.

Oráculos: torch.nn.MultiheadAttention (MHA completa), SDPA com enable_gqa e
repeat_interleave (GQA), torch.chunk/cat (divisão em cabeças), nn.Linear e
FlopCounterMode (contagens de parâmetros e de FLOPs).
"""

from autograder.fontes._modelo import IMPORTS
from autograder.nbbuild import Notebook

SLUG = "06-multi-cabeca"


def build() -> Notebook:
    nb = Notebook(SLUG, "Capítulo 6 — Atenção multi-cabeça, MQA e GQA")
    nb.md(
        "Neste caderno você vai dividir $d_\\text{model}$ em cabeças e juntá-las de volta, "
        "escrever a atenção causal multi-cabeça com **todas as cabeças numa chamada só**, "
        "estender para GQA (cabeças de chave/valor compartilhadas) e contar parâmetros e FLOPs.\n\n"
        "**Convenções.** Lote `B`, posições `T`, largura `D` ($d_\\text{model}$), cabeças de "
        "consulta `H`, de chave/valor `Hkv`, $d_k = D / H$. As projeções multiplicam pela direita: "
        "$Q = X W_Q$, com `W_q` de forma `(D, H*d_k)`.\n\n"
        "**Como trabalhar.** Complete as células marcadas com `# SEU CÓDIGO AQUI` (apague a linha "
        "`raise NotImplementedError`). Logo abaixo de cada uma há uma célula de testes: rode-a. "
        "Se algo estiver errado, a mensagem diz o que se esperava e o que veio. Na correção, "
        "testes ocultos (formas aleatórias, $T = 1$, $d_k$ ímpar, float16 e float64, entradas "
        "inválidas) também rodam.\n\n"
        "Não apague nem edite as células de teste. Use só `numpy` e `torch` (sem "
        "`torch.nn.MultiheadAttention` nem `scaled_dot_product_attention` nas respostas: eles são "
        "os gabaritos).",
        grade_id="instrucoes",
    )
    nb.setup(IMPORTS)

    # ---------------------------------------------------------------- tarefa 1
    nb.md(
        "## Tarefa 1 — dividir e juntar cabeças (2 pontos)\n\n"
        "`split_heads(x, n_heads)` recebe `x` com forma `(B, T, D)` e devolve `(B, H, T, d_k)`, "
        "em que a cabeça `h` é o bloco de colunas `x[:, :, h*d_k:(h+1)*d_k]`. `merge_heads(x)` faz "
        "o caminho de volta, `(B, H, T, d_k) -> (B, T, H*d_k)`: é a **concatenação** das cabeças.\n\n"
        "- Se `x` não tiver 3 dimensões, ou se `D` não for múltiplo de `n_heads`, levante `ValueError` "
        "com uma mensagem que diga a forma recebida.\n"
        "- Preserve o dtype e funcione também com `x` não contíguo. Depois de um `transpose` o tensor "
        "deixa de ser contíguo e `view` não consegue juntar dimensões: use `reshape`.\n"
        "- Cuidado: `x.reshape(B, H, T, d_k)` tem a forma certa e o conteúdo errado. Escreva a forma "
        "em comentário em cada linha, como `# (B, T, H, d_k)`.",
        grade_id="tarefa1_enunciado",
    )
    nb.solution(
        "def split_heads(x, n_heads):\n"
        "    \"\"\"(B, T, D) -> (B, H, T, d_k), d_k = D // H.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    if x.ndim != 3:\n"
        "        raise ValueError(f\"x deve ter forma (B, T, D), veio {tuple(x.shape)}\")\n"
        "    B, T, D = x.shape\n"
        "    if D % n_heads != 0:\n"
        "        raise ValueError(f\"D={D} não é múltiplo de n_heads={n_heads} (forma {tuple(x.shape)})\")\n"
        "    d_k = D // n_heads\n"
        "    return x.reshape(B, T, n_heads, d_k).transpose(1, 2)   # (B, T, H, d_k) -> (B, H, T, d_k)\n"
        "    ### END SOLUTION\n"
        "\n"
        "\n"
        "def merge_heads(x):\n"
        "    \"\"\"(B, H, T, d_k) -> (B, T, H * d_k): concatena as cabeças.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    B, H, T, d_k = x.shape\n"
        "    return x.transpose(1, 2).reshape(B, T, H * d_k)         # (B, T, H, d_k) -> (B, T, H*d_k)\n"
        "    ### END SOLUTION",
        grade_id="split_merge",
    )
    nb.tests(
        "\"\"\"split_heads separa blocos de colunas; merge_heads os concatena de volta.\"\"\"\n"
        "x = torch.arange(2 * 3 * 8, dtype=torch.float32).reshape(2, 3, 8)   # (B=2, T=3, D=8)\n"
        "h = _forma(\"split_heads(x, 4) com x (2, 3, 8)\", _chamar(\"split_heads(x, 4)\", split_heads, x, 4), (2, 4, 3, 2))\n"
        "conferir(\"split_heads(x, 4): a cabeça 1 deve ser x[:, :, 2:4]\", h[:, 1], x[:, :, 2:4])\n"
        "conferir(\"merge_heads(split_heads(x, 4)) deve devolver x\", _chamar(\"merge_heads\", merge_heads, h), x)\n"
        "conferir_erro(\"split_heads com D=8 e n_heads=3\", split_heads, x, 3)\n"
        "print(\"Tarefa 1: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(61)\n"
        "for (_B, _T, _D, _H) in [(1, 1, 4, 2), (3, 7, 15, 5), (2, 5, 6, 1), (1, 4, 6, 6), (2, 33, 64, 8)]:\n"
        "    _x = torch.randn(_B, _T, _D, generator=_g, dtype=torch.float64)\n"
        "    _esp = torch.stack(torch.chunk(_x, _H, dim=-1), dim=1)   # gabarito: blocos de colunas\n"
        "    _h = _forma(f\"split_heads com x {(_B, _T, _D)} e H={_H}\", _chamar(\"split_heads\", split_heads, _x, _H), (_B, _H, _T, _D // _H))\n"
        "    conferir(f\"split_heads com x {(_B, _T, _D)} e H={_H}\", _h, _esp, atol=0, rtol=0)\n"
        "    conferir(f\"merge_heads com forma {tuple(_esp.shape)}\", _chamar(\"merge_heads\", merge_heads, _esp), torch.cat(_esp.unbind(1), dim=-1), atol=0, rtol=0)\n"
        "_x16 = torch.randn(2, 3, 8, generator=_g).half()\n"
        "_tipo(\"split_heads em float16\", _chamar(\"split_heads\", split_heads, _x16, 2), torch.float16)\n"
        "_tipo(\"merge_heads em float16\", _chamar(\"merge_heads\", merge_heads, _x16.reshape(2, 3, 2, 4).transpose(1, 2)), torch.float16)\n"
        "_xt = torch.randn(8, 5, 2, generator=_g).transpose(0, 2)   # (2, 5, 8), não contíguo\n"
        "conferir(\"split_heads com x não contíguo\", _chamar(\"split_heads (x não contíguo)\", split_heads, _xt, 4), torch.stack(torch.chunk(_xt, 4, -1), 1))\n"
        "conferir_erro(\"split_heads com x de 2 dimensões\", split_heads, torch.zeros(5, 8), 2)\n"
        "conferir_erro(\"split_heads com D=15 e n_heads=4\", split_heads, torch.zeros(1, 2, 15), 4)\n"
        "### END HIDDEN TESTS",
        grade_id="test_split_merge",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 2
    nb.md(
        "## Tarefa 2 — atenção causal multi-cabeça (3 pontos)\n\n"
        "Implemente `multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads)` para `x` `(B, T, D)` e "
        "matrizes `(D, D)`:\n\n"
        "1. $Q = XW_Q$, $K = XW_K$, $V = XW_V$, cada um dividido em cabeças `(B, H, T, d_k)`;\n"
        "2. em cada cabeça, $\\operatorname{softmax}(\\operatorname{máscara}(QK^\\top/\\sqrt{d_k}))V$, "
        "com a máscara causal (posição $i$ vê $j \\le i$);\n"
        "3. concatene as cabeças (`merge_heads`) e multiplique por $W_O$.\n\n"
        "**Sem laço sobre as cabeças**: a multiplicação `@` já trata `(B, H)` como lote. "
        "O gabarito é `torch.nn.MultiheadAttention` (sem viés, máscara causal).",
        grade_id="tarefa2_enunciado",
    )
    nb.solution(
        "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
        "    \"\"\"Atenção causal com n_heads cabeças: (B, T, D) -> (B, T, D).\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    q = split_heads(x @ W_q, n_heads)                       # (B, H, T, d_k)\n"
        "    k = split_heads(x @ W_k, n_heads)                       # (B, H, T, d_k)\n"
        "    v = split_heads(x @ W_v, n_heads)                       # (B, H, T, d_k)\n"
        "    T, d_k = q.shape[-2], q.shape[-1]\n"
        "    s = q @ k.transpose(-2, -1) / math.sqrt(d_k)            # (B, H, T, T)\n"
        "    proibido = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)\n"
        "    a = torch.softmax(s.masked_fill(proibido, float(\"-inf\")), dim=-1)   # (B, H, T, T)\n"
        "    return merge_heads(a @ v) @ W_o                         # (B, T, D)\n"
        "    ### END SOLUTION",
        grade_id="mha",
    )
    nb.tests(
        "\"\"\"multi_head_attention igual a torch.nn.MultiheadAttention com máscara causal.\"\"\"\n"
        "def _gabarito_mha(x, W_q, W_k, W_v, W_o, H):\n"
        "    B, T, D = x.shape\n"
        "    ref = torch.nn.MultiheadAttention(D, H, bias=False, batch_first=True, dtype=x.dtype)\n"
        "    with torch.no_grad():\n"
        "        ref.in_proj_weight.copy_(torch.cat([W_q.T, W_k.T, W_v.T]))   # o torch usa x @ W.T\n"
        "        ref.out_proj.weight.copy_(W_o.T)\n"
        "        proibido = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)\n"
        "        return ref(x, x, x, attn_mask=proibido, need_weights=False)[0]\n"
        "\n"
        "def _pesos(D, g, dtype=torch.float64):\n"
        "    return [torch.randn(D, D, generator=g, dtype=dtype) / math.sqrt(D) for _ in range(4)]\n"
        "\n"
        "g = torch.Generator().manual_seed(6)\n"
        "x = torch.randn(2, 5, 12, generator=g, dtype=torch.float64)\n"
        "W = _pesos(12, g)\n"
        "out = _forma(\"multi_head_attention com x (2, 5, 12), 3 cabeças\", _chamar(\"multi_head_attention\", multi_head_attention, x, *W, 3), (2, 5, 12))\n"
        "conferir(\"multi_head_attention com x (2, 5, 12), 3 cabeças\", out, _gabarito_mha(x, *W, 3), atol=1e-10)\n"
        "x2 = x.clone(); x2[:, 3:] = 0.0\n"
        "conferir(\"mudar as posições 3 e 4 não muda as saídas 0 a 2 (causalidade)\",\n"
        "         _chamar(\"multi_head_attention\", multi_head_attention, x2, *W, 3)[:, :3], out[:, :3], atol=1e-12)\n"
        "print(\"Tarefa 2: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_sem_laco(\"multi_head_attention\", multi_head_attention)\n"
        "_g = torch.Generator().manual_seed(62)\n"
        "for (_B, _T, _D, _H) in [(1, 1, 8, 2), (3, 9, 15, 5), (2, 6, 7, 1), (1, 17, 64, 8), (2, 4, 6, 6)]:\n"
        "    _x = torch.randn(_B, _T, _D, generator=_g, dtype=torch.float64)\n"
        "    _W = _pesos(_D, _g)\n"
        "    _nome = f\"multi_head_attention com x {(_B, _T, _D)} e H={_H}\"\n"
        "    conferir(_nome, _forma(_nome, _chamar(_nome, multi_head_attention, _x, *_W, _H), (_B, _T, _D)), _gabarito_mha(_x, *_W, _H), atol=1e-10)\n"
        "_x = torch.randn(2, 40, 32, generator=_g)\n"
        "_W = _pesos(32, _g, torch.float32)\n"
        "conferir(\"multi_head_attention em float32, T=40\", _chamar(\"multi_head_attention\", multi_head_attention, _x, *_W, 4),\n"
        "         _gabarito_mha(_x, *_W, 4), atol=1e-5, rtol=1e-4)   # float32: ~1e-7 por termo, somas de 40\n"
        "### END HIDDEN TESTS",
        grade_id="test_mha",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 3
    nb.md(
        "## Tarefa 3 — GQA: cabeças de chave/valor compartilhadas (3 pontos)\n\n"
        "Na GQA há `H` cabeças de consulta e só `Hkv` de chave/valor ($H$ múltiplo de $H_{kv}$); "
        "cada cabeça KV serve um **grupo** de $G = H / H_{kv}$ consultas vizinhas: a consulta `h` usa "
        "a cabeça KV `h // G`. Com $H_{kv} = 1$ temos a MQA; com $H_{kv} = H$, a MHA de sempre.\n\n"
        "1. `repeat_kv(k, n_rep)`: `(B, Hkv, T, d) -> (B, Hkv*n_rep, T, d)`, a cabeça `h` da saída "
        "igual à cabeça `h // n_rep` da entrada (KV0, KV0, KV1, KV1, ... e não KV0, KV1, KV0, KV1).\n"
        "2. `gqa_attention(q, k, v)`: `q` `(B, H, T, d)`, `k` e `v` `(B, Hkv, T, d)`; atenção causal "
        "com escala $1/\\sqrt{d}$, devolvendo `(B, H, T, d)`. Expanda `k` e `v` com `repeat_kv`.\n"
        "   Levante `ValueError` se `k` e `v` tiverem números de cabeças diferentes ou se `H` não "
        "for múltiplo de `Hkv`. Preserve o dtype.\n\n"
        "O gabarito é `F.scaled_dot_product_attention(..., is_causal=True, enable_gqa=True)`.",
        grade_id="tarefa3_enunciado",
    )
    nb.solution(
        "def repeat_kv(k, n_rep):\n"
        "    \"\"\"(B, Hkv, T, d) -> (B, Hkv * n_rep, T, d), cabeça h da saída = cabeça h // n_rep da entrada.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    B, Hkv, T, d = k.shape\n"
        "    return k[:, :, None].expand(B, Hkv, n_rep, T, d).reshape(B, Hkv * n_rep, T, d)\n"
        "    ### END SOLUTION\n"
        "\n"
        "\n"
        "def gqa_attention(q, k, v):\n"
        "    \"\"\"Atenção causal com cabeças KV compartilhadas: (B, H, T, d), (B, Hkv, T, d) x 2 -> (B, H, T, d).\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    H, Hkv = q.shape[1], k.shape[1]\n"
        "    if v.shape[1] != Hkv:\n"
        "        raise ValueError(f\"k e v precisam do mesmo número de cabeças: k{tuple(k.shape)}, v{tuple(v.shape)}\")\n"
        "    if H % Hkv != 0:\n"
        "        raise ValueError(f\"H={H} cabeças de consulta não é múltiplo de Hkv={Hkv}\")\n"
        "    G = H // Hkv\n"
        "    k, v = repeat_kv(k, G), repeat_kv(v, G)                 # (B, H, T, d)\n"
        "    T, m, d = q.shape[-2], k.shape[-2], q.shape[-1]\n"
        "    s = q @ k.transpose(-2, -1) / math.sqrt(d)              # (B, H, T, m)\n"
        "    proibido = torch.triu(torch.ones(T, m, dtype=torch.bool, device=q.device), diagonal=1)\n"
        "    a = torch.softmax(s.masked_fill(proibido, float(\"-inf\")), dim=-1)\n"
        "    return a @ v                                            # (B, H, T, d)\n"
        "    ### END SOLUTION",
        grade_id="gqa",
    )
    nb.tests(
        "\"\"\"repeat_kv repete cada cabeça KV para o seu grupo; gqa_attention igual ao SDPA com enable_gqa.\"\"\"\n"
        "k = torch.arange(3.0).reshape(1, 3, 1, 1).expand(1, 3, 2, 2)   # cabeças KV 0, 1, 2\n"
        "r = _forma(\"repeat_kv(k, 2) com k (1, 3, 2, 2)\", _chamar(\"repeat_kv\", repeat_kv, k, 2), (1, 6, 2, 2))\n"
        "conferir(\"repeat_kv: qual cabeça KV cada uma das 6 saídas copia\", r[0, :, 0, 0], torch.tensor([0.0, 0, 1, 1, 2, 2]))\n"
        "g = torch.Generator().manual_seed(7)\n"
        "q = torch.randn(2, 4, 6, 8, generator=g, dtype=torch.float64)     # H = 4\n"
        "k = torch.randn(2, 2, 6, 8, generator=g, dtype=torch.float64)     # Hkv = 2\n"
        "v = torch.randn(2, 2, 6, 8, generator=g, dtype=torch.float64)\n"
        "conferir(\"gqa_attention com H=4, Hkv=2\", _chamar(\"gqa_attention\", gqa_attention, q, k, v),\n"
        "         F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), atol=1e-10)\n"
        "conferir_erro(\"gqa_attention com H=4 e Hkv=3\", gqa_attention, q, torch.zeros(2, 3, 6, 8, dtype=torch.float64), torch.zeros(2, 3, 6, 8, dtype=torch.float64))\n"
        "print(\"Tarefa 3: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(63)\n"
        "for (_B, _H, _Hkv, _T, _d) in [(1, 4, 4, 5, 8), (2, 6, 1, 7, 3), (1, 8, 2, 1, 16), (3, 24, 4, 9, 5), (1, 2, 1, 33, 1)]:\n"
        "    _q = torch.randn(_B, _H, _T, _d, generator=_g, dtype=torch.float64)\n"
        "    _k = torch.randn(_B, _Hkv, _T, _d, generator=_g, dtype=torch.float64)\n"
        "    _v = torch.randn(_B, _Hkv, _T, _d, generator=_g, dtype=torch.float64)\n"
        "    _nome = f\"gqa_attention com B={_B}, H={_H}, Hkv={_Hkv}, T={_T}, d={_d}\"\n"
        "    conferir(_nome, _chamar(_nome, gqa_attention, _q, _k, _v),\n"
        "             F.scaled_dot_product_attention(_q, _k, _v, is_causal=True, enable_gqa=True), atol=1e-10)\n"
        "    conferir(f\"repeat_kv com k {tuple(_k.shape)} e n_rep={_H // _Hkv}\", _chamar(\"repeat_kv\", repeat_kv, _k, _H // _Hkv),\n"
        "             _k.repeat_interleave(_H // _Hkv, dim=1), atol=0, rtol=0)\n"
        "_q, _k, _v = (torch.randn(1, _h, 10, 8, generator=_g).half() for _h in (6, 2, 2))\n"
        "_o16 = _tipo(\"gqa_attention em float16\", _chamar(\"gqa_attention em float16\", gqa_attention, _q, _k, _v), torch.float16)\n"
        "conferir(\"gqa_attention em float16\", _o16.float(),\n"
        "         F.scaled_dot_product_attention(_q.float(), _k.float(), _v.float(), is_causal=True, enable_gqa=True), atol=1e-2, rtol=1e-2)   # float16: ~3 dígitos\n"
        "_z = torch.zeros(1, 2, 3, 4)\n"
        "conferir_erro(\"gqa_attention com k de 2 cabeças e v de 1\", gqa_attention, torch.zeros(1, 4, 3, 4), _z, torch.zeros(1, 1, 3, 4))\n"
        "conferir_erro(\"gqa_attention com H=3 e Hkv=2\", gqa_attention, torch.zeros(1, 3, 3, 4), _z, _z)\n"
        "### END HIDDEN TESTS",
        grade_id="test_gqa",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 4
    nb.md(
        "## Tarefa 4 — quanto custa: parâmetros e FLOPs (2 pontos)\n\n"
        "Para uma camada de atenção sem viés com largura `D`, `H` cabeças de consulta e `Hkv` de "
        "chave/valor ($d_k = D/H$):\n\n"
        "- `attention_params(D, H, Hkv)`: o número de parâmetros de $W_Q$ `(D, H d_k)`, $W_K$ e "
        "$W_V$ `(D, Hkv d_k)` e $W_O$ `(H d_k, D)`.\n"
        "- `attention_flops(B, T, D, H, Hkv)`: os FLOPs das multiplicações de matrizes de uma "
        "passada, contando **2 FLOPs por multiplicação-e-soma** (um produto `(M, K) @ (K, N)` custa "
        "$2MKN$): as quatro projeções, $QK^\\top$ e a mistura com $V$, calculando a matriz $T \\times T$ "
        "inteira de cada cabeça de consulta (sem descontar a parte mascarada). Ignore softmax, escala "
        "e máscara.\n\n"
        "Devolva `int` do Python. O gabarito dos FLOPs é `torch.utils.flop_counter.FlopCounterMode` "
        "medindo uma passada de verdade.",
        grade_id="tarefa4_enunciado",
    )
    nb.solution(
        "def attention_params(D, H, Hkv):\n"
        "    ### BEGIN SOLUTION\n"
        "    d_k = D // H\n"
        "    return int(D * H * d_k + 2 * D * Hkv * d_k + H * d_k * D)\n"
        "    ### END SOLUTION\n"
        "\n"
        "\n"
        "def attention_flops(B, T, D, H, Hkv):\n"
        "    ### BEGIN SOLUTION\n"
        "    d_k = D // H\n"
        "    projecoes = 2 * B * T * D * (H * d_k) * 2 + 2 * B * T * D * (Hkv * d_k) * 2   # Q e O; K e V\n"
        "    nucleo = 2 * (2 * B * H * T * T * d_k)                                          # QKᵀ e AV\n"
        "    return int(projecoes + nucleo)\n"
        "    ### END SOLUTION",
        grade_id="custos",
    )
    nb.tests(
        "\"\"\"Contagens iguais às de módulos e passadas reais do torch.\"\"\"\n"
        "from torch.utils.flop_counter import FlopCounterMode\n"
        "\n"
        "def _params_torch(D, H, Hkv):\n"
        "    d_k = D // H\n"
        "    camadas = [torch.nn.Linear(D, H * d_k, bias=False), torch.nn.Linear(D, Hkv * d_k, bias=False),\n"
        "               torch.nn.Linear(D, Hkv * d_k, bias=False), torch.nn.Linear(H * d_k, D, bias=False)]\n"
        "    return sum(p.numel() for c in camadas for p in c.parameters())\n"
        "\n"
        "def _flops_torch(B, T, D, H, Hkv):\n"
        "    d_k = D // H\n"
        "    x = torch.randn(B, T, D)\n"
        "    Wq, Wk, Wv, Wo = torch.randn(D, H * d_k), torch.randn(D, Hkv * d_k), torch.randn(D, Hkv * d_k), torch.randn(H * d_k, D)\n"
        "    with FlopCounterMode(display=False) as fc:\n"
        "        q = (x @ Wq).view(B, T, H, d_k).transpose(1, 2)\n"
        "        k = (x @ Wk).view(B, T, Hkv, d_k).transpose(1, 2).repeat_interleave(H // Hkv, dim=1)\n"
        "        v = (x @ Wv).view(B, T, Hkv, d_k).transpose(1, 2).repeat_interleave(H // Hkv, dim=1)\n"
        "        a = torch.softmax(q @ k.transpose(-2, -1), dim=-1)\n"
        "        (a @ v).transpose(1, 2).reshape(B, T, H * d_k) @ Wo\n"
        "    return fc.get_total_flops()\n"
        "\n"
        "for (D, H, Hkv) in [(768, 12, 12), (128, 4, 2)]:\n"
        "    conferir(f\"attention_params({D}, {H}, {Hkv})\", _chamar(\"attention_params\", attention_params, D, H, Hkv), _params_torch(D, H, Hkv), atol=0, rtol=0)\n"
        "conferir(\"attention_flops(B=2, T=16, D=32, H=4, Hkv=2)\", _chamar(\"attention_flops\", attention_flops, 2, 16, 32, 4, 2), _flops_torch(2, 16, 32, 4, 2), atol=0, rtol=0)\n"
        "assert isinstance(attention_params(8, 2, 1), int) and isinstance(attention_flops(1, 2, 8, 2, 1), int), \"devolva int do Python\"\n"
        "print(\"Tarefa 4: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "for (_D, _H, _Hkv) in [(768, 12, 1), (768, 12, 4), (6144, 24, 4), (10, 5, 5), (9, 3, 1)]:\n"
        "    conferir(f\"attention_params({_D}, {_H}, {_Hkv})\", _chamar(\"attention_params\", attention_params, _D, _H, _Hkv), _params_torch(_D, _H, _Hkv), atol=0, rtol=0)\n"
        "for (_B, _T, _D, _H, _Hkv) in [(1, 1, 8, 2, 1), (3, 7, 15, 5, 5), (1, 33, 24, 6, 2), (2, 5, 12, 12, 3)]:\n"
        "    conferir(f\"attention_flops(B={_B}, T={_T}, D={_D}, H={_H}, Hkv={_Hkv})\", _chamar(\"attention_flops\", attention_flops, _B, _T, _D, _H, _Hkv),\n"
        "             _flops_torch(_B, _T, _D, _H, _Hkv), atol=0, rtol=0)\n"
        "# Números grandes: int do Python não transborda (GPT-2 small, T = 1024)\n"
        "_esp = 4 * 1024 * 768 * 768 * 2 + 2 * 2 * 12 * 1024 * 1024 * 64\n"
        "conferir(\"attention_flops do GPT-2 small (T=1024)\", attention_flops(1, 1024, 768, 12, 12), _esp, atol=0, rtol=0)\n"
        "### END HIDDEN TESTS",
        grade_id="test_custos",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 5
    nb.written(
        "## Tarefa 5 — pergunta aberta (2 pontos)\n\n"
        "O modelo grande do curso tem 24 cabeças de consulta e só 4 de chave/valor. Em relação a uma "
        "MHA com 24 cabeças KV: (a) quantas vezes menor fica a memória das chaves e valores guardados "
        "durante a geração? (b) o número de pontuações $QK^\\top$ calculadas muda? Explique em duas ou "
        "três frases.",
        "(a) 6 vezes menor: guardamos K e V de 4 cabeças em vez de 24 (24/4 = 6); o mesmo vale para "
        "os parâmetros de $W_K$ e $W_V$. (b) Não muda: cada uma das 24 cabeças de consulta ainda "
        "compara as suas $T$ consultas com as $T$ chaves ($24 \\cdot T^2$ pontuações); a GQA só faz "
        "grupos de 6 consultas lerem as mesmas chaves. O ganho é de memória e de tráfego (ler o "
        "cache), não de contas.",
        grade_id="resposta_gqa",
        points=2,
    )
    nb.entrega()
    return nb


# Resposta plausível e errada (usada nos testes do pipeline): a forma certa
# (B, H, T, d_k) com o conteúdo errado, sem o transpose.
ERRADO = {
    "split_merge": (
        "def split_heads(x, n_heads):\n"
        "    B, T, D = x.shape\n"
        "    return x.reshape(B, n_heads, T, D // n_heads)\n"
        "\n"
        "\n"
        "def merge_heads(x):\n"
        "    B, H, T, d_k = x.shape\n"
        "    return x.reshape(B, T, H * d_k)\n"
    ),
}
