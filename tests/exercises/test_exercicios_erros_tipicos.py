"""Respostas erradas típicas, e o teste que deve pegá-las.

Os cenários comuns a todos os cadernos (soluções, em branco, None, ERRADO)
ficam em tests/exercises/test_exercicios.py; aqui ficam os erros que um aluno comete
de verdade nestas tarefas (view em vez de reshape, laço sobre as cabeças,
repeat no lugar de repeat_interleave, RoPE em V, ...).
"""

import os

import pytest
import torch

# O caderno do cap. 13 liga o interpretador antes de importar o triton; aqui, no mesmo
# processo de outros cadernos (o cap. 10 já faz o torch importar o triton), ele precisa
# estar ligado antes de qualquer import do triton, senão as funções @jit da própria
# biblioteca (tl.zeros...) ficam compiladas para GPU.
if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from exercicios_errados import ERRADO, cells, source  # noqa: E402
from nb_harness import meta, run  # noqa: E402

# Respostas erradas típicas e o teste que deve pegá-las (visível ou oculto).
TYPICAL_MISTAKES = [
    ("06-multi-cabeca", "split_merge", "test_split_merge",  # view depois do transpose: não junta dimensões
     "def split_heads(x, n_heads):\n"
     "    if x.ndim != 3 or x.shape[-1] % n_heads:\n        raise ValueError('forma')\n"
     "    B, T, D = x.shape\n    return x.view(B, T, n_heads, D // n_heads).transpose(1, 2)\n\n"
     "def merge_heads(x):\n    B, H, T, d = x.shape\n    return x.transpose(1, 2).view(B, T, H * d)\n"),
    ("06-multi-cabeca", "split_merge", "test_split_merge",  # esquece de validar D múltiplo de H
     "def split_heads(x, n_heads):\n"
     "    B, T, D = x.shape\n    return x.reshape(B, T, n_heads, -1).transpose(1, 2)\n\n"
     "def merge_heads(x):\n    B, H, T, d = x.shape\n    return x.transpose(1, 2).reshape(B, T, H * d)\n"),
    ("06-multi-cabeca", "mha", "test_mha",  # laço sobre as cabeças: certo nos números, proibido pelo enunciado
     "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
     "    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))\n"
     "    T = x.shape[1]\n    outs = []\n"
     "    for h in range(n_heads):\n"
     "        s = q[:, h] @ k[:, h].transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
     "        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float('-inf'))\n"
     "        outs.append(torch.softmax(s, -1) @ v[:, h])\n"
     "    return merge_heads(torch.stack(outs, 1)) @ W_o\n"),
    ("06-multi-cabeca", "gqa", "test_gqa",  # repeat em vez de repeat_interleave: grupos trocados
     "def repeat_kv(k, n_rep):\n    return k.repeat(1, n_rep, 1, 1)\n\n"
     "def gqa_attention(q, k, v):\n"
     "    if k.shape[1] != v.shape[1] or q.shape[1] % k.shape[1]:\n        raise ValueError('cabeças')\n"
     "    G = q.shape[1] // k.shape[1]\n    k, v = repeat_kv(k, G), repeat_kv(v, G)\n"
     "    T = q.shape[-2]\n    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
     "    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float('-inf'))\n"
     "    return torch.softmax(s, -1) @ v\n"),
    ("06-multi-cabeca", "custos", "test_custos",  # esquece que K e V têm só Hkv cabeças
     "def attention_params(D, H, Hkv):\n    return 4 * D * D\n\n"
     "def attention_flops(B, T, D, H, Hkv):\n    return 2 * B * T * 4 * D * D + 4 * B * T * T * D\n"),
    ("07-bloco-transformer", "rms_norm", "test_rms_norm",  # sem subir para float32: float16 transborda
     "def rms_norm(x, weight, eps=1e-5):\n"
     "    if tuple(weight.shape) != (x.shape[-1],):\n        raise ValueError('forma')\n"
     "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight\n"),
    ("07-bloco-transformer", "rope", "test_rope",  # esquece o start
     "def rope(x, start=0, base=10000.0):\n"
     "    T, d = x.shape[-2], x.shape[-1]\n"
     "    if d % 2:\n        raise ValueError('d ímpar')\n"
     "    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
     "    ang = torch.arange(T, dtype=torch.float64)[:, None] * theta\n"
     "    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)\n"
     "    x0, x1 = x[..., 0::2], x[..., 1::2]\n"
     "    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), -1).flatten(-2)\n"),
    ("07-bloco-transformer", "swiglu", "test_swiglu",  # ReLU no lugar da silu
     "def swiglu(x, W1, W3, W2):\n    return (torch.relu(x @ W1) * (x @ W3)) @ W2\n"),
    # brechas da revisão (itens 25, 26, 27, 30): certas nos números, proibidas pelo enunciado
    ("01-pontuacoes", "scores_loops", "test_scores_loops",  # difusão somada, sem laço nem @
     "def scores_loops(Q, K):\n    return (Q[:, None, :] * K[None, :, :]).sum(-1)\n"),
    ("01-pontuacoes", "scores_loops", "test_scores_loops",  # np.inner: produto pronto sem @ nem 'dot('
     "def scores_loops(Q, K):\n    return np.inner(Q, K)\n"),
    ("01-pontuacoes", "scores_loops", "test_scores_loops",  # o produto pronto escondido numa função auxiliar
     "def _aux(a, b):\n    return a @ b.T\n\n"
     "def scores_loops(Q, K):\n    for _ in range(1):\n        S = _aux(Q, K)\n    return S\n"),
    # revisão de 2026-12-01, item 41: produto com difusão por reshape e um laço que não faz a conta
    ("01-pontuacoes", "scores_loops", "test_scores_loops",
     "def scores_loops(Q, K):\n    n, d = Q.shape\n    m = K.shape[0]\n    for _ in range(1):\n        pass\n"
     "    return (Q.reshape(n, 1, d) * K.reshape(1, m, d)).sum(-1)\n"),
    # variante: a mesma conta dentro do laço, acumulada com +=
    ("01-pontuacoes", "scores_loops", "test_scores_loops",
     "def scores_loops(Q, K):\n    n, d = Q.shape\n    m = K.shape[0]\n    S = np.zeros((n, m))\n"
     "    for _ in range(1):\n        S += (Q.reshape(n, 1, d) * K.reshape(1, m, d)).sum(-1)\n    return S\n"),
    # variante: uma linha de Q contra K inteira em cada volta (K sem índice do laço)
    ("01-pontuacoes", "scores_loops", "test_scores_loops",
     "def scores_loops(Q, K):\n    S = np.zeros((Q.shape[0], K.shape[0]))\n"
     "    for i in range(Q.shape[0]):\n        S[i] = (Q[i] * K).sum(-1)\n    return S\n"),
    ("04-softmax", "softmax", "test_softmax",  # torch.special.softmax escapava da troca de atributos
     "def softmax(x, dim=-1):\n    return torch.special.softmax(x, dim)\n"),
    ("04-softmax", "softmax", "test_softmax",  # log_softmax + exp
     "def softmax(x, dim=-1):\n    return torch.log_softmax(x, dim).exp()\n"),
    # revisão de 2026-12-01, item 7: o passo recebe só o estado e um bloco; guardar os blocos
    # vistos numa variável global e refazer a conta na linha inteira mistura linhas lidas alternadamente
    ("10-softmax-online", "online_stats", "test_online_stats",
     "_vistos = []\n\ndef online_step(m, l, xb):\n    _vistos.append(xb)\n"
     "    x = torch.cat([b for b in _vistos if b.shape[:-1] == xb.shape[:-1]], -1)\n"
     "    mm = x.amax(-1)\n    return mm, torch.exp(x - mm[..., None]).sum(-1)\n"),
    # item 7 (com o passo de normalização conduzido pelos testes): normaliza pelo próprio bloco
    ("10-softmax-online", "online_softmax", "test_online_softmax",
     "def normalize_block(m, l, xb):\n    p = torch.exp(xb - m[..., None])\n    return p / p.sum(-1, keepdim=True)\n"),
    # item 7: subtrai o máximo do bloco no lugar do máximo da linha
    ("10-softmax-online", "online_softmax", "test_online_softmax",
     "def normalize_block(m, l, xb):\n    return torch.exp(xb - xb.amax(-1, keepdim=True)) / l[..., None]\n"),
    # o passo da atenção em blocos que esquece o estado (devolve só o do bloco)
    ("10-softmax-online", "blocked_attention", "test_blocked_attention",
     "def attention_step(state, q, kj, vj):\n    return state_of(q @ kj.transpose(-2, -1) / math.sqrt(q.shape[-1]), vj)\n"),
    # revisão de 2026-12-05, E3: o passo guarda os blocos de chaves numa global e faz a softmax comum
    # sobre todas as chaves vistas (os blocos viram NaN depois de usados; o teste monta estados)
    ("11-flashattention", "flash_forward", "test_flash_forward",
     source("11-flashattention", "flash_forward").split("def flash_step")[0]
     + "_kv = []\n\ndef flash_step(state, q_i, k_j, v_j, mask=None):\n"
     "    m = state[0]\n    if bool((m == -inf).all()):\n        _kv.clear()\n"
     "    _kv.append((k_j.to(m.dtype), v_j.to(m.dtype)))\n"
     "    k = torch.cat([a for a, _ in _kv], -2)\n    v = torch.cat([b for _, b in _kv], -2)\n"
     "    s = q_i.to(m.dtype) @ k.transpose(-2, -1) / math.sqrt(q_i.shape[-1])\n"
     "    if mask is not None:\n        s[..., -mask.shape[-1]:] = s[..., -mask.shape[-1]:].masked_fill(mask, -inf)\n"
     "    mm = s.amax(-1)\n    p = torch.exp(s - mm[..., None])\n    return mm, p.sum(-1), p @ v\n\n"
     "def flash_finish(state):\n    m, l, acc = state\n    return acc / l[..., None], m + torch.log(l)\n"),
    # variante: online e em blocos, mas lê todos os blocos de chaves (só a máscara, nada pulado)
    ("11-flashattention", "flash_forward", "test_flash_forward",
     source("11-flashattention", "flash_forward").replace("return list(range(i + 1)) if causal else list(range(n_blocks))",
                                                         "return list(range(n_blocks))")),
    ("07-bloco-transformer", "decoder_block", "test_decoder_block",  # RoPE também em V
     "def decoder_block(x, p, n_heads, n_kv_heads, eps=1e-5):\n"
     "    h = rms_norm(x, p['norm1'], eps)\n"
     "    q = rope(split_heads(h @ p['W_q'], n_heads))\n"
     "    k = rope(split_heads(h @ p['W_k'], n_kv_heads))\n"
     "    v = rope(split_heads(h @ p['W_v'], n_kv_heads))\n"
     "    x = x + merge_heads(gqa_causal_attention(q, k, v)) @ p['W_o']\n"
     "    return x + swiglu(rms_norm(x, p['norm2'], eps), p['W1'], p['W3'], p['W2'])\n"),
]


