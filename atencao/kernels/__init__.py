"""Capítulo 13: kernels de GPU em Triton.

Versões, da mais simples à mais completa (cada arquivo abre com o que
calcula, quantos bytes move, quantos FLOPs faz e o que mudou):

    naive_attention.cu  v0  atenção ingênua em CUDA C (uma thread por linha)
    softmax.py          v1  softmax por linha, fundida num só kernel
    flash_fwd.py        v2  FlashAttention, passo de ida (saída + LSE)
    flash_bwd.py        v3  passo de volta (dQ, dK, dV) e autograd
    decode.py           v4  decodificação sobre um KV cache, com GQA
    flash_window.py     v5  passo de ida com janela deslizante e ralos

Sem GPU, os kernels rodam no interpretador do Triton (TRITON_INTERPRET=1):
o mesmo código, executado em NumPy na CPU, lento (~5 ms por programa e por
bloco) e portanto só para tamanhos pequenos. Este módulo escolhe o modo
sozinho: se não há CUDA e o triton ainda não foi importado, define
TRITON_INTERPRET=1 antes de importá-lo. O modo escolhido fica em
`INTERPRETADO` e é dito uma vez, num aviso `ModoInterpretador`. Se o triton
já tiver sido importado sem a variável, é tarde (a biblioteca dele já foi
preparada para compilar): o aviso diz isso e cada chamada dá um erro claro.
"""

from __future__ import annotations

import os
import sys
import warnings

import torch


class ModoInterpretador(UserWarning):
    """Aviso (único) de que os kernels rodam no interpretador do Triton, na CPU."""


def _escolher_modo() -> bool:
    """Devolve True se os kernels vão rodar no interpretador."""
    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        return True  # quem chamou pediu o interpretador (ou já o escolhemos antes)
    if torch.cuda.is_available():
        return False  # GPU presente: kernels compilados de verdade
    if "triton" in sys.modules:
        # Tarde demais: as funções da biblioteca do triton (tl.max, tl.sum...)
        # já foram decoradas no modo compilado quando ele foi importado, e
        # definir a variável agora deixaria os kernels meio interpretados,
        # meio não (falham com "Cannot call @triton.jit'd outside of the scope
        # of a kernel"). Não mexemos em nada; cada chamada dará um erro claro.
        warnings.warn(
            "o triton foi importado antes de atencao.kernels, sem TRITON_INTERPRET=1, "
            "e não há GPU: os kernels não vão rodar. Reinicie o Python (ou o kernel do "
            "Jupyter) e importe atencao.kernels antes do triton, ou defina "
            "TRITON_INTERPRET=1 antes de importar o triton.",
            ModoInterpretador,
            stacklevel=3,
        )
        return False
    os.environ["TRITON_INTERPRET"] = "1"  # antes do primeiro import do triton
    return True


def _mostrar_aviso(message, category, filename, lineno, file=None, line=None):
    """Mostra o `ModoInterpretador` sem o arquivo e a linha de quem importou.

    O aviso é sobre a máquina, não sobre uma linha de código; no Jupyter, o
    "arquivo" de quem importou é o nome temporário da célula
    (``/tmp/ipykernel_1234/5678.py:1``), um caminho da máquina que não diz
    nada ao leitor. Os outros avisos seguem para o `showwarning` anterior.
    """
    if isinstance(category, type) and issubclass(category, ModoInterpretador):
        destino = sys.stderr if file is None else file
        if destino is not None:
            destino.write(f"{category.__name__}: {message}\n")
        return
    _mostrar_anterior(message, category, filename, lineno, file, line)


# Num reload do módulo, o anterior já é a nossa função: pegamos o original dela.
_mostrar_anterior = getattr(warnings.showwarning, "anterior", warnings.showwarning)
_mostrar_aviso.anterior = _mostrar_anterior
warnings.showwarning = _mostrar_aviso

INTERPRETADO: bool = _escolher_modo()

if INTERPRETADO:
    warnings.warn(
        "atencao.kernels: sem GPU CUDA, os kernels Triton rodam no interpretador "
        "(TRITON_INTERPRET=1), na CPU: a mesma lógica, em float32 e float16 (o tl.dot em bfloat16 "
        "dá resultados errados no interpretador), velocidade de NumPy. Use tamanhos pequenos.",
        ModoInterpretador,
        stacklevel=2,
    )

from .decode import decode_attention  # noqa: E402  (depois de escolher o modo)
from .flash_bwd import FlashAttentionFunction, flash_attention  # noqa: E402
from .flash_fwd import flash_attention_forward  # noqa: E402
from .flash_window import flash_attention_window  # noqa: E402
from .softmax import softmax  # noqa: E402

__all__ = [
    "INTERPRETADO",
    "ModoInterpretador",
    "softmax",
    "flash_attention",
    "flash_attention_forward",
    "flash_attention_window",
    "FlashAttentionFunction",
    "decode_attention",
]
