"""Cap. 5: respostas plantadas e justas (o formato está em __init__.py)."""

from answers import Fair, Planted

PLANTED = [
    Planted(
        why="o SDPA do torch (o oráculo dos testes) no lugar da atenção",
        cells={"atencao_causal": (
            "import torch.nn.functional as F\n\n"
            "def atencao_causal(q, k, v, start=0):\n"
            "    if q.shape[-1] != k.shape[-1]:\n"
            "        raise ValueError('d')\n"
            "    n, m = q.shape[-2], k.shape[-2]\n"
            "    pode = ~torch.triu(torch.ones(n, m, dtype=torch.bool), diagonal=start + 1)\n"
            "    return F.scaled_dot_product_attention(q, k, v, attn_mask=pode)\n")},
        zero=("test_atencao_causal",),
    ),
]

FAIR = [
    Fair(
        why="einsum em float64 com prints, máscara por torch.where",
        cells={
            "misturar": (
                "def misturar(pesos, v):\n"
                "    if pesos.shape[-1] != v.shape[-2]:\n"
                "        raise ValueError(f'formas {tuple(pesos.shape)} e {tuple(v.shape)}')\n"
                "    print('misturando', tuple(pesos.shape))\n"
                "    return torch.einsum('...nm,...md->...nd', pesos.double(), v.double()).to(v.dtype)\n"),
        },
    ),
]
