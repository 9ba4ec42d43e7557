"""Exercício do capítulo 5 — a mistura com V.

Tarefas (pontos): misturar (2), atencao_causal (3), contribuicoes (2),
pergunta escrita sobre o que um peso de atenção (não) explica (2).
Oráculos: torch.einsum, F.scaled_dot_product_attention (is_causal ou máscara
booleana com start) e os valores do exemplo resolvido; nada do pacote atencao.
"""

from autograder.fontes._parte1 import IMPORTS
from autograder.nbbuild import Notebook

SLUG = "05-mistura-com-v"

SETUP = IMPORTS + '''
import torch.nn.functional as F

inf = float("inf")


def _sdpa(q, k, v, start=0):
    """Oráculo: a atenção causal do torch, em float64, com n consultas sobre m = start + n chaves."""
    q, k, v = (x.double() for x in (q, k, v))
    n, m = q.shape[-2], k.shape[-2]
    pode = ~torch.triu(torch.ones(n, m, dtype=torch.bool), diagonal=start + 1)  # True = permitido
    return F.scaled_dot_product_attention(q, k, v, attn_mask=pode)
'''


def build() -> Notebook:
    nb = Notebook(SLUG, titulo="Capítulo 5 — A mistura com $V$")
    nb.md(
        "Os pesos $A$ dizem quanto cada consulta olha para cada chave; a saída é a "
        "média dos **valores** com esses pesos:\n\n"
        "$$\\text{saída}_i = \\sum_j A_{ij}\\, v_j, \\qquad "
        "\\text{Atenção}(Q, K, V) = \\operatorname{softmax}\\Big(\\operatorname{máscara}"
        "\\big(QK^\\top/\\sqrt{d_k}\\big)\\Big)\\,V.$$\n\n"
        "**Regras.** Use `torch` (aqui `torch.softmax` é permitido); não use "
        "`F.scaled_dot_product_attention` nas suas funções (é o oráculo dos testes) "
        "nem o pacote `atencao` do livro. Há testes ocultos com outras formas, tipos e "
        "casos extremos.\n\n"
        "Formas: `q` `(..., n, d)`, `k` `(..., m, d)`, `v` `(..., m, dv)`; com um cache, "
        "as $n$ consultas novas ocupam as posições $\\text{start}, \\dots, "
        "\\text{start} + n - 1$ e $m = \\text{start} + n$."
    )
    nb.setup(SETUP)

    # ------------------------------------------------------------------ tarefa 1
    nb.md(
        "## Tarefa 1 — misturar os valores (2 pontos)\n\n"
        "Escreva `misturar(pesos, v)`: `pesos` `(..., n, m)`, `v` `(..., m, dv)`, "
        "saída `(..., n, dv)` com $\\text{saída}_i = \\sum_j A_{ij} v_j$. Se o $m$ dos "
        "pesos não for o de `v`, levante `ValueError` dizendo as duas formas."
    )
    nb.solution(
        'def misturar(pesos, v):\n'
        '    """saída[..., i, :] = soma_j pesos[..., i, j] * v[..., j, :]  ->  (..., n, dv)."""\n'
        '    ### BEGIN SOLUTION\n'
        '    if pesos.shape[-1] != v.shape[-2]:\n'
        '        raise ValueError(f"pesos {tuple(pesos.shape)} (..., n, m) e v {tuple(v.shape)} (..., m, dv) precisam do mesmo m")\n'
        '    return pesos @ v  # (..., n, dv)\n'
        '    ### END SOLUTION',
        grade_id="misturar",
    )
    nb.tests(
        '"""misturar: média ponderada dos valores, forma (..., n, dv)."""\n'
        'A = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])\n'
        'V = torch.tensor([[2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])\n'
        'conferir("misturar(A, V)", misturar(A, V), torch.tensor([[2.0, 0.0], [1.0, 1.0], [1.4, 1.6]]))\n'
        'conferir_erro("misturar com pesos (3, 3) e v (4, 2)", misturar, A, torch.zeros(4, 2))\n'
        '### BEGIN HIDDEN TESTS\n'
        'A = torch.softmax(torch.randn(2, 3, 5, 8, dtype=torch.float64), -1)\n'
        'V = torch.randn(2, 3, 8, 7, dtype=torch.float64)  # dv = 7 diferente de m\n'
        'conferir("misturar com lote e cabeças", misturar(A, V), torch.einsum("...nm,...md->...nd", A, V), atol=1e-12)\n'
        'conferir("misturar com T = 1", misturar(torch.ones(1, 1), torch.tensor([[3.0, -1.0]])), torch.tensor([[3.0, -1.0]]))\n'
        'Ah, Vh = A.half(), V.half()\n'
        'r = misturar(Ah, Vh)\n'
        '_tipo("misturar(float16)", r, torch.float16)\n'
        'conferir("misturar(float16)", r, torch.einsum("...nm,...md->...nd", Ah.double(), Vh.double()), atol=5e-3)  # 8 termos, ~5e-4 cada\n'
        '### END HIDDEN TESTS',
        grade_id="test_misturar",
        points=2,
    )

    # ------------------------------------------------------------------ tarefa 2
    nb.md(
        "## Tarefa 2 — o mecanismo inteiro (3 pontos)\n\n"
        "Escreva `atencao_causal(q, k, v, start=0)`: pontuações $QK^\\top$, escala "
        "$1/\\sqrt{d}$, máscara causal ($-\\infty$ onde $j > \\text{start} + i$), softmax "
        "na última dimensão e `misturar`. Mesmo tipo de entrada na saída. Se `q` e `k` "
        "não tiverem o mesmo `d`, levante `ValueError`.\n\n"
        "O exemplo resolvido do livro ($Q = K$, $V$ abaixo, $d = 2$) deve dar, com 6 "
        "casas decimais, `[[2, 0], [0.660477, 1.339523], [1.197776, 1.604448]]`."
    )
    nb.solution(
        'def atencao_causal(q, k, v, start=0):\n'
        '    """softmax(máscara(q k^T / sqrt(d))) v, com n consultas novas sobre m = start + n chaves."""\n'
        '    ### BEGIN SOLUTION\n'
        '    if q.shape[-1] != k.shape[-1]:\n'
        '        raise ValueError(f"q {tuple(q.shape)} e k {tuple(k.shape)} precisam da mesma última dimensão d")\n'
        '    n, m, d = q.shape[-2], k.shape[-2], q.shape[-1]\n'
        '    s = q @ k.transpose(-2, -1) / math.sqrt(d)  # (..., n, m)\n'
        '    futuro = torch.arange(m).unsqueeze(0) > start + torch.arange(n).unsqueeze(1)  # (n, m)\n'
        '    pesos = torch.softmax(s.masked_fill(futuro, float("-inf")), dim=-1)  # (..., n, m)\n'
        '    return misturar(pesos, v)  # (..., n, dv)\n'
        '    ### END SOLUTION',
        grade_id="atencao_causal",
    )
    nb.tests(
        '"""atencao_causal: o exemplo resolvido e o SDPA do torch."""\n'
        'Q = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], dtype=torch.float64)\n'
        'V = torch.tensor([[2.0, 0.0], [0.0, 2.0], [2.0, 2.0]], dtype=torch.float64)\n'
        'esperado = torch.tensor([[2, 0], [0.660477, 1.339523], [1.197776, 1.604448]], dtype=torch.float64)\n'
        'conferir("saída do exemplo resolvido", atencao_causal(Q, Q, V), esperado, atol=5e-7, rtol=0)  # 6 casas decimais\n'
        'g = torch.Generator().manual_seed(0)\n'
        'q, k, v = (torch.randn(10, 8, generator=g) for _ in range(3))\n'
        'conferir("atencao_causal vs torch (is_causal=True)", atencao_causal(q, k, v), F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-5)  # float32\n'
        '### BEGIN HIDDEN TESTS\n'
        'casos = [((), 1, 1, 3, 2, 0),        # T = 1\n'
        '         ((), 9, 9, 7, 5, 0),        # d ímpar, dv diferente de d\n'
        '         ((2, 3), 6, 6, 16, 16, 0),  # lote e cabeças\n'
        '         ((2,), 4, 11, 8, 3, 7),     # 4 consultas novas sobre um cache de 7 (start > 0)\n'
        '         ((), 1, 20, 4, 4, 19)]      # um passo de geração\n'
        'for lead, n, m, d, dv, start in casos:\n'
        '    q = torch.randn(*lead, n, d, dtype=torch.float64, generator=g)\n'
        '    k = torch.randn(*lead, m, d, dtype=torch.float64, generator=g)\n'
        '    v = torch.randn(*lead, m, dv, dtype=torch.float64, generator=g)\n'
        '    caso = f"atencao_causal com q{(*lead, n, d)}, k{(*lead, m, d)}, v{(*lead, m, dv)}, start={start}"\n'
        '    conferir(caso, _chamar(caso, atencao_causal, q, k, v, start=start), _sdpa(q, k, v, start), atol=1e-12)\n'
        'q, k, v = (torch.randn(2, 12, 8, generator=g).half() for _ in range(3))\n'
        'r = atencao_causal(q, k, v)\n'
        '_tipo("atencao_causal(float16)", r, torch.float16)\n'
        'conferir("atencao_causal(float16)", r, _sdpa(q, k, v), atol=1e-2)  # float16: ~5e-4 por operação, somas de 8 e 12 termos\n'
        'q, k, v = (torch.randn(8, 4, dtype=torch.float64, generator=g) * 40 for _ in range(3))  # pontuações enormes\n'
        'conferir("atencao_causal com pontuações enormes", atencao_causal(q, k, v), _sdpa(q, k, v), atol=1e-9)\n'
        'q, k, v = (torch.randn(10, 6, dtype=torch.float64, generator=g) for _ in range(3))\n'
        'k2, v2 = k.clone(), v.clone()\n'
        'k2[6:] += 100\n'
        'v2[6:] -= 50\n'
        'assert torch.equal(atencao_causal(q, k, v)[:6], atencao_causal(q, k2, v2)[:6]), \\\n'
        '    "atencao_causal: mudar as chaves/valores das posições 6..9 mudou as saídas 0..5; a máscara deixa o futuro vazar."\n'
        'conferir_erro("atencao_causal com d diferente em q e k", atencao_causal, torch.zeros(3, 4), torch.zeros(3, 5), torch.zeros(3, 2))\n'
        '### END HIDDEN TESTS',
        grade_id="test_atencao_causal",
        points=3,
    )

    # ------------------------------------------------------------------ experimento
    nb.md(
        "## Experimento (sem nota)\n\n"
        "Cada saída é uma combinação convexa dos valores (pesos $\\ge 0$ que somam 1): "
        "no exemplo resolvido, fica dentro do triângulo formado pelos três $v_j$."
    )
    nb.code(
        'Q = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], dtype=torch.float64)\n'
        'V = torch.tensor([[2.0, 0.0], [0.0, 2.0], [2.0, 2.0]], dtype=torch.float64)\n'
        'saida = atencao_causal(Q, Q, V)\n'
        'tri = torch.cat([V, V[:1]])\n'
        'plt.plot(tri[:, 0], tri[:, 1], "k--", lw=1, label="triângulo dos valores")\n'
        'plt.scatter(V[:, 0], V[:, 1], s=80, marker="s", label="valores $v_j$")\n'
        'plt.scatter(saida[:, 0], saida[:, 1], s=80, label="saídas")\n'
        'for i, (x, y) in enumerate(saida.tolist()):\n'
        '    plt.annotate(f"saída {i}", (x, y), textcoords="offset points", xytext=(6, 6))\n'
        'plt.gca().set_aspect("equal")\n'
        'plt.legend()\n'
        'plt.title("Saídas: médias ponderadas dos valores")\n'
        'plt.show()',
        grade_id="experimento",
    )

    # ------------------------------------------------------------------ tarefa 3
    nb.md(
        "## Tarefa 3 — quanto cada chave contribui (2 pontos)\n\n"
        "O peso $A_{ij}$ não diz sozinho quanto a chave $j$ moveu a saída $i$: a "
        "contribuição é o vetor $A_{ij} v_j$, e um peso grande sobre um valor pequeno "
        "contribui pouco. Escreva `contribuicoes(pesos, v)`, que devolve o tensor "
        "`(..., n, m, dv)` com `c[..., i, j, :] = pesos[..., i, j] * v[..., j, :]` "
        "(somando em `j` sai a `misturar`)."
    )
    nb.solution(
        'def contribuicoes(pesos, v):\n'
        '    """c[..., i, j, :] = pesos[..., i, j] * v[..., j, :]  ->  (..., n, m, dv)."""\n'
        '    ### BEGIN SOLUTION\n'
        '    return pesos.unsqueeze(-1) * v.unsqueeze(-3)  # (..., n, m, 1) * (..., 1, m, dv)\n'
        '    ### END SOLUTION',
        grade_id="contribuicoes",
    )
    nb.tests(
        '"""contribuicoes: A_ij v_j, e a soma em j é a saída."""\n'
        'A = torch.tensor([[1.0, 0.0], [0.9, 0.1]])\n'
        'V = torch.tensor([[0.01, 0.0], [0.0, 5.0]])\n'
        'c = contribuicoes(A, V)\n'
        '_forma("contribuicoes(A, V)", c, (2, 2, 2))\n'
        'conferir("contribuicoes(A, V)", c, torch.tensor([[[0.01, 0.0], [0.0, 0.0]], [[0.009, 0.0], [0.0, 0.5]]]))\n'
        'print("peso 0.9 na chave 0, mas norma da contribuição:", c[1].norm(dim=-1).tolist())\n'
        '### BEGIN HIDDEN TESTS\n'
        'A = torch.softmax(torch.randn(2, 3, 4, 6, dtype=torch.float64), -1)\n'
        'V = torch.randn(2, 3, 6, 5, dtype=torch.float64)\n'
        'c = contribuicoes(A, V)\n'
        'conferir("contribuicoes com lote e cabeças", c, torch.einsum("...nm,...md->...nmd", A, V), atol=1e-15)\n'
        'conferir("soma das contribuições em j = A @ V", c.sum(-2), A @ V, atol=1e-12)\n'
        'conferir("contribuicoes com T = 1", contribuicoes(torch.ones(1, 1), torch.tensor([[2.0, 3.0]])), torch.tensor([[[2.0, 3.0]]]))\n'
        '### END HIDDEN TESTS',
        grade_id="test_contribuicoes",
        points=2,
    )

    # ------------------------------------------------------------------ escrita
    nb.written(
        "## Tarefa 4 — o que um peso de atenção explica? (2 pontos, correção manual)\n\n"
        "Num modelo treinado, uma cabeça põe peso 0,9 do token \"ele\" no token "
        "\"gato\". Alguém conclui: \"o modelo previu a próxima palavra *por causa* de "
        "'gato'\". Dê pelo menos dois motivos pelos quais os pesos de uma cabeça, "
        "sozinhos, não sustentam essa conclusão.",
        "(1) O peso diz quanto a cabeça mistura o valor de \"gato\" na saída de \"ele\", "
        "não quanto essa mistura importa: se $v_{\\text{gato}}$ for pequeno (ou for "
        "quase cancelado por $W_O$), a contribuição $A_{ij} v_j$ é pequena (tarefa 3). "
        "(2) É uma cabeça de uma camada: há outras cabeças, outras camadas, a conexão "
        "residual e o MLP, e o valor em \"gato\" já é uma mistura de outros tokens das "
        "camadas anteriores. (3) Os pesos são uma distribuição sobre **posições do "
        "contexto** dentro de uma cabeça; a previsão é outra distribuição, sobre o "
        "**vocabulário**, produzida no fim do modelo. Para falar em causa é preciso "
        "intervir (por exemplo, trocar \"gato\" e ver a previsão mudar), não só olhar "
        "os pesos.",
        grade_id="peso_nao_e_causa",
        points=2,
    )
    nb.entrega()
    return nb


# Resposta plausível e errada (usada nos testes do pipeline): esquecer start
# (a máscara sempre quadrada) quebra o caso com cache.
ERRADO = {
    "atencao_causal": (
        "def atencao_causal(q, k, v, start=0):\n"
        "    T = q.shape[-2]\n"
        "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
        "    futuro = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)\n"
        "    return misturar(torch.softmax(s.masked_fill(futuro, float('-inf')), dim=-1), v)\n"
    ),
}
