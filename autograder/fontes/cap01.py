"""Exercícios do capítulo 1 — Pontuações (QKᵀ)."""

from autograder.nbbuild import Notebook

SLUG = "01-pontuacoes"

SETUP = '''\
import math

import numpy as np
import torch

torch.manual_seed(0)
rng = np.random.default_rng(0)

# Produtos prontos: nenhum deles pode aparecer numa resposta "com laços".
_PRODUTOS = {"matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "mm", "bmm", "mv", "kron",
             "multi_dot", "broadcast_to", "expand_dims", "newaxis", "expand", "unsqueeze", "tile",
             "__dict__", "getattr", "eval", "exec", "compile", "__import__", "globals", "vars"}


def _sem_produto_pronto(nome, f):
    """A função usa laços explícitos e nenhum produto pronto: sem `@`, matmul, dot, inner,
    tensordot, einsum, e sem produtos com difusão (índice None, expand_dims) somados.
    Lê a árvore sintática do texto da função (e das suas funções que ela chama)."""
    import ast
    vistos, fila, tem_laco = set(), [_fonte(f)], False
    while fila:
        arvore = ast.parse(fila.pop().strip())
        for n in ast.walk(arvore):
            if isinstance(n, (ast.For, ast.While)):
                tem_laco = True
            proibido = None
            if isinstance(n, (ast.BinOp, ast.AugAssign)) and isinstance(n.op, ast.MatMult):
                proibido = "@"
            elif isinstance(n, ast.Attribute) and n.attr in _PRODUTOS:
                proibido = n.attr
            elif isinstance(n, ast.Name) and n.id in _PRODUTOS:
                proibido = n.id
            elif isinstance(n, ast.Subscript) and any(isinstance(i, ast.Constant) and i.value is None
                                                      for i in ast.walk(n.slice)):
                proibido = "índice None (difusão)"
            if proibido:
                raise AssertionError(f"{nome}: use laços explícitos, sem @, np.dot, np.matmul, np.inner, "
                                     f"np.tensordot, np.einsum nem difusão (apareceu `{proibido}`).")
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id not in vistos:
                vistos.add(n.func.id)
                outra = _fonte_de_nome(n.func.id)      # uma função sua chamada por esta
                if outra is not None:
                    fila.append(outra)
    if not tem_laco:
        raise AssertionError(f"{nome}: use laços explícitos (for) para somar os produtos.")
'''


