"""Cap. 4: respostas plantadas e justas (o formato está em __init__.py).

As tarefas 1 a 3 são a conta escrita à mão (a softmax estável, o log-sum-exp, a jacobiana): a
regra é a lista de operações permitidas (`_conta_a_mao`, em autograder/authoring/rules.py), conferida já nos
testes visíveis. A tarefa 4 usa a softmax da tarefa 1: o que ela usa fora da lista fica na conta
da tarefa 1 (um erro custa uma tarefa só).
"""

from answers import Fair, Planted


# Sem pacotes na turma do corretor: as plantadas do logsumexp (dobra de logaddexp, último
# elemento do logcumsumexp) ganharam pontos quando outra plantada do mesmo pacote trocava
# outra célula (medido em 2026-12-05, make test); cada resposta deste caderno vai sozinha.
PACK = False

PLANTED = [
    # ---- tarefa 1: a estabilização feita por uma biblioteca
    Planted(
        why="softmax pelo logcumsumexp (o torch faz o deslocamento pelo máximo)",
        cells={"softmax": (
            "def softmax(x, dim=-1):\n"
            "    y = x.double()\n"
            "    return torch.exp(y - torch.logcumsumexp(y, dim).narrow(dim, y.shape[dim] - 1, 1)).to(x.dtype)\n")},
        zero=("test_softmax",),
    ),
    Planted(
        why="softmax por uma dobra de torch.logaddexp sobre as posições",
        cells={"softmax": (
            "def softmax(x, dim=-1):\n"
            "    xs = x.double().movedim(dim, -1)\n"
            "    acc = xs[..., 0]\n"
            "    for j in range(1, xs.shape[-1]):\n"
            "        acc = torch.logaddexp(acc, xs[..., j])\n"
            "    return torch.exp(xs - acc[..., None]).movedim(-1, dim).to(x.dtype)\n")},
        zero=("test_softmax",),
    ),
    Planted(
        why="torch.softmax em float64 e de volta ao tipo de x (as tarefas 3 e 4 a usam e não perdem pontos)",
        cells={"softmax": (
            "def softmax(x, dim=-1):\n"
            "    return torch.softmax(x.double(), dim).to(x.dtype)\n")},
        zero=("test_softmax",),
    ),
    Planted(
        why="exp do log_softmax pronto",
        cells={"softmax": "def softmax(x, dim=-1):\n    return torch.log_softmax(x, dim).exp()\n"},
        zero=("test_softmax",),
    ),
    # ---- tarefa 2
    Planted(
        why="logsumexp pelo último elemento do logcumsumexp",
        cells={"logsumexp": (
            "def logsumexp(x, dim=-1):\n"
            "    return torch.logcumsumexp(x, dim).select(dim, -1)\n")},
        zero=("test_logsumexp",),
    ),
    Planted(
        why="logsumexp por uma dobra de torch.logaddexp",
        cells={"logsumexp": (
            "def logsumexp(x, dim=-1):\n"
            "    acc = x.select(dim, 0)\n"
            "    for j in range(1, x.shape[dim]):\n"
            "        acc = torch.logaddexp(acc, x.select(dim, j))\n"
            "    return acc\n")},
        zero=("test_logsumexp",),
    ),
    Planted(
        why="logsumexp do NumPy (np.logaddexp.reduce) e de volta ao torch",
        cells={"logsumexp": (
            "import numpy as np\n\n"
            "def logsumexp(x, dim=-1):\n"
            "    r = np.logaddexp.reduce(x.detach().numpy(), axis=dim)\n"
            "    return torch.as_tensor(r, dtype=x.dtype).clone()\n")},
        zero=("test_logsumexp",),
    ),
    Planted(
        why="torch.logsumexp pronto",
        cells={"logsumexp": "def logsumexp(x, dim=-1):\n    return torch.logsumexp(x, dim)\n"},
        zero=("test_logsumexp",),
    ),
    # ---- tarefa 3: a jacobiana pela derivada pronta
    Planted(
        why="a jacobiana pelo oráculo dos testes (torch.autograd.functional.jacobian, linha a linha)",
        cells={"jacobiano_softmax": (
            "def jacobiano_softmax(z):\n"
            "    linhas = z.reshape(-1, z.shape[-1])\n"
            "    js = [torch.autograd.functional.jacobian(lambda t: softmax(t, -1), l) for l in linhas]\n"
            "    return torch.stack(js).reshape(*z.shape, z.shape[-1])\n")},
        zero=("test_jacobiano_softmax",),
    ),
    Planted(
        why="a jacobiana por torch.func.vmap(torch.func.jacrev(softmax))",
        cells={"jacobiano_softmax": (
            "def jacobiano_softmax(z):\n"
            "    linhas = z.reshape(-1, z.shape[-1])\n"
            "    J = torch.func.vmap(torch.func.jacrev(lambda t: softmax(t, dim=-1)))(linhas)\n"
            "    return J.reshape(*z.shape, z.shape[-1])\n")},
        zero=("test_jacobiano_softmax",),
    ),
    Planted(
        why="a jacobiana pelo modo direto (torch.func.jacfwd), que não passa pelo backward",
        cells={"jacobiano_softmax": (
            "def jacobiano_softmax(z):\n"
            "    linhas = z.reshape(-1, z.shape[-1])\n"
            "    J = torch.func.vmap(torch.func.jacfwd(lambda t: softmax(t, dim=-1)))(linhas)\n"
            "    return J.reshape(*z.shape, z.shape[-1])\n")},
        zero=("test_jacobiano_softmax",),
    ),
    # ---- tarefa 4
    Planted(
        why="pesos com torch.softmax no lugar da sua softmax",
        cells={"pesos_de_atencao": (
            "def pesos_de_atencao(q, k):\n"
            "    T, d = q.shape[-2], q.shape[-1]\n"
            "    s = q @ k.transpose(-2, -1) / math.sqrt(d)\n"
            "    futuro = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)\n"
            "    return torch.softmax(s.masked_fill(futuro, float('-inf')), dim=-1)\n")},
        zero=("test_pesos_de_atencao",),
    ),
    Planted(
        why="pesos pela SDPA com V = identidade (a atenção pronta devolve os próprios pesos)",
        cells={"pesos_de_atencao": (
            "import torch.nn.functional as F\n\n"
            "def pesos_de_atencao(q, k):\n"
            "    T = q.shape[-2]\n"
            "    eye = torch.eye(T, dtype=q.dtype).expand(*q.shape[:-2], T, T)\n"
            "    return F.scaled_dot_product_attention(q, k, eye, is_causal=True)\n")},
        zero=("test_pesos_de_atencao",),
    ),
]

