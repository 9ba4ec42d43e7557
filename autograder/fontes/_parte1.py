"""Trechos comuns aos exercícios dos capítulos 2 a 5 (não é um notebook).

`IMPORTS` vai na célula de preparação de cada notebook, antes de `conferir.py`:
os imports do aluno e quatro verificações curtas usadas pelos testes, para que
uma resposta em branco (None), do tipo errado ou que quebra num caso extremo dê uma mensagem em português
em vez de um AttributeError no meio do teste.
"""

IMPORTS = '''\
import math

import numpy as np
import torch
import matplotlib.pyplot as plt


def _tensor(nome, x):
    """Antes de usar a resposta: ela existe e é um torch.Tensor?"""
    if x is None:
        raise AssertionError(f"{nome}: sua função devolveu None. Faltou um `return`?")
    if not isinstance(x, torch.Tensor):
        raise AssertionError(f"{nome}: esperava um torch.Tensor, veio {type(x).__name__}.")
    return x


def _forma(nome, x, forma):
    """A resposta é um torch.Tensor com a forma esperada?"""
    _tensor(nome, x)
    if tuple(x.shape) != tuple(forma):
        raise AssertionError(f"{nome}: forma errada. Esperava {tuple(forma)}, veio {tuple(x.shape)}.")


def _tipo(nome, x, dtype):
    """O tipo dos elementos (float16, float32, bool...) é o esperado?"""
    _tensor(nome, x)
    if x.dtype != dtype:
        raise AssertionError(f"{nome}: esperava elementos {dtype}, vieram {x.dtype}.")


def _chamar(nome, f, *args, **kwargs):
    """Chama a função do aluno; um erro inesperado vira uma falha que diz em qual caso foi."""
    try:
        return f(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - mostramos o que veio
        raise AssertionError(f"{nome}: sua função levantou {type(e).__name__}: {e}") from None


def _perto(nome, obtido, alvo, tol):
    """Um número estatístico: `obtido` deve estar a menos de `tol` de `alvo`."""
    if not abs(float(obtido) - alvo) <= tol:
        raise AssertionError(f"{nome}: esperava {alvo:.4g} ± {tol:.2g}, veio {float(obtido):.4g}.")
'''
