"""Medidas sobre produtos escalares e sobre a softmax (capítulos 2 a 5).

Este módulo não faz parte do mecanismo: são os instrumentos com que o livro
o examina. Como em `core.py`, cada função aceita NumPy ou torch e devolve o
mesmo tipo que recebeu; as dimensões iniciais são livres.

    random_dot_products  produtos q·k de vetores aleatórios (cap. 2)
    naive_softmax        softmax SEM subtrair o máximo: só para mostrar o overflow (cap. 4)
    logsumexp            log sum_j exp(x_j), estável (cap. 4)
    entropy              entropia de cada linha de probabilidades, em nats (cap. 2)
    softmax_jacobian     matriz jacobiana da softmax, diag(p) - p p^T (cap. 2 e 4)

Os testes em tests/atencao/test_analysis.py conferem cada uma com o torch
(torch.logsumexp, torch.special.entr, torch.autograd) ou com fórmulas fechadas.
"""

from __future__ import annotations

import numpy as np
import torch

from .core import _is_torch, softmax

__all__ = ["random_dot_products", "naive_softmax", "logsumexp", "entropy", "softmax_jacobian"]


def random_dot_products(d: int, n: int, rng: np.random.Generator, unit: bool = False) -> np.ndarray:
    """n produtos escalares q·k, q e k independentes com d componentes N(0, 1).

    Componentes independentes de média 0 e variância 1 dão Var(q·k) = d. Com
    unit=True, q e k são antes normalizados para norma 1 (direções uniformes na
    esfera): aí E[(q·k)^2] = 1/d, e o produto ENCOLHE como 1/sqrt(d).
    Devolve um vetor (n,) em float64.
    """
    for name, val in (("d", d), ("n", n)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
            raise ValueError(f"{name} deve ser um inteiro positivo, veio {val!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng deve ser um np.random.Generator, veio {type(rng).__name__}")
    q = rng.standard_normal((n, d))  # (n, d)
    k = rng.standard_normal((n, d))  # (n, d)
    if unit:
        q /= np.linalg.norm(q, axis=-1, keepdims=True)
        k /= np.linalg.norm(k, axis=-1, keepdims=True)
    return np.einsum("nd,nd->n", q, k)  # (n,)


def naive_softmax(x, axis: int = -1):
    """exp(x) / soma(exp(x)) SEM subtrair o máximo. Estoura (inf/inf = NaN)
    quando algum x passa de log(maior número do tipo): ~88,7 em float32, ~11,1
    em float16. Existe só para o livro mostrar o problema; use core.softmax."""
    if _is_torch(x):
        e = torch.exp(x)
        return e / e.sum(dim=axis, keepdim=True)
    with np.errstate(over="ignore", invalid="ignore"):  # o estouro é o que queremos mostrar
        e = np.exp(x)
        return e / np.sum(e, axis=axis, keepdims=True)


def logsumexp(x, axis: int = -1):
    """log(sum_j exp(x_j)) ao longo de `axis`, estável: m + log(sum exp(x - m)).

    Uma linha toda -inf dá -inf (log de uma soma vazia), como torch.logsumexp.
    """
    if _is_torch(x):
        m = x.amax(dim=axis, keepdim=True)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # linha toda -inf: desloca por 0
        out = m + torch.log(torch.exp(x - m).sum(dim=axis, keepdim=True))
        return out.squeeze(axis)
    x = np.asarray(x)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):  # log(0) = -inf para a linha toda mascarada
        out = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.squeeze(out, axis=axis)


def entropy(p, axis: int = -1):
    """Entropia -sum_j p_j log p_j de cada distribuição, em nats, com 0 log 0 = 0.

    Vai de 0 (toda a massa numa chave) a log m (uniforme sobre m chaves).
    """
    if _is_torch(p):
        return torch.special.entr(p).sum(dim=axis)
    p = np.asarray(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return terms.sum(axis=axis)


def softmax_jacobian(z):
    """Jacobiana da softmax: J[..., a, b] = d p_a / d z_b = p_a (δ_ab - p_b).

    z: (..., m)  ->  (..., m, m). Simétrica; cada linha soma 0 (somar uma
    constante a z não muda p). Perto de one-hot (softmax saturada), J -> 0.
    """
    p = softmax(z, axis=-1)  # (..., m)
    if _is_torch(p):
        return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # (..., m, m)
    eye = np.eye(p.shape[-1], dtype=p.dtype)
    return p[..., :, None] * eye - p[..., :, None] * p[..., None, :]  # (..., m, m)
