"""O mecanismo de atenção causal, peça por peça (Parte I do livro).

Cada função aceita NumPy ou torch e devolve o mesmo tipo que recebeu
(NumPy entra, NumPy sai; torch entra, torch sai). As dimensões iniciais
(lote, cabeças) são livres: só as duas últimas têm significado.

Letras usadas nos comentários de forma, as mesmas em todo o pacote:
    B  lote (batch)         H  cabeças (heads)
    n  consultas (queries)  m  chaves (keys) -- com cache, m = start + n
    d  dimensão de q e k (d_k)   dv  dimensão de v

Referência: Vaswani et al. (2017), "Attention Is All You Need", eq. (1):
    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

__all__ = ["scores", "scale", "causal_mask", "softmax", "attention"]

Array = Any  # np.ndarray ou torch.Tensor


# --------------------------------------------------------------------------
# Verificações de entrada: toda entrada ruim vira um erro claro, em português.
# --------------------------------------------------------------------------

def _is_torch(x) -> bool:
    if isinstance(x, torch.Tensor):
        return True
    if isinstance(x, np.ndarray):
        return False
    raise TypeError(
        f"esperava um np.ndarray ou torch.Tensor, veio {type(x).__name__}"
    )


def _same_kind(*named):
    """Garante que todas as entradas são do mesmo tipo (todas NumPy ou todas torch)."""
    kinds = {name: _is_torch(x) for name, x in named}
    if len(set(kinds.values())) > 1:
        desc = ", ".join(
            f"{n}={'torch' if t else 'NumPy'}" for n, t in kinds.items()
        )
        raise TypeError(f"misture não: use só NumPy ou só torch ({desc})")
    return next(iter(kinds.values()))


def _need_ndim(x, name: str, at_least: int, shape_hint: str):
    if x.ndim < at_least:
        raise ValueError(
            f"{name} deve ter forma {shape_hint} (pelo menos {at_least} "
            f"dimensões), veio {tuple(x.shape)}"
        )


def _broadcast_lead(shapes: dict[str, tuple]) -> None:
    """As dimensões iniciais (lote, cabeças) precisam ser compatíveis (broadcast)."""
    try:
        np.broadcast_shapes(*shapes.values())
    except ValueError:
        desc = ", ".join(f"{k}{tuple(v)}" for k, v in shapes.items())
        raise ValueError(
            "as dimensões iniciais (lote, cabeças) não são compatíveis: "
            f"{desc}"
        ) from None


# --------------------------------------------------------------------------
# As peças do mecanismo
# --------------------------------------------------------------------------

def scores(q: Array, k: Array) -> Array:
    """Pontuações S = Q K^T: S[..., i, j] = q_i · k_j.

    q: (..., n, d), k: (..., m, d)  ->  (..., n, m)
    """
    is_t = _same_kind(("q", q), ("k", k))
    _need_ndim(q, "q", 2, "(..., n, d)")
    _need_ndim(k, "k", 2, "(..., m, d)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            "q e k precisam da mesma última dimensão d: "
            f"q{tuple(q.shape)} (..., n, d) e k{tuple(k.shape)} (..., m, d)"
        )
    _broadcast_lead({"q": tuple(q.shape[:-2]), "k": tuple(k.shape[:-2])})
    kt = k.transpose(-2, -1) if is_t else np.swapaxes(k, -2, -1)  # (..., d, m)
    return q @ kt  # (..., n, m)


def scale(s: Array, d_k: int) -> Array:
    """Divide as pontuações por sqrt(d_k) (temperatura fixa)."""
    _is_torch(s)
    if isinstance(d_k, bool) or not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k deve ser um inteiro positivo, veio {d_k!r}")
    return s / math.sqrt(int(d_k))


def causal_mask(n: int, m: int | None = None, start: int = 0) -> np.ndarray:
    """Máscara causal booleana (n, m): True onde a posição é PROIBIDA.

    A consulta i ocupa a posição absoluta start + i e pode ver as chaves
    j <= start + i. Sem cache, start = 0 e m = n (triângulo inferior
    permitido). Com cache de m chaves e n consultas novas, start = m - n.
    """
    for name, val in (("n", n), ("start", start)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 0:
            raise ValueError(f"{name} deve ser um inteiro >= 0, veio {val!r}")
    if m is None:
        m = start + n
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 0:
        raise ValueError(f"m deve ser um inteiro >= 0, veio {m!r}")
    i = np.arange(n)[:, None]  # (n, 1)
    j = np.arange(m)[None, :]  # (1, m)
    return j > start + i  # (n, m)


def softmax(x: Array, axis: int = -1) -> Array:
    """Softmax estável: subtrai o máximo de cada linha antes da exponencial.

    Uma linha toda -inf (tudo mascarado) dá NaN, como torch.softmax:
    não há distribuição sobre um conjunto vazio, e o NaN torna o erro visível.
    """
    if _is_torch(x):
        m = x.amax(dim=axis, keepdim=True)
        e = torch.exp(x - m)
        return e / e.sum(dim=axis, keepdim=True)
    x = np.asarray(x)
    with np.errstate(invalid="ignore"):  # -inf - (-inf) = NaN: desejado, ver acima
        m = np.max(x, axis=axis, keepdims=True)
        e = np.exp(x - m)
        return e / np.sum(e, axis=axis, keepdims=True)


def attention(
    q: Array,
    k: Array,
    v: Array,
    causal: bool = True,
    start: int = 0,
    return_weights: bool = False,
):
    """softmax(máscara(Q K^T / sqrt(d_k))) V.

    q: (..., n, d), k: (..., m, d), v: (..., m, dv)  ->  (..., n, dv)
    Com return_weights=True devolve (saída, pesos), pesos com forma (..., n, m).
    """
    is_t = _same_kind(("q", q), ("k", k), ("v", v))
    _need_ndim(v, "v", 2, "(..., m, dv)")
    s = scale(scores(q, k), q.shape[-1])  # (..., n, m)
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            "k e v precisam do mesmo número de posições m: "
            f"k{tuple(k.shape)} (..., m, d) e v{tuple(v.shape)} (..., m, dv)"
        )
    _broadcast_lead({"pontuações": tuple(s.shape[:-2]), "v": tuple(v.shape[:-2])})
    if causal:
        n, m = s.shape[-2], s.shape[-1]
        mask = causal_mask(n, m, start)  # (n, m), True = proibido
        if is_t:
            s = s.masked_fill(torch.from_numpy(mask).to(s.device), float("-inf"))
        else:
            s = np.where(mask, -np.inf, s)
    elif start != 0:
        raise ValueError("start só tem sentido com causal=True")
    w = softmax(s, axis=-1)  # (..., n, m)
    out = w @ v  # (..., n, dv)
    return (out, w) if return_weights else out