# Brechas da revisão de 2026-11-30 (itens 28, 29, 32), cada uma com a resposta errada que a explorava.
_SOFTMAX_QUE_ENCOLHE = (  # item 29: passava quando o caso float16 "próximo" era um empate
    "def softmax(x, dim=-1):\n"
    "    if x.dtype == torch.float16:  # encolhe a linha para caber no float16\n"
    "        x = x / (x.abs().amax(dim=dim, keepdim=True) / 11).clamp(min=1)\n"
    "    e = torch.exp(x - x.amax(dim=dim, keepdim=True))\n"
    "    return e / e.sum(dim=dim, keepdim=True)\n")
TYPICAL_MISTAKES += [
    ("01-pontuacoes", "scores_checked", "test_scores_checked",  # item 28: ValueError sem as formas na mensagem
     "def scores_checked(q, k):\n"
     "    if q.shape[-1] != k.shape[-1]:\n        raise ValueError('dimensões diferentes')\n"
     "    return scores(q, k)\n"),
    ("04-softmax", "softmax", "test_softmax", _SOFTMAX_QUE_ENCOLHE),
    ("04-softmax", "pesos_de_atencao", "test_pesos_de_atencao",  # esquece o 1/sqrt(d)
     "def pesos_de_atencao(q, k):\n    T = q.shape[-2]\n    s = q @ k.transpose(-2, -1)\n"
     "    return softmax(s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float('-inf')), dim=-1)\n"),
    ("10-softmax-online", "blocked_attention", "test_blocked_attention",  # esquece o 1/sqrt(d)
     "def attention_step(state, q, kj, vj):\n    return merge(state, state_of(q @ kj.transpose(-2, -1), vj))\n"),
    ("13-kernel-triton", "flash_kernel", "test_flash_kernel",  # item 32: a condição das chaves PROIBIDAS usada como permitida
     source("13-kernel-triton", "flash_kernel").replace("(offs_m[:, None] >= offs_n[None, :])", "(offs_n[None, :] > offs_m[:, None])")),
]


