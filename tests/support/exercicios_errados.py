"""Respostas plausíveis e erradas, uma por caderno (os cenários de tests/exercises/test_exercicios.py e
tests/nbgrader/test_nbgrader_pipeline.py), e acesso às células das fontes (autograder/fontes/NN-slug.md)."""

from __future__ import annotations

import functools

from autograder import fontes


@functools.cache
def _notebook(slug):
    return fontes.load(slug)


def cells(slug):
    """As células do caderno de solutions/ feito da fonte (cópias: um teste pode mexer nelas)."""
    import copy
    return copy.deepcopy(_notebook(slug).cells)


def source(slug, grade_id):
    """O texto da célula `grade_id` da fonte (a solução, com os marcadores do nbgrader)."""
    return next(c.source for c in _notebook(slug).cells if c.metadata["nbgrader"]["grade_id"] == grade_id)


def _sem_marcadores(src):
    return "\n".join(l for l in src.splitlines() if "### BEGIN SOLUTION" not in l and "### END SOLUTION" not in l)


ERRADO = {
    # `.T` inverte TODAS as dimensões de um tensor com lote, não só as duas últimas
    '01-pontuacoes': {
        'scores': (
            'def scores(q, k):\n'
            '    return q @ k.T\n'
        ),
    },
    # a entropia sem a convenção 0 log 0 = 0 dá NaN numa linha one-hot
    '02-escala': {
        'entropia': (
            'def entropia(p):\n'
            '    return -(p * torch.log(p)).sum(dim=-1)\n'
        ),
    },
    # `>=` no lugar de `>`: proíbe também a diagonal
    '03-mascara-causal': {
        'mascara_causal': (
            'def mascara_causal(n, m=None, start=0):\n'
            '    m = start + n if m is None else m\n'
            '    return torch.arange(m)[None, :] >= start + torch.arange(n)[:, None]\n'
        ),
    },
    # sem subtrair o máximo: transborda
    '04-softmax': {
        'softmax': (
            'def softmax(x, dim=-1):\n'
            '    e = torch.exp(x)\n'
            '    return e / e.sum(dim=dim, keepdim=True)\n'
        ),
    },
    # esquece o start: a máscara quadrada não serve com cache
    '05-mistura-com-v': {
        'atencao_causal': (
            'def atencao_causal(q, k, v, start=0):\n'
            '    T = q.shape[-2]\n'
            '    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n'
            '    futuro = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)\n'
            "    return misturar(torch.softmax(s.masked_fill(futuro, float('-inf')), dim=-1), v)\n"
        ),
    },
    # reshape sem transpose: mistura posições e cabeças
    '06-multi-cabeca': {
        'split_merge': (
            'def split_heads(x, n_heads):\n'
            '    B, T, D = x.shape\n'
            '    return x.reshape(B, n_heads, T, D // n_heads)\n'
            '\n'
            '\n'
            'def merge_heads(x):\n'
            '    B, H, T, d_k = x.shape\n'
            '    return x.reshape(B, T, H * d_k)\n'
        ),
    },
    # RoPE na metade-metade em vez dos pares vizinhos
    '07-bloco-transformer': {
        'rope': (
            'def rope(x, start=0, base=10000.0):\n'
            '    T, d = x.shape[-2], x.shape[-1]\n'
            '    if d % 2:\n'
            '        raise ValueError("d ímpar")\n'
            '    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n'
            '    ang = torch.arange(start, start + T, dtype=torch.float64)[:, None] * theta\n'
            '    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)\n'
            '    x0, x1 = x[..., : d // 2], x[..., d // 2:]\n'
            '    return torch.cat((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)\n'
        ),
    },
    # multiplica os logits pela temperatura em vez de dividir
    '08-modelo-de-linguagem': {
        'temperatura': (
            'def probabilidades(logits, temperatura):\n'
            '    if not temperatura > 0:\n'
            "        raise ValueError('t')\n"
            '    return torch.softmax(logits * temperatura, dim=-1)\n'
            '\n\ndef amostrar(logits, temperatura, n, semente):\n'
            '    g = torch.Generator().manual_seed(semente)\n'
            '    return torch.multinomial(probabilidades(logits, temperatura), n, replacement=True, generator=g)\n'
        ),
    },
    # esquece que a ingênua lê e escreve a matriz (2T² em vez de 4T²)
    '09-custo-quadratico': {
        'trafego': (
            'def naive_elements(T, d):\n'
            '    return 2 * T * T + 4 * T * d\n'
            '\n'
            '\n'
            'def tiled_elements(T, d, block):\n'
            '    return 2 * T * d + 2 * T * d * (-(-T // block))\n'
        ),
    },
    # junta as somas sem reescalar pelo novo máximo
    '10-softmax-online': {
        'merge': (
            'def merge(a, b):\n'
            '    m = torch.maximum(a[0], b[0])\n'
            '    return m, a[1] + b[1], a[2] + b[2]\n'
        ),
    },
    # esquece o D_i em dS
    '11-flashattention': {
        'block_backward': (
            'def block_backward(q_i, k_j, v_j, do_i, lse_i, D_i, mask=None):\n'
            '    scale = 1.0 / math.sqrt(q_i.shape[-1])\n'
            '    s = (q_i @ k_j.transpose(-2, -1)) * scale\n'
            '    if mask is not None:\n'
            '        s = s.masked_fill(mask, -inf)\n'
            '    p = torch.exp(s - lse_i[..., None])\n'
            '    ds = p * (do_i @ v_j.transpose(-2, -1))\n'
            '    return (ds @ k_j) * scale, (ds.transpose(-2, -1) @ q_i) * scale, p.transpose(-2, -1) @ do_i\n'
        ),
    },
    # máscara sem o start: com cache, as consultas novas não veem as chaves antigas
    '12-kv-cache': {
        'cached_attention': (
            'def cached_attention(q_new, k_all, v_all, start):\n'
            '    G = q_new.shape[1] // k_all.shape[1]\n'
            '    k, v = k_all.repeat_interleave(G, dim=1), v_all.repeat_interleave(G, dim=1)\n'
            '    n, m = q_new.shape[-2], k.shape[-2]\n'
            '    s = q_new @ k.transpose(-2, -1) / math.sqrt(q_new.shape[-1])\n'
            '    s = s.masked_fill(torch.arange(m)[None, :] > torch.arange(n)[:, None], -inf)\n'
            '    return torch.softmax(s, dim=-1) @ v\n'
        ),
    },
}

# cap. 13: a solução sem reescalar o acumulador pelo novo máximo (alfa)
ERRADO["13-kernel-triton"] = {"flash_kernel": _sem_marcadores(source("13-kernel-triton", "flash_kernel")).replace(
    "acc = alfa[:, None] * acc + tl.dot", "acc = acc + tl.dot")}
# desafio do cap. 13: percorre todas as chaves com a máscara causal (valores certos, blocos futuros lidos)
ERRADO["13-desafio-flashattention"] = {"flash_fwd_kernel": _sem_marcadores(
    source("13-desafio-flashattention", "flash_fwd_kernel")).replace(
    "hi = tl.minimum(N, start_m + BLOCK_M)", "hi = N")}
