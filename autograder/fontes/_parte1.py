"""Trechos comuns aos exercícios dos capítulos 2 a 5 (não é um notebook).

`IMPORTS` vai na célula de preparação de cada notebook, antes de `conferir.py`:
os imports do aluno e uma verificação estatística. As verificações comuns a
todos os cadernos (_tensor, _forma, _tipo, _chamar) estão em autograder/conferir.py.
"""

IMPORTS = '''\
import math

import numpy as np
import torch
import matplotlib.pyplot as plt


def _perto(nome, obtido, alvo, tol):
    """Um número estatístico: `obtido` deve estar a menos de `tol` de `alvo`."""
    if not abs(float(obtido) - alvo) <= tol:
        raise AssertionError(f"{nome}: esperava {alvo:.4g} ± {tol:.2g}, veio {float(obtido):.4g}.")
'''
