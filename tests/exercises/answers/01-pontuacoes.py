"""Cap. 1: respostas plantadas e justas (o formato está em __init__.py)."""

from answers import Fair, Planted

_DIFUSAO = "    return (Q.reshape(n, 1, d) * K.reshape(1, m, d)).sum(-1)\n"

PLANTED = [
    Planted(
        why="um laço de enfeite com um produto indexado, e a conta feita por difusão (reshape e soma)",
        cells={"scores_loops": (
            "def scores_loops(Q, K):\n"
            "    n, d = Q.shape\n"
            "    m = K.shape[0]\n"
            "    for i in range(1):\n"
            "        for t in range(1):\n"
            "            _ = Q[i, t] * K[i, t]\n"
            + _DIFUSAO)},
        zero=("test_scores_loops",),
    ),
    Planted(
        why="um laço só sobre as linhas de Q (Q[i] contra K inteira) e um produto indexado de enfeite",
        cells={"scores_loops": (
            "def scores_loops(Q, K):\n"
            "    S = np.zeros((Q.shape[0], K.shape[0]))\n"
            "    for i in range(Q.shape[0]):\n"
            "        _ = Q[i, 0] * K[i % K.shape[0], 0]\n"
            "        S[i] = (Q[i].reshape(1, -1) * K).sum(-1)\n"
            "    return S\n")},
        zero=("test_scores_loops",),
    ),
    Planted(
        why="o produto pronto do torch depois de um laço que faz um produto por linha",
        cells={"scores_loops": (
            "def scores_loops(Q, K):\n"
            "    for i in range(Q.shape[0]):\n"
            "        _ = Q[i, 0] * K[0, 0]\n"
            "    f = torch.as_tensor\n"
            "    return torch.mm(f(Q), f(K).T).numpy()\n")},
        zero=("test_scores_loops",),
    ),
    Planted(
        why="errada: = no lugar de += (fica só o último termo da soma)",
        cells={"scores_loops": (
            "def scores_loops(Q, K):\n"
            "    S = np.zeros((Q.shape[0], K.shape[0]))\n"
            "    for i in range(Q.shape[0]):\n"
            "        for j in range(K.shape[0]):\n"
            "            for t in range(Q.shape[1]):\n"
            "                S[i, j] = Q[i, t] * K[j, t]\n"
            "    return S\n")},
        zero=("test_scores_loops",),
    ),
    Planted(
        why="laço sobre o lote, por recursão numa compreensão (o enunciado pede sem laços)",
        cells={"scores": (
            "def scores(q, k):\n"
            "    if q.ndim > 2:\n"
            "        partes = [scores(q[b], k[b]) for b in range(q.shape[0])]\n"
            "        return torch.stack(partes) if isinstance(q, torch.Tensor) else np.stack(partes)\n"
            "    return q @ k.T\n")},
        zero=("test_scores_vetorizado",),
    ),
    Planted(
        why="laço sobre as posições de q (uma linha de S por vez), com map",
        cells={"scores": (
            "def _linha(kt):\n"
            "    return lambda qi: qi[..., None, :] @ kt\n\n"
            "def scores(q, k):\n"
            "    kt = k.swapaxes(-2, -1)\n"
            "    linhas = list(map(_linha(kt), (q[..., i, :] for i in range(q.shape[-2]))))\n"
            "    junta = torch.cat if isinstance(q, torch.Tensor) else np.concatenate\n"
            "    return junta(linhas, -2)\n")},
        zero=("test_scores_vetorizado",),
    ),
    Planted(
        why="errada: troca q e k (S = K Qᵀ, a transposta)",
        cells={"scores": (
            "def scores(q, k):\n"
            "    if isinstance(q, torch.Tensor):\n"
            "        return k @ q.transpose(-2, -1)\n"
            "    return k @ np.swapaxes(q, -2, -1)\n")},
        zero=("test_scores_vetorizado",),
    ),
    Planted(
        why="errada: .T do torch/NumPy inverte todas as dimensões (quebra com lote e cabeças)",
        cells={"scores": (
            "def scores(q, k):\n"
            "    return q @ k.T\n")},
        zero=("test_scores_vetorizado",),
    ),
    Planted(
        why="errada: sem a checagem, q (n, d) e k (d, m) passam pelo q @ kᵀ com d = m",
        cells={"scores_checked": (
            "def scores_checked(q, k):\n"
            "    return scores(q, k)\n")},
        zero=("test_scores_checked",),
    ),
    Planted(
        why="errada: confere a forma inteira, não a última dimensão (recusa n diferente de m)",
        cells={"scores_checked": (
            "def scores_checked(q, k):\n"
            "    if q.shape != k.shape:\n"
            "        raise ValueError(f'formas {tuple(q.shape)} e {tuple(k.shape)}')\n"
            "    return scores(q, k)\n")},
        zero=("test_scores_checked",),
    ),
    Planted(
        why="errada: esquece o lote (batch)",
        cells={"custo": (
            "def count_scores(T, n_heads, n_layers, batch=1):\n"
            "    return n_layers * n_heads * T * T\n\n\n"
            "def scores_bytes(T, bytes_per_element):\n"
            "    return T * T * bytes_per_element\n")},
        zero=("test_custo",),
    ),
    Planted(
        why="errada: devolve float (T ** 2.0), não int",
        cells={"custo": (
            "def count_scores(T, n_heads, n_layers, batch=1):\n"
            "    return batch * n_layers * n_heads * T ** 2.0\n\n\n"
            "def scores_bytes(T, bytes_per_element):\n"
            "    return T ** 2.0 * bytes_per_element\n")},
        zero=("test_custo",),
    ),
]

