"""atencao: o código de referência do curso "Atenção causal, do produto escalar ao kernel".

Cada capítulo do livro importa daqui o que um capítulo anterior já construiu;
os testes em tests/ conferem cada peça com o torch e com fórmulas fechadas.
"""

from .core import attention, causal_mask, scale, scores, softmax
from . import masks
from .flash import FlashAttentionFunction, SoftmaxState, count_blocks, merge, online_softmax, tiled_attention
from .model import (
    Block, KVCache, MultiHeadAttention, RMSNorm, SwiGLU, TinyConfig, TinyModel, Tracer, rope,
)

__all__ = ["scores", "scale", "causal_mask", "softmax", "attention"]
__all__ += ["online_softmax", "SoftmaxState", "merge", "count_blocks", "tiled_attention", "FlashAttentionFunction"]
__all__ += ["MultiHeadAttention", "RMSNorm", "rope", "SwiGLU", "Block", "TinyConfig", "TinyModel",
            "Tracer", "KVCache"]
