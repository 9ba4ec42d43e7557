"""Trechos comuns aos exercícios dos capítulos 8 a 11 (não é um notebook).

`IMPORTS` vai na célula de preparação de cada notebook, antes de `conferir.py`:
os imports do aluno e verificações curtas usadas pelos testes, para que uma
resposta em branco, do tipo errado ou que forma a matriz T x T inteira dê uma
mensagem em português em vez de um erro obscuro no meio do teste.
"""

IMPORTS = '''\
import contextlib
import math

import numpy as np
import torch
import torch.nn.functional as F
import matplotlib.pyplot as plt
from torch.utils._python_dispatch import TorchDispatchMode

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


class _Vigia(TorchDispatchMode):
    """Observa cada operação do torch e guarda o maior tensor criado (nas duas últimas dimensões)."""

    def __init__(self):
        super().__init__()
        self.maior, self.forma = 0, None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        saida = func(*args, **(kwargs or {}))
        for t in saida if isinstance(saida, (tuple, list)) else (saida,):
            if isinstance(t, torch.Tensor) and t.dim() >= 2 and t.shape[-1] * t.shape[-2] > self.maior:
                self.maior, self.forma = t.shape[-1] * t.shape[-2], tuple(t.shape)
        return saida


def _sem_matriz_TxT(nome, T, f, *args, **kwargs):
    """Roda f e falha se algum tensor criado tiver T x T elementos nas duas últimas dimensões."""
    with _Vigia() as vigia:
        r = _chamar(nome, f, *args, **kwargs)
    if vigia.maior >= T * T:
        raise AssertionError(
            f"{nome}: sua função criou um tensor de forma {vigia.forma}, do tamanho da matriz "
            f"T x T inteira (T = {T}). A ideia é nunca formá-la: trabalhe bloco a bloco."
        )
    return r


@contextlib.contextmanager
def _sem_atalhos():
    """Durante o bloco, a atenção, a softmax e o autograd prontos do torch levantam erro."""
    def proibida(*a, **k):
        raise AssertionError(
            "use a sua própria conta: F.scaled_dot_product_attention, torch.softmax, "
            "torch.logsumexp e o autograd (backward, torch.autograd.grad) estão fora desta tarefa."
        )
    nomes = [(F, "scaled_dot_product_attention"), (torch, "softmax"), (F, "softmax"),
             (torch.Tensor, "softmax"), (torch, "logsumexp"), (torch.Tensor, "logsumexp"),
             (torch.Tensor, "backward"), (torch.autograd, "grad")]
    guardadas = [getattr(dono, nome) for dono, nome in nomes]
    for dono, nome in nomes:
        setattr(dono, nome, proibida)
    try:
        yield
    finally:
        for (dono, nome), f in zip(nomes, guardadas):
            setattr(dono, nome, f)


def _atencao_ingenua(q, k, v, causal):
    """Oráculo (diferenciável): softmax(máscara(q kᵀ / sqrt(d))) v e o log-sum-exp de cada linha."""
    T, m = q.shape[-2], k.shape[-2]
    s = torch.einsum("...id,...jd->...ij", q, k) * q.shape[-1] ** -0.5  # (..., T, m)
    if causal:
        futuro = torch.arange(m)[None, :] > torch.arange(T)[:, None]  # (T, m), True = proibido
        s = s.masked_fill(futuro, -inf)
    return torch.softmax(s, dim=-1) @ v, torch.logsumexp(s, dim=-1)
'''
