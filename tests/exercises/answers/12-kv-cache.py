"""Cap. 12: respostas plantadas e justas (o formato está em __init__.py).

Tarefa 1: a identidade do buffer (realocar com torch.cat, devolver cópias) só o kernel do aluno
mede; na correção ela só sinaliza o notebook ao professor (`_so_sinalizar`), com a nota cheia, e
por isso não há aqui uma plantada que realoca (o contrato não diz "sinalizada"). As plantadas da
tarefa 1 são as preguiçosas que dão 0 nos valores.
Tarefa 2: a regra é "sem atenção pronta" (`_sem_atencao_pronta`: a softmax do torch pode; a ideia
da tarefa é a máscara deslocada por `start` e o GQA).
Tarefa 3: o modelo chega à função do aluno por um espião que só tem embed, qkv, head e os tamanhos
e anota a forma de cada chamada (o trabalho por passo não cresce).
"""

from answers import Fair, Planted

_REF_ATTN = (
    "def cached_attention(q_new, k_all, v_all, start):\n"
    "    G = q_new.shape[1] // k_all.shape[1]\n"
    "    k = k_all.repeat_interleave(G, dim=1)\n"
    "    v = v_all.repeat_interleave(G, dim=1)\n"
    "    n, m = q_new.shape[-2], k.shape[-2]\n"
    "    s = q_new @ k.transpose(-2, -1) / math.sqrt(q_new.shape[-1])\n"
    "    futuro = torch.arange(m)[None, :] > start + torch.arange(n)[:, None]\n"
    "    s = s.masked_fill(futuro, -inf)\n"
)