FAIR = [
    Fair(
        why="max(...).values com a conta em float64 e um print; logsumexp com masked_fill; jacobiana por "
            "laço duplo; pesos por einsum e torch.where",
        cells={
            "softmax": (
                "def softmax(x, dim=-1):\n"
                "    x64 = x.to(torch.float64)\n"
                "    m = x64.max(dim=dim, keepdim=True).values\n"
                "    e = torch.exp(x64 - m)\n"
                "    print('softmax de', tuple(x.shape), x.dtype)\n"
                "    return (e / e.sum(dim=dim, keepdim=True)).to(x.dtype)\n"),
            "logsumexp": (
                "def logsumexp(x, dim=-1):\n"
                "    m = x.amax(dim=dim, keepdim=True)\n"
                "    m = m.masked_fill(m == float('-inf'), 0.0)\n"
                "    s = torch.exp(x - m).sum(dim=dim, keepdim=True)\n"
                "    return (m + torch.log(s)).squeeze(dim)\n"),
            "jacobiano_softmax": (
                "def jacobiano_softmax(z):\n"
                "    p = softmax(z)\n"
                "    m = z.shape[-1]\n"
                "    J = torch.zeros(*z.shape, m, dtype=z.dtype)\n"
                "    for a in range(m):\n"
                "        for b in range(m):\n"
                "            J[..., a, b] = p[..., a] * ((1.0 if a == b else 0.0) - p[..., b])\n"
                "    return J\n"),
            "pesos_de_atencao": (
                "def pesos_de_atencao(q, k):\n"
                "    T = q.shape[-2]\n"
                "    s = torch.einsum('...id,...jd->...ij', q, k) * q.shape[-1] ** -0.5\n"
                "    pode = torch.tril(torch.ones(T, T, dtype=torch.bool))\n"
                "    s = torch.where(pode, s, torch.tensor(float('-inf'), dtype=s.dtype))\n"
                "    return softmax(s, dim=-1)\n"),
        },
    ),
    Fair(
        why="operações no lugar (exp_, div_) com guarda nan_to_num; logsumexp em float64 com torch.where; "
            "jacobiana por eye e produto externo; máscara por arange",
        cells={
            "softmax": (
                "def softmax(x, dim=-1):\n"
                "    m = torch.nan_to_num(x.amax(dim, keepdim=True), neginf=0.0)\n"
                "    y = x - m\n"
                "    y.exp_()\n"
                "    y.div_(y.sum(dim, keepdim=True))\n"
                "    return y\n"),
            "logsumexp": (
                "def logsumexp(x, dim=-1):\n"
                "    x64 = x.double()\n"
                "    c = x64.amax(dim)\n"
                "    c = torch.where(torch.isinf(c) & (c < 0), torch.zeros_like(c), c)\n"
                "    r = c + torch.exp(x64 - c.unsqueeze(dim)).sum(dim).log()\n"
                "    return r.to(x.dtype)\n"),
            "jacobiano_softmax": (
                "def jacobiano_softmax(z):\n"
                "    p = softmax(z, dim=-1)\n"
                "    eye = torch.eye(z.shape[-1], dtype=z.dtype)\n"
                "    return p.unsqueeze(-1) * (eye - p.unsqueeze(-2))\n"),
            "pesos_de_atencao": (
                "def pesos_de_atencao(q, k):\n"
                "    T, d = q.shape[-2], q.shape[-1]\n"
                "    s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)\n"
                "    futuro = torch.arange(T)[None, :] > torch.arange(T)[:, None]\n"
                "    return softmax(s.masked_fill(futuro, -math.inf))\n"),
        },
    ),
    Fair(
        why="softmax linha a linha num laço (com a dimensão levada para o fim) e máscara explícita da linha "
            "toda -inf; logsumexp pela sua softmax; jacobiana por einsum com diag_embed",
        cells={
            "softmax": (
                "def _linha(r):\n"
                "    if bool(torch.isneginf(r).all()):\n"
                "        return torch.full_like(r, float('nan'))\n"
                "    e = torch.exp(r - r.max())\n"
                "    return e / e.sum()\n\n"
                "def softmax(x, dim=-1):\n"
                "    xs = x.movedim(dim, -1)\n"
                "    linhas = xs.reshape(-1, xs.shape[-1])\n"
                "    out = torch.stack([_linha(r) for r in linhas]) if linhas.shape[0] else linhas.clone()\n"
                "    return out.reshape(xs.shape).movedim(-1, dim)\n"),
            "logsumexp": (
                "def logsumexp(x, dim=-1):\n"
                "    # p do máximo = exp(m - LSE), então LSE = m - log(p do máximo)\n"
                "    m = x.amax(dim=dim)\n"
                "    p_max = softmax(x, dim=dim).amax(dim=dim)\n"
                "    return torch.where(torch.isneginf(m), m, m - torch.log(p_max))\n"),
            "jacobiano_softmax": (
                "def jacobiano_softmax(z):\n"
                "    p = softmax(z, -1)\n"
                "    return torch.diag_embed(p) - torch.einsum('...a,...b->...ab', p, p)\n"),
        },
    ),
]
