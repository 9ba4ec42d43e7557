"""O caderno do capítulo 8 (modelo de linguagem): respostas erradas típicas perdem os seus pontos.

Cada resposta errada troca uma célula de solução do caderno-fonte
(autograder/fontes/08-modelo-de-linguagem.md) e tem de falhar na célula de testes
indicada, com uma mensagem do conferir (AssertionError), sem derrubar as outras
tarefas (nota parcial). A solução completa passa em tudo. A correção de ponta a
ponta, nos dois kernels, fica em tests/nbgrader/test_nbgrader_pipeline.py e no `python -m
autograder grade` (veja o relatório da issue 26).
"""

import pytest

exercicios_errados = pytest.importorskip("exercicios_errados", reason="precisa das fontes MyST (branch exercicios)")
from nb_harness import meta, run  # noqa: E402

SLUG = "08-modelo-de-linguagem"

_BPE_CERTO_CONTAR = (
    "def contar_pares(pedacos):\n    pares = {}\n    for seq, f in pedacos.items():\n"
    "        for par in zip(seq, seq[1:]):\n            pares[par] = pares.get(par, 0) + f\n    return pares\n\n")
_BPE_CERTO_FUNDIR = (
    "def fundir(seq, par, novo):\n    out, j = [], 0\n    while j < len(seq):\n"
    "        if j + 1 < len(seq) and (seq[j], seq[j + 1]) == tuple(par):\n            out.append(novo); j += 2\n"
    "        else:\n            out.append(seq[j]); j += 1\n    return tuple(out)\n\n")
_BPE_CERTO_PASSO = (
    "def passo_bpe(pedacos, novo):\n    pares = contar_pares(pedacos)\n"
    "    if not pares:\n        raise ValueError('sem pares')\n"
    "    par = min(pares, key=lambda p: (-pares[p], p))\n    novos = {}\n"
    "    for seq, f in pedacos.items():\n        s = fundir(seq, par, novo)\n        novos[s] = novos.get(s, 0) + f\n"
    "    return par, novos\n")
_CABECA_CERTA_NOTA = (
    "def pontuacao_anterior(pesos):\n    i = torch.arange(1, pesos.shape[-1])\n"
    "    return pesos[:, :, i, i - 1].mean(dim=(0, 2))\n\n")
_CABECA_CERTA_PERDA = (
    "def perda_sem_cabeca(semente, idx, cabeca, H=4, especial=0):\n"
    "    m = construir_modelo(semente, H=H, especial=especial)\n"
    "    if not 0 <= cabeca < m.H:\n        raise ValueError('cabeça')\n"
    "    def zerar(_m, args):\n        x = args[0].clone()\n        x[..., cabeca * m.d_k:(cabeca + 1) * m.d_k] = 0\n"
    "        return (x,)\n"
    "    g = m.w_o.register_forward_pre_hook(zerar)\n    try:\n        return perda(m, idx)\n    finally:\n        g.remove()\n")
_TEMP_CERTA_AMOSTRAR = (
    "\n\ndef amostrar(logits, temperatura, n, semente):\n"
    "    g = torch.Generator().manual_seed(semente)\n"
    "    return torch.multinomial(probabilidades(logits, temperatura), n, replacement=True, generator=g)\n")