def test_float16_close_scores_case_is_not_a_tie():
    """Item 29: o caso "pontuações próximas" em float16 continua próximo depois do arredondamento,
    e a softmax que encolhe a linha só é pega por ele (com o caso antigo, 59990, ela passava)."""
    import torch

    assert torch.tensor([60000.0, 59990.0], dtype=torch.float16).unique().numel() == 1
    assert torch.tensor([60000.0, 59968.0], dtype=torch.float16).unique().numel() == 2
    cs = cells("04-softmax")
    old = {meta(c)["grade_id"]: c.source.replace("59968.0", "59990.0").replace(
        'assert float(h[0, 0]) - float(h[0, 1]) == 32.0', 'assert True or 0') for c in cs}
    old["softmax"] = _SOFTMAX_QUE_ENCOLHE
    assert run(cs, lambda c: old[meta(c)["grade_id"]], stop="test_softmax")["test_softmax"] is None


# Item 31: a tarefa seguinte usa a função de uma tarefa anterior. Uma função anterior errada
# tira os pontos da própria tarefa e não os da seguinte (que é conferida com os dados que a
# função do aluno devolve, ou recebe o resultado certo como dado), sem enviar código de
# referência ao kernel do aluno.
_SOFTMAX_SOMA_TUDO = (  # soma o tensor inteiro, não cada linha: certa só com uma linha
    "def softmax(x, dim=-1):\n"
    "    e = torch.exp(x - x.amax(dim=dim, keepdim=True))\n"
    "    return e / e.sum()\n")
