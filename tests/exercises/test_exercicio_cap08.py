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

_PECAS_CERTAS = (
    "def passo_de_aprendizado(passo, lr_max, aquecimento, total, lr_min):\n"
    "    if passo < aquecimento:\n        return lr_max * (passo + 1) / aquecimento\n"
    "    f = min(1.0, (passo - aquecimento) / max(1, total - aquecimento))\n"
    "    return lr_min + 0.5 * (lr_max - lr_min) * (1 + math.cos(math.pi * f))\n\n"
    "def cortar_gradientes(gradientes, max_norma):\n"
    "    norma = torch.sqrt(sum((g * g).sum() for g in gradientes))\n"
    "    fator = torch.clamp(max_norma / (norma + 1e-6), max=1.0)\n"
    "    return [g * fator for g in gradientes], float(norma)\n\n"
    "def passo_adamw(parametros, gradientes, m, v, passo, lr, decaimento, beta1, beta2, eps):\n"
    "    ps, ms, vs = [], [], []\n"
    "    for p, g, m_i, v_i in zip(parametros, gradientes, m, v):\n"
    "        if p.dim() >= 2:\n            p = p * (1 - lr * decaimento)\n"
    "        m_i = beta1 * m_i + (1 - beta1) * g\n        v_i = beta2 * v_i + (1 - beta2) * g * g\n"
    "        ps.append(p - lr * (m_i / (1 - beta1 ** passo)) / (torch.sqrt(v_i / (1 - beta2 ** passo)) + eps))\n"
    "        ms.append(m_i)\n        vs.append(v_i)\n"
    "    return ps, ms, vs\n")
# O treino de ponta a ponta (test_treino: ~5 s de CPU) roda só no teste da solução; nos erros típicos
# a célula vira um `pass` (o treino só roda com as peças da tarefa 4 certas, e nenhum erro abaixo é dele).
_SEM_TREINO = "test_treino"

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
    ("bpe_treino", "test_bpe_treino",
     "def fusao_incremental(pedacos, par, novo):\n    novos, var = [], {}\n    for seq, f in pedacos:\n"
     "        s = fundir(seq, par, novo)\n        novos.append(s)\n"
     "        for p in zip(seq, seq[1:]):\n            var[p] = var.get(p, 0) - 1\n"
     "        for p in zip(s, s[1:]):\n            var[p] = var.get(p, 0) + 1\n"
     "    return novos, {p: d for p, d in var.items() if d}\n",
     "a variação sem o peso da frequência de cada pedaço"),
    ("bpe_treino", "test_bpe_treino",
     "def fusao_incremental(pedacos, par, novo):\n    novos, var = [], {}\n    for seq, f in pedacos:\n"
     "        s = fundir(seq, par, novo)\n        novos.append(s)\n"
     "        for p in zip(seq, seq[1:]):\n            var[p] = var.get(p, 0) - f\n"
     "        for p in zip(s, s[1:]):\n            var[p] = var.get(p, 0) + f\n"
     "    return novos, var\n",
     "a variação com os pares que não mudam (valor 0)"),
    ("pecas_treino", "test_pecas_treino",
     _PECAS_CERTAS.replace("    if passo < aquecimento:\n        return lr_max * (passo + 1) / aquecimento\n", ""),
     "sem o aquecimento: o cosseno desde o passo 0"),
    ("pecas_treino", "test_pecas_treino",
     _PECAS_CERTAS.replace("        if p.dim() >= 2:\n            p = p * (1 - lr * decaimento)\n",
                           "        p = p * (1 - lr * decaimento)\n"),
     "o decaimento também nos vetores (os pesos das RMSNorm)"),
    ("pecas_treino", "test_pecas_treino",
     _PECAS_CERTAS.replace("m_i / (1 - beta1 ** passo)", "m_i").replace("v_i / (1 - beta2 ** passo)", "v_i"),
     "sem a correção de viés de m e v"),
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
    res = run(cells, lambda c: wrong if meta(c)["grade_id"] == sol
              else "pass" if meta(c)["grade_id"] == _SEM_TREINO else c.source)
    assert isinstance(res[test], AssertionError), f"{why}: {res[test]!r}"
    graded = {meta(c)["grade_id"] for c in cells if c.cell_type == "code" and meta(c).get("grade")}
    others = graded - {test, _SEM_TREINO}
    assert all(res[g] is None for g in others), {g: res[g] for g in others if res[g] is not None}


# --- O que o caderno traz do curso: o trecho do corpus congelado, o laço do BPE e o passo de aprendizado ---

def _namespace(cells, ate):
    """As células de código que não são de testes, em ordem, até a célula `ate` (inclusive)."""
    ns: dict = {}
    for c in cells:
        if c.cell_type != "code" or meta(c).get("grade"):
            continue
        exec(compile(c.source, f"<{meta(c)['grade_id']}>", "exec"), ns)
        if meta(c)["grade_id"] == ate:
            return ns
    raise AssertionError(f"a célula {ate} não existe")


def test_the_corpus_excerpt_is_verbatim_from_the_frozen_corpus(cells):
    from atencao import lm

    ns = _namespace(cells, "corpus")
    corpus = lm.load_corpus()
    lado = {0: set(), 1: set()}
    for texto, val in zip(corpus.paragraphs, corpus.is_val):
        lado[int(val)].add(texto)
    assert ns["PARAGRAFOS_TREINO"] and ns["PARAGRAFOS_VALIDACAO"]
    assert all(p in lado[0] for p in ns["PARAGRAFOS_TREINO"])
    assert all(p in lado[1] for p in ns["PARAGRAFOS_VALIDACAO"])
    assert ns["TEXTO_TREINO"] == "\n".join(ns["PARAGRAFOS_TREINO"])


def test_the_notebook_bpe_loop_gives_the_course_tokenizers_merges(cells):
    from atencao.text import PRETOKEN_PATTERN, BPETokenizer

    ns = _namespace(cells, "corpus")
    assert ns["PRETOKEN"] == PRETOKEN_PATTERN
    for texto, n in ((ns["TEXTO_TREINO"][:6000], 120), (ns["TEXTO_VALIDACAO"][:3000], 80), ("aaaaaa aaa ab ab", 12)):
        esperado = BPETokenizer.train(texto, 256 + n).merges
        assert ns["treinar_bpe"](texto, n, ns["fusao_incremental"]) == esperado


def test_the_notebook_schedule_is_the_courses_lr_at(cells):
    import dataclasses

    from atencao import lm

    ns = _namespace(cells, "pecas_treino")
    cfg = dataclasses.replace(lm.TrainConfig(), steps=ns["TREINO"]["passos"], warmup=ns["TREINO"]["aquecimento"],
                              lr=ns["TREINO"]["lr_max"], min_lr_ratio=ns["TREINO"]["lr_min"] / ns["TREINO"]["lr_max"])
    for s in range(cfg.steps + 5):
        assert abs(ns["passo_de_aprendizado"](s, cfg.lr, cfg.warmup, cfg.steps, cfg.lr * cfg.min_lr_ratio)
                   - lm.lr_at(s, cfg)) < 1e-15
