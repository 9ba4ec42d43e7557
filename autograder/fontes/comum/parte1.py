import math

import numpy as np
import torch
import matplotlib.pyplot as plt


def _perto(nome, obtido, alvo, tol):
    """Um número estatístico: `obtido` deve estar a menos de `tol` de `alvo`."""
    if not abs(float(obtido) - alvo) <= tol:
        raise AssertionError(f"{nome}: esperava {alvo:.4g} ± {tol:.2g}, veio {float(obtido):.4g}.")