def build() -> Notebook:
    nb = Notebook(SLUG, "Capítulo 1 — Pontuações: $QK^\\top$")
    nb.md(
        "Neste caderno você vai calcular a matriz de pontuações $S = QK^\\top$ de três jeitos, "
        "com dimensões de lote e de cabeças, e contar quanto ela custa.\n\n"
        "**Como trabalhar.** Complete as células marcadas com `# SEU CÓDIGO AQUI` (apague a linha "
        "`raise NotImplementedError`). Logo abaixo de cada uma há uma célula de testes: rode-a. "
        "Se algo estiver errado, a mensagem diz o que se esperava e o que veio. Na correção, "
        "testes ocultos (formas aleatórias, casos extremos) também rodam.\n\n"
        "Não apague nem edite as células de teste. Use só `numpy` e `torch`.",
        grade_id="instrucoes",
    )
    nb.setup(SETUP)

    # ---------------------------------------------------------------- tarefa 1
    nb.md(
        "## Tarefa 1 — pontuações com laços (2 pontos)\n\n"
        "Implemente `scores_loops(Q, K)` para matrizes NumPy `Q` de forma $(n, d)$ e `K` de forma "
        "$(m, d)$, devolvendo `S` de forma $(n, m)$ com\n\n"
        "$$S_{ij} = \\sum_{t=1}^{d} Q_{it} K_{jt}.$$\n\n"
        "Use laços explícitos em Python (`for`), sem `@`, `np.dot`, `np.matmul` nem `np.einsum`: "
        "o objetivo é ver a fórmula funcionando.",
        grade_id="tarefa1_enunciado",
    )
    nb.solution(
        "def scores_loops(Q, K):\n"
        "    \"\"\"S[i, j] = soma_t Q[i, t] * K[j, t], com laços explícitos.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    n, d = Q.shape\n"
        "    m = K.shape[0]\n"
        "    S = np.zeros((n, m))\n"
        "    for i in range(n):\n"
        "        for j in range(m):\n"
        "            total = 0.0\n"
        "            for t in range(d):\n"
        "                total += Q[i, t] * K[j, t]\n"
        "            S[i, j] = total\n"
        "    return S\n"
        "    ### END SOLUTION",
        grade_id="scores_loops",
    )
    nb.tests(
        "\"\"\"scores_loops calcula Q Kᵀ elemento a elemento.\"\"\"\n"
        "Q = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])\n"
        "conferir(\"scores_loops(Q, Q) no exemplo 3x2\", _chamar(\"scores_loops\", scores_loops, Q, Q),\n"
        "         np.array([[1.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 1.0]]))\n"
        "Qa, Ka = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))\n"
        "conferir(\"scores_loops com n=4, m=5, d=3\", scores_loops(Qa, Ka), Qa @ Ka.T)\n"
        "print(\"Tarefa 1: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_sem_produto_pronto(\"scores_loops\", scores_loops)\n"
        "_r = np.random.default_rng(11)\n"
        "for (_n, _m, _d) in [(1, 1, 1), (1, 7, 3), (6, 2, 5), (9, 9, 1)]:\n"
        "    _Q, _K = _r.standard_normal((_n, _d)), _r.standard_normal((_m, _d))\n"
        "    conferir(f\"scores_loops com n={_n}, m={_m}, d={_d}\", scores_loops(_Q, _K), _Q @ _K.T)\n"
        "### END HIDDEN TESTS",
        grade_id="test_scores_loops",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 2
    nb.md(
        "## Tarefa 2 — pontuações vetorizadas, com lote e cabeças (3 pontos)\n\n"
        "Implemente `scores(q, k)` para tensores com **qualquer número de dimensões à frente**: "
        "`q` com forma `(..., n, d)` e `k` com forma `(..., m, d)`, devolvendo `(..., n, m)`. "
        "Deve funcionar com NumPy (devolvendo NumPy) e com torch (devolvendo torch), sem laços.\n\n"
        "Dica: troque só as duas últimas dimensões de `k` (`k.transpose(-2, -1)` no torch, "
        "`np.swapaxes(k, -2, -1)` no NumPy) e use `@`.",
        grade_id="tarefa2_enunciado",
    )
    nb.solution(
        "def scores(q, k):\n"
        "    \"\"\"Pontuações S = q kᵀ nas duas últimas dimensões: (..., n, d), (..., m, d) -> (..., n, m).\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    if isinstance(q, torch.Tensor):\n"
        "        return q @ k.transpose(-2, -1)\n"
        "    return q @ np.swapaxes(k, -2, -1)\n"
        "    ### END SOLUTION",
        grade_id="scores",
    )
    nb.tests(
        "\"\"\"scores funciona com NumPy e torch e com dimensões de lote e cabeças.\"\"\"\n"
        "q, k = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 6, 4)   # (B, H, T, d_k)\n"
        "conferir(\"scores com forma (2, 3, 5, 4) x (2, 3, 6, 4)\", _chamar(\"scores com lote e cabeças\", scores, q, k),\n"
        "         torch.einsum(\"bhid,bhjd->bhij\", q, k), atol=1e-5)\n"
        "qn, kn = rng.standard_normal((7, 4)), rng.standard_normal((7, 4))\n"
        "conferir(\"scores com NumPy (7, 4)\", _chamar(\"scores com NumPy\", scores, qn, kn), np.einsum(\"id,jd->ij\", qn, kn))\n"
        "print(\"Tarefa 2: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_g = torch.Generator().manual_seed(5)\n"
        "for _shape_q, _shape_k in [((1, 1), (1, 1)), ((4, 1, 3), (4, 9, 3)), ((2, 2, 2, 1, 7), (2, 2, 2, 3, 7))]:\n"
        "    _q, _k = torch.randn(*_shape_q, generator=_g), torch.randn(*_shape_k, generator=_g)\n"
        "    conferir(f\"scores com q{_shape_q} e k{_shape_k}\", _chamar(f\"scores com q{_shape_q}\", scores, _q, _k), torch.matmul(_q, _k.transpose(-1, -2)), atol=1e-5)\n"
        "_q16, _k16 = torch.randn(3, 8, generator=_g).half(), torch.randn(5, 8, generator=_g).half()\n"
        "_s16 = scores(_q16, _k16)\n"
        "assert isinstance(_s16, torch.Tensor) and _s16.dtype == torch.float16, \\\n"
        "    f\"scores: com entrada float16 esperava saída torch float16, veio {type(_s16).__name__} {getattr(_s16, 'dtype', '')}\"\n"
        "conferir(\"scores em float16\", _s16.float(), _q16.float() @ _k16.float().T, atol=2e-2)  # float16: ~3 dígitos\n"
        "_qn = np.random.default_rng(3).standard_normal((2, 5, 3))\n"
        "_sn = scores(_qn, _qn)\n"
        "assert isinstance(_sn, np.ndarray), f\"scores: com NumPy esperava np.ndarray, veio {type(_sn).__name__}\"\n"
        "conferir(\"scores com NumPy (2, 5, 3)\", _sn, np.einsum(\"bid,bjd->bij\", _qn, _qn))\n"
        "### END HIDDEN TESTS",
        grade_id="test_scores_vetorizado",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 3
    nb.md(
        "## Tarefa 3 — formas erradas dão erro claro (1 ponto)\n\n"
        "Escreva `scores_checked(q, k)`: igual a `scores`, mas se a última dimensão de `q` e de `k` "
        "for diferente, levante `ValueError` com uma mensagem que diga as duas formas "
        "(por exemplo, `q(5, 4) e k(5, 3)`: os testes procuram os números de cada forma). "
        "Sem essa checagem, o `@` daria um erro confuso, ou pior, nenhum erro "
        "(pense no que acontece quando `d` de `q` é igual a `m` de `k`).",
        grade_id="tarefa3_enunciado",
    )
    nb.solution(
        "def scores_checked(q, k):\n"
        "    ### BEGIN SOLUTION\n"
        "    if q.shape[-1] != k.shape[-1]:\n"
        "        raise ValueError(f\"q e k precisam da mesma última dimensão d: q{tuple(q.shape)}, k{tuple(k.shape)}\")\n"
        "    return scores(q, k)\n"
        "    ### END SOLUTION",
        grade_id="scores_checked",
    )
    nb.tests(
        "\"\"\"scores_checked recusa d diferentes com ValueError e aceita o resto.\"\"\"\n"
        "def _diz_as_formas(nome, erro, *formas):\n"
        "    \"\"\"A mensagem do erro traz cada forma, escrita como (5, 4), [5, 4] ou torch.Size([5, 4]).\"\"\"\n"
        "    texto = str(erro).replace(\" \", \"\")\n"
        "    for f in formas:\n"
        "        assert \",\".join(map(str, f)) in texto, (\n"
        "            f\"{nome}: a mensagem do ValueError deve dizer as duas formas, {formas[0]} e {formas[1]}; veio: {erro}\")\n"
        "\n"
        "\n"
        "_e = conferir_erro(\"scores_checked com d=4 em q e d=3 em k\", scores_checked, torch.randn(5, 4), torch.randn(5, 3))\n"
        "_diz_as_formas(\"scores_checked com q(5, 4) e k(5, 3)\", _e, (5, 4), (5, 3))\n"
        "conferir(\"scores_checked com formas válidas\", scores_checked(torch.ones(2, 3), torch.ones(4, 3)), torch.full((2, 4), 3.0))\n"
        "print(\"Tarefa 3: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "# O caso traiçoeiro: q (4, 3) e k (3, 5). q @ k funcionaria, mas q @ kᵀ não tem sentido.\n"
        "conferir_erro(\"scores_checked com q(4, 3) e k(3, 5)\", scores_checked, np.ones((4, 3)), np.ones((3, 5)))\n"
        "_e = conferir_erro(\"scores_checked com lote: q(2, 6, 8), k(2, 6, 4)\", scores_checked, torch.ones(2, 6, 8), torch.ones(2, 6, 4))\n"
        "_diz_as_formas(\"scores_checked com q(2, 6, 8) e k(2, 6, 4)\", _e, (2, 6, 8), (2, 6, 4))\n"
        "### END HIDDEN TESTS",
        grade_id="test_scores_checked",
        points=1,
    )

    # ---------------------------------------------------------------- tarefa 4
    nb.md(
        "## Tarefa 4 — quanto custa $S$ (2 pontos)\n\n"
        "Implemente `count_scores(T, n_heads, n_layers, batch=1)`, o número total de pontuações "
        "calculadas numa passada (um $T \\times T$ por cabeça, por camada, por sequência do lote), e "
        "`scores_bytes(T, bytes_per_element)`, a memória de **uma** matriz $T \\times T$ em bytes. "
        "Devolva inteiros Python (`int`).\n\n"
        "Exemplo: o GPT-2 small tem $T = 1024$, 12 cabeças e 12 camadas.",
        grade_id="tarefa4_enunciado",
    )
    nb.solution(
        "def count_scores(T, n_heads, n_layers, batch=1):\n"
        "    ### BEGIN SOLUTION\n"
        "    return int(batch) * int(n_layers) * int(n_heads) * int(T) * int(T)\n"
        "    ### END SOLUTION\n"
        "\n"
        "\n"
        "def scores_bytes(T, bytes_per_element):\n"
        "    ### BEGIN SOLUTION\n"
        "    return int(T) * int(T) * int(bytes_per_element)\n"
        "    ### END SOLUTION",
        grade_id="custo",
    )
    nb.tests(
        "\"\"\"count_scores e scores_bytes seguem T² por cabeça, camada e sequência.\"\"\"\n"
        "conferir(\"count_scores(1024, 1, 1)\", count_scores(1024, 1, 1), 1_048_576)\n"
        "conferir(\"scores_bytes(1024, 4) (float32)\", scores_bytes(1024, 4), 4 * 1024 ** 2)\n"
        "assert isinstance(count_scores(8, 2, 2), int), \"count_scores: devolva um int do Python\"\n"
        "print(\"Tarefa 4: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "conferir(\"count_scores do GPT-2 small (T=1024, 12 cabeças, 12 camadas)\", count_scores(1024, 12, 12), 150_994_944)\n"
        "conferir(\"count_scores com batch=3\", count_scores(10, 2, 5, batch=3), 3 * 5 * 2 * 100)\n"
        "conferir(\"count_scores com T=1\", count_scores(1, 1, 1), 1)\n"
        "# Contexto longo: inteiros do Python não transbordam (262.144² = 68.719.476.736)\n"
        "assert count_scores(262_144, 1, 1) == 68_719_476_736, f\"count_scores(262144, 1, 1): esperava 68719476736, veio {count_scores(262_144, 1, 1)}\"\n"
        "assert scores_bytes(262_144, 2) == 2 * 262_144 ** 2, \"scores_bytes(262144, 2) errado\"\n"
        "assert isinstance(scores_bytes(3, 2), int), \"scores_bytes: devolva um int do Python\"\n"
        "### END HIDDEN TESTS",
        grade_id="test_custo",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 5
    nb.written(
        "## Tarefa 5 — pergunta aberta (2 pontos)\n\n"
        "A matriz $S = QK^\\top$ é simétrica? Explique em duas ou três frases, dizendo em que caso "
        "especial ela seria e por que os modelos usam $W_Q \\ne W_K$.",
        "Em geral não: $S_{ij} = q_i \\cdot k_j$ e $S_{ji} = q_j \\cdot k_i$ usam projeções diferentes "
        "($q = xW_Q$, $k = xW_K$). Só seria simétrica se $W_Q = W_K$ (ou, mais geralmente, se "
        "$W_Q W_K^\\top$ fosse simétrica). Projeções distintas deixam a relação ser assimétrica: "
        "\"ele\" pode buscar \"gato\" sem que \"gato\" busque \"ele\" com a mesma força.",
        grade_id="resposta_simetria",
        points=2,
    )
    nb.entrega()
    return nb


# Resposta plausível e errada (usada nos testes do pipeline): `.T` inverte
# TODAS as dimensões de um tensor com lote, não só as duas últimas.
ERRADO = {
    "scores": "def scores(q, k):\n    return q @ k.T\n",
}
