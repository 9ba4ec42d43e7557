"""Semelhança entre respostas (autograder/insight/similarity.py) numa turma sintética: cópias
disfarçadas (nomes trocados, funções em outra ordem, comentários trocados, código morto) são
achadas; respostas corretas escritas por pessoas diferentes ficam abaixo do limiar padrão."""

from __future__ import annotations

import random

import pytest

from autograder.insight.similarity import (
    DEFAULT_K, DEFAULT_THRESHOLD, DEFAULT_WINDOW, Submission, find_similar, fingerprints, normalize,
)

STARTER = {
    "tarefa-mascara": "def mascara_causal(T):\n    # SEU CÓDIGO AQUI\n    raise NotImplementedError()\n",
    "tarefa-atencao": "def atencao(Q, K, V, causal=True):\n    # SEU CÓDIGO AQUI\n    raise NotImplementedError()\n",
}

# A resposta original (a que será copiada).
ORIGINAL = {
    "tarefa-mascara": '''\
def mascara_causal(T):
    # True onde a posição i NÃO pode ver j
    linhas = torch.arange(T).unsqueeze(1)
    colunas = torch.arange(T).unsqueeze(0)
    return colunas > linhas
''',
    "tarefa-atencao": '''\
def escalar(scores, d):
    """Divide pela raiz da dimensão."""
    return scores / math.sqrt(d)


def softmax_estavel(x):
    maximo = x.max(dim=-1, keepdim=True).values
    e = torch.exp(x - maximo)
    soma = e.sum(dim=-1, keepdim=True)
    return e / soma


def atencao(Q, K, V, causal=True):
    T, d = Q.shape[-2], Q.shape[-1]
    scores = escalar(Q @ K.transpose(-2, -1), d)
    if causal:
        proibido = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(proibido, float("-inf"))
    pesos = softmax_estavel(scores)
    return pesos @ V
''',
}

# Cópia 1: nomes trocados e comentários trocados.
RENOMEADA = {
    "tarefa-mascara": '''\
def mascara_causal(T):
    # compara índices de linha e coluna
    ii = torch.arange(T).unsqueeze(1)   # linhas
    jj = torch.arange(T).unsqueeze(0)
    return jj > ii
''',
    "tarefa-atencao": '''\
def dividir(s, dim):
    # normaliza a escala
    return s / math.sqrt(dim)


def sm(z):
    # subtraio o máximo para não estourar
    m = z.max(dim=-1, keepdim=True).values
    ez = torch.exp(z - m)
    total = ez.sum(dim=-1, keepdim=True)
    return ez / total


def atencao(Q, K, V, causal=True):
    n, dk = Q.shape[-2], Q.shape[-1]
    s = dividir(Q @ K.transpose(-2, -1), dk)
    if causal:
        futuro = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        s = s.masked_fill(futuro, float("-inf"))
    p = sm(s)
    return p @ V
''',
}

# Cópia 2: funções em outra ordem, código morto acrescentado, outro comentário.
REORDENADA = {
    "tarefa-mascara": '''\
def mascara_causal(T):
    debug = False
    linhas = torch.arange(T).unsqueeze(1)
    if debug:
        print("linhas", linhas)
    colunas = torch.arange(T).unsqueeze(0)
    return colunas > linhas
''',
    "tarefa-atencao": '''\
def atencao(Q, K, V, causal=True):
    T, d = Q.shape[-2], Q.shape[-1]
    scores = escalar(Q @ K.transpose(-2, -1), d)
    nao_usado = 0
    if causal:
        proibido = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(proibido, float("-inf"))
    pesos = softmax_estavel(scores)
    return pesos @ V


def _auxiliar_inutil(a, b):
    return [a + b for _ in range(3)]


def softmax_estavel(x):
    maximo = x.max(dim=-1, keepdim=True).values
    e = torch.exp(x - maximo)   # exponencial deslocada
    soma = e.sum(dim=-1, keepdim=True)
    return e / soma


def escalar(scores, d):
    return scores / math.sqrt(d)
''',
}