COSTS_ONCE = [
    ("04-softmax", "softmax", ERRADO["04-softmax"]["softmax"], "test_softmax", "test_pesos_de_atencao"),
    ("04-softmax", "softmax", _SOFTMAX_SOMA_TUDO, "test_softmax", "test_jacobiano_softmax"),
    ("04-softmax", "softmax", _SOFTMAX_SOMA_TUDO, "test_softmax", "test_pesos_de_atencao"),
    ("10-softmax-online", "merge", ERRADO["10-softmax-online"]["merge"], "test_merge", "test_blocked_attention"),
    # capítulos 5, 6, 7 e 11: a função de uma tarefa anterior, errada, custa só a tarefa dela
    ("05-mistura-com-v", "misturar", "def misturar(pesos, v):\n    return 2.0 * (pesos @ v)\n",
     "test_misturar", "test_atencao_causal"),
    ("06-multi-cabeca", "split_merge", ERRADO["06-multi-cabeca"]["split_merge"], "test_split_merge", "test_mha"),
    ("07-bloco-transformer", "rope", ERRADO["07-bloco-transformer"]["rope"], "test_rope", "test_decoder_block"),
    ("07-bloco-transformer", "swiglu", "def swiglu(x, W1, W3, W2):\n    return (torch.relu(x @ W1) * (x @ W3)) @ W2\n",
     "test_swiglu", "test_decoder_block"),
    ("11-flashattention", "block_backward", ERRADO["11-flashattention"]["block_backward"],
     "test_block_backward", "test_flash_backward"),
    ("12-kv-cache", "cached_attention", ERRADO["12-kv-cache"]["cached_attention"],
     "test_cached_attention", "test_generate_cached"),
    ("13-kernel-triton", "limite_chaves",  # esquece o bloco da diagonal: só as chaves < start_m
     source("13-kernel-triton", "limite_chaves").replace("tl.minimum(N, start_m + BLOCK_M)", "tl.minimum(N, start_m)"),
     "test_limite_chaves", "test_flash_kernel"),
]


# As respostas erradas de propósito produzem NaN/inf no interpretador do Triton (é o erro
# que o teste pega); o aviso do NumPy sobre isso não é um problema do curso.
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning",
                            "ignore:divide by zero encountered:RuntimeWarning")
@pytest.mark.parametrize("mod,sol,src,own,later", COSTS_ONCE, ids=[f"{m[1]}-{m[4]}-{i}" for i, m in enumerate(COSTS_ONCE)])
def test_a_wrong_helper_costs_only_its_own_task(mod, sol, src, own, later):
    cs = cells(mod)
    res = run(cs, lambda c: src if meta(c)["grade_id"] == sol else c.source)
    assert isinstance(res[own], AssertionError), res[own]
    assert res[later] is None, res[later]


# As respostas erradas de propósito produzem NaN/inf no interpretador do Triton (é o erro
# que o teste pega); o aviso do NumPy sobre isso não é um problema do curso.
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning",
                            "ignore:divide by zero encountered:RuntimeWarning")
@pytest.mark.parametrize("mod,sol,test,src", TYPICAL_MISTAKES, ids=[f"{m[1]}-{i}" for i, m in enumerate(TYPICAL_MISTAKES)])
def test_typical_mistake_is_caught(mod, sol, test, src):
    cs = cells(mod)
    err = run(cs, lambda c: src if meta(c)["grade_id"] == sol else c.source, stop=test)[test]
    assert isinstance(err, AssertionError), f"{sol}: {err!r}"


def test_bonus_challenge_solution_passes_and_skipping_no_block_loses_only_the_causal_points():
    """Desafio opcional do cap. 13: a solução passa em tudo; percorrer todas as chaves com a
    máscara causal (valores certos, blocos futuros lidos) perde só a célula causal."""
    cs = cells("13-desafio-flashattention")
    assert not {k: v for k, v in run(cs).items() if v is not None}
    res = run(cs, lambda c: ERRADO["13-desafio-flashattention"].get(meta(c)["grade_id"], c.source))
    assert {k for k, v in res.items() if v is not None} == {"test_desafio_causal"}, res
