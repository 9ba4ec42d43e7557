"""Trechos comuns aos exercícios dos capítulos 6 e 7 (não é um notebook).

`IMPORTS` vai na célula de preparação, antes de `conferir.py`: os imports do
aluno e verificações curtas usadas pelos testes, para que uma resposta em
branco (None, NotImplementedError) ou do tipo errado dê uma mensagem em
português dizendo em qual caso falhou, em vez de um traceback no meio do teste.
"""

IMPORTS = '''\
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
'''

# Oráculo da RoPE para testes ocultos: o par (x[2i], x[2i+1]) visto como um
# número complexo, multiplicado por e^{i * pos * theta_i}. Independente de
# qualquer implementação com seno e cosseno.
ROPE_ORACLE = '''\
def _rope_complexa(x, start=0, base=10000.0):
    x64 = x.to(torch.float64)
    T, d = x64.shape[-2], x64.shape[-1]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)       # (d/2,)
    pos = torch.arange(start, start + T, dtype=torch.float64)               # (T,)
    giro = torch.polar(torch.ones(T, d // 2, dtype=torch.float64), pos[:, None] * theta)
    z = torch.view_as_complex(x64.unflatten(-1, (-1, 2)).contiguous())     # (..., T, d/2)
    return torch.view_as_real(z * giro).flatten(-2)                         # (..., T, d)
'''
