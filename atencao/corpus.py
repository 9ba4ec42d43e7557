"""O corpus que o projeto gera: a tarefa de cópia (cap. 7).

Cada exemplo é uma lista de "palavras" sorteadas, um separador e a mesma
lista de novo:

    <s> bafo lume tira | bafo lume tira

Antes do separador nada é previsível (as palavras são sorteadas); depois
dele, cada token é exatamente o que veio L + 1 posições antes. Para acertar,
uma cabeça precisa olhar para trás a uma distância fixa ou achar a ocorrência
anterior do token atual e copiar o que veio depois dela (uma "cabeça de
indução"). Os dois padrões aparecem como diagonais nítidas nos pesos de
atenção, por isso a tarefa é boa para ler o que o modelo aprendeu.

Tudo é determinístico dado o `torch.Generator`; nada é baixado.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

__all__ = [
    "BOS", "SEP", "PAD", "FIRST_WORD", "IGNORE",
    "token_str", "decode", "copy_example", "copy_batch", "copy_accuracy", "train_copy",
]

BOS, SEP, PAD = 0, 1, 2  # início, separador, enchimento
FIRST_WORD = 3  # tokens FIRST_WORD .. vocab_size-1 são palavras
IGNORE = -100  # alvo ignorado por F.cross_entropy(ignore_index=-100)

_CONSONANTS = "bdfgjlmnprstvxz"  # 15
_VOWELS = "aeiou"  # 5
_SYLLABLES = [c + v for c in _CONSONANTS for v in _VOWELS]  # 75 sílabas
_SPECIAL = {BOS: "<s>", SEP: "|", PAD: "·"}


def token_str(t: int) -> str:
    """Texto de um token: especiais como <s>, | e ·; palavras com duas sílabas (75^2 = 5625 > 1024)."""
    t = int(t)
    if t < 0:
        raise ValueError(f"token deve ser >= 0, veio {t}")
    if t in _SPECIAL:
        return _SPECIAL[t]
    i = t - FIRST_WORD
    n = len(_SYLLABLES)
    if i >= n * n:
        raise ValueError(f"token {t} grande demais para virar palavra (máximo {FIRST_WORD + n * n - 1})")
    return _SYLLABLES[i // n] + _SYLLABLES[i % n]


def decode(ids) -> str:
    """Sequência de tokens (lista, array ou tensor 1-D) -> texto separado por espaços."""
    ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
    if ids and isinstance(ids[0], list):
        raise ValueError("decode espera uma sequência 1-D; para um lote, decodifique cada linha")
    return " ".join(token_str(t) for t in ids)


def _check(vocab_size: int, length: int, min_length: int | None):
    for name, val in (("vocab_size", vocab_size), ("length", length)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
            raise ValueError(f"{name} deve ser um inteiro >= 1, veio {val!r}")
    if vocab_size <= FIRST_WORD:
        raise ValueError(f"vocab_size deve ser > {FIRST_WORD} (há {FIRST_WORD} tokens especiais), veio {vocab_size}")
    lo = length if min_length is None else min_length
    if isinstance(lo, bool) or not isinstance(lo, (int, np.integer)) or not 1 <= lo <= length:
        raise ValueError(f"min_length deve estar entre 1 e length={length}, veio {min_length!r}")
    return int(lo)


def copy_example(words: torch.Tensor) -> torch.Tensor:
    """[<s>, w..., |, w...] para uma lista de palavras (L,) -> (2L + 2,)."""
    words = torch.as_tensor(words, dtype=torch.long)
    head = torch.tensor([BOS], dtype=torch.long)
    sep = torch.tensor([SEP], dtype=torch.long)
    return torch.cat([head, words, sep, words])


def copy_batch(batch_size: int, length: int, vocab_size: int = 1024,
               generator: torch.Generator | None = None, min_length: int | None = None):
    """Um lote da tarefa de cópia: (x, y), ambos (B, 2 * length + 1).

    Cada exemplo tem L palavras (L = length, ou sorteado em [min_length,
    length]) e é completado à direita com PAD até 2 * length + 2 tokens.
    x é a sequência sem o último token; y é a sequência deslocada de uma
    posição (o próximo token), com IGNORE onde não há o que prever: antes
    do separador (palavras sorteadas) e no enchimento. O alvo na posição do
    separador é a primeira palavra copiada.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size deve ser um inteiro >= 1, veio {batch_size!r}")
    lo = _check(vocab_size, length, min_length)
    B, T = int(batch_size), 2 * int(length) + 2
    words = torch.randint(FIRST_WORD, int(vocab_size), (B, length), generator=generator)  # (B, L)
    if lo == length:
        lengths = torch.full((B,), length)
    else:
        lengths = torch.randint(lo, length + 1, (B,), generator=generator)  # (B,)
    seq = torch.full((B, T), PAD, dtype=torch.long)  # (B, 2L + 2)
    target = torch.full((B, T), IGNORE, dtype=torch.long)
    for b in range(B):  # montagem: B pequeno, clareza acima de velocidade
        L = int(lengths[b])
        ex = copy_example(words[b, :L])  # (2L + 2,)
        seq[b, : ex.numel()] = ex
        target[b, L + 2: 2 * L + 2] = words[b, :L]  # a cópia é o que se prevê
    x = seq[:, :-1]  # (B, T - 1)
    y = target[:, 1:]  # (B, T - 1): y[t] é o token na posição t + 1
    return x, y


@torch.no_grad()
def copy_accuracy(model, batch_size: int, length: int, generator=None, min_length=None) -> float:
    """Fração das palavras copiadas corretamente (argmax) num lote novo."""
    x, y = copy_batch(batch_size, length, model.config.vocab_size, generator, min_length)
    was = model.training
    model.eval()
    pred = model(x).argmax(-1)  # (B, T - 1)
    model.train(was)
    keep = y != IGNORE
    return float((pred[keep] == y[keep]).float().mean())


def train_copy(model, steps: int = 200, batch_size: int = 32, length: int = 8, lr: float = 3e-3,
               generator: torch.Generator | None = None) -> list[float]:
    """Treina `model` na tarefa de cópia; devolve a perda de cada passo.

    AdamW com aquecimento e descida do passo (OneCycleLR); cada passo usa um
    lote novo. A perda é a entropia cruzada só nas posições da cópia.
    """
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    agenda = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    vocab = model.config.vocab_size
    model.train()
    perdas = []
    for _ in range(steps):
        x, y = copy_batch(batch_size, length, vocab, generator)  # (B, 2L + 1) cada
        logits = model(x)  # (B, 2L + 1, V)
        perda = F.cross_entropy(logits.flatten(0, 1), y.flatten(), ignore_index=IGNORE)
        opt.zero_grad()
        perda.backward()
        opt.step()
        agenda.step()
        perdas.append(perda.item())
    model.eval()
    return perdas