# Respostas corretas independentes: a mesma tarefa, escrita de jeitos diferentes.
INDEPENDENTES = [
    {
        "tarefa-mascara": "def mascara_causal(T):\n    return torch.ones(T, T, dtype=torch.bool).triu(1)\n",
        "tarefa-atencao": '''\
def atencao(Q, K, V, causal=True):
    d = Q.size(-1)
    s = torch.matmul(Q, K.transpose(-1, -2)) / d ** 0.5
    if causal:
        T = s.size(-1)
        s = s + torch.full((T, T), float("-inf")).triu(1)
    return torch.softmax(s, dim=-1) @ V
''',
    },
    {
        "tarefa-mascara": '''\
def mascara_causal(T):
    m = torch.zeros(T, T, dtype=torch.bool)
    for i in range(T):
        for j in range(i + 1, T):
            m[i, j] = True
    return m
''',
        "tarefa-atencao": '''\
import math

def atencao(Q, K, V, causal=True):
    escala = 1.0 / math.sqrt(Q.shape[-1])
    logits = torch.einsum("...id,...jd->...ij", Q, K) * escala
    if causal:
        tam = logits.shape[-1]
        mask = torch.tril(torch.ones(tam, tam)) == 0
        logits = logits.masked_fill(mask, -1e9)
    logits = logits - logits.amax(-1, keepdim=True)
    w = logits.exp()
    w = w / w.sum(-1, keepdim=True)
    return torch.einsum("...ij,...jd->...id", w, V)
''',
    },
    {
        "tarefa-mascara": '''\
def mascara_causal(T):
    idx = torch.arange(T)
    return idx[None, :] > idx[:, None]
''',
        "tarefa-atencao": '''\
def atencao(Q, K, V, causal=True):
    *_, T, d = Q.shape
    pontuacao = (Q @ K.mT) / math.sqrt(d)
    if causal:
        pontuacao = pontuacao.masked_fill(mascara_causal(T), float("-inf"))
    pesos = pontuacao.softmax(dim=-1)
    saida = pesos @ V
    return saida
''',
    },
    {
        "tarefa-mascara": '''\
def mascara_causal(T):
    # acima da diagonal principal
    cheia = torch.ones((T, T))
    return torch.triu(cheia, diagonal=1).bool()
''',
        "tarefa-atencao": '''\
def _pesos(scores):
    scores = scores - scores.max(dim=-1, keepdim=True).values
    num = torch.exp(scores)
    return num / num.sum(dim=-1, keepdim=True)


def atencao(Q, K, V, causal=True):
    dk = K.shape[-1]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(dk)
    if causal:
        T = Q.shape[-2]
        scores = torch.where(torch.tril(torch.ones(T, T, dtype=torch.bool)), scores, float("-inf"))
    return _pesos(scores) @ V
''',
    },
]


def _turma() -> list[Submission]:
    subs = [Submission("ana", ORIGINAL), Submission("bruno", RENOMEADA), Submission("carla", REORDENADA)]
    subs += [Submission(f"indep{i}", cells) for i, cells in enumerate(INDEPENDENTES)]
    subs.append(Submission("vazio", dict(STARTER)))           # entregou o molde
    return subs


def _score(pairs, a, b):
    for p in pairs:
        if {p.a, p.b} == {a, b}:
            return p.score
    return 0.0


def test_normalizacao_ignora_nomes_literais_comentarios():
    a = normalize("def f(x):\n    # oi\n    y = x * 2.5  # a\n    return torch.exp(y)\n")
    b = normalize("def g(valor):\n\n    w = valor * 7   \n    return torch.exp(w)\n")
    assert [t.text for t in a] == [t.text for t in b]
    assert ".exp" in [t.text for t in a]          # o atributo da biblioteca fica
    # linhas do IPython e código que não termina não derrubam
    assert normalize("%timeit f(1)\nx = (1,\n") != []


def test_copias_disfarcadas_acima_do_limiar():
    pairs = find_similar(_turma(), STARTER, threshold=0.0)
    for copia in ("bruno", "carla"):
        s = _score(pairs, "ana", copia)
        assert s >= 0.7, (copia, s)
    assert _score(pairs, "bruno", "carla") >= 0.7
    top = {frozenset((p.a, p.b)) for p in pairs[:3]}
    assert top == {frozenset(x) for x in (("ana", "bruno"), ("ana", "carla"), ("bruno", "carla"))}


def test_independentes_abaixo_do_limiar_padrao():
    pairs = find_similar(_turma(), STARTER, threshold=0.0)
    originais = ["ana"] + [f"indep{i}" for i in range(len(INDEPENDENTES))]
    worst = max(_score(pairs, a, b) for i, a in enumerate(originais) for b in originais[i + 1:])
    assert worst < DEFAULT_THRESHOLD - 0.2, worst
    padrao = find_similar(_turma(), STARTER)
    assert {frozenset((p.a, p.b)) for p in padrao} == {
        frozenset(x) for x in (("ana", "bruno"), ("ana", "carla"), ("bruno", "carla"))}
    assert all("vazio" not in (p.a, p.b) for p in pairs)   # o molde não conta


