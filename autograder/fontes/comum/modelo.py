import math

import numpy as np
import torch
import torch.nn.functional as F
import matplotlib.pyplot as plt

torch.manual_seed(0)


def _sem_laco(nome, f):
    """A função não usa `for`/`while` (todas as cabeças numa chamada só)."""
    import ast
    arvore = ast.parse(_fonte(f).strip())   # _fonte (conferir.py): o texto da célula, não do kernel
    if any(isinstance(n, (ast.For, ast.While, ast.comprehension)) for n in ast.walk(arvore)):
        raise AssertionError(f"{nome}: não use laços (for/while/compreensões); trate todas as cabeças "
                             "de uma vez com reshape, transpose e @.")