PLANTED = [
    # ---- tarefa 1
    Planted(
        why="cache em listas, juntado com torch.cat a cada append; o buffer self.k fica sem uso",
        cells={"kv_cache": (
            "class KVCache:\n"
            "    def __init__(self, batch, kv_heads, max_len, d_k, dtype=torch.float64):\n"
            "        self.max_len = max_len\n"
            "        self.k = torch.zeros(batch, kv_heads, max_len, d_k, dtype=dtype)\n"
            "        self.v = torch.zeros(batch, kv_heads, max_len, d_k, dtype=dtype)\n"
            "        self.length = 0\n"
            "        self._ks, self._vs = [], []\n\n"
            "    def append(self, k_new, v_new):\n"
            "        n = k_new.shape[-2]\n"
            "        if self.length + n > self.max_len:\n"
            "            raise ValueError(f'KVCache cheio: cabem {self.max_len}, já há {self.length}, chegaram {n}')\n"
            "        self._ks.append(k_new)\n"
            "        self._vs.append(v_new)\n"
            "        self.length += n\n"
            "        return torch.cat(self._ks, dim=2), torch.cat(self._vs, dim=2)\n")},
        zero=("test_kv_cache",),
    ),
    Planted(
        why="sem conferir a capacidade: o fatiamento corta em silêncio e nada de ValueError",
        cells={"kv_cache": (
            "class KVCache:\n"
            "    def __init__(self, batch, kv_heads, max_len, d_k, dtype=torch.float64):\n"
            "        self.k = torch.zeros(batch, kv_heads, max_len, d_k, dtype=dtype)\n"
            "        self.v = torch.zeros(batch, kv_heads, max_len, d_k, dtype=dtype)\n"
            "        self.length = 0\n\n"
            "    def append(self, k_new, v_new):\n"
            "        n = k_new.shape[-2]\n"
            "        self.k[:, :, self.length:self.length + n] = k_new[:, :, :self.k.shape[2] - self.length]\n"
            "        self.v[:, :, self.length:self.length + n] = v_new[:, :, :self.v.shape[2] - self.length]\n"
            "        self.length = min(self.length + n, self.k.shape[2])\n"
            "        return self.k[:, :, :self.length], self.v[:, :, :self.length]\n")},
        zero=("test_kv_cache",),
    ),
    Planted(
        why="append que sempre escreve no começo do buffer (esquece length); a geração da tarefa 3 "
            "usa esse cache e não perde pontos por ele",
        cells={"kv_cache": (
            "class KVCache:\n"
            "    def __init__(self, batch, kv_heads, max_len, d_k, dtype=torch.float64):\n"
            "        self.max_len = max_len\n"
            "        self.k = torch.zeros(batch, kv_heads, max_len, d_k, dtype=dtype)\n"
            "        self.v = torch.zeros(batch, kv_heads, max_len, d_k, dtype=dtype)\n"
            "        self.length = 0\n\n"
            "    def append(self, k_new, v_new):\n"
            "        n = k_new.shape[-2]\n"
            "        if self.length + n > self.max_len:\n"
            "            raise ValueError(f'KVCache cheio: cabem {self.max_len}, já há {self.length}, chegaram {n}')\n"
            "        self.k[:, :, :n] = k_new\n"
            "        self.v[:, :, :n] = v_new\n"
            "        self.length += n\n"
            "        return self.k[:, :, :self.length], self.v[:, :, :self.length]\n")},
        zero=("test_kv_cache",),
    ),
    # ---- tarefa 2: a atenção pronta faz a máscara e o GQA
    Planted(
        why="SDPA com enable_gqa e a máscara deslocada pronta",
        cells={"cached_attention": (
            "import torch.nn.functional as F\n\n"
            "def cached_attention(q_new, k_all, v_all, start):\n"
            "    n, m = q_new.shape[-2], k_all.shape[-2]\n"
            "    pode = torch.arange(m)[None, :] <= start + torch.arange(n)[:, None]\n"
            "    return F.scaled_dot_product_attention(q_new, k_all, v_all, attn_mask=pode, enable_gqa=True)\n")},
        zero=("test_cached_attention",),
    ),
    Planted(
        why="o oráculo do caderno (last_rows_of_full_attention) com as consultas antigas preenchidas por zeros",
        cells={"cached_attention": (
            "def cached_attention(q_new, k_all, v_all, start):\n"
            "    B, H, n, d = q_new.shape\n"
            "    q_all = torch.cat([torch.zeros(B, H, start, d, dtype=q_new.dtype), q_new], dim=2)\n"
            "    return last_rows_of_full_attention(q_all, k_all, v_all, n)\n")},
        zero=("test_cached_attention",),
    ),
    Planted(
        why="SDPA em float32 com repeat_interleave e is_causal na forma quadrada completada",
        cells={"cached_attention": (
            "import torch.nn.functional as F\n\n"
            "def cached_attention(q_new, k_all, v_all, start):\n"
            "    G = q_new.shape[1] // k_all.shape[1]\n"
            "    k, v = k_all.repeat_interleave(G, 1), v_all.repeat_interleave(G, 1)\n"
            "    q = torch.cat([torch.zeros_like(q_new[:, :, :1]).expand(-1, -1, start, -1), q_new], 2)\n"
            "    o = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True)\n"
            "    return o[:, :, start:].to(q_new.dtype)\n")},
        zero=("test_cached_attention",),
    ),
    Planted(
        why="máscara sem o start (a quadrada): errada com cache; a geração da tarefa 3 usa essa atenção "
            "e não perde pontos por ela",
        cells={"cached_attention": (
            _REF_ATTN.replace("> start + torch.arange(n)", "> torch.arange(n)")
            + "    return torch.softmax(s, dim=-1) @ v\n")},
        zero=("test_cached_attention",),
    ),
    # ---- tarefa 3: sem cache de verdade
    Planted(
        why="fachada: chama model.qkv com os tamanhos esperados e recalcula tudo com os pesos w_q, w_k, w_v",
        cells={"generate_cached": (
            "def generate_cached(model, prompt, n_new):\n"
            "    tokens, new = prompt, prompt\n"
            "    G = model.n_heads // model.n_kv_heads\n"
            "    for _ in range(n_new):\n"
            "        model.qkv(model.embed(new))\n"
            "        x = model.emb[tokens]\n"
            "        B, T, _ = x.shape\n"
            "        q = (x @ model.w_q).view(B, T, model.n_heads, model.d_k).transpose(1, 2)\n"
            "        k = (x @ model.w_k).view(B, T, model.n_kv_heads, model.d_k).transpose(1, 2)\n"
            "        v = (x @ model.w_v).view(B, T, model.n_kv_heads, model.d_k).transpose(1, 2)\n"
            "        pos = torch.arange(T)\n"
            "        q, k = rope(q, pos), rope(k, pos)\n"
            "        o = cached_attention(q, k, v, 0)\n"
            "        new = model.head(x, o)[:, -1].argmax(dim=-1, keepdim=True)\n"
            "        tokens = torch.cat([tokens, new], dim=1)\n"
            "    return tokens\n")},
        zero=("test_generate_cached",),
    ),
    Planted(
        why="cache de embeddings: guarda x e projeta K e V de todas as posições a cada passo (com w_k, w_v)",
        cells={"generate_cached": (
            "def generate_cached(model, prompt, n_new):\n"
            "    B, T0 = prompt.shape\n"
            "    xs, tokens, new = None, prompt, prompt\n"
            "    for _ in range(n_new):\n"
            "        start = 0 if xs is None else xs.shape[1]\n"
            "        x = model.embed(new)\n"
            "        xs = x if xs is None else torch.cat([xs, x], dim=1)\n"
            "        q, _, _ = model.qkv(x)\n"
            "        T = xs.shape[1]\n"
            "        k = (xs @ model.w_k).view(B, T, model.n_kv_heads, model.d_k).transpose(1, 2)\n"
            "        v = (xs @ model.w_v).view(B, T, model.n_kv_heads, model.d_k).transpose(1, 2)\n"
            "        q, k = rope(q, torch.arange(start, T)), rope(k, torch.arange(T))\n"
            "        new = model.head(x, cached_attention(q, k, v, start))[:, -1].argmax(dim=-1, keepdim=True)\n"
            "        tokens = torch.cat([tokens, new], dim=1)\n"
            "    return tokens\n")},
        zero=("test_generate_cached",),
    ),
    Planted(
        why="cache de embeddings com model.qkv sobre todas as posições a cada passo",
        cells={"generate_cached": (
            "def generate_cached(model, prompt, n_new):\n"
            "    xs, tokens, new = None, prompt, prompt\n"
            "    for _ in range(n_new):\n"
            "        start = 0 if xs is None else xs.shape[1]\n"
            "        x = model.embed(new)\n"
            "        xs = x if xs is None else torch.cat([xs, x], dim=1)\n"
            "        q, k, v = model.qkv(xs)\n"
            "        pos = torch.arange(xs.shape[1])\n"
            "        q, k = rope(q, pos)[:, :, start:], rope(k, pos)\n"
            "        new = model.head(x, cached_attention(q, k, v, start))[:, -1].argmax(dim=-1, keepdim=True)\n"
            "        tokens = torch.cat([tokens, new], dim=1)\n"
            "    return tokens\n")},
        zero=("test_generate_cached",),
    ),
    Planted(
        why="sem cache na atenção: cada token novo olha só para si mesmo (append feito, k_all ignorado)",
        cells={"generate_cached": (
            "def generate_cached(model, prompt, n_new):\n"
            "    B, T0 = prompt.shape\n"
            "    cache = KVCache(B, model.n_kv_heads, T0 + n_new, model.d_k)\n"
            "    tokens, new = prompt, prompt\n"
            "    for _ in range(n_new):\n"
            "        start = cache.length\n"
            "        pos = torch.arange(start, start + new.shape[1])\n"
            "        x = model.embed(new)\n"
            "        q, k, v = model.qkv(x)\n"
            "        q, k = rope(q, pos), rope(k, pos)\n"
            "        cache.append(k, v)\n"
            "        o = cached_attention(q, k, v, 0)\n"
            "        new = model.head(x, o)[:, -1].argmax(dim=-1, keepdim=True)\n"
            "        tokens = torch.cat([tokens, new], dim=1)\n"
            "    return tokens\n")},
        zero=("test_generate_cached",),
    ),
    Planted(
        why="recalcular tudo: generate_full com outro nome",
        cells={"generate_cached": "def generate_cached(model, prompt, n_new):\n    return generate_full(model, prompt, n_new)\n"},
        zero=("test_generate_cached",),
    ),
    Planted(
        why="pesos tirados do próprio model.qkv (a identidade como um lote de D tokens de 1 posição) e a "
            "geração recalculada com eles",
        cells={"generate_cached": (
            "def generate_cached(model, prompt, n_new):\n"
            "    B, T0 = prompt.shape\n"
            "    x0 = model.embed(prompt)\n"
            "    model.qkv(x0)\n"
            "    D = x0.shape[-1]\n"
            "    qe, ke, ve = model.qkv(torch.eye(D, dtype=x0.dtype)[:, None, :])\n"
            "    W_q, W_k, W_v = (t[:, :, 0].reshape(D, -1) for t in (qe, ke, ve))\n"
            "    xs, tokens, new = x0, prompt, None\n"
            "    for i in range(n_new):\n"
            "        if new is not None:\n"
            "            xs = torch.cat([xs, model.embed(new)], dim=1)\n"
            "        T = xs.shape[1]\n"
            "        q = (xs @ W_q).view(B, T, model.n_heads, model.d_k).transpose(1, 2)\n"
            "        k = (xs @ W_k).view(B, T, model.n_kv_heads, model.d_k).transpose(1, 2)\n"
            "        v = (xs @ W_v).view(B, T, model.n_kv_heads, model.d_k).transpose(1, 2)\n"
            "        pos = torch.arange(T)\n"
            "        o = cached_attention(rope(q, pos)[:, :, -1:], rope(k, pos), v, T - 1)\n"
            "        new = model.head(xs[:, -1:], o)[:, -1].argmax(dim=-1, keepdim=True)\n"
            "        tokens = torch.cat([tokens, new], dim=1)\n"
            "    return tokens\n")},
        zero=("test_generate_cached",),
    ),
    # ---- tarefa 4
    Planted(
        why="o número do exemplo do enunciado, fixo",
        cells={"kv_cache_bytes": (
            "def kv_cache_bytes(layers, kv_heads, d_k, T, bytes_per_element, batch=1):\n"
            "    return 16 * 2**30\n")},
        zero=("test_kv_cache_bytes",),
    ),
    Planted(
        why="esquece o lote",
        cells={"kv_cache_bytes": (
            "def kv_cache_bytes(layers, kv_heads, d_k, T, bytes_per_element, batch=1):\n"
            "    return 2 * layers * kv_heads * d_k * T * bytes_per_element\n")},
        zero=("test_kv_cache_bytes",),
    ),
]

