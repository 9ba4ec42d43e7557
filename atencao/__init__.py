"""atencao: o código de referência do curso "Atenção causal, do produto escalar ao kernel".

Cada capítulo do livro importa daqui o que um capítulo anterior já construiu;
os testes em tests/ conferem cada peça com o torch e com fórmulas fechadas.

Os nomes abaixo vêm do submódulo que os define na primeira vez que alguém os usa
(`at.attention`, `from atencao import rope`): assim `import atencao.fmt`, o formatador
de números que o corretor também usa, não carrega o torch.
"""

from importlib import import_module as _import_module

# nome público -> submódulo que o define
_WHERE = {
    **dict.fromkeys(["scores", "scale", "causal_mask", "softmax", "attention"], "core"),
    **dict.fromkeys(["online_softmax", "SoftmaxState", "merge", "count_blocks", "tiled_attention",
                     "FlashAttentionFunction"], "flash"),
    **dict.fromkeys(["MultiHeadAttention", "RMSNorm", "rope", "SwiGLU", "Block", "TinyConfig", "TinyModel",
                     "Tracer", "KVCache"], "model"),
}

__all__ = list(_WHERE)


def __getattr__(name):
    if name == "masks":
        return _import_module(".masks", __name__)
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_WHERE) | {"masks"})
