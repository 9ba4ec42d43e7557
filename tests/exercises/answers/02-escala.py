"""Cap. 2: respostas plantadas e justas (o formato está em __init__.py)."""

from answers import Fair, Planted

PLANTED = [
    Planted(
        why="escreve a variância em vez de sortear: um par de escalares por amostra, vezes sqrt(d_k)",
        cells={"produtos_aleatorios": (
            "def produtos_aleatorios(d_k, n, gerador):\n"
            "    x = torch.randn(n, generator=gerador, dtype=torch.float64)\n"
            "    y = torch.randn(n, generator=gerador, dtype=torch.float64)\n"
            "    return x * y * math.sqrt(d_k)\n")},
        zero=("test_produtos_aleatorios",),
    ),
    Planted(
        why="uma normal de desvio sqrt(d_k): média e variância certas, forma errada",
        cells={"produtos_aleatorios": (
            "def produtos_aleatorios(d_k, n, gerador):\n"
            "    return torch.randn(n, generator=gerador, dtype=torch.float64) * math.sqrt(d_k)\n")},
        zero=("test_produtos_aleatorios",),
    ),
    Planted(
        why="soma só dois produtos e corrige a escala: variância certa, curtose 6 em todo d_k",
        cells={"produtos_aleatorios": (
            "def produtos_aleatorios(d_k, n, gerador):\n"
            "    q = torch.randn(n, 2, generator=gerador, dtype=torch.float64)\n"
            "    k = torch.randn(n, 2, generator=gerador, dtype=torch.float64)\n"
            "    return (q * k).sum(-1) * math.sqrt(d_k / 2)\n")},
        zero=("test_produtos_aleatorios",),
    ),
    Planted(
        why="errada: esquece de normalizar (fica a tarefa 1)",
        cells={"produtos_unitarios": (
            "def produtos_unitarios(d, n, gerador):\n"
            "    u = torch.randn(n, d, generator=gerador, dtype=torch.float64)\n"
            "    v = torch.randn(n, d, generator=gerador, dtype=torch.float64)\n"
            "    return (u * v).sum(-1)\n")},
        zero=("test_produtos_unitarios",),
    ),
    Planted(
        why="errada: divide pela norma do tensor inteiro, não de cada vetor",
        cells={"produtos_unitarios": (
            "def produtos_unitarios(d, n, gerador):\n"
            "    u = torch.randn(n, d, generator=gerador, dtype=torch.float64)\n"
            "    v = torch.randn(n, d, generator=gerador, dtype=torch.float64)\n"
            "    return (u / u.norm() * v / v.norm()).sum(-1)\n")},
        zero=("test_produtos_unitarios",),
    ),
    Planted(
        why="errada: divide no lugar (altera a entrada)",
        cells={"escalar": (
            "def escalar(s, d_k):\n"
            "    if not isinstance(d_k, int) or d_k < 1:\n"
            "        raise ValueError(f'd_k inválido: {d_k!r}')\n"
            "    return s.div_(math.sqrt(d_k))\n")},
        zero=("test_escalar",),
    ),
    Planted(
        why="errada: aceita d_k = 2,5 (só recusa d_k < 1)",
        cells={"escalar": (
            "def escalar(s, d_k):\n"
            "    if d_k < 1:\n"
            "        raise ValueError(f'd_k inválido: {d_k!r}')\n"
            "    return s / math.sqrt(d_k)\n")},
        zero=("test_escalar",),
    ),
    Planted(
        why="torch.special.entr (o oráculo dos testes) faz o 0 log 0 = 0 pelo aluno",
        cells={"entropia": (
            "def entropia(p):\n"
            "    return torch.special.entr(p).sum(-1)\n")},
        zero=("test_entropia",),
    ),
    Planted(
        why="torch.xlogy faz o 0 log 0 = 0 pelo aluno",
        cells={"entropia": (
            "def entropia(p):\n"
            "    return -torch.xlogy(p, p).sum(dim=-1)\n")},
        zero=("test_entropia",),
    ),
    Planted(
        why="errada: sem o cuidado, 0 * log(0) dá NaN",
        cells={"entropia": (
            "def entropia(p):\n"
            "    return -(p * torch.log(p)).sum(-1)\n")},
        zero=("test_entropia",),
    ),
]

FAIR = [
    Fair(
        why="einsum e prints; F.normalize; multiplicação por d_k ** -0.5; torch.where com escalar",
        cells={
            "produtos_aleatorios": (
                "def produtos_aleatorios(d_k, n, gerador):\n"
                "    q = torch.randn(n, d_k, generator=gerador, dtype=torch.float64)\n"
                "    k = torch.randn(n, d_k, generator=gerador, dtype=torch.float64)\n"
                "    print('sorteados', tuple(q.shape))\n"
                "    return torch.einsum('nd,nd->n', q, k)\n"),
            "produtos_unitarios": (
                "import torch.nn.functional as F\n\n"
                "def produtos_unitarios(d, n, gerador):\n"
                "    u = F.normalize(torch.randn(n, d, generator=gerador, dtype=torch.float64), dim=-1)\n"
                "    v = F.normalize(torch.randn(n, d, generator=gerador, dtype=torch.float64), dim=-1)\n"
                "    return (u * v).sum(-1)\n"),
            "escalar": (
                "def escalar(s, d_k):\n"
                "    if type(d_k) is not int or d_k <= 0:\n"
                "        raise ValueError(f'd_k tem de ser um inteiro positivo; veio {d_k!r}')\n"
                "    return s * d_k ** -0.5\n"),
            "entropia": (
                "def entropia(p):\n"
                "    termos = torch.where(p > 0, -p * torch.log(p), 0.0)\n"
                "    return termos.sum(dim=-1)\n"),
        },
    ),
    Fair(
        why="um laço sobre as componentes acumulando q_t k_t; norma à mão; clamp no log; nansum",
        cells={
            "produtos_aleatorios": (
                "def produtos_aleatorios(d_k, n, gerador):\n"
                "    total = torch.zeros(n, dtype=torch.float64)\n"
                "    for _ in range(d_k):\n"
                "        qt = torch.randn(n, generator=gerador, dtype=torch.float64)\n"
                "        kt = torch.randn(n, generator=gerador, dtype=torch.float64)\n"
                "        total += qt * kt\n"
                "    return total\n"),
            "produtos_unitarios": (
                "def produtos_unitarios(d, n, gerador):\n"
                "    u = torch.randn(n, d, generator=gerador, dtype=torch.float64)\n"
                "    v = torch.randn(n, d, generator=gerador, dtype=torch.float64)\n"
                "    return (u * v).sum(-1) / torch.sqrt((u * u).sum(-1) * (v * v).sum(-1))\n"),
            "entropia": (
                "def entropia(p):\n"
                "    return -(p * torch.log(p)).nansum(-1)\n"),
        },
    ),
    Fair(
        why="entropia com masked_fill e float32 interno; escalar com numbers.Integral",
        cells={
            "escalar": (
                "import numbers\n\n"
                "def escalar(s, d_k):\n"
                "    if isinstance(d_k, bool) or not isinstance(d_k, numbers.Integral) or d_k < 1:\n"
                "        raise ValueError(f'd_k deve ser inteiro positivo, veio {d_k!r}')\n"
                "    return torch.div(s, math.sqrt(d_k))\n"),
            "entropia": (
                "def entropia(p):\n"
                "    x = p.float() if p.dtype == torch.float16 else p\n"
                "    log_p = torch.log(x).masked_fill(x == 0, 0.0)\n"
                "    return (-(x * log_p).sum(-1)).to(p.dtype)\n"),
        },
    ),
]