FAIR = [
    Fair(
        why="laços em torch (convertendo a entrada), soma por gerador, prints; scores com einsum; custo com math.prod",
        cells={
            "scores_loops": (
                "def scores_loops(Q, K):\n"
                "    Qt, Kt = torch.from_numpy(Q), torch.from_numpy(K)\n"
                "    n, m, d = Qt.shape[0], Kt.shape[0], Qt.shape[1]\n"
                "    print('laços em torch', n, m, d)\n"
                "    S = torch.zeros(n, m, dtype=torch.float64)\n"
                "    for i in range(n):\n"
                "        for j in range(m):\n"
                "            S[i, j] = sum(Qt[i, t] * Kt[j, t] for t in range(d))\n"
                "    return S.numpy()\n"),
            "scores": (
                "def scores(q, k):\n"
                "    if isinstance(q, np.ndarray):\n"
                "        return np.einsum('...nd,...md->...nm', q, k)\n"
                "    return torch.einsum('...nd,...md->...nm', q, k)\n"),
            "custo": (
                "def count_scores(T, n_heads, n_layers, batch=1):\n"
                "    return math.prod((batch, n_layers, n_heads, T, T))\n\n\n"
                "def scores_bytes(T, bytes_per_element):\n"
                "    return T ** 2 * bytes_per_element\n"),
        },
    ),
    Fair(
        why="produto de linhas Q[i] * K[j] somado, numa compreensão de lista; scores_checked com torch.Size",
        cells={
            "scores_loops": (
                "def scores_loops(Q, K):\n"
                "    linhas = [[float((Q[i] * K[j]).sum()) for j in range(K.shape[0])] for i in range(Q.shape[0])]\n"
                "    return np.array(linhas).reshape(Q.shape[0], K.shape[0])\n"),
            "scores_checked": (
                "def scores_checked(q, k):\n"
                "    d_q, d_k = q.shape[-1], k.shape[-1]\n"
                "    if d_q != d_k:\n"
                "        raise ValueError(f'd diferente: q tem forma {q.shape} e k tem forma {k.shape}')\n"
                "    return scores(q, k)\n"),
        },
    ),
    Fair(
        why="laço com a linha de Q guardada e uma função auxiliar que acumula a[t] * b[t]; scores com np.matmul/torch.matmul e .mT",
        cells={
            "scores_loops": (
                "def _linha_vezes_linha(a, b):\n"
                "    total = 0.0\n"
                "    for t in range(len(a)):\n"
                "        total += a[t] * b[t]\n"
                "    return total\n\n\n"
                "def scores_loops(Q, K):\n"
                "    S = np.empty((len(Q), len(K)))\n"
                "    for i in range(len(Q)):\n"
                "        qi = Q[i]\n"
                "        for j in range(len(K)):\n"
                "            S[i][j] = _linha_vezes_linha(qi, K[j])\n"
                "    return S\n"),
            "scores": (
                "def scores(q, k):\n"
                "    kt = k.swapaxes(-2, -1) if isinstance(k, np.ndarray) else k.mT\n"
                "    return np.matmul(q, kt) if isinstance(q, np.ndarray) else torch.matmul(q, kt)\n"),
            "scores_checked": (
                "def scores_checked(q, k):\n"
                "    if q.shape[-1] == k.shape[-1]:\n"
                "        return scores(q, k)\n"
                "    raise ValueError('q' + str(list(q.shape)) + ' e k' + str(list(k.shape)) + ' com d diferentes')\n"),
            "custo": (
                "def count_scores(T, n_heads, n_layers, batch=1):\n"
                "    total = 1\n"
                "    for fator in (batch, n_layers, n_heads, T, T):\n"
                "        total *= int(fator)\n"
                "    return total\n\n\n"
                "def scores_bytes(T, bytes_per_element):\n"
                "    return int(T) ** 2 * int(bytes_per_element)\n"),
        },
    ),
]