def test_trechos_lado_a_lado_com_linhas_do_original():
    pairs = find_similar(_turma(), STARTER)
    par = next(p for p in pairs if {p.a, p.b} == {"ana", "carla"})
    assert (par.a, par.b) == ("ana", "carla")
    frags = [f for f in par.fragments if f.grade_id == "tarefa-atencao"]
    assert frags
    for f in frags:
        assert f.code_a == "\n".join(ORIGINAL[f.grade_id].splitlines()[f.lines_a[0] - 1:f.lines_a[1]])
        assert f.code_b == "\n".join(REORDENADA[f.grade_id].splitlines()[f.lines_b[0] - 1:f.lines_b[1]])
    # a softmax está no começo de uma e no fim da outra: o trecho dela aparece
    assert any("torch.exp" in f.code_a and "torch.exp" in f.code_b for f in frags)
    # funções reordenadas: a ordem dos trechos em b não segue a de a
    starts_b = [f.lines_b[0] for f in sorted(frags, key=lambda f: f.lines_a)]
    assert starts_b != sorted(starts_b)


def test_winnowing_garante_trechos_longos():
    """Todo trecho comum de k + w - 1 fichas deixa uma impressão comum (o oráculo: a
    garantia do winnowing, conferida em sequências aleatórias)."""
    rng = random.Random(7)
    alfabeto = ["V", "C", "(", ")", "+", "*", "0", ";", "=", ".exp"]
    from autograder.insight.similarity import _Token
    for _ in range(60):
        comum = [rng.choice(alfabeto) for _ in range(DEFAULT_K + DEFAULT_WINDOW - 1)]
        a = [rng.choice(alfabeto) for _ in range(rng.randint(0, 30))] + comum + \
            [rng.choice(alfabeto) for _ in range(rng.randint(0, 30))]
        b = [rng.choice(alfabeto) for _ in range(rng.randint(0, 30))] + comum
        fa = fingerprints([_Token(t, 1, 1) for t in a])
        fb = fingerprints([_Token(t, 1, 1) for t in b])
        assert fa.keys() & fb.keys()


@pytest.mark.parametrize("threshold", [0.0, 0.5, 1.0])
def test_limiar_e_ordem(threshold):
    pairs = find_similar(_turma(), STARTER, threshold=threshold)
    assert all(p.score >= threshold for p in pairs)
    assert [p.score for p in pairs] == sorted((p.score for p in pairs), reverse=True)
    assert all(p.a < p.b for p in pairs)


def test_jeito_comum_de_muitos_alunos_nao_conta():
    """Mais de max_students respostas com o mesmo código: o jeito comum, ignorado (como o
    -m do MOSS); com max_students maior, o grupo aparece."""
    subs = [Submission(f"s{i:02d}", {"tarefa-atencao": ORIGINAL["tarefa-atencao"]}) for i in range(12)]
    assert find_similar(subs, STARTER, max_students=10) == []
    assert len(find_similar(subs, STARTER, max_students=12)) == 12 * 11 // 2


def test_turma_pequena_e_vazia():
    assert find_similar([]) == []
    assert find_similar([Submission("x", {"c": "x = 1\n"})]) == []


def test_indice_invertido_contra_todos_os_pares():
    """Oráculo: as notas do índice invertido são as mesmas de comparar todos os pares, um a
    um, com os conjuntos de impressões (sem o filtro do jeito comum)."""
    rng = random.Random(11)
    pool = ["a = b + 1", "c = torch.exp(a - a.max())", "return c / c.sum()", "for i in range(3):\n    a = a * i",
            "if a > 0:\n    b = -a", "d = Q @ K.mT", "e = d.softmax(-1)", "x = [v for v in e]", "y = f(x, 2)",
            "z = x.view(2, -1).mean(0)"]
    from autograder.insight.similarity import _cell_prints
    for _ in range(15):
        subs = []
        for s in range(rng.randint(2, 12)):
            cells = {g: "\n".join(rng.choices(pool, k=rng.randint(1, 8))) + "\n" for g in ("g1", "g2")}
            subs.append(Submission(f"s{s:02d}", cells))
        got = {(p.a, p.b): p.score for p in find_similar(subs, {"g1": "a = b + 1\n"}, threshold=0.0,
                                                          max_students=10 ** 6)}
        sets = {sub.student: {(g, h) for g, src in sub.cells.items()
                              for h in _cell_prints(src, "a = b + 1\n" if g == "g1" else "",
                                                    DEFAULT_K, DEFAULT_WINDOW)} for sub in subs}
        want = {}
        for i, a in enumerate(subs):
            for b in subs[i + 1:]:
                A, B = sets[a.student], sets[b.student]
                if min(len(A), len(B)) >= 6 and A & B:
                    want[(a.student, b.student)] = len(A & B) / min(len(A), len(B))
        assert got.keys() == want.keys()
        for k, v in want.items():
            assert got[k] == pytest.approx(v)