FAIR = [
    Fair(
        why="narrow(...).copy_(); softmax do torch e máscara por triu(diagonal=start+1); prefill fora do laço "
            "com retorno antecipado para n_new == 0 e head só na última posição; math.prod",
        cells={
            "kv_cache": (
                "class KVCache:\n"
                "    def __init__(self, batch, kv_heads, max_len, d_k, dtype=torch.float64):\n"
                "        self.k = torch.empty(batch, kv_heads, max_len, d_k, dtype=dtype)\n"
                "        self.v = torch.empty_like(self.k)\n"
                "        self.length = 0\n\n"
                "    def append(self, k_new, v_new):\n"
                "        n, cap = k_new.shape[2], self.k.shape[2]\n"
                "        if self.length + n > cap:\n"
                "            raise ValueError(f'o cache tem {cap} posições, usa {self.length} e chegaram {n}')\n"
                "        self.k.narrow(2, self.length, n).copy_(k_new)\n"
                "        self.v.narrow(2, self.length, n).copy_(v_new)\n"
                "        self.length += n\n"
                "        return self.k.narrow(2, 0, self.length), self.v.narrow(2, 0, self.length)\n"),
            "cached_attention": (
                "def cached_attention(q_new, k_all, v_all, start):\n"
                "    G = q_new.shape[1] // k_all.shape[1]\n"
                "    k, v = k_all.repeat_interleave(G, dim=1), v_all.repeat_interleave(G, dim=1)\n"
                "    n, m = q_new.shape[-2], k.shape[-2]\n"
                "    s = q_new @ k.transpose(-2, -1) / math.sqrt(q_new.shape[-1])\n"
                "    futuro = torch.triu(torch.ones(n, m, dtype=torch.bool), diagonal=start + 1)\n"
                "    return torch.softmax(s.masked_fill(futuro, float('-inf')), dim=-1) @ v\n"),
            "generate_cached": (
                "def generate_cached(model, prompt, n_new):\n"
                "    if n_new == 0:\n"
                "        return prompt\n"
                "    B, T0 = prompt.shape\n"
                "    cache = KVCache(B, model.n_kv_heads, T0 + n_new, model.d_k)\n\n"
                "    def passo(new):\n"
                "        start = cache.length\n"
                "        pos = torch.arange(start, start + new.shape[1])\n"
                "        x = model.embed(new)\n"
                "        q, k, v = model.qkv(x)\n"
                "        k_all, v_all = cache.append(rope(k, pos), v)\n"
                "        o = cached_attention(rope(q, pos), k_all, v_all, start)\n"
                "        return model.head(x[:, -1:], o[:, :, -1:])[:, -1].argmax(-1, keepdim=True)\n\n"
                "    out = [prompt, passo(prompt)]\n"
                "    for _ in range(n_new - 1):\n"
                "        out.append(passo(out[-1]))\n"
                "    return torch.cat(out, dim=1)\n"),
            "kv_cache_bytes": (
                "def kv_cache_bytes(layers, kv_heads, d_k, T, bytes_per_element, batch=1):\n"
                "    return int(math.prod([2, layers, kv_heads, d_k, T, bytes_per_element, batch]))\n"),
        },
    ),
    Fair(
        why="cache com index_copy_; GQA sem repetir (consultas agrupadas por cabeça de K/V) em float64 com "
            "torch.where; dtype do cache tirado de x e uma chamada a mais no fim",
        cells={
            "kv_cache": (
                "class KVCache:\n"
                "    def __init__(self, batch, kv_heads, max_len, d_k, dtype=torch.float64):\n"
                "        forma = (batch, kv_heads, max_len, d_k)\n"
                "        self.k, self.v = torch.zeros(forma, dtype=dtype), torch.zeros(forma, dtype=dtype)\n"
                "        self.length = 0\n\n"
                "    def append(self, k_new, v_new):\n"
                "        n = k_new.shape[2]\n"
                "        livre = self.k.shape[2] - self.length\n"
                "        if n > livre:\n"
                "            raise ValueError(f'KVCache: {self.k.shape[2]} posições no total, {self.length} em uso, '\n"
                "                             f'{n} novas (só cabem {livre})')\n"
                "        idx = torch.arange(self.length, self.length + n)\n"
                "        self.k.index_copy_(2, idx, k_new)\n"
                "        self.v.index_copy_(2, idx, v_new)\n"
                "        self.length += n\n"
                "        print('cache com', self.length, 'posições')\n"
                "        return self.k[:, :, :self.length], self.v[:, :, :self.length]\n"),
            "cached_attention": (
                "def cached_attention(q_new, k_all, v_all, start):\n"
                "    B, H, n, d = q_new.shape\n"
                "    Hkv, m = k_all.shape[1], k_all.shape[2]\n"
                "    q = q_new.double().reshape(B, Hkv, H // Hkv, n, d)\n"
                "    s = q @ k_all.double().unsqueeze(2).transpose(-2, -1) / d ** 0.5\n"
                "    pode = torch.arange(m)[None, :] <= torch.arange(start, start + n)[:, None]\n"
                "    s = torch.where(pode, s, torch.tensor(-torch.inf, dtype=s.dtype))\n"
                "    w = torch.exp(s - s.amax(-1, keepdim=True))\n"
                "    o = (w / w.sum(-1, keepdim=True)) @ v_all.double().unsqueeze(2)\n"
                "    return o.reshape(B, H, n, d).to(q_new.dtype)\n"),
            "generate_cached": (
                "def generate_cached(model, prompt, n_new):\n"
                "    B, T0 = prompt.shape\n"
                "    cache = None\n"
                "    tokens, new = prompt, prompt\n"
                "    for i in range(n_new + 1):\n"
                "        x = model.embed(new)\n"
                "        if cache is None:\n"
                "            cache = KVCache(B, model.n_kv_heads, T0 + n_new + 1, model.d_k, dtype=x.dtype)\n"
                "        start = cache.length\n"
                "        pos = torch.arange(start, start + x.shape[1])\n"
                "        q, k, v = model.qkv(x)\n"
                "        k_all, v_all = cache.append(rope(k, pos), v)\n"
                "        if i == n_new:\n"
                "            break\n"
                "        logits = model.head(x, cached_attention(rope(q, pos), k_all, v_all, start))\n"
                "        new = logits[:, -1].argmax(dim=-1, keepdim=True)\n"
                "        tokens = torch.cat([tokens, new], dim=1)\n"
                "    return tokens\n"),
            "kv_cache_bytes": (
                "def kv_cache_bytes(layers, kv_heads, d_k, T, bytes_per_element, batch=1):\n"
                "    por_posicao = 2 * kv_heads * d_k * bytes_per_element\n"
                "    return int(layers * batch * T * por_posicao)\n"),
        },
    ),
    Fair(
        why="softmax pelo logcumsumexp (aqui a softmax é livre: a regra é só a atenção pronta)",
        cells={"cached_attention": _REF_ATTN + "    return torch.exp(s - torch.logcumsumexp(s, -1)[..., -1:]) @ v\n"},
    ),
]