# (célula de solução, célula de testes que tem de falhar, o código errado, o erro que ele comete)
TYPICAL_MISTAKES = [
    ("bpe", "test_bpe",
     _BPE_CERTO_CONTAR
     + "def fundir(seq, par, novo):\n    out, j = [], 0\n    while j < len(seq):\n"
       "        if j + 1 < len(seq) and (seq[j], seq[j + 1]) == tuple(par):\n            out.append(novo); j += 1\n"
       "        else:\n            out.append(seq[j]); j += 1\n    return tuple(out)\n\n" + _BPE_CERTO_PASSO,
     "fundir anda um só passo depois de fundir: sobreposição em 'aaa'"),
    ("bpe", "test_bpe",
     _BPE_CERTO_CONTAR + _BPE_CERTO_FUNDIR
     + "def passo_bpe(pedacos, novo):\n    pares = contar_pares(pedacos)\n"
       "    if not pares:\n        raise ValueError('sem pares')\n"
       "    par = max(pares, key=lambda p: pares[p])\n"
       "    return par, {fundir(s, par, novo): f for s, f in pedacos.items()}\n",
     "empate decidido pelo primeiro par visto, e pedaços iguais sobrescrevem a frequência"),
    ("bpe", "test_bpe",
     "def contar_pares(pedacos):\n    pares = {}\n    for seq in pedacos:\n"
     "        for par in zip(seq, seq[1:]):\n            pares[par] = pares.get(par, 0) + 1\n    return pares\n\n"
     + _BPE_CERTO_FUNDIR + _BPE_CERTO_PASSO,
     "conta cada pedaço distinto uma vez só, sem a frequência"),
    ("bigrama", "test_bigrama",
     "def perda_bigrama(treino, validacao, V, k):\n    if not k > 0:\n        raise ValueError('k')\n"
     "    treino, validacao = torch.as_tensor(treino), torch.as_tensor(validacao)\n"
     "    c = torch.bincount(treino[:-1] * V + treino[1:], minlength=V * V).double().view(V, V)\n"
     "    a, b = validacao[:-1], validacao[1:]\n"
     "    return float(-((c[a, b] + k) / (c.sum(1)[a] + k)).log().mean())\n",
     "esquece o k·V do denominador (as probabilidades não somam 1)"),
    ("bigrama", "test_bigrama",
     "def perda_bigrama(treino, validacao, V, k):\n    if not k > 0:\n        raise ValueError('k')\n"
     "    treino, validacao = torch.as_tensor(treino), torch.as_tensor(validacao)\n"
     "    c = torch.bincount(treino[:-1] * V + treino[1:], minlength=V * V).double().view(V, V)\n"
     "    uni = torch.bincount(treino, minlength=V).double()\n"
     "    a, b = validacao[:-1], validacao[1:]\n"
     "    return float(-((c[a, b] + k) / (uni[a] + k * V)).log().mean())\n",
     "c(a) conta também o último token do treino, que não começa par nenhum"),
    ("cabeca", "test_cabeca",
     _CABECA_CERTA_NOTA
     + "def perda_sem_cabeca(semente, idx, cabeca, H=4, especial=0):\n"
       "    m = construir_modelo(semente, H=H, especial=especial)\n"
       "    if not 0 <= cabeca < m.H:\n        raise ValueError('cabeça')\n"
       "    def zerar(_m, args):\n        x = args[0].clone()\n        x[..., cabeca] = 0\n        return (x,)\n"
       "    g = m.w_o.register_forward_pre_hook(zerar)\n    try:\n        return perda(m, idx)\n    finally:\n        g.remove()\n",
     "zera uma coluna só, não a fatia de d_k colunas da cabeça"),
    ("cabeca", "test_cabeca",
     "def pontuacao_anterior(pesos):\n    return pesos.diagonal(offset=1, dim1=-2, dim2=-1).mean(dim=(0, 2))\n\n"
     + _CABECA_CERTA_PERDA,
     "a diagonal de cima (a chave i + 1, o futuro mascarado) em vez da de baixo"),
    ("temperatura", "test_temperatura",
     "def probabilidades(logits, temperatura):\n    if not temperatura > 0:\n        raise ValueError('t')\n"
     "    return torch.softmax(logits * temperatura, dim=-1)\n" + _TEMP_CERTA_AMOSTRAR,
     "multiplica pela temperatura em vez de dividir"),
    ("temperatura", "test_temperatura",
     "def probabilidades(logits, temperatura):\n    if not temperatura > 0:\n        raise ValueError('t')\n"
     "    e = (logits / temperatura).exp()\n    return e / e.sum(dim=-1, keepdim=True)\n" + _TEMP_CERTA_AMOSTRAR,
     "sem subtrair o máximo: logits enormes dão inf/inf = NaN"),
]


@pytest.fixture(scope="module")
def cells():
    return exercicios_errados.cells(SLUG)


def test_the_solution_passes_every_test(cells):
    failed = {k: repr(v) for k, v in run(cells).items() if v is not None}
    assert not failed


@pytest.mark.parametrize("sol, test, wrong, why", TYPICAL_MISTAKES, ids=[m[3] for m in TYPICAL_MISTAKES])
def test_a_typical_mistake_loses_its_task_and_only_it(cells, sol, test, wrong, why):
    res = run(cells, lambda c: wrong if meta(c)["grade_id"] == sol else c.source)
    assert isinstance(res[test], AssertionError), f"{why}: {res[test]!r}"
    graded = {meta(c)["grade_id"] for c in cells if c.cell_type == "code" and meta(c).get("grade")}
    others = graded - {test}
    assert all(res[g] is None for g in others), {g: res[g] for g in others if res[g] is not None}
