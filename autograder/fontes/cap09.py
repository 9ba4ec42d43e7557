"""Exercício do capítulo 9 — o custo quadrático.

Tarefas (pontos): tráfego de memória do algoritmo ingênuo e do em blocos (3),
FLOPs e intensidade aritmética (2), o roofline (2), pergunta escrita sobre por
que a atenção ingênua é limitada pela memória (2). Oráculos: as fórmulas
fechadas do capítulo e contagens diretas (somas passo a passo); nada do
pacote atencao.
"""

from autograder.fontes._parte2 import IMPORTS
from autograder.nbbuild import Notebook

SLUG = "09-custo-quadratico"


def build() -> Notebook:
    nb = Notebook(SLUG, "Capítulo 9 — O custo quadrático")
    nb.md(
        "Contas de custo da atenção de **uma cabeça**: quantos elementos vão e voltam da memória "
        "grande (HBM), quantos FLOPs se fazem e o que o modelo *roofline* diz sobre a velocidade.\n\n"
        "**Como trabalhar.** Complete as células marcadas com `# SEU CÓDIGO AQUI` (apague a linha "
        "`raise NotImplementedError`) e rode a célula de testes logo abaixo. Na correção rodam também "
        "testes ocultos (T = 1, blocos maiores que T, contextos enormes, arrays NumPy).\n\n"
        "Devolva inteiros do Python (`int`) nas contagens: eles não transbordam, mesmo com "
        "$T = 262.144$.",
        grade_id="instrucoes",
    )
    nb.setup(IMPORTS)

    # ---------------------------------------------------------------- tarefa 1
    nb.md(
        "## Tarefa 1 — tráfego de memória (3 pontos)\n\n"
        "O algoritmo ingênuo em três passos: (1) lê $Q$, $K$ e escreve $S$; (2) lê $S$ e escreve "
        "$P = \\mathrm{softmax}(S)$; (3) lê $P$, $V$ e escreve $O$. Cada matriz $T \\times T$ tem "
        "$T^2$ elementos; $Q$, $K$, $V$, $O$ têm $T d$ cada.\n\n"
        "* `naive_elements(T, d)`: total de elementos lidos e escritos pelos três passos;\n"
        "* `tiled_elements(T, d, block)`: na versão em blocos, $Q$ é lido uma vez, $O$ escrito uma "
        "vez, e $K$ e $V$ são lidos inteiros uma vez **por bloco de consultas** "
        "($\\lceil T/\\text{block} \\rceil$ blocos).",
        grade_id="tarefa1_enunciado",
    )
    nb.solution(
        "def naive_elements(T, d):\n"
        "    \"\"\"Elementos movidos pelo algoritmo ingênuo de três passos.\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    return 4 * T * T + 4 * T * d\n"
        "    ### END SOLUTION\n"
        "\n"
        "\n"
        "def tiled_elements(T, d, block):\n"
        "    \"\"\"Elementos movidos pela versão em blocos (K e V relidos por bloco de consultas).\"\"\"\n"
        "    ### BEGIN SOLUTION\n"
        "    return 2 * T * d + 2 * T * d * (-(-T // block))\n"
        "    ### END SOLUTION",
        grade_id="trafego",
    )
    nb.code(
        "def naive_elements_step_by_step(T, d):\n"
        "    \"\"\"A mesma conta, passo a passo (para conferir).\"\"\"\n"
        "    passo1 = (T * d + T * d) + T * T      # lê Q, K; escreve S\n"
        "    passo2 = T * T + T * T                # lê S; escreve P\n"
        "    passo3 = (T * T + T * d) + T * d      # lê P, V; escreve O\n"
        "    return passo1 + passo2 + passo3",
        grade_id="passo_a_passo",
    )
    nb.tests(
        "\"\"\"naive_elements e tiled_elements seguem as leituras e escritas descritas.\"\"\"\n"
        "conferir(\"naive_elements(1024, 64)\", naive_elements(1024, 64), naive_elements_step_by_step(1024, 64))\n"
        "conferir(\"tiled_elements(1024, 64, 128)\", tiled_elements(1024, 64, 128), 2 * 1024 * 64 * (1 + 8))\n"
        "assert isinstance(naive_elements(8, 2), int), \"naive_elements: devolva um int do Python\"\n"
        "print(\"Tarefa 1: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "for _T, _d in [(1, 1), (7, 3), (262_144, 256)]:\n"
        "    conferir(f\"naive_elements({_T}, {_d})\", _chamar(\"naive_elements\", naive_elements, _T, _d), naive_elements_step_by_step(_T, _d))\n"
        "assert naive_elements(262_144, 256) == 4 * 262_144 ** 2 + 4 * 262_144 * 256, \"naive_elements: conta errada (ou transbordou) em T=262144\"\n"
        "for _T, _d, _b, _nq in [(1, 4, 128, 1), (100, 8, 32, 4), (128, 16, 128, 1), (129, 16, 128, 2), (5, 2, 1, 5)]:\n"
        "    conferir(f\"tiled_elements({_T}, {_d}, {_b})\", _chamar(\"tiled_elements\", tiled_elements, _T, _d, _b), 2 * _T * _d + 2 * _T * _d * _nq)\n"
        "assert isinstance(tiled_elements(100, 8, 32), int), \"tiled_elements: devolva um int do Python\"\n"
        "### END HIDDEN TESTS",
        grade_id="test_trafego",
        points=3,
    )

    # ---------------------------------------------------------------- tarefa 2
    nb.md(
        "## Tarefa 2 — FLOPs e intensidade aritmética (2 pontos)\n\n"
        "* `attention_flops(T, d)`: $2T^2 d$ para $QK^\\top$ (uma multiplicação e uma soma por termo), "
        "$2T^2 d$ para $PV$ e $5T^2$ para a softmax (máximo, subtração, exponencial, soma, divisão);\n"
        "* `intensity(flops, elements, bytes_per_element)`: FLOPs por byte movido (um `float`).",
        grade_id="tarefa2_enunciado",
    )
    nb.solution(
        "def attention_flops(T, d):\n"
        "    ### BEGIN SOLUTION\n"
        "    return T * T * (4 * d + 5)  # 2T²d + 2T²d + 5T²\n"
        "    ### END SOLUTION\n"
        "\n"
        "\n"
        "def intensity(flops, elements, bytes_per_element):\n"
        "    ### BEGIN SOLUTION\n"
        "    return flops / (elements * bytes_per_element)\n"
        "    ### END SOLUTION",
        grade_id="intensidade",
    )
    nb.tests(
        "\"\"\"attention_flops e intensity seguem as definições.\"\"\"\n"
        "conferir(\"attention_flops(2, 1)\", attention_flops(2, 1), 4 * 4 * 1 + 5 * 4)\n"
        "conferir(\"intensity(100, 10, 2)\", intensity(100, 10, 2), 5.0)\n"
        "print(\"Tarefa 2: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_q, _k = torch.randn(33, 7, dtype=torch.float64), torch.randn(33, 7, dtype=torch.float64)\n"
        "# conta direta: cada pontuação é um produto escalar de d termos (d multiplicações + d somas)\n"
        "conferir(\"attention_flops(33, 7)\", _chamar(\"attention_flops\", attention_flops, 33, 7), 2 * (33 * 33 * 2 * 7) + 5 * 33 * 33)\n"
        "conferir(\"attention_flops(1, 1)\", attention_flops(1, 1), 9)\n"
        "_I = _chamar(\"intensity\", intensity, attention_flops(1024, 64), 4 * 1024**2 + 4 * 1024 * 64, 2)\n"
        "conferir(\"intensity da atenção ingênua, T=1024, d=64, bf16\", _I, (4 * 1024**2 * 64 + 5 * 1024**2) / (2 * (4 * 1024**2 + 4 * 1024 * 64)))\n"
        "# para T muito maior que d, a intensidade da ingênua tende a d / bytes\n"
        "conferir(\"intensity da ingênua com T=262144, d=64, bf16 (perto de d/2 = 32)\",\n"
        "         intensity(attention_flops(262_144, 64), 4 * 262_144**2 + 4 * 262_144 * 64, 2), 32.0, atol=0.7)\n"
        "### END HIDDEN TESTS",
        grade_id="test_intensidade",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 3
    nb.md(
        "## Tarefa 3 — o roofline (2 pontos)\n\n"
        "* `attainable(I, peak_flops, bandwidth)`: $\\min(\\pi, I \\beta)$; deve funcionar com um número "
        "**ou** com um array NumPy de intensidades (`np.minimum` resolve os dois);\n"
        "* `memory_bound(I, peak_flops, bandwidth)`: `True` quando $I$ está abaixo da virada "
        "$\\pi / \\beta$.",
        grade_id="tarefa3_enunciado",
    )
    nb.solution(
        "def attainable(I, peak_flops, bandwidth):\n"
        "    ### BEGIN SOLUTION\n"
        "    return np.minimum(peak_flops, np.asarray(I) * bandwidth)\n"
        "    ### END SOLUTION\n"
        "\n"
        "\n"
        "def memory_bound(I, peak_flops, bandwidth):\n"
        "    ### BEGIN SOLUTION\n"
        "    return bool(I < peak_flops / bandwidth)\n"
        "    ### END SOLUTION",
        grade_id="roofline",
    )
    nb.tests(
        "\"\"\"attainable e memory_bound seguem min(pi, I * beta).\"\"\"\n"
        "pi, beta = 1000e12, 3e12   # uma GPU imaginária: virada em 333,3 FLOP/byte\n"
        "conferir(\"attainable(10, pi, beta)\", _numero(\"attainable(10, pi, beta)\", attainable(10, pi, beta)), 30e12)\n"
        "conferir(\"attainable(1000, pi, beta)\", _numero(\"attainable(1000, pi, beta)\", attainable(1000, pi, beta)), 1000e12)\n"
        "assert memory_bound(30, pi, beta) is True and memory_bound(500, pi, beta) is False, \\\n"
        "    f\"memory_bound: esperava True para I=30 e False para I=500, veio {memory_bound(30, pi, beta)} e {memory_bound(500, pi, beta)}\"\n"
        "print(\"Tarefa 3: testes visíveis passaram.\")\n"
        "### BEGIN HIDDEN TESTS\n"
        "_I = np.logspace(-1, 4, 50)\n"
        "_r = _chamar(\"attainable com um array NumPy\", attainable, _I, 2e12, 0.1e12)\n"
        "assert _r is not None, \"attainable: sua função devolveu None. Faltou um `return`?\"\n"
        "conferir(\"attainable com um array de 50 intensidades\", np.asarray(_r, dtype=float), np.where(_I * 0.1e12 < 2e12, _I * 0.1e12, 2e12))\n"
        "conferir(\"attainable exatamente na virada\", float(attainable(20.0, 2e12, 0.1e12)), 2e12)\n"
        "assert memory_bound(19.9, 2e12, 0.1e12) and not memory_bound(20.1, 2e12, 0.1e12), \"memory_bound: erro perto da virada 20\"\n"
        "### END HIDDEN TESTS",
        grade_id="test_roofline",
        points=2,
    )

    # ---------------------------------------------------------------- tarefa 4
    nb.written(
        "## Tarefa 4 — pergunta aberta (2 pontos)\n\n"
        "Usando as suas funções: por que a atenção ingênua é limitada pela memória numa GPU atual, e "
        "por que aumentar o contexto $T$ não muda isso? O que a versão em blocos muda, e o que ela "
        "**não** muda (pense nos FLOPs)?",
        "A intensidade da ingênua é $(4T^2d + 5T^2)/(b(4T^2 + 4Td))$, que tende a $d/b$ (32 FLOP/byte "
        "com $d = 64$ em bf16) quando $T$ cresce: numerador e denominador são ambos quadráticos em $T$, "
        "então contexto maior não ajuda. Isso fica bem abaixo da virada de uma GPU atual (centenas de "
        "FLOP/byte): o processador espera a matriz $T\\times T$ ir e voltar da HBM. A versão em blocos "
        "não escreve $S$ nem $P$ na HBM; seu tráfego é $2Td(1 + \\lceil T/B_r\\rceil)$ e a intensidade "
        "cresce com o tamanho do bloco. Os FLOPs continuam os mesmos ($\\approx 4T^2d$): o trabalho "
        "segue quadrático, só o tráfego cai.",
        grade_id="resposta_memoria",
        points=2,
    )
    nb.entrega()
    return nb


# Resposta plausível e errada (usada nos testes): contar S e P uma vez só,
# esquecendo que cada matriz T x T é escrita E lida de volta.
ERRADO = {
    "trafego": (
        "def naive_elements(T, d):\n"
        "    return 2 * T * T + 4 * T * d\n"
        "\n"
        "\n"
        "def tiled_elements(T, d, block):\n"
        "    return 2 * T * d + 2 * T * d * (-(-T // block))\n"
    ),
}
