"""Exercício do capítulo 12 — KV cache e decodificação incremental.

Tarefas (pontos): KVCache pré-alocado com erro claro quando cheio (3), atenção
das consultas novas sobre o cache com GQA e a máscara com `start` (3),
geração gulosa com cache, idêntica a recalcular tudo (4), a fórmula da
memória do cache (2), pergunta escrita sobre a RoPE antes do cache (2).
Oráculos: F.scaled_dot_product_attention sobre a sequência inteira, a geração
por recálculo escrita no próprio caderno e a fórmula fechada; nada do pacote
atencao.
"""

from autograder.fontes._parte2 import IMPORTS
from autograder.nbbuild import Notebook

SLUG = "12-kv-cache"

MODELO = '''\
def rope(x, positions, base=10000.0):
    """Gira os pares de coordenadas (2i, 2i+1) de x (..., n, d) pelo ângulo pos * base^(-2i/d).

    positions: tensor de inteiros (n,) com a posição ABSOLUTA de cada linha.
    """
    d = x.shape[-1]
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)          # (d/2,)
    ang = positions.to(torch.float64)[:, None] * freq[None, :]               # (n, d/2)
    cos, sin = torch.cos(ang).to(x.dtype), torch.sin(ang).to(x.dtype)
    x1, x2 = x[..., 0::2], x[..., 1::2]                                      # (..., n, d/2)
    out = torch.empty_like(x)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x1 * sin + x2 * cos
    return out


class TinyLM:
    """Um modelo de linguagem de brinquedo: embeddings -> uma camada de atenção causal
    (GQA + RoPE) com resíduo -> logits. Pesos aleatórios fixos, float64."""

    def __init__(self, vocab=40, d_model=32, n_heads=4, n_kv_heads=2, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.vocab, self.n_heads, self.n_kv_heads = vocab, n_heads, n_kv_heads
        self.d_k = d_model // n_heads
        r = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)
        self.emb = r(vocab, d_model)                                   # (V, D)
        self.w_q = r(d_model, n_heads * self.d_k) / math.sqrt(d_model)
        self.w_k = r(d_model, n_kv_heads * self.d_k) / math.sqrt(d_model)
        self.w_v = r(d_model, n_kv_heads * self.d_k) / math.sqrt(d_model)
        self.w_o = r(n_heads * self.d_k, d_model) / math.sqrt(n_heads * self.d_k)

    def embed(self, tokens):
        """tokens (B, n) inteiros -> x (B, n, D)."""
        return self.emb[tokens]

    def qkv(self, x):
        """x (B, n, D) -> q (B, H, n, d_k), k e v (B, Hkv, n, d_k), ANTES da RoPE."""
        B, n, _ = x.shape
        q = (x @ self.w_q).view(B, n, self.n_heads, self.d_k).transpose(1, 2)
        k = (x @ self.w_k).view(B, n, self.n_kv_heads, self.d_k).transpose(1, 2)
        v = (x @ self.w_v).view(B, n, self.n_kv_heads, self.d_k).transpose(1, 2)
        return q, k, v

    def head(self, x, o):
        """x (B, n, D) e a saída da atenção o (B, H, n, d_k) -> logits (B, n, V)."""
        B, H, n, d_k = o.shape
        h = x + o.transpose(1, 2).reshape(B, n, H * d_k) @ self.w_o   # resíduo
        return h @ self.emb.T


def forward_full(model, tokens):
    """Passada completa, sem cache: logits (B, n, V) de todas as posições."""
    x = model.embed(tokens)
    q, k, v = model.qkv(x)
    pos = torch.arange(tokens.shape[1])
    q, k = rope(q, pos), rope(k, pos)
    G = model.n_heads // model.n_kv_heads
    k, v = k.repeat_interleave(G, dim=1), v.repeat_interleave(G, dim=1)   # (B, H, n, d_k)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return model.head(x, o)


def generate_full(model, prompt, n_new):
    """Geração gulosa recalculando o modelo inteiro a cada token novo."""
    tokens = prompt
    for _ in range(n_new):
        nxt = forward_full(model, tokens)[:, -1].argmax(dim=-1, keepdim=True)   # (B, 1)
        tokens = torch.cat([tokens, nxt], dim=1)
    return tokens


model = TinyLM()
'''


