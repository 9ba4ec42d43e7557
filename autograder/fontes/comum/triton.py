import math
import os

import numpy as np
import torch

NA_GPU = torch.cuda.is_available()
if not NA_GPU:
    # Sem GPU, o interpretador do Triton executa os kernels na CPU (com NumPy).
    # A variável precisa existir ANTES do primeiro `import triton`.
    os.environ["TRITON_INTERPRET"] = "1"

# Na GPU, tl.dot em float32 usaria TF32 (~3 dígitos) por padrão; "ieee" é float32 de
# verdade, o mesmo que o interpretador faz. Os kernels também pedem isso no próprio
# tl.dot (input_precision="ieee"); esta linha vale para quem esquecer.
os.environ.setdefault("TRITON_F32_DEFAULT", "ieee")

try:
    import triton
    import triton.language as tl
except ImportError as e:
    raise ImportError(
        "Não consegui importar o triton. O capítulo 13 precisa de Linux com uma GPU NVIDIA "
        "(ou do Google Colab com GPU), ou do interpretador do Triton num Linux sem GPU "
        "(pip install triton). No Windows e no macOS, use o Colab."
    ) from e

DEV = "cuda" if NA_GPU else "cpu"
# tl.dot em float32 com input_precision="ieee": na GPU e no interpretador, a mesma tolerância.
ATOL32 = 1e-5
torch.manual_seed(0)
print("Kernels rodando", "na GPU." if NA_GPU else "no interpretador do Triton (CPU): use tamanhos pequenos.")
