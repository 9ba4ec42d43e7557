"""Exercício do capítulo 4 — a softmax.

Tarefas (pontos): softmax estável (3), logsumexp (2), jacobiano_softmax (2),
pesos_de_atencao com o exemplo das sementes (2), pergunta escrita sobre a
subtração do máximo (2). Oráculos: torch.softmax, torch.logsumexp,
torch.autograd.functional.jacobian e os valores do exemplo resolvido; nada do
pacote atencao. Os testes ocultos desligam torch.softmax/torch.logsumexp
durante a chamada, para conferir que a conta é do aluno.
"""

from autograder.fontes._parte1 import IMPORTS
from autograder.nbbuild import Notebook

SLUG = "04-softmax"

SETUP = IMPORTS + '''
import torch.nn.functional as F

inf = float("inf")
'''


def build() -> Notebook:
    nb = Notebook(SLUG, titulo="Capítulo 4 — A softmax")
    nb.md(
        "A softmax transforma cada linha de pontuações numa distribuição:\n\n"
        "$$A_{ij} = \\frac{e^{s_{ij}}}{\\sum_t e^{s_{it}}}.$$\n\n"
        "Neste exercício você a escreve de forma estável, calcula o log-sum-exp e a "
        "jacobiana, e reproduz o exemplo resolvido do livro.\n\n"
        "**Regras.** Use `torch`, mas **não** `torch.softmax`, `F.softmax`, "
        "`Tensor.softmax` nem `torch.logsumexp` nas suas funções (os testes ocultos "
        "conferem). Não importe o pacote `atencao` do livro. Há testes ocultos com "
        "outras formas, tipos e casos extremos."
    )
    nb.setup(SETUP)

    # ------------------------------------------------------------------ experimento
    nb.md(
        "## Antes: a softmax ingênua estoura\n\n"
        "$e^{x}$ passa do maior número representável quando $x > \\log(\\text{máximo})$: "
        "cerca de 88,7 em `float32` e 11,1 em `float16`. Aí vem `inf / inf = nan`."
    )
    nb.code(
        'def softmax_ingenua(x):\n'
        '    e = torch.exp(x)\n'
        '    return e / e.sum(dim=-1, keepdim=True)\n'
        '\n'
        'for dtype in (torch.float16, torch.float32):\n'
        '    print(dtype, "log(máximo) =", round(math.log(torch.finfo(dtype).max), 2))\n'
        '    for x0 in (10.0, 12.0, 80.0, 100.0):\n'
        '        print(f"   softmax_ingenua([{x0}, 0]) =", softmax_ingenua(torch.tensor([x0, 0.0], dtype=dtype)).tolist())',
        grade_id="softmax_ingenua",
    )

    # ------------------------------------------------------------------ tarefa 1
    nb.md(
        "## Tarefa 1 — softmax estável (3 pontos)\n\n"
        "Escreva `softmax(x, dim=-1)`: subtraia o máximo ao longo de `dim` antes da "
        "exponencial (a distribuição é a mesma e o maior termo vira $e^0 = 1$). "
        "Requisitos: mesmo tipo e forma de `x`; entradas `-inf` (posições "
        "mascaradas) recebem peso **exatamente** 0; uma linha **toda** `-inf` dá NaN, "
        "como no `torch.softmax` (não há distribuição sobre um conjunto vazio); não "
        "altere `x`."
    )
    nb.solution(
        'def softmax(x, dim=-1):\n'
        '    """exp(x - max) / soma, ao longo de dim; estável para pontuações enormes."""\n'
        '    ### BEGIN SOLUTION\n'
        '    e = torch.exp(x - x.amax(dim=dim, keepdim=True))\n'
        '    return e / e.sum(dim=dim, keepdim=True)\n'
        '    ### END SOLUTION',
        grade_id="softmax",
    )
    nb.tests(
        '"""softmax: igual ao torch.softmax, estável, linhas somam 1."""\n'
        'x = torch.tensor([[1.0, 2.0, 3.0], [1000.0, 1001.0, 1002.0]])\n'
        'conferir("softmax([[1, 2, 3], [1000, 1001, 1002]])", softmax(x), torch.softmax(x, -1))\n'
        'x = torch.randn(4, 6, dtype=torch.float64)\n'
        'conferir("soma das linhas de softmax(x)", softmax(x).sum(-1), torch.ones(4, dtype=torch.float64), atol=1e-12)\n'
        'conferir("softmax([12, 0]) em float16", softmax(torch.tensor([12.0, 0.0], dtype=torch.float16)),\n'
        '         torch.softmax(torch.tensor([12.0, 0.0], dtype=torch.float64), -1), atol=1e-3)\n'
        '### BEGIN HIDDEN TESTS\n'
        'with _sem_atalhos():\n'
        '    x = torch.randn(2, 3, 5, 7, dtype=torch.float64)\n'
        '    antes = x.clone()\n'
        '    r_ult, r_0, r_1 = softmax(x), _chamar("softmax com dim=0", softmax, x, dim=0), _chamar("softmax com dim=1", softmax, x, dim=1)\n'
        '    assert torch.equal(x, antes), "softmax: a entrada x foi alterada."\n'
        '    grande = torch.tensor([[1e4, -1e4, 0.0], [-3e4, -3e4 + 1, -3e4 + 2]])  # pontuações enormes\n'
        '    r_grande = softmax(grande)\n'
        '    # pontuações próximas e enormes em float16: o espaçamento perto de 6e4 é 32, então 59968 é\n'
        '    # o vizinho representável de 60000 (59990 arredondaria para 60000 e viraria um empate)\n'
        '    h = torch.tensor([[60000.0, 59968.0, -60000.0], [0.0, 1.0, 2.0]], dtype=torch.float16)\n'
        '    r_h = softmax(h)\n'
        '    masc = torch.tensor([[0.5, -inf, 2.0, -inf], [-inf, -inf, -inf, -inf], [3.0, -inf, -inf, -inf]])\n'
        '    r_masc = softmax(masc)\n'
        '    r_um = softmax(torch.tensor([[5.0], [-7.0]]))\n'
        'conferir("softmax de (2, 3, 5, 7) na última dimensão", r_ult, torch.softmax(x, -1), atol=1e-12)\n'
        'conferir("softmax com dim=0", r_0, torch.softmax(x, 0), atol=1e-12)\n'
        'conferir("softmax com dim=1", r_1, torch.softmax(x, 1), atol=1e-12)\n'
        'conferir("softmax de pontuações ~1e4", r_grande, torch.softmax(grande, -1))\n'
        '_tipo("softmax(float16)", r_h, torch.float16)\n'
        'assert float(h[0, 0]) - float(h[0, 1]) == 32.0, "teste mal montado: o caso float16 virou um empate"\n'
        'conferir("softmax(float16) com 60000 e 59968 (diferença 32)", r_h, torch.softmax(h.double(), -1), atol=1e-3)\n'
        'conferir("softmax com -inf e uma linha toda mascarada", r_masc, torch.softmax(masc, -1))\n'
        'assert float(r_masc[0, 1]) == 0.0 and float(r_masc[2, 1]) == 0.0, "softmax: posições -inf devem ter peso exatamente 0."\n'
        'conferir("softmax de linhas com um elemento (T = 1)", r_um, torch.ones(2, 1))\n'
        '### END HIDDEN TESTS',
        grade_id="test_softmax",
        points=3,
    )

    # ------------------------------------------------------------------ tarefa 2
    nb.md(
        "## Tarefa 2 — log-sum-exp (2 pontos)\n\n"
        "$\\operatorname{LSE}(x) = \\log \\sum_j e^{x_j} = c + \\log \\sum_j e^{x_j - c}$ "
        "para qualquer $c$; com $c = \\max_j x_j$ a conta não estoura. Com ele, "
        "$\\operatorname{softmax}(x)_j = e^{x_j - \\operatorname{LSE}(x)}$ (é o número que "
        "o FlashAttention guarda para a volta, no capítulo 11).\n\n"
        "Escreva `logsumexp(x, dim=-1)`, que devolve o LSE ao longo de `dim` (essa "
        "dimensão some). Uma linha toda `-inf` deve dar `-inf` (o log de uma soma "
        "vazia), não NaN: cuide do caso em que o máximo é `-inf`."
    )
    nb.solution(
        'def logsumexp(x, dim=-1):\n'
        '    """log(sum exp(x)) ao longo de dim, estável; linha toda -inf -> -inf."""\n'
        '    ### BEGIN SOLUTION\n'
        '    c = x.amax(dim=dim, keepdim=True)\n'
        '    c = torch.where(torch.isfinite(c), c, torch.zeros_like(c))  # linha toda -inf: desloca por 0\n'
        '    return (c + torch.log(torch.exp(x - c).sum(dim=dim, keepdim=True))).squeeze(dim)\n'
        '    ### END SOLUTION',
        grade_id="logsumexp",
    )
    nb.tests(
        '"""logsumexp: igual ao torch.logsumexp, estável e com -inf."""\n'
        'x = torch.tensor([[0.0, 0.0], [1000.0, 1000.0]], dtype=torch.float64)\n'
        'conferir("logsumexp([[0, 0], [1000, 1000]])", logsumexp(x), torch.tensor([math.log(2), 1000 + math.log(2)], dtype=torch.float64), atol=1e-12)\n'
        'x = torch.randn(3, 8, dtype=torch.float64)\n'
        'conferir("exp(x - logsumexp(x)) é a softmax", torch.exp(x - logsumexp(x).unsqueeze(-1)), torch.softmax(x, -1), atol=1e-12)\n'
        '### BEGIN HIDDEN TESTS\n'
        'with _sem_atalhos():\n'
        '    x = torch.randn(2, 5, 9, dtype=torch.float64) * 500\n'
        '    r_ult, r_1 = logsumexp(x), _chamar("logsumexp com dim=1", logsumexp, x, dim=1)\n'
        '    masc = torch.tensor([[-inf, -inf, -inf], [2.0, -inf, -inf], [-inf, 1.0, 1.0]])\n'
        '    r_masc = logsumexp(masc)\n'
        '    r_um = logsumexp(torch.tensor([[3.5]]))\n'
        '    f = torch.randn(4, 33) * 80\n'
        '    r_f = logsumexp(f)\n'
        'conferir("logsumexp de (2, 5, 9) com valores ~500", r_ult, torch.logsumexp(x, -1), atol=1e-10)\n'
        'conferir("logsumexp com dim=1", r_1, torch.logsumexp(x, 1), atol=1e-10)\n'
        'assert float(r_masc[0]) == -inf, f"logsumexp de uma linha toda -inf: esperava -inf, veio {float(r_masc[0])}."\n'
        'conferir("logsumexp com -inf", r_masc[1:], torch.logsumexp(masc, -1)[1:])\n'
        'conferir("logsumexp de um elemento (T = 1)", r_um, torch.tensor([3.5]))\n'
        '_tipo("logsumexp(float32)", r_f, torch.float32)\n'
        'conferir("logsumexp(float32)", r_f, torch.logsumexp(f.double(), -1), atol=1e-4)\n'
        '### END HIDDEN TESTS',
        grade_id="test_logsumexp",
        points=2,
    )

    # ------------------------------------------------------------------ tarefa 3
    nb.md(
        "## Tarefa 3 — a jacobiana da softmax (2 pontos)\n\n"
        "Com $p = \\operatorname{softmax}(z)$, a derivada de $p_a$ em relação a $z_b$ é\n\n"
        "$$J_{ab} = \\frac{\\partial p_a}{\\partial z_b} = p_a(\\delta_{ab} - p_b), \\qquad "
        "J = \\operatorname{diag}(p) - p\\,p^\\top.$$\n\n"
        "Escreva `jacobiano_softmax(z)`: `z` tem forma `(..., m)`; devolva `(..., m, m)`, "
        "uma jacobiana por linha. Use a sua `softmax` e a fórmula (sem autograd; os "
        "testes usam `torch.autograd` como oráculo)."
    )
    nb.solution(
        'def jacobiano_softmax(z):\n'
        '    """diag(p) - p p^T para cada linha de z (..., m) -> (..., m, m)."""\n'
        '    ### BEGIN SOLUTION\n'
        '    p = softmax(z, dim=-1)  # (..., m)\n'
        '    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., m, m)\n'
        '    ### END SOLUTION',
        grade_id="jacobiano_softmax",
    )
    nb.tests(
        '"""jacobiano_softmax: igual ao autograd, simétrica, linhas somam 0."""\n'
        'def _jac(z):  # oráculo: autograd, uma linha de cada vez\n'
        '    linhas = z.reshape(-1, z.shape[-1])\n'
        '    js = [torch.autograd.functional.jacobian(lambda t: torch.softmax(t, -1), l) for l in linhas]\n'
        '    return torch.stack(js).reshape(*z.shape, z.shape[-1])\n'
        '\n'
        '\n'
        'def _sua_softmax_erra(z):\n'
        '    """A SUA softmax (tarefa 1) em z, se ela erra aqui; None se acerta (ou nem roda)."""\n'
        '    p = None\n'
        '    try:\n'
        '        p = softmax(z, dim=-1)  # só dados\n'
        '        conferir("sua softmax", p, torch.softmax(z, -1), atol=1e-12)\n'
        '    except AssertionError:\n'
        '        return p\n'
        '    except Exception:  # noqa: BLE001 - nem roda: não há com o que comparar\n'
        '        return None\n'
        '    return None\n'
        '\n'
        '\n'
        'def _conferir_jac(nome, J, z, certo, atol):\n'
        '    """Confere J com a jacobiana certa; se a SUA softmax erra em z, aceita também\n'
        '    diag(p) - p pᵀ com o p dela: um erro da tarefa 1 não tira pontos de novo aqui."""\n'
        '    try:\n'
        '        conferir(nome, J, certo, atol=atol)\n'
        '    except AssertionError:\n'
        '        p = _sua_softmax_erra(z)\n'
        '        if not isinstance(p, torch.Tensor) or tuple(p.shape) != tuple(z.shape):\n'
        '            raise\n'
        '        conferir(f"{nome}, com a sua softmax da tarefa 1", J,\n'
        '                 torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2), atol=atol)\n'
        '        print(f"{nome}: confere com a sua softmax, que ainda erra (veja a tarefa 1).")\n'
        '\n'
        '\n'
        'z = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)\n'
        '_conferir_jac("jacobiano_softmax([1, 2, 3])", _chamar("jacobiano_softmax", jacobiano_softmax, z), z, _jac(z), atol=1e-12)\n'
        '### BEGIN HIDDEN TESTS\n'
        'z = torch.randn(2, 3, 6, dtype=torch.float64) * 3\n'
        'J = _chamar("jacobiano_softmax de forma (2, 3, 6)", jacobiano_softmax, z)\n'
        '_conferir_jac("jacobiano_softmax de forma (2, 3, 6)", J, z, _jac(z), atol=1e-12)\n'
        'conferir("a jacobiana é simétrica", J, J.transpose(-1, -2), atol=1e-15)\n'
        'if _sua_softmax_erra(z) is None:  # com uma softmax errada, as linhas não somam 0\n'
        '    conferir("cada linha da jacobiana soma 0", J.sum(-1), torch.zeros(2, 3, 6, dtype=torch.float64), atol=1e-15)\n'
        'z1 = torch.tensor([[4.0]])\n'
        '_conferir_jac("jacobiano_softmax com m = 1", jacobiano_softmax(z1), z1, torch.zeros(1, 1, 1), atol=1e-6)\n'
        'z_sat = torch.tensor([200.0, 0.0, 0.0], dtype=torch.float64)  # saturada: gradiente some\n'
        '_conferir_jac("jacobiano_softmax saturada ([200, 0, 0])", jacobiano_softmax(z_sat), z_sat,\n'
        '              torch.zeros(3, 3, dtype=torch.float64), atol=1e-80)\n'
        '### END HIDDEN TESTS',
        grade_id="test_jacobiano_softmax",
        points=2,
    )

    # ------------------------------------------------------------------ tarefa 4
    nb.md(
        "## Tarefa 4 — os pesos da atenção e o exemplo resolvido (2 pontos)\n\n"
        "Escreva `pesos_de_atencao(q, k)`: com `q` `(..., T, d)` e `k` `(..., T, d)`, "
        "devolva os pesos causais `(..., T, T)`:\n\n"
        "$$A = \\operatorname{softmax}\\Big(\\operatorname{máscara}\\big(QK^\\top/\\sqrt{d}\\big)\\Big),$$\n\n"
        "com **a sua** `softmax` e `-inf` onde $j > i$.\n\n"
        "O exemplo resolvido do livro: $Q = K = \\begin{pmatrix}1&0\\\\1&1\\\\0&1\\end{pmatrix}$, "
        "$d = 2$. A primeira consulta só vê a primeira chave (peso 1); a segunda tem "
        "pontuações $(1, 2)/\\sqrt2$; a terceira, $(0, 1, 1)/\\sqrt2$."
    )
    nb.solution(
        'def pesos_de_atencao(q, k):\n'
        '    """softmax(máscara causal(q k^T / sqrt(d))): (..., T, d), (..., T, d) -> (..., T, T)."""\n'
        '    ### BEGIN SOLUTION\n'
        '    T, d = q.shape[-2], q.shape[-1]\n'
        '    s = q @ k.transpose(-2, -1) / math.sqrt(d)  # (..., T, T)\n'
        '    futuro = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # (T, T)\n'
        '    return softmax(s.masked_fill(futuro, float("-inf")), dim=-1)\n'
        '    ### END SOLUTION',
        grade_id="pesos_de_atencao",
    )
    nb.tests(
        '"""pesos_de_atencao: o exemplo resolvido com 6 casas decimais."""\n'
        'def _conferir_pesos(nome, A, q, k, certo, atol, rtol=1e-5):\n'
        '    """Confere A com os pesos certos; se a SUA softmax (tarefa 1) erra nesta entrada, aceita\n'
        '    também os pesos calculados com ela: um erro da tarefa 1 não tira pontos de novo aqui."""\n'
        '    T = q.shape[-2]\n'
        '    s = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(\n'
        '        torch.triu(torch.ones(T, T, dtype=torch.bool), 1), -inf)  # (..., T, T)\n'
        '    sua = None\n'
        '    try:\n'
        '        sua = softmax(s, dim=-1)  # a softmax da tarefa 1, só com dados\n'
        '        conferir("sua softmax", sua, certo, atol=atol, rtol=rtol)\n'
        '    except Exception:  # noqa: BLE001 - a tarefa 1 erra aqui (ou nem roda)\n'
        '        try:\n'
        '            conferir(nome, A, certo, atol=atol, rtol=rtol)\n'
        '        except AssertionError:\n'
        '            if not isinstance(sua, torch.Tensor):\n'
        '                raise\n'
        '            conferir(f"{nome}, com a sua softmax da tarefa 1", A, sua, atol=atol, rtol=rtol)\n'
        '            print(f"{nome}: confere com a sua softmax, que ainda erra (veja a tarefa 1).")\n'
        '        return\n'
        '    conferir(nome, A, certo, atol=atol, rtol=rtol)\n'
        '\n'
        '\n'
        'Q = torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], dtype=torch.float64)\n'
        'esperado = torch.tensor([[1, 0, 0], [0.330238, 0.669762, 0], [0.197776, 0.401112, 0.401112]], dtype=torch.float64)\n'
        'A = _chamar("pesos_de_atencao do exemplo resolvido", pesos_de_atencao, Q, Q)\n'
        '_conferir_pesos("pesos do exemplo resolvido", A, Q, Q, esperado, atol=5e-7, rtol=0)  # 6 casas decimais\n'
        'print(A)\n'
        '### BEGIN HIDDEN TESTS\n'
        'def _oraculo(q, k):\n'
        '    T = q.shape[-2]\n'
        '    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n'
        '    return torch.softmax(s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), -inf), -1)\n'
        'for forma in ((1, 1), (1, 4), (7, 5), (2, 3, 9, 16)):  # T = 1, d ímpar, lote e cabeças\n'
        '    q, k = torch.randn(forma, dtype=torch.float64), torch.randn(forma, dtype=torch.float64)\n'
        '    with _sem_atalhos():\n'
        '        r = _chamar(f"pesos_de_atencao com q de forma {forma}", pesos_de_atencao, q, k)\n'
        '    _conferir_pesos(f"pesos_de_atencao com q de forma {forma}", r, q, k, _oraculo(q, k), atol=1e-12)\n'
        'q = torch.randn(6, 64) * 30  # pontuações enormes\n'
        'with _sem_atalhos():\n'
        '    r = pesos_de_atencao(q, q)\n'
        '_conferir_pesos("pesos_de_atencao com pontuações enormes", r, q, q, _oraculo(q, q), atol=1e-6)\n'
        '### END HIDDEN TESTS',
        grade_id="test_pesos_de_atencao",
        points=2,
    )

    # ------------------------------------------------------------------ escrita
    nb.written(
        "## Tarefa 5 — por que subtrair o máximo? (2 pontos, correção manual)\n\n"
        "Mostre que subtrair a mesma constante $c$ de todas as pontuações de uma linha "
        "não muda a softmax. Depois explique por que $c = \\max_j x_j$ é a escolha que "
        "resolve o estouro, e por que ela não cria o problema oposto (um denominador "
        "zero por *underflow*).",
        "$\\frac{e^{x_j - c}}{\\sum_t e^{x_t - c}} = \\frac{e^{-c} e^{x_j}}{e^{-c}\\sum_t "
        "e^{x_t}} = \\frac{e^{x_j}}{\\sum_t e^{x_t}}$: o fator $e^{-c}$ se cancela. Com "
        "$c = \\max_j x_j$, todo expoente $x_j - c$ é $\\le 0$, então cada termo fica em "
        "$(0, 1]$ e nenhum estoura. E o termo do máximo vale exatamente $e^0 = 1$, de "
        "modo que o denominador é pelo menos 1: mesmo que os outros termos virem 0 por "
        "underflow, nunca dividimos por zero (só numa linha toda $-\\infty$, em que o "
        "máximo já é $-\\infty$).",
        grade_id="subtrair_maximo",
        points=2,
    )
    nb.entrega()
    return nb


# Resposta plausível e errada (usada nos testes do pipeline): a softmax ingênua,
# sem subtrair o máximo, estoura com pontuações grandes.
ERRADO = {
    "softmax": "def softmax(x, dim=-1):\n    e = torch.exp(x)\n    return e / e.sum(dim=dim, keepdim=True)\n",
}
