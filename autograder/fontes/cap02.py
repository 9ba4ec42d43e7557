"""Exercício do capítulo 2 — a escala sqrt(d_k).

Tarefas (pontos): produtos_aleatorios (2), produtos_unitarios (2), escalar (1),
entropia (2), pergunta escrita sobre as duas correções (2). Oráculos: fórmulas
fechadas (Var(q·k) = d_k, E[(u·v)^2] = 1/d, curtose 3 + 6/d_k) e
torch.special.entr; nada do pacote atencao.
"""

from autograder.fontes._parte1 import IMPORTS
from autograder.nbbuild import Notebook

SLUG = "02-escala"


def build() -> Notebook:
    nb = Notebook(SLUG, titulo="Capítulo 2 — A escala $\\sqrt{d_k}$")
    nb.md(
        "Neste exercício você vai medir, com sorteios, por que as pontuações "
        "$q\\cdot k$ crescem com $d_k$, e o que a divisão por $\\sqrt{d_k}$ faz com a "
        "softmax.\n\n"
        "**Regras.** Use `torch` (e `math`, se quiser). Não importe o pacote `atencao` "
        "do livro: este notebook deve rodar sozinho, inclusive no Colab. Complete as "
        "células marcadas e rode os testes logo abaixo de cada uma; há também testes "
        "ocultos, com outras formas, tipos e casos extremos, usados na correção.\n\n"
        "Toda amostragem deve usar o `gerador` (`torch.Generator`) recebido: assim o "
        "mesmo gerador com a mesma semente dá o mesmo resultado, e os testes podem "
        "conferir isso."
    )
    nb.setup(IMPORTS)

    # ------------------------------------------------------------------ tarefa 1
    nb.md(
        "## Tarefa 1 — produtos escalares de vetores aleatórios (2 pontos)\n\n"
        "Escreva `produtos_aleatorios(d_k, n, gerador)`: sorteie `n` pares de vetores "
        "$q, k \\in \\mathbb{R}^{d_k}$ com componentes independentes $\\mathcal{N}(0, 1)$ "
        "(média 0, variância 1) e devolva o tensor `(n,)` com os produtos $q\\cdot k$. "
        "Use `dtype=torch.float64`.\n\n"
        "Cada produto é uma soma de $d_k$ termos $q_t k_t$ independentes, cada um com "
        "média 0 e variância 1; por isso $\\operatorname{Var}(q\\cdot k) = d_k$ e o desvio "
        "padrão é $\\sqrt{d_k}$. Os testes conferem isso com uma tolerância de seis "
        "desvios padrão do estimador."
    )
    nb.solution(
        'def produtos_aleatorios(d_k, n, gerador):\n'
        '    """n produtos q·k, q e k com d_k componentes N(0, 1) independentes -> tensor (n,)."""\n'
        '    ### BEGIN SOLUTION\n'
        '    q = torch.randn(n, d_k, generator=gerador, dtype=torch.float64)  # (n, d_k)\n'
        '    k = torch.randn(n, d_k, generator=gerador, dtype=torch.float64)  # (n, d_k)\n'
        '    return (q * k).sum(dim=-1)  # (n,)\n'
        '    ### END SOLUTION',
        grade_id="produtos_aleatorios",
    )
    nb.tests(
        '"""produtos_aleatorios: forma, reprodutibilidade, média 0 e variância d_k."""\n'
        'x = produtos_aleatorios(64, 20_000, torch.Generator().manual_seed(0))\n'
        '_forma("produtos_aleatorios(64, 20000, g)", x, (20_000,))\n'
        'y = produtos_aleatorios(64, 20_000, torch.Generator().manual_seed(0))\n'
        'assert torch.equal(x, y), "produtos_aleatorios: a mesma semente deu resultados diferentes; use o `gerador` em torch.randn(..., generator=gerador)."\n'
        '# Var(q·k) = d_k; a variância amostral tem desvio padrão sqrt((2 d_k^2 + 6 d_k) / n).\n'
        '_perto("variância de q·k com d_k = 64", x.var(), 64, 6 * math.sqrt((2 * 64**2 + 6 * 64) / 20_000))\n'
        '_perto("média de q·k com d_k = 64", x.mean(), 0, 6 * math.sqrt(64 / 20_000))\n'
        'print("variância com d_k = 64:", round(float(x.var()), 2), "(teoria: 64; desvio padrão", round(float(x.std()), 2), "~ 8)")\n'
        '### BEGIN HIDDEN TESTS\n'
        'for d, n in ((1, 40_000), (7, 40_000), (256, 8000)):  # d_k ímpar e d_k = 1 incluídos\n'
        '    x = produtos_aleatorios(d, n, torch.Generator().manual_seed(d))\n'
        '    _forma(f"produtos_aleatorios({d}, {n}, g)", x, (n,))\n'
        '    _perto(f"variância de q·k com d_k = {d}", x.var(), d, 6 * math.sqrt((2 * d * d + 6 * d) / n))\n'
        '    _perto(f"média de q·k com d_k = {d}", x.mean(), 0, 6 * math.sqrt(d / n))\n'
        '# Com d_k = 1, q·k = x·y, produto de duas normais: curtose E[S^4]/E[S^2]^2 = 3 + 6/d_k = 9.\n'
        '# Uma normal de desvio sqrt(d_k) (atalho que não sorteia q e k) teria curtose 3.\n'
        'x = produtos_aleatorios(1, 200_000, torch.Generator().manual_seed(11))\n'
        '_perto("curtose de q·k com d_k = 1 (q e k sorteados de verdade?)", (x**4).mean() / (x**2).mean() ** 2, 9, 1.5)\n'
        'z = produtos_aleatorios(3, 1, torch.Generator().manual_seed(5))\n'
        '_forma("produtos_aleatorios(3, 1, g)", z, (1,))\n'
        'a = produtos_aleatorios(16, 100, torch.Generator().manual_seed(1))\n'
        'b = produtos_aleatorios(16, 100, torch.Generator().manual_seed(2))\n'
        'assert not torch.equal(a, b), "produtos_aleatorios: sementes diferentes deram o mesmo resultado; use o `gerador`."\n'
        '### END HIDDEN TESTS',
        grade_id="test_produtos_aleatorios",
        points=2,
    )

    # ------------------------------------------------------------------ tarefa 2
    nb.md(
        "## Tarefa 2 — vetores unitários: o produto encolhe (2 pontos)\n\n"
        "Cuidado com uma frase comum e errada: \"vetores aleatórios unitários têm "
        "produto escalar de variância $d_k$\". Se $q$ e $k$ têm **norma 1**, o produto "
        "é o cosseno do ângulo entre eles, está sempre em $[-1, 1]$ e, para direções "
        "sorteadas ao acaso, $\\mathbb{E}[(q\\cdot k)^2] = 1/d$: ele **encolhe** como "
        "$1/\\sqrt{d}$. O que cresce como $\\sqrt{d_k}$ é o produto de vetores cujas "
        "**componentes** têm variância 1 (tarefa 1).\n\n"
        "Escreva `produtos_unitarios(d, n, gerador)`: sorteie como na tarefa 1 "
        "(`float64`), divida cada vetor pela sua norma e devolva os `n` produtos."
    )
    nb.solution(
        'def produtos_unitarios(d, n, gerador):\n'
        '    """n produtos u·v de direções aleatórias (vetores de norma 1) em R^d -> tensor (n,)."""\n'
        '    ### BEGIN SOLUTION\n'
        '    u = torch.randn(n, d, generator=gerador, dtype=torch.float64)  # (n, d)\n'
        '    v = torch.randn(n, d, generator=gerador, dtype=torch.float64)  # (n, d)\n'
        '    u = u / u.norm(dim=-1, keepdim=True)\n'
        '    v = v / v.norm(dim=-1, keepdim=True)\n'
        '    return (u * v).sum(dim=-1)  # (n,)\n'
        '    ### END SOLUTION',
        grade_id="produtos_unitarios",
    )
    nb.tests(
        '"""produtos_unitarios: |u·v| <= 1, média 0 e E[(u·v)^2] = 1/d."""\n'
        'x = produtos_unitarios(64, 20_000, torch.Generator().manual_seed(0))\n'
        '_forma("produtos_unitarios(64, 20000, g)", x, (20_000,))\n'
        'assert float(x.abs().max()) <= 1 + 1e-12, f"produtos_unitarios: |u·v| passou de 1 ({float(x.abs().max()):.4g}); os vetores foram normalizados?"\n'
        '# (u·v)^2 segue Beta(1/2, (d-1)/2): média 1/d, variância 2(d-1)/(d^2 (d+2)).\n'
        '_perto("média de (u·v)^2 com d = 64", (x**2).mean(), 1 / 64, 6 * math.sqrt(2 * 63 / (64**2 * 66) / 20_000))\n'
        '_perto("média de u·v com d = 64", x.mean(), 0, 6 * math.sqrt(1 / 64 / 20_000))\n'
        'print("desvio padrão de u·v com d = 64:", round(float(x.std()), 4), "(teoria: 1/sqrt(64) = 0.125)")\n'
        '### BEGIN HIDDEN TESTS\n'
        'for d, n in ((2, 40_000), (9, 40_000), (1024, 4000)):\n'
        '    x = produtos_unitarios(d, n, torch.Generator().manual_seed(d))\n'
        '    _forma(f"produtos_unitarios({d}, {n}, g)", x, (n,))\n'
        '    _perto(f"média de (u·v)^2 com d = {d}", (x**2).mean(), 1 / d, 6 * math.sqrt(2 * (d - 1) / (d * d * (d + 2)) / n))\n'
        '    _perto(f"média de u·v com d = {d}", x.mean(), 0, 6 * math.sqrt(1 / d / n))\n'
        '# d = 1: um vetor de norma 1 em R^1 é +1 ou -1, então u·v = ±1 exatamente.\n'
        'x = _tensor("produtos_unitarios(1, 1000, g)", produtos_unitarios(1, 1000, torch.Generator().manual_seed(3)))\n'
        'conferir("|u·v| com d = 1", x.abs(), torch.ones(1000, dtype=x.dtype), atol=1e-12)\n'
        'assert 0.3 < float((x > 0).double().mean()) < 0.7, "produtos_unitarios com d = 1: os sinais deveriam sair +1 e -1 meio a meio."\n'
        'a = produtos_unitarios(5, 50, torch.Generator().manual_seed(1))\n'
        'b = produtos_unitarios(5, 50, torch.Generator().manual_seed(1))\n'
        'assert torch.equal(a, b), "produtos_unitarios: a mesma semente deu resultados diferentes; use o `gerador`."\n'
        '### END HIDDEN TESTS',
        grade_id="test_produtos_unitarios",
        points=2,
    )

    # ------------------------------------------------------------------ tarefa 3
    nb.md(
        "## Tarefa 3 — a escala (1 ponto)\n\n"
        "Escreva `escalar(s, d_k)`, que divide as pontuações `s` (um tensor de qualquer "
        "forma e tipo de ponto flutuante) por $\\sqrt{d_k}$ e devolve um tensor novo do "
        "**mesmo tipo** (`float16` continua `float16`). Se `d_k` não for um inteiro "
        "positivo, levante `ValueError` com uma mensagem em português dizendo o que "
        "veio."
    )
    nb.solution(
        'def escalar(s, d_k):\n'
        '    """s / sqrt(d_k), mesmo tipo de s; ValueError se d_k não for inteiro positivo."""\n'
        '    ### BEGIN SOLUTION\n'
        '    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or d_k < 1:\n'
        '        raise ValueError(f"d_k deve ser um inteiro positivo, veio {d_k!r}")\n'
        '    return s / math.sqrt(int(d_k))\n'
        '    ### END SOLUTION',
        grade_id="escalar",
    )
    nb.tests(
        '"""escalar: divide por sqrt(d_k), mantém o tipo e recusa d_k inválido."""\n'
        'conferir("escalar(8 em toda parte, d_k = 64)", escalar(torch.full((2, 3), 8.0), 64), torch.ones(2, 3))\n'
        's = torch.randn(4, 5, dtype=torch.float64)\n'
        'conferir("escalar(s, 16)", escalar(s, 16), s / 4, atol=1e-15)\n'
        'conferir_erro("escalar(s, 0)", escalar, s, 0)\n'
        '### BEGIN HIDDEN TESTS\n'
        's = torch.randn(2, 3, 7, 7, dtype=torch.float64)\n'
        'antes = s.clone()\n'
        'conferir("escalar(s, 7) (d_k ímpar)", escalar(s, 7), s * 7 ** -0.5, atol=1e-15)\n'
        'assert torch.equal(s, antes), "escalar: o tensor de entrada foi modificado; devolva um tensor novo."\n'
        'conferir("escalar(s, 1)", escalar(s, 1), s, atol=0)\n'
        'h = torch.randn(3, 3, dtype=torch.float16) * 100\n'
        'r = escalar(h, 64)\n'
        '_tipo("escalar(float16, 64)", r, torch.float16)\n'
        '# float16 tem 11 bits de mantissa: um arredondamento custa até 2^-11 ~ 4.9e-4 relativo.\n'
        'conferir("escalar(float16, 64)", r, h.double() / 8, rtol=1e-3, atol=1e-3)\n'
        'for ruim in (-4, 2.5):\n'
        '    conferir_erro(f"escalar(s, {ruim!r})", escalar, s, ruim)\n'
        '### END HIDDEN TESTS',
        grade_id="test_escalar",
        points=1,
    )

    # ------------------------------------------------------------------ tarefa 4
    nb.md(
        "## Tarefa 4 — entropia das linhas de pesos (2 pontos)\n\n"
        "A entropia $H(p) = -\\sum_j p_j \\log p_j$ (em nats, com a convenção "
        "$0 \\log 0 = 0$) mede quão espalhada está uma distribuição: vale 0 quando toda "
        "a massa está numa chave e $\\log m$ quando os $m$ pesos são iguais.\n\n"
        "Escreva `entropia(p)`: `p` tem forma `(..., m)` e cada linha (última dimensão) "
        "é uma distribuição; devolva `(...)`, a entropia de cada linha. Pesos zero "
        "**não** podem produzir NaN (cuidado: `0 * log(0)` é `nan` em ponto flutuante)."
    )
    nb.solution(
        'def entropia(p):\n'
        '    """Entropia (nats) de cada linha de p (..., m) -> (...), com 0 log 0 = 0."""\n'
        '    ### BEGIN SOLUTION\n'
        '    positivo = p > 0\n'
        '    termos = torch.where(positivo, -p * torch.log(torch.where(positivo, p, torch.ones_like(p))), torch.zeros_like(p))\n'
        '    return termos.sum(dim=-1)\n'
        '    ### END SOLUTION',
        grade_id="entropia",
    )
    nb.tests(
        '"""entropia: uniforme dá log m, one-hot dá 0, e bate com torch.special.entr."""\n'
        'conferir("entropia(uniforme sobre 4)", entropia(torch.full((4,), 0.25, dtype=torch.float64)), torch.tensor(math.log(4), dtype=torch.float64))\n'
        'conferir("entropia([0, 1, 0])", entropia(torch.tensor([0.0, 1.0, 0.0])), torch.tensor(0.0))\n'
        'p = torch.softmax(torch.randn(5, 9, dtype=torch.float64), dim=-1)\n'
        'conferir("entropia(p) com p de forma (5, 9)", entropia(p), torch.special.entr(p).sum(-1), atol=1e-12)\n'
        '### BEGIN HIDDEN TESTS\n'
        'p = torch.softmax(torch.randn(2, 3, 11, dtype=torch.float64) * 4, dim=-1)\n'
        'p[0, 1, :5] = 0  # zeros no meio de uma linha (não normalizada: a fórmula vale assim mesmo)\n'
        'conferir("entropia(p) com forma (2, 3, 11) e zeros", entropia(p), torch.special.entr(p).sum(-1), atol=1e-12)\n'
        'conferir("entropia de uma linha com uma chave só (T = 1)", entropia(torch.ones(3, 1)), torch.zeros(3))\n'
        'q = torch.softmax(torch.randn(6, 17), dim=-1)\n'
        'r = entropia(q)\n'
        '_tipo("entropia(float32)", r, torch.float32)\n'
        'conferir("entropia(float32)", r, torch.special.entr(q).sum(-1), atol=1e-5)\n'
        'conferir("entropia(one-hot em float16)", entropia(torch.eye(4, dtype=torch.float16)), torch.zeros(4, dtype=torch.float16))\n'
        '### END HIDDEN TESTS',
        grade_id="test_entropia",
        points=2,
    )

    # ------------------------------------------------------------------ experimento
    nb.md(
        "## Experimento (sem nota)\n\n"
        "Com as suas funções: a variância dos produtos cresce como $d_k$, e a softmax "
        "de pontuações sem escala fica cada vez mais concentrada (entropia caindo), "
        "enquanto com a escala ela se mantém."
    )
    nb.code(
        'ds = [1, 4, 16, 64, 256, 1024]\n'
        'g = torch.Generator().manual_seed(0)\n'
        'var = [float(produtos_aleatorios(d, 4000, g).var()) for d in ds]\n'
        'm = 16  # chaves por linha\n'
        'h_sem, h_com = [], []\n'
        'for d in ds:\n'
        '    s = produtos_aleatorios(d, 200 * m, g).reshape(200, m)  # 200 linhas de m pontuações\n'
        '    h_sem.append(float(entropia(torch.softmax(s, -1)).mean()))\n'
        '    h_com.append(float(entropia(torch.softmax(escalar(s, d), -1)).mean()))\n'
        'fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.5))\n'
        'a1.loglog(ds, var, "o", label="medida")\n'
        'a1.loglog(ds, ds, "--", label="$d_k$")\n'
        'a1.set(xlabel="$d_k$", ylabel="variância de $q\\\\cdot k$", title="Variância cresce com $d_k$")\n'
        'a1.legend()\n'
        'a2.semilogx(ds, h_sem, "o-", label="sem escala")\n'
        'a2.semilogx(ds, h_com, "s-", label="com $1/\\\\sqrt{d_k}$")\n'
        'a2.axhline(math.log(m), color="gray", ls=":", label="uniforme ($\\\\log m$)")\n'
        'a2.set(xlabel="$d_k$", ylabel="entropia média (nats)", title="Softmax de 16 pontuações")\n'
        'a2.legend()\n'
        'plt.show()',
        grade_id="experimento",
    )

    # ------------------------------------------------------------------ escrita
    nb.written(
        "## Tarefa 5 — duas correções diferentes (2 pontos, correção manual)\n\n"
        "Uma implementação cuidadosa da atenção faz duas coisas com as pontuações "
        "antes da exponencial: **subtrai o máximo de cada linha** e **divide por "
        "$\\sqrt{d_k}$**. Explique, com suas palavras e em poucas frases, que problema "
        "cada uma resolve e por que uma não substitui a outra. (Dica: uma delas não muda "
        "os pesos; a outra muda.)",
        "Subtrair o máximo não muda a softmax ($e^{x_j - c} / \\sum_t e^{x_t - c} = "
        "e^{x_j}/\\sum_t e^{x_t}$); serve só para que a maior exponencial seja "
        "$e^0 = 1$ e nada estoure (overflow para `inf`, depois `inf/inf = nan`), um "
        "problema de representação numérica. Dividir por $\\sqrt{d_k}$ muda os pesos: "
        "como $\\operatorname{Var}(q\\cdot k) = d_k$ com componentes de variância 1, sem a "
        "escala as pontuações têm desvio $\\sqrt{d_k}$ e a softmax satura (quase "
        "one-hot), onde a jacobiana $\\operatorname{diag}(p) - pp^\\top$ é quase zero e os "
        "gradientes somem; a escala devolve as pontuações à variância 1 (é uma "
        "temperatura fixa). Com só a subtração, a conta é estável mas a softmax "
        "continua saturada; com só a escala, as pontuações ficam moderadas em média, "
        "mas vetores de norma grande ainda podem estourar a exponencial (em float16, "
        "qualquer pontuação acima de ~11). Por isso usamos as duas.",
        grade_id="duas_correcoes",
        points=2,
    )
    nb.entrega("A correção roda também os testes ocultos, com outros valores de $d_k$, outros tipos e "
               "casos extremos.")
    return nb


# Resposta plausível e errada (usada nos testes do pipeline): a entropia sem a
# convenção 0 log 0 = 0 dá NaN numa linha one-hot.
ERRADO = {
    "entropia": "def entropia(p):\n    return -(p * torch.log(p)).sum(dim=-1)\n",
}
