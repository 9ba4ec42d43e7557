import math

import numpy as np
import torch
import torch.nn.functional as F
import matplotlib.pyplot as plt

inf = float("inf")


def _tupla(nome, x, n):
    """A resposta é uma tupla (ou lista) com n elementos?"""
    if x is None:
        raise AssertionError(f"{nome}: sua função devolveu None. Faltou um `return`?")
    if not isinstance(x, (tuple, list)) or len(x) != n:
        raise AssertionError(f"{nome}: esperava uma tupla com {n} elementos, veio {type(x).__name__} {x!r:.80}.")
    return x


def _numero(nome, x):
    """A resposta é um número (ou array de um elemento)? Devolve-a como float."""
    if x is None:
        raise AssertionError(f"{nome}: sua função devolveu None. Faltou um `return`?")
    try:
        return float(x)
    except (TypeError, ValueError):
        raise AssertionError(f"{nome}: esperava um número, veio {type(x).__name__}.") from None


def _atencao_ingenua(q, k, v, causal):
    """Oráculo (diferenciável): softmax(máscara(q kᵀ / sqrt(d))) v e o log-sum-exp de cada linha."""
    T, m = q.shape[-2], k.shape[-2]
    s = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5  # (..., T, m)
    if causal:
        futuro = torch.arange(m)[None, :] > torch.arange(T)[:, None]  # (T, m), True = proibido
        s = s.masked_fill(futuro, -inf)
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s, dim=-1)
