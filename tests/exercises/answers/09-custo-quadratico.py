"""Cap. 9: respostas plantadas e justas (o formato está em __init__.py)."""

from answers import Fair, Planted

_TILED = (
    "def tiled_elements(T, d, block):\n"
    "    return 2 * T * d + 2 * T * d * (-(-T // block))\n")
_NAIVE = (
    "def naive_elements(T, d):\n"
    "    return 4 * T * T + 4 * T * d\n\n\n")
_FLOPS = (
    "def attention_flops(T, d):\n"
    "    return T * T * (4 * d + 5)\n\n\n")
_INTENSITY = (
    "def intensity(flops, elements, bytes_per_element):\n"
    "    return flops / (elements * bytes_per_element)\n")
_ATTAINABLE = (
    "def attainable(I, peak_flops, bandwidth):\n"
    "    return np.minimum(peak_flops, np.asarray(I) * bandwidth)\n\n\n")
_MEMORY_BOUND = (
    "def memory_bound(I, peak_flops, bandwidth):\n"
    "    return bool(I < peak_flops / bandwidth)\n")

PLANTED = [
    # tarefa 1
    Planted(
        why="a ingênua com S e P lidos ou escritos uma vez só (2T² em vez de 4T²)",
        cells={"trafego": "def naive_elements(T, d):\n    return 2 * T * T + 4 * T * d\n\n\n" + _TILED},
        zero=("test_trafego",),
    ),
    Planted(
        why="blocos de consultas por T // block (o último bloco, incompleto, fica de fora)",
        cells={"trafego": _NAIVE + (
            "def tiled_elements(T, d, block):\n"
            "    return 2 * T * d + 2 * T * d * (T // block)\n")},
        zero=("test_trafego",),
    ),
    Planted(
        why="a contagem em float (T ** 2 * 4.0): perde a exatidão em contextos enormes e não é int",
        cells={"trafego": (
            "def naive_elements(T, d):\n"
            "    return 4.0 * T ** 2 + 4.0 * T * d\n\n\n"
            "def tiled_elements(T, d, block):\n"
            "    return 2.0 * T * d * (1 + T / block)\n")},
        zero=("test_trafego",),
    ),
    Planted(
        why="a versão em blocos sem ler Q e escrever O (só K e V relidos)",
        cells={"trafego": _NAIVE + (
            "def tiled_elements(T, d, block):\n"
            "    return 2 * T * d * (-(-T // block))\n")},
        zero=("test_trafego",),
    ),
    # tarefa 2
    Planted(
        why="os FLOPs medidos com o FlopCounterMode do torch numa atenção de verdade (só conta os matmuls)",
        cells={"intensidade": (
            "from torch.utils.flop_counter import FlopCounterMode\n\n\n"
            "def attention_flops(T, d):\n"
            "    q, k, v = torch.zeros(T, d), torch.zeros(T, d), torch.zeros(T, d)\n"
            "    with FlopCounterMode(display=False) as contador:\n"
            "        torch.softmax(q @ k.T, dim=-1) @ v\n"
            "    return contador.get_total_flops()\n\n\n" + _INTENSITY)},
        zero=("test_intensidade",),
    ),
    Planted(
        why="uma operação por termo do produto escalar (T²d em vez de 2T²d) e sem a softmax",
        cells={"intensidade": "def attention_flops(T, d):\n    return 2 * T * T * d\n\n\n" + _INTENSITY},
        zero=("test_intensidade",),
    ),
    Planted(
        why="a intensidade por elemento, esquecendo os bytes por elemento",
        cells={"intensidade": _FLOPS + (
            "def intensity(flops, elements, bytes_per_element):\n"
            "    return flops / elements\n")},
        zero=("test_intensidade",),
    ),
    # tarefa 3
    Planted(
        why="attainable com o min do Python: funciona com um número, não com um array",
        cells={"roofline": (
            "def attainable(I, peak_flops, bandwidth):\n"
            "    return min(peak_flops, I * bandwidth)\n\n\n" + _MEMORY_BOUND)},
        zero=("test_roofline",),
    ),
    Planted(
        why="memory_bound com <=: na virada exata ainda diz que é limitada pela memória",
        cells={"roofline": _ATTAINABLE + (
            "def memory_bound(I, peak_flops, bandwidth):\n"
            "    return bool(I <= peak_flops / bandwidth)\n")},
        zero=("test_roofline",),
    ),
    Planted(
        why="attainable sem o teto: só I * beta",
        cells={"roofline": (
            "def attainable(I, peak_flops, bandwidth):\n"
            "    return np.asarray(I) * bandwidth\n\n\n" + _MEMORY_BOUND)},
        zero=("test_roofline",),
    ),
]

FAIR = [
    Fair(
        why="math.ceil e contagem passo a passo com prints; FLOPs somados termo a termo; np.where e "
            "memory_bound pela própria attainable (np.bool_)",
        cells={
            "trafego": (
                "import math\n\n\n"
                "def naive_elements(T, d):\n"
                "    passo1 = 2 * T * d + T * T\n"
                "    passo2 = 2 * T * T\n"
                "    passo3 = T * T + 2 * T * d\n"
                "    print('passos:', passo1, passo2, passo3)\n"
                "    return passo1 + passo2 + passo3\n\n\n"
                "def tiled_elements(T, d, block):\n"
                "    blocos = math.ceil(T / block)\n"
                "    return T * d + T * d + blocos * (T * d + T * d)\n"),
            "intensidade": (
                "def attention_flops(T, d):\n"
                "    qk = 2 * T * T * d\n"
                "    pv = 2 * T * T * d\n"
                "    softmax = 5 * T * T\n"
                "    return qk + pv + softmax\n\n\n"
                "def intensity(flops, elements, bytes_per_element):\n"
                "    movidos = elements * bytes_per_element\n"
                "    return float(flops) / movidos\n"),
            "roofline": (
                "def attainable(I, peak_flops, bandwidth):\n"
                "    I = np.asarray(I, dtype=float)\n"
                "    return np.where(I * bandwidth < peak_flops, I * bandwidth, peak_flops)\n\n\n"
                "def memory_bound(I, peak_flops, bandwidth):\n"
                "    return attainable(I, peak_flops, bandwidth) < peak_flops\n"),
        },
    ),
    Fair(
        why="blocos contados num laço; np.minimum(I * bw, peak) com np.clip; memory_bound por I * beta < pi",
        cells={
            "trafego": (
                "def naive_elements(T, d):\n"
                "    total = 0\n"
                "    for lidos_ou_escritos in (T * d, T * d, T * T, T * T, T * T, T * T, T * d, T * d):\n"
                "        total += lidos_ou_escritos\n"
                "    return total\n\n\n"
                "def tiled_elements(T, d, block):\n"
                "    n_blocos, inicio = 0, 0\n"
                "    while inicio < T:\n"
                "        n_blocos += 1\n"
                "        inicio += block\n"
                "    return 2 * T * d * (n_blocos + 1)\n"),
            "intensidade": (
                "def attention_flops(T, d):\n"
                "    return (4 * d + 5) * T ** 2\n\n\n"
                "def intensity(flops, elements, bytes_per_element):\n"
                "    return flops / elements / bytes_per_element\n"),
            "roofline": (
                "def attainable(I, peak_flops, bandwidth):\n"
                "    return np.clip(np.minimum(np.multiply(I, bandwidth), peak_flops), 0, None)\n\n\n"
                "def memory_bound(I, peak_flops, bandwidth):\n"
                "    return I * bandwidth < peak_flops\n"),
        },
    ),
]