def build() -> Notebook:
    nb = Notebook(SLUG, "Capítulo 12 — KV cache")
    nb.md(
        "Na geração, cada token novo só precisa da sua consulta contra as chaves e valores de **todas** "
        "as posições anteriores. Essas chaves e valores não mudam de um passo para o outro (a máscara "
        "causal garante que o passado não vê o futuro): basta guardá-los num cache e calcular, a cada "
        "passo, só a posição nova.\n\n"
        "Você vai escrever o cache, a atenção sobre ele (com GQA e a máscara deslocada por `start`), "
        "a geração incremental — que tem de dar exatamente os mesmos tokens que recalcular tudo — e a "
        "conta da memória.\n\n"
        "**Como trabalhar.** Complete as células marcadas com `# SEU CÓDIGO AQUI` (apague a linha "
        "`raise NotImplementedError`) e rode a célula de testes logo abaixo. Na correção rodam também "
        "testes ocultos (prompt de 1 token, cache enchendo até a última posição, lote 2).\n\n"
        "**Regras.** Use só `torch` (e `math`). Não importe o pacote `atencao`.",
        grade_id="instrucoes",
    )
    nb.setup(IMPORTS)
    nb.md(
        "## O modelo de brinquedo (já pronto)\n\n"
        "Uma camada de atenção com 4 cabeças de consulta e 2 de chave/valor (GQA: a cabeça de consulta "
        "$h$ usa a cabeça de chave/valor $\\lfloor h / G \\rfloor$, $G = 2$), RoPE em q e k, e resíduo. "
        "`forward_full` e `generate_full` são a referência: recalculam tudo.",
        grade_id="modelo_enunciado",
    )
    nb.code(MODELO, grade_id="modelo")

    # ---------------------------------------------------------------- tarefa 1
    nb.md(
        "## Tarefa 1 — o cache pré-alocado (3 pontos)\n\n"
        "Complete a classe `KVCache(batch, kv_heads, max_len, d_k, dtype=torch.float64)`:\n\n"
        "* no construtor, aloque **uma vez** `self.k` e `self.v`, de forma `(batch, kv_heads, max_len, d_k)`, "
        "e comece com `self.length = 0`;\n"
        "* `append(k_new, v_new)`, com `k_new` e `v_new` de forma `(batch, kv_heads, n, d_k)`, escreve as "
        "`n` posições novas em `[length, length + n)`, avança `length` e devolve `(k_all, v_all)`: as "
        "**visões** `self.k[:, :, :length]` e `self.v[:, :, :length]` (sem copiar);\n"
        "* se não couber, levante `ValueError` com uma mensagem em português dizendo quantas posições "
        "o cache tem, quantas já usa e quantas chegaram — e sem mudar nada.",
        grade_id="tarefa1_enunciado",
    )
    nb.solution(
        "class KVCache:\n"
        "    \"\"\"Chaves e valores de todas as posições já vistas, num buffer alocado uma vez.\"\"\"\n"
        "\n"
        "    def __init__(self, batch, kv_heads, max_len, d_k, dtype=torch.float64):\n"
        "        ### BEGIN SOLUTION\n"
        "        self.max_len = max_len\n"
        "        self.k = torch.zeros(batch, kv_heads, max_len, d_k, dtype=dtype)   # (B, Hkv, max_len, d_k)\n"
        "        self.v = torch.zeros(batch, kv_heads, max_len, d_k, dtype=dtype)\n"
        "        self.length = 0\n"
        "        ### END SOLUTION\n"
        "\n"
        "    def append(self, k_new, v_new):\n"
        "        ### BEGIN SOLUTION\n"
        "        n = k_new.shape[-2]\n"
        "        if self.length + n > self.max_len:\n"
        "            raise ValueError(f\"KVCache cheio: cabem {self.max_len} posições, já há {self.length} \"\n"
        "                             f\"e chegaram mais {n}.\")\n"
        "        self.k[:, :, self.length:self.length + n] = k_new\n"
        "        self.v[:, :, self.length:self.length + n] = v_new\n"
        "        self.length += n\n"
        "        return self.k[:, :, :self.length], self.v[:, :, :self.length]\n"
        "        ### END SOLUTION",
        grade_id="kv_cache",
    )
    nb.tests(
        "\"\"\"KVCache guarda o que recebeu, sem realocar, e recusa o que não cabe.\"\"\"\n"
        "cache = KVCache(1, 2, 6, 4)\n"
        "assert all(hasattr(cache, a) for a in (\"k\", \"v\", \"length\")), \\\n"
        "    \"KVCache: esperava que o construtor criasse self.k, self.v (os buffers) e self.length = 0; falta algum.\"\n"
        "_tensor(\"KVCache.k\", cache.k)\n"
        "conferir(\"forma de KVCache(1, 2, 6, 4).k\", np.array(cache.k.shape), np.array([1, 2, 6, 4]))\n"
        "ptr = cache.k.data_ptr()\n"
        "ks = [torch.randn(1, 2, n, 4, dtype=torch.float64) for n in (3, 1, 2)]\n"
        "vs = [torch.randn(1, 2, n, 4, dtype=torch.float64) for n in (3, 1, 2)]\n"
        "for i in range(3):\n"
        "    res = _tupla(\"cache.append\", cache.append(ks[i], vs[i]), 2)\n"
        "    conferir(f\"k_all depois de {i + 1} append(s)\", res[0], torch.cat(ks[:i + 1], dim=2))\n"
        "    conferir(f\"v_all depois de {i + 1} append(s)\", res[1], torch.cat(vs[:i + 1], dim=2))\n"
        "assert cache.length == 6, f\"cache.length: esperava 6, veio {cache.length}\"\n"
        "assert cache.k.data_ptr() == ptr, \"KVCache: o buffer self.k foi realocado; escreva dentro dele (self.k[:, :, a:b] = ...)\"\n"
        "conferir_erro(\"append num cache cheio\", cache.append, ks[1], vs[1])\n"
        "print(\"Tarefa 1: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "assert cache.length == 6, f\"KVCache: um append recusado não pode mudar length (veio {cache.length})\"\n"
        "_c = KVCache(2, 1, 5, 3)\n"
        "_k5, _v5 = torch.randn(2, 1, 5, 3, dtype=torch.float64), torch.randn(2, 1, 5, 3, dtype=torch.float64)\n"
        "conferir_erro(\"append de 6 posições num cache de 5\", _c.append, torch.randn(2, 1, 6, 3, dtype=torch.float64), torch.randn(2, 1, 6, 3, dtype=torch.float64))\n"
        "assert _c.length == 0, f\"KVCache: um append recusado não pode mudar length (veio {_c.length})\"\n"
        "_ka, _va = _tupla(\"append que enche o cache exatamente\", _chamar(\"append que enche o cache\", _c.append, _k5, _v5), 2)\n"
        "conferir(\"k_all com o cache exatamente cheio (lote 2)\", _ka, _k5)\n"
        "assert _ka.data_ptr() == _c.k.data_ptr(), \"KVCache.append: devolva visões de self.k/self.v (sem copiar)\"\n"
        "_c1 = KVCache(1, 1, 1, 2)\n"
        "_ka, _va = _c1.append(torch.ones(1, 1, 1, 2, dtype=torch.float64), torch.ones(1, 1, 1, 2, dtype=torch.float64))\n"
        "conferir(\"cache de uma posição\", _va, torch.ones(1, 1, 1, 2, dtype=torch.float64))\n"
        "### END HIDDEN TESTS",
        grade_id="test_kv_cache",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 2
    nb.md(
        "## Tarefa 2 — atenção das consultas novas sobre o cache (3 pontos)\n\n"
        "Implemente `cached_attention(q_new, k_all, v_all, start)`: `q_new` com forma `(B, H, n, d_k)` "
        "(as consultas das posições `start, ..., start + n - 1`, já giradas), `k_all` e `v_all` com forma "
        "`(B, Hkv, m, d_k)`, $m = \\text{start} + n$. Devolva `(B, H, n, d_k)`:\n\n"
        "* GQA: repita cada cabeça de chave/valor $G = H / H_{kv}$ vezes (`repeat_interleave` na dimensão 1);\n"
        "* máscara: a consulta $i$ (posição absoluta $\\text{start} + i$) **não** vê a chave $j$ quando "
        "$j > \\text{start} + i$.\n\n"
        "Escreva a conta (pontuações, máscara, softmax, mistura); `F.scaled_dot_product_attention` fica "
        "fora desta tarefa.",
        grade_id="tarefa2_enunciado",
    )
    nb.solution(
        "def cached_attention(q_new, k_all, v_all, start):\n"
        "    \"\"\"Atenção causal de n consultas novas sobre m = start + n chaves (GQA).\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    G = q_new.shape[1] // k_all.shape[1]\n"
        "    k = k_all.repeat_interleave(G, dim=1)                       # (B, H, m, d_k)\n"
        "    v = v_all.repeat_interleave(G, dim=1)\n"
        "    n, m = q_new.shape[-2], k.shape[-2]\n"
        "    s = q_new @ k.transpose(-2, -1) / math.sqrt(q_new.shape[-1])   # (B, H, n, m)\n"
        "    futuro = torch.arange(m)[None, :] > start + torch.arange(n)[:, None]   # (n, m)\n"
        "    s = s.masked_fill(futuro, -inf)\n"
        "    w = torch.exp(s - s.amax(dim=-1, keepdim=True))\n"
        "    return (w / w.sum(dim=-1, keepdim=True)) @ v\n"
        "    ### END SOLUTION",
        grade_id="cached_attention",
    )
    nb.code(
        "def last_rows_of_full_attention(q_all, k_all, v_all, n):\n"
        "    \"\"\"Oráculo: atenção causal sobre as m posições (SDPA) e só as n últimas linhas.\"\"\"\n"
        "    G = q_all.shape[1] // k_all.shape[1]\n"
        "    full = F.scaled_dot_product_attention(q_all, k_all.repeat_interleave(G, 1), v_all.repeat_interleave(G, 1), is_causal=True)\n"
        "    return full[:, :, q_all.shape[2] - n:]",
        grade_id="oraculo_atencao",
    )
    nb.tests(
        "\"\"\"cached_attention é igual às últimas linhas da atenção causal completa.\"\"\"\n"
        "q_all = torch.randn(1, 4, 9, 8, dtype=torch.float64)\n"
        "k_all, v_all = torch.randn(1, 2, 9, 8, dtype=torch.float64), torch.randn(1, 2, 9, 8, dtype=torch.float64)\n"
        "for n in (1, 3, 9):\n"
        "    out = _tensor(\"cached_attention\", cached_attention(q_all[:, :, 9 - n:], k_all, v_all, start=9 - n))\n"
        "    conferir(f\"cached_attention com n={n} consultas novas e start={9 - n}\", out, last_rows_of_full_attention(q_all, k_all, v_all, n), atol=1e-12)\n"
        "print(\"Tarefa 2: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(111)\n"
        "for _B, _H, _Hkv, _m, _n, _d in [(1, 1, 1, 1, 1, 2), (2, 6, 2, 17, 5, 4), (1, 3, 1, 12, 12, 6), (2, 4, 4, 30, 1, 8)]:\n"
        "    _q = torch.randn(_B, _H, _m, _d, generator=_g, dtype=torch.float64)\n"
        "    _k, _v = torch.randn(_B, _Hkv, _m, _d, generator=_g, dtype=torch.float64), torch.randn(_B, _Hkv, _m, _d, generator=_g, dtype=torch.float64)\n"
        "    _caso = f\"cached_attention com B={_B}, H={_H}, Hkv={_Hkv}, m={_m}, n={_n}\"\n"
        "    with _sem_atalhos():\n"
        "        _out = _chamar(_caso, cached_attention, _q[:, :, _m - _n:], _k, _v, _m - _n)\n"
        "    conferir(_caso, _out, last_rows_of_full_attention(_q, _k, _v, _n), atol=1e-12)\n"
        "### END HIDDEN TESTS",
        grade_id="test_cached_attention",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 3
    nb.md(
        "## Tarefa 3 — geração com cache, idêntica a recalcular tudo (4 pontos)\n\n"
        "Implemente `generate_cached(model, prompt, n_new)` (gulosa, como `generate_full`):\n\n"
        "1. crie um `KVCache` com espaço para `T0 + n_new` posições (`T0 = prompt.shape[1]`);\n"
        "2. *prefill*: passe o prompt inteiro uma vez — `model.embed`, `model.qkv`, RoPE em q e k com as "
        "posições `0, ..., T0 - 1`, `append` das chaves **já giradas** e dos valores, `cached_attention` "
        "com `start = 0`, `model.head` — e escolha o primeiro token novo pelo `argmax` da última posição;\n"
        "3. a cada passo seguinte, passe **só o token novo**, na posição `start = cache.length`: RoPE com "
        "essa posição, `append`, `cached_attention`, `model.head`, `argmax`.\n\n"
        "Devolva os tokens `(B, T0 + n_new)`. Os testes comparam com `generate_full` token a token e "
        "conferem que, depois do prefill, cada passo chama `model.qkv` com uma única posição.",
        grade_id="tarefa3_enunciado",
    )
    nb.solution(
        "def generate_cached(model, prompt, n_new):\n"
        "    \"\"\"Geração gulosa com KV cache: prefill do prompt e depois um token por passo.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    B, T0 = prompt.shape\n"
        "    cache = KVCache(B, model.n_kv_heads, T0 + n_new, model.d_k)\n"
        "    tokens, new = prompt, prompt\n"
        "    for _ in range(n_new):\n"
        "        start = cache.length\n"
        "        pos = torch.arange(start, start + new.shape[1])\n"
        "        x = model.embed(new)\n"
        "        q, k, v = model.qkv(x)\n"
        "        q, k = rope(q, pos), rope(k, pos)\n"
        "        k_all, v_all = cache.append(k, v)\n"
        "        logits = model.head(x, cached_attention(q, k_all, v_all, start))   # (B, n, V)\n"
        "        new = logits[:, -1].argmax(dim=-1, keepdim=True)                  # (B, 1)\n"
        "        tokens = torch.cat([tokens, new], dim=1)\n"
        "    return tokens\n"
        "    ### END SOLUTION",
        grade_id="generate_cached",
    )
    nb.tests(
        "\"\"\"generate_cached dá os mesmos tokens que generate_full e processa um token por passo.\"\"\"\n"
        "prompt = torch.randint(0, model.vocab, (1, 7), generator=torch.Generator().manual_seed(3))\n"
        "got = _tensor(\"generate_cached\", generate_cached(model, prompt, 12))\n"
        "want = generate_full(model, prompt, 12)\n"
        "conferir(\"tokens de generate_cached (prompt de 7, 12 novos)\", got, want, atol=0, rtol=0)\n"
        "print(\"Tarefa 3: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "class _Espiao:\n"
        "    \"\"\"Repassa tudo ao modelo e anota quantas posições cada chamada de qkv recebeu.\"\"\"\n"
        "    def __init__(self, m):\n"
        "        self._m, self.tamanhos = m, []\n"
        "    def __getattr__(self, nome):\n"
        "        return getattr(self._m, nome)\n"
        "    def qkv(self, x):\n"
        "        self.tamanhos.append(x.shape[1])\n"
        "        return self._m.qkv(x)\n"
        "_g = torch.Generator().manual_seed(113)\n"
        "for _B, _T0, _n, _seed in [(1, 1, 6, 1), (2, 5, 9, 2), (1, 20, 1, 3)]:\n"
        "    _mod = _Espiao(TinyLM(seed=_seed))\n"
        "    _p = torch.randint(0, _mod.vocab, (_B, _T0), generator=_g)\n"
        "    _caso = f\"generate_cached com lote {_B}, prompt de {_T0}, {_n} novos\"\n"
        "    _got = _chamar(_caso, generate_cached, _mod, _p, _n)\n"
        "    conferir(\"tokens de \" + _caso, _got, generate_full(_mod._m, _p, _n), atol=0, rtol=0)\n"
        "    assert _mod.tamanhos[:1] == [_T0] and all(t == 1 for t in _mod.tamanhos[1:]), (\n"
        "        f\"{_caso}: depois do prefill ({_T0} posições), cada passo deve passar só 1 posição por model.qkv; \"\n"
        "        f\"as chamadas receberam {_mod.tamanhos}\")\n"
        "    assert len(_mod.tamanhos) <= _n + 1, f\"{_caso}: esperava no máximo {_n + 1} chamadas de model.qkv, vieram {len(_mod.tamanhos)}\"\n"
        "_mod = TinyLM(seed=4)\n"
        "_p = torch.randint(0, _mod.vocab, (1, 3), generator=_g)\n"
        "conferir(\"generate_cached com 0 tokens novos\", _chamar(\"generate_cached com n_new=0\", generate_cached, _mod, _p, 0), _p, atol=0, rtol=0)\n"
        "### END HIDDEN TESTS",
        grade_id="test_generate_cached",
        points=4,
    )
    nb.md(
        "### Quanto o cache economiza (sem nota)\n\n"
        "Rode a célula abaixo: ela mede as duas gerações no mesmo modelo. O recálculo faz, no passo $t$, "
        "uma passada sobre $t$ posições (custo total quadrático em $T$); com o cache, cada passo custa "
        "proporcional às $t$ chaves guardadas, e as projeções só são feitas para a posição nova.",
        grade_id="medida_enunciado",
    )
    nb.code(
        "import time\n"
        "prompt = torch.randint(0, model.vocab, (1, 200), generator=torch.Generator().manual_seed(0))\n"
        "for nome, f in ((\"recalcular tudo\", generate_full), (\"com KV cache\", generate_cached)):\n"
        "    t0 = time.perf_counter()\n"
        "    try:\n"
        "        f(model, prompt, 100)\n"
        "        print(f\"{nome}: {time.perf_counter() - t0:.3f} s\")\n"
        "    except NotImplementedError:\n"
        "        print(f\"{nome}: complete a tarefa 3 primeiro\")",
        grade_id="medida",
    )

    # ---------------------------------------------------------------- tarefa 4
    nb.md(
        "## Tarefa 4 — quanto o cache ocupa (2 pontos)\n\n"
        "Implemente `kv_cache_bytes(layers, kv_heads, d_k, T, bytes_per_element, batch=1)`: os bytes de "
        "chaves **e** valores de `T` posições em todas as camadas de atenção. Devolva um `int` do Python.\n\n"
        "Exemplo: o modelo grande do livro tem 16 camadas de atenção completa, 4 cabeças de "
        "chave/valor, $d_k = 256$, bf16 (2 bytes) e contexto de 262.144 tokens.",
        grade_id="tarefa4_enunciado",
    )
    nb.solution(
        "def kv_cache_bytes(layers, kv_heads, d_k, T, bytes_per_element, batch=1):\n"
        "    \"\"\"2 (k e v) x camadas x cabeças KV x d_k x T x bytes x lote.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    return 2 * int(layers) * int(kv_heads) * int(d_k) * int(T) * int(bytes_per_element) * int(batch)\n"
        "    ### END SOLUTION",
        grade_id="kv_cache_bytes",
    )
    nb.tests(
        "\"\"\"kv_cache_bytes segue 2 x camadas x cabeças KV x d_k x T x bytes.\"\"\"\n"
        "res = kv_cache_bytes(16, 4, 256, 262_144, 2)\n"
        "assert isinstance(res, int), f\"kv_cache_bytes: devolva um int do Python, veio {type(res).__name__}\"\n"
        "conferir(\"kv_cache_bytes do modelo grande (em GiB)\", res / 2**30, 16.0)\n"
        "print(\"Tarefa 4: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "conferir(\"kv_cache_bytes com 24 cabeças KV (sem GQA), em GiB\", kv_cache_bytes(16, 24, 256, 262_144, 2) / 2**30, 96.0)\n"
        "conferir(\"kv_cache_bytes com T=1\", kv_cache_bytes(1, 1, 1, 1, 1), 2)\n"
        "conferir(\"kv_cache_bytes do tiny (4 camadas, 2 KV, d_k=32, T=1280, float32, lote 3)\", kv_cache_bytes(4, 2, 32, 1280, 4, batch=3), 2 * 4 * 2 * 32 * 1280 * 4 * 3)\n"
        "assert kv_cache_bytes(16, 4, 256, 262_144, 2, batch=8) == 8 * 17_179_869_184, \"kv_cache_bytes: o lote multiplica a memória\"\n"
        "### END HIDDEN TESTS",
        grade_id="test_kv_cache_bytes",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 5
    nb.written(
        "## Tarefa 5 — pergunta aberta (2 pontos)\n\n"
        "Na sua `generate_cached`, as chaves entram no cache **depois** da RoPE. Explique por que isso "
        "é correto (o que a rotação de uma chave depende?) e o que custaria guardar as chaves antes da "
        "RoPE. E os valores: por que eles nunca são girados?",
        "A rotação de uma chave só depende da sua própria posição absoluta, que não muda depois que o "
        "token foi visto; o produto $q_i \\cdot k_j$ girado depende só de $i - j$. Então a chave girada "
        "na posição $j$ vale para todos os passos futuros e pode ser guardada pronta. Guardar antes da "
        "RoPE obrigaria a girar as $t$ chaves de novo a cada passo (trabalho extra proporcional a $t$, "
        "e um erro fácil: girar com as posições erradas). Os valores não entram nas pontuações, só na "
        "mistura; a RoPE existe para pôr a posição relativa em $q \\cdot k$, então $V$ fica como está.",
        grade_id="resposta_rope",
        points=2,
    )
    nb.entrega()
    return nb


# Resposta plausível e errada (usada nos testes): a máscara sem o
# deslocamento `start` (o triângulo de uma atenção sem cache).
ERRADO = {
    "cached_attention": (
        "def cached_attention(q_new, k_all, v_all, start):\n"
        "    G = q_new.shape[1] // k_all.shape[1]\n"
        "    k, v = k_all.repeat_interleave(G, dim=1), v_all.repeat_interleave(G, dim=1)\n"
        "    n, m = q_new.shape[-2], k.shape[-2]\n"
        "    s = q_new @ k.transpose(-2, -1) / math.sqrt(q_new.shape[-1])\n"
        "    s = s.masked_fill(torch.arange(m)[None, :] > torch.arange(n)[:, None], -inf)\n"
        "    return torch.softmax(s, dim=-1) @ v\n"
    ),
}