# Tarefa 5 (o cache paginado): o depósito, a escrita e a reunião são da célula travada (PagedKVCache); o
# aluno escreve o alocador de blocos (com reuso dos devolvidos) e a tradução posição -> slot pela tabela.
_REF_SLOTS = (
    "def slots(block_table, positions, block_size):\n"
    "    tabela = torch.tensor(block_table, dtype=torch.long)\n"
    "    return tabela[positions // block_size] * block_size + positions % block_size\n"
)

PLANTED += [
    Planted(
        why="(tarefa 5) o alocador nunca reusa os blocos devolvidos: um contador que só cresce, free não faz nada",
        cells={"tabela_de_blocos": (
            "class BlockAllocator:\n"
            "    def __init__(self, n_blocks):\n"
            "        self.n_blocks, self.proximo = n_blocks, 0\n\n"
            "    def allocate(self):\n"
            "        if self.proximo >= self.n_blocks:\n"
            "            raise ValueError('BlockAllocator: acabaram os blocos do depósito.')\n"
            "        self.proximo += 1\n"
            "        return self.proximo - 1\n\n"
            "    def free(self, block):\n"
            "        pass\n\n\n" + _REF_SLOTS)},
        zero=("test_tabela_de_blocos",),
    ),
    Planted(
        why="(tarefa 5) reúne os blocos na ordem dos blocos físicos (a tabela ordenada), não na ordem lógica",
        cells={"tabela_de_blocos": (
            "class BlockAllocator:\n"
            "    def __init__(self, n_blocks):\n"
            "        self.livres = list(range(n_blocks - 1, -1, -1))\n\n"
            "    def allocate(self):\n"
            "        if not self.livres:\n"
            "            raise ValueError('BlockAllocator: não há bloco livre.')\n"
            "        return self.livres.pop()\n\n"
            "    def free(self, block):\n"
            "        self.livres.append(block)\n\n\n"
            "def slots(block_table, positions, block_size):\n"
            "    tabela = torch.tensor(sorted(block_table), dtype=torch.long)\n"
            "    return tabela[positions // block_size] * block_size + positions % block_size\n")},
        zero=("test_tabela_de_blocos",),
    ),
]

FAIR += [
    Fair(
        why="(tarefa 5) alocador com uma fila (o bloco devolvido há mais tempo sai primeiro) e um conjunto dos "
            "livres; slots numa lista de inteiros do Python, com divmod",
        cells={"tabela_de_blocos": (
            "from collections import deque\n\n\n"
            "class BlockAllocator:\n"
            "    def __init__(self, n_blocks):\n"
            "        self.fila = deque(range(n_blocks))\n"
            "        self.livres = set(self.fila)\n\n"
            "    def allocate(self):\n"
            "        if not self.fila:\n"
            "            raise ValueError(f'BlockAllocator: os {len(self.livres)} blocos livres acabaram.')\n"
            "        b = self.fila.popleft()\n"
            "        self.livres.discard(b)\n"
            "        return int(b)\n\n"
            "    def free(self, block):\n"
            "        if block not in self.livres:\n"
            "            self.livres.add(block)\n"
            "            self.fila.append(block)\n\n\n"
            "def slots(block_table, positions, block_size):\n"
            "    saida = []\n"
            "    for p in positions.tolist():\n"
            "        logico, desloc = divmod(p, block_size)\n"
            "        saida.append(block_table[logico] * block_size + desloc)\n"
            "    return saida\n")},
    ),
]
