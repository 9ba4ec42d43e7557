"""Do mecanismo ao modelo: multi-cabeça, GQA, bloco transformer e KV cache (cap. 6-7, 12).

O que este arquivo promete:
- `MultiHeadAttention`: h cabeças de consulta e `n_kv_heads` cabeças de
  chave/valor (MHA quando iguais, MQA com 1, GQA entre os dois), todas as
  cabeças numa única chamada em lote, sem laço Python sobre cabeças.
- `RMSNorm`, `rope` (rotação de posições de Su et al. 2021), `SwiGLU`,
  `Block` (decodificador pré-norma) e `TinyModel` com a configuração
  `TinyConfig` ("tiny" do curso: d_model=128, 4 camadas, 4 cabeças de
  consulta, 2 de chave/valor, d_k=32, vocabulário 1024, sem viés).
- `KVCache`: chaves (já rotacionadas pela RoPE) e valores pré-alocados por
  camada; `TinyModel.generate` com cache dá exatamente os mesmos tokens que
  recalcular tudo a cada passo.
- `PagedKVCache`: o KV cache paginado do vLLM (Kwon et al. 2023): um só pool
  de blocos de tamanho fixo, uma lista de blocos livres e uma tabela de blocos
  por sequência; várias sequências de comprimentos diferentes dividem o pool,
  e `sequence(id)` dá a cada uma a mesma interface do `KVCache` (decodificar
  com ele dá exatamente os logits do `KVCache` contíguo). `generate_paged`
  decodifica várias sequências assim.
- `SinkKVCache`: guarda só os `n_sinks` primeiros tokens e a janela dos
  últimos (StreamingLLM, Xiao et al. 2023); decodificar com ele é igual à
  atenção completa sob a máscara `masks.with_sinks(n_sinks, w)`.
- `mask_mod` (de `atencao.masks`) em `MultiHeadAttention`, `Block` e
  `TinyModel.forward` troca a máscara causal por outra, nas posições absolutas.
- `Tracer`: fotografias nomeadas (attn.q, ..., attn.out) de uma camada e de
  uma cabeça, sem a dimensão de lote.

Letras dos comentários de forma (as mesmas de atencao/core.py):
    B  lote            T  posições novas desta chamada (= n)
    H  cabeças de consulta      Hkv  cabeças de chave/valor    G = H // Hkv
    m  chaves visíveis (com cache, m = start + T)
    D  d_model         d_k  dimensão por cabeça     F  largura do MLP
    V  vocabulário

Referências: Vaswani et al. (2017); Shazeer (2019, MQA); Ainslie et al.
(2023, GQA); Su et al. (2021, RoPE); Zhang & Sennrich (2019, RMSNorm);
Shazeer (2020, variantes GLU); Kwon et al. (2023, PagedAttention); Xiao et
al. (2023, StreamingLLM).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import masks as _masks
from .core import causal_mask

__all__ = [
    "MultiHeadAttention",
    "RMSNorm",
    "rope",
    "rope_angles",
    "apply_rope",
    "SwiGLU",
    "Block",
    "TinyConfig",
    "TinyModel",
    "KVCache",
    "PagedKVCache",
    "PoolExhaustedError",
    "SinkKVCache",
    "generate_paged",
    "Tracer",
    "SNAPSHOT_NAMES",
]


def _positive_int(name: str, val, minimum: int = 1) -> int:
    if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < minimum:
        raise ValueError(f"{name} deve ser um inteiro >= {minimum}, veio {val!r}")
    return int(val)


# --------------------------------------------------------------------------
# RoPE: rotação de pares de coordenadas por um ângulo proporcional à posição
# --------------------------------------------------------------------------

def rope_angles(T: int, d: int, start: int = 0, base: float = 10000.0,
                dtype=torch.float32, device=None):
    """cos e sin da RoPE para as posições start, ..., start + T - 1.

    O par de coordenadas (2i, 2i+1) gira pelo ângulo pos * base^(-2i/d).
    Devolve (cos, sin), cada um com forma (T, d/2). Os ângulos são
    calculados em float64 (posições grandes perdem precisão em float32) e só
    então convertidos para `dtype`.
    """
    T = _positive_int("T", T, minimum=0)
    d = _positive_int("d", d)
    start = _positive_int("start", start, minimum=0)
    if d % 2:
        raise ValueError(f"a RoPE gira pares de coordenadas: d deve ser par, veio d={d}")
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64, device=device) / d)  # (d/2,)
    pos = torch.arange(start, start + T, dtype=torch.float64, device=device)  # (T,)
    ang = pos[:, None] * inv_freq[None, :]  # (T, d/2)
    return ang.cos().to(dtype), ang.sin().to(dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Gira x (..., T, d) com cos e sin (T, d/2) de `rope_angles`."""
    pairs = x.unflatten(-1, (-1, 2))  # (..., T, d/2, 2)
    x0, x1 = pairs[..., 0], pairs[..., 1]  # (..., T, d/2) cada
    out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)  # (..., T, d/2, 2)
    return out.flatten(-2)  # (..., T, d)


def rope(x, start: int = 0, base: float = 10000.0):
    """Embedding posicional rotativo (RoPE) de x com forma (..., T, d), d par.

    A linha t de x está na posição absoluta start + t. Cada par (x[2i], x[2i+1])
    gira pelo ângulo (start + t) * base^(-2i/d): as normas não mudam, e o
    produto escalar entre uma consulta girada na posição p e uma chave girada
    na posição r só depende de p - r.

    NumPy entra, NumPy sai; torch entra, torch sai (mesmo dtype). Em float16 e
    bfloat16 a conta é feita em float32 e o resultado volta ao dtype original.
    """
    is_np = isinstance(x, np.ndarray)
    if not is_np and not isinstance(x, torch.Tensor):
        raise TypeError(f"rope espera um np.ndarray ou torch.Tensor, veio {type(x).__name__}")
    t = torch.from_numpy(x) if is_np else x
    if t.ndim < 2:
        raise ValueError(
            f"rope espera x com forma (..., T, d) (pelo menos 2 dimensões), veio {tuple(t.shape)}"
        )
    if not t.is_floating_point():
        raise TypeError(f"rope espera um tensor de ponto flutuante, veio dtype {t.dtype}")
    T, d = t.shape[-2], t.shape[-1]
    if d % 2:
        raise ValueError(
            f"a RoPE gira pares de coordenadas: a última dimensão deve ser par, "
            f"veio {tuple(t.shape)} (d={d})"
        )
    calc = torch.float64 if t.dtype == torch.float64 else torch.float32
    cos, sin = rope_angles(T, d, start, base, dtype=calc, device=t.device)
    out = apply_rope(t.to(calc), cos, sin).to(t.dtype)
    return out.numpy() if is_np else out


# --------------------------------------------------------------------------
# Normalização e MLP
# --------------------------------------------------------------------------

class RMSNorm(nn.Module):
    """y = x / sqrt(média(x^2) + eps) * peso (Zhang & Sennrich 2019).

    Sem subtrair a média e sem viés (ao contrário da LayerNorm). Em float16 e
    bfloat16 a média dos quadrados é feita em float32.
    """

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.d = _positive_int("d", d)
        self.eps = float(eps)
        self.weight = nn.Parameter(torch.ones(self.d))  # (D,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.d:
            raise ValueError(
                f"RMSNorm({self.d}) espera a última dimensão {self.d}, veio forma {tuple(x.shape)}"
            )
        xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        inv_rms = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)  # (..., 1)
        return (xf * inv_rms).to(x.dtype) * self.weight.to(x.dtype)

    def extra_repr(self) -> str:
        return f"{self.d}, eps={self.eps}"


class SwiGLU(nn.Module):
    """MLP com porta: W2( silu(W1 x) * (W3 x) ) (Shazeer 2020), sem viés.

    x: (..., D) -> (..., D), passando por uma largura oculta F.
    """

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        d_model, d_ff = _positive_int("d_model", d_model), _positive_int("d_ff", d_ff)
        self.w1 = nn.Linear(d_model, d_ff, bias=False)  # porta
        self.w3 = nn.Linear(d_model, d_ff, bias=False)  # valor
        self.w2 = nn.Linear(d_ff, d_model, bias=False)  # volta para D

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))  # (..., F) -> (..., D)


# --------------------------------------------------------------------------
# KV cache
# --------------------------------------------------------------------------

class KVCache:
    """Chaves e valores já calculados, pré-alocados por camada.

    Para cada camada l, `k[l]` e `v[l]` têm forma (B, Hkv, max_T, d_k) e são
    alocados uma vez só. As chaves entram JÁ GIRADAS pela RoPE (cada uma na
    sua posição absoluta), então nunca precisam ser recalculadas.

    Protocolo (o TinyModel segue sozinho): numa chamada com T posições novas,
    cada camada chama `update(l, k, v)`, que escreve nas posições
    [length, length + T) e devolve as visões [0, length + T); depois de todas
    as camadas, `advance(T)` move `length`. A máscara causal da chamada usa
    start = length (valor de antes da chamada).
    """

    def __init__(self, n_layers: int, batch: int, n_kv_heads: int, max_T: int, d_k: int,
                 dtype=torch.float32, device=None):
        self.n_layers = _positive_int("n_layers", n_layers)
        self.batch = _positive_int("batch", batch)
        self.n_kv_heads = _positive_int("n_kv_heads", n_kv_heads)
        self.max_T = _positive_int("max_T", max_T)
        self.d_k = _positive_int("d_k", d_k)
        shape = (self.batch, self.n_kv_heads, self.max_T, self.d_k)  # (B, Hkv, max_T, d_k)
        self.k = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(self.n_layers)]
        self.v = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(self.n_layers)]
        self.length = 0

    @classmethod
    def for_model(cls, model: "TinyModel", batch: int, max_T: int) -> "KVCache":
        """Um cache com as dimensões de `model` (camadas, cabeças KV, d_k, dtype)."""
        cfg = model.config
        p = next(model.parameters())
        return cls(cfg.n_layers, batch, cfg.n_kv_heads, max_T, cfg.d_k, dtype=p.dtype, device=p.device)

    @property
    def nbytes(self) -> int:
        """Bytes dos buffers pré-alocados: 2 x camadas x B x Hkv x max_T x d_k x bytes."""
        return 2 * sum(t.numel() * t.element_size() for t in self.k)

    def reset(self) -> None:
        """Esquece o conteúdo (os buffers continuam alocados)."""
        self.length = 0

    def check_room(self, T: int) -> None:
        """Erro claro se não cabem mais T posições."""
        if self.length + T > self.max_T:
            raise ValueError(
                f"KVCache cheio: já guarda {self.length} de {self.max_T} posições e a chamada "
                f"traz mais {T}. Crie o cache com max_T >= {self.length + T} ou chame reset()."
            )

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        """Escreve k, v (B, Hkv, T, d_k) em [length, length + T) da camada `layer`.

        Devolve (k_todas, v_todas), visões (B, Hkv, length + T, d_k) sem cópia.
        """
        if not 0 <= layer < self.n_layers:
            raise ValueError(f"camada {layer} fora do cache: escolha entre 0 e {self.n_layers - 1}")
        want = (self.batch, self.n_kv_heads, k.shape[-2], self.d_k)
        if tuple(k.shape) != want or tuple(v.shape) != want:
            raise ValueError(
                f"KVCache espera k e v com forma (B, Hkv, T, d_k) = {want}, "
                f"veio k{tuple(k.shape)} e v{tuple(v.shape)}"
            )
        T = k.shape[-2]
        self.check_room(T)
        s, e = self.length, self.length + T
        self.k[layer][:, :, s:e] = k
        self.v[layer][:, :, s:e] = v
        return self.k[layer][:, :, :e], self.v[layer][:, :, :e]  # (B, Hkv, m, d_k)

    def advance(self, T: int) -> None:
        """Declara escritas as T posições novas (depois de todas as camadas)."""
        self.check_room(T)
        self.length += T

    def __repr__(self) -> str:
        return (f"KVCache(camadas={self.n_layers}, B={self.batch}, Hkv={self.n_kv_heads}, "
                f"max_T={self.max_T}, d_k={self.d_k}, length={self.length})")


class PoolExhaustedError(RuntimeError):
    """O pool do `PagedKVCache` não tem blocos livres para o que se pediu."""


class PagedKVCache:
    """KV cache paginado (PagedAttention, Kwon et al. 2023): um pool de blocos
    de tamanho fixo dividido entre várias sequências.

    Memória: para cada camada l, `k[l]` e `v[l]` têm forma
    (n_blocks, Hkv, block_size, d_k), alocados uma vez só. O bloco físico b
    guarda `block_size` posições consecutivas de UMA sequência, nas mesmas
    linhas b de todas as camadas.

    Contabilidade:
      * `free_blocks`: a lista de blocos livres (uma pilha: o último liberado
        é o primeiro reusado);
      * `block_tables[s]`: a tabela de blocos da sequência s; a posição p dela
        mora no bloco físico `block_tables[s][p // block_size]`, na linha
        `p % block_size`;
      * `lengths[s]`: quantas posições da sequência já estão escritas.
    Uma sequência só ocupa ceil(comprimento / block_size) blocos: o
    desperdício é menor que um bloco por sequência, em vez de max_T - comprimento
    do cache contíguo reservado para o pior caso.

    Protocolo (o mesmo do `KVCache`, por sequência): `append(s, l, k, v)`
    escreve T posições novas em [lengths[s], lengths[s] + T) da camada l
    (pegando blocos da lista livre quando preciso) e devolve as chaves e os
    valores de todas as posições, reunidos pela tabela de blocos; depois de
    todas as camadas, `advance(s, T)`. `gather(s, l)` devolve as posições já
    escritas; `free(s)` devolve os blocos da sequência à lista livre.
    `sequence(s)` embrulha uma sequência na interface do `KVCache` (lote 1),
    para usar com `TinyModel(idx, cache=...)`.
    """

    def __init__(self, n_layers: int, n_kv_heads: int, d_k: int, n_blocks: int,
                 block_size: int = 16, dtype=torch.float32, device=None):
        self.n_layers = _positive_int("n_layers", n_layers)
        self.n_kv_heads = _positive_int("n_kv_heads", n_kv_heads)
        self.d_k = _positive_int("d_k", d_k)
        self.n_blocks = _positive_int("n_blocks", n_blocks)
        self.block_size = _positive_int("block_size", block_size)
        shape = (self.n_blocks, self.n_kv_heads, self.block_size, self.d_k)  # (nb, Hkv, bs, d_k)
        self.k = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(self.n_layers)]
        self.v = [torch.zeros(shape, dtype=dtype, device=device) for _ in range(self.n_layers)]
        self.free_blocks: list[int] = list(range(self.n_blocks - 1, -1, -1))  # pilha: 0 sai primeiro
        self.block_tables: dict[int, list[int]] = {}
        self.lengths: dict[int, int] = {}
        self._next_id = 0

    @classmethod
    def for_model(cls, model: "TinyModel", n_blocks: int, block_size: int = 16) -> "PagedKVCache":
        """Um pool com as dimensões de `model` (camadas, cabeças KV, d_k, dtype)."""
        cfg = model.config
        p = next(model.parameters())
        return cls(cfg.n_layers, cfg.n_kv_heads, cfg.d_k, n_blocks, block_size, dtype=p.dtype, device=p.device)

    @property
    def nbytes(self) -> int:
        """Bytes do pool: 2 x camadas x n_blocks x Hkv x block_size x d_k x bytes."""
        return 2 * sum(t.numel() * t.element_size() for t in self.k)

    @property
    def n_free(self) -> int:
        return len(self.free_blocks)

    def new_sequence(self) -> int:
        """Abre uma sequência vazia (sem bloco nenhum ainda) e devolve o seu número."""
        s = self._next_id
        self._next_id += 1
        self.block_tables[s], self.lengths[s] = [], 0
        return s

    def _check_seq(self, seq: int) -> None:
        if seq not in self.block_tables:
            raise KeyError(
                f"a sequência {seq!r} não existe neste pool (abertas: {sorted(self.block_tables)}); "
                "abra uma com new_sequence()"
            )

    def blocks_needed(self, n_positions: int) -> int:
        """Blocos para guardar n_positions posições: ceil(n / block_size)."""
        return -(-n_positions // self.block_size)

    def reserve(self, seq: int, T: int) -> None:
        """Garante blocos para mais T posições da sequência, tirando-os da lista livre.

        Tudo ou nada: se faltam blocos, nada é tirado e vem um PoolExhaustedError.
        """
        self._check_seq(seq)
        table = self.block_tables[seq]
        missing = self.blocks_needed(self.lengths[seq] + T) - len(table)
        if missing > len(self.free_blocks):
            uso = ", ".join(f"sequência {s}: {len(t)}" for s, t in self.block_tables.items() if t) or "nenhuma"
            raise PoolExhaustedError(
                f"o pool do PagedKVCache acabou: a sequência {seq} precisa de mais {missing} bloco(s) "
                f"de {self.block_size} posições para guardar {self.lengths[seq] + T} posições, mas só "
                f"{len(self.free_blocks)} de {self.n_blocks} estão livres (blocos em uso: {uso}). "
                "Libere uma sequência com free(seq) ou crie o pool com mais blocos."
            )
        for _ in range(max(missing, 0)):
            table.append(self.free_blocks.pop())

    def _slots(self, seq: int, p0: int, p1: int):
        """(bloco físico, linha dentro do bloco) das posições [p0, p1) da sequência."""
        dev = self.k[0].device
        pos = torch.arange(p0, p1, device=dev)
        table = torch.tensor(self.block_tables[seq], dtype=torch.long, device=dev)
        return table[pos // self.block_size], pos % self.block_size  # (T,), (T,)

    def append(self, seq: int, layer: int, k: torch.Tensor, v: torch.Tensor):
        """Escreve k, v (Hkv, T, d_k) nas posições [lengths[seq], lengths[seq] + T)
        da camada `layer` e devolve (k_todas, v_todas), (Hkv, lengths[seq] + T, d_k),
        reunidas pela tabela de blocos (uma cópia, não uma visão)."""
        self._check_seq(seq)
        if not 0 <= layer < self.n_layers:
            raise ValueError(f"camada {layer} fora do pool: escolha entre 0 e {self.n_layers - 1}")
        want = (self.n_kv_heads, k.shape[-2], self.d_k)
        if k.ndim != 3 or tuple(k.shape) != want or tuple(v.shape) != want:
            raise ValueError(
                f"PagedKVCache.append espera k e v com forma (Hkv, T, d_k) = {want}, "
                f"veio k{tuple(k.shape)} e v{tuple(v.shape)}"
            )
        T, p0 = k.shape[-2], self.lengths[seq]
        self.reserve(seq, T)  # a primeira camada pega os blocos; as outras já os encontram
        blk, row = self._slots(seq, p0, p0 + T)  # (T,), (T,)
        self.k[layer][blk, :, row] = k.transpose(0, 1)  # (T, Hkv, d_k) nas linhas (bloco, linha)
        self.v[layer][blk, :, row] = v.transpose(0, 1)
        return self.gather(seq, layer, p0 + T)

    def gather(self, seq: int, layer: int, length: int | None = None):
        """(k, v) das posições [0, length) da sequência, cada um (Hkv, length, d_k).

        length omitido: as posições já escritas (lengths[seq])."""
        self._check_seq(seq)
        length = self.lengths[seq] if length is None else length
        nb = self.blocks_needed(length)
        table = torch.tensor(self.block_tables[seq][:nb], dtype=torch.long, device=self.k[layer].device)
        out = []
        for pool in (self.k[layer], self.v[layer]):
            pages = pool[table]  # (nb, Hkv, bs, d_k): os blocos da sequência, na ordem da tabela
            flat = pages.transpose(0, 1).reshape(self.n_kv_heads, nb * self.block_size, self.d_k)
            out.append(flat[:, :length])  # (Hkv, length, d_k)
        return out[0], out[1]

    def advance(self, seq: int, T: int) -> None:
        """Declara escritas as T posições novas da sequência (depois de todas as camadas)."""
        self._check_seq(seq)
        if self.blocks_needed(self.lengths[seq] + T) > len(self.block_tables[seq]):
            raise ValueError(f"advance({seq}, {T}): essas posições não foram escritas por append")
        self.lengths[seq] += T

    def free(self, seq: int) -> None:
        """Fecha a sequência e devolve os seus blocos à lista livre."""
        self._check_seq(seq)
        self.free_blocks.extend(reversed(self.block_tables.pop(seq)))
        del self.lengths[seq]

    def sequence(self, seq: int) -> "PagedSequence":
        """A sequência com a interface do `KVCache` (lote 1), para o TinyModel."""
        self._check_seq(seq)
        return PagedSequence(self, seq)

    def __repr__(self) -> str:
        return (f"PagedKVCache(camadas={self.n_layers}, blocos={self.n_blocks} x {self.block_size} posições, "
                f"livres={self.n_free}, sequências={dict(self.lengths)})")


class PagedSequence:
    """Uma sequência de um `PagedKVCache` vista como `KVCache` de lote 1."""

    batch = 1

    def __init__(self, pool: PagedKVCache, seq: int):
        self.pool, self.seq = pool, seq

    @property
    def length(self) -> int:
        return self.pool.lengths[self.seq]

    def check_room(self, T: int) -> None:
        self.pool.reserve(self.seq, T)  # pega os blocos agora: erro antes de qualquer camada

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        if k.ndim != 4 or k.shape[0] != 1 or v.shape[:1] != k.shape[:1]:
            raise ValueError(
                f"uma sequência do PagedKVCache recebe lote 1: k e v (1, Hkv, T, d_k), "
                f"veio k{tuple(k.shape)} e v{tuple(v.shape)}"
            )
        kk, vv = self.pool.append(self.seq, layer, k[0], v[0])  # (Hkv, m, d_k)
        return kk[None], vv[None]  # (1, Hkv, m, d_k)

    def advance(self, T: int) -> None:
        self.pool.advance(self.seq, T)

    def __repr__(self) -> str:
        return f"PagedSequence(seq={self.seq}, length={self.length}, blocos={self.pool.block_tables[self.seq]})"


@torch.no_grad()
def generate_paged(model: "TinyModel", prompts, max_new_tokens: int, cache: PagedKVCache,
                   free: bool = True) -> list:
    """Continua cada prompt (tensor 1-D de tokens) com `max_new_tokens` tokens
    gulosos (argmax), todas as sequências dividindo o mesmo pool `cache`.

    Passos intercalados, como num servidor: primeiro o prefill de cada prompt,
    depois, a cada passo, um token novo de cada sequência. Devolve a lista de
    tensores 1-D (prompt + tokens novos). Com free=True, cada sequência devolve
    os seus blocos ao pool no fim.
    """
    n_new = _positive_int("max_new_tokens", max_new_tokens, minimum=0)
    was_training = model.training
    model.eval()
    seqs, outs, logits = [], [], []
    try:
        for p in prompts:
            if not isinstance(p, torch.Tensor) or p.ndim != 1 or p.numel() == 0:
                raise ValueError("cada prompt deve ser um tensor 1-D de tokens, não vazio")
            s = cache.new_sequence()
            seqs.append(s)
            outs.append([p])
            logits.append(model(p[None], cache=cache.sequence(s))[0, -1])  # (V,): prefill
        for step in range(n_new):
            for i, s in enumerate(seqs):
                tok = logits[i].argmax(-1, keepdim=True)  # (1,)
                outs[i].append(tok)
                if step + 1 < n_new:
                    logits[i] = model(tok[None], cache=cache.sequence(s))[0, -1]  # (V,), 1 posição
        return [torch.cat(o) for o in outs]
    finally:
        if free:
            for s in seqs:
                cache.free(s)
        model.train(was_training)


class SinkKVCache:
    """Cache com ralos e janela (StreamingLLM, Xiao et al. 2023).

    Guarda, por camada, as chaves e os valores das `n_sinks` primeiras
    posições e das `w - 1` mais recentes; o token novo de cada chamada entra
    junto, e assim cada consulta vê no máximo n_sinks + w chaves, exatamente as
    que a máscara `masks.with_sinks(n_sinks, w)` deixa ver. A memória fica
    limitada a n_sinks + w - 1 posições (mais as T da chamada), por mais longa
    que seja a geração. As chaves entram já giradas pela RoPE nas posições
    ABSOLUTAS (não renumeradas como no StreamingLLM original): por isso
    decodificar com este cache é igual, a menos do arredondamento, à atenção
    completa sob `with_sinks(n_sinks, w)`.

    Mesmo protocolo do `KVCache` (update por camada, advance no fim), mais
    `mask_mod` e `key_positions(T)`, que a `MultiHeadAttention` usa para montar
    a máscara da chamada.
    """

    def __init__(self, n_layers: int, batch: int, n_kv_heads: int, d_k: int, n_sinks: int, w: int,
                 dtype=torch.float32, device=None):
        self.n_layers = _positive_int("n_layers", n_layers)
        self.batch = _positive_int("batch", batch)
        self.n_kv_heads = _positive_int("n_kv_heads", n_kv_heads)
        self.d_k = _positive_int("d_k", d_k)
        self.n_sinks = _positive_int("n_sinks", n_sinks, minimum=0)
        self.w = _positive_int("w (tamanho da janela)", w)
        self.mask_mod = _masks.with_sinks(self.n_sinks, self.w)
        empty = torch.zeros(self.batch, self.n_kv_heads, 0, self.d_k, dtype=dtype, device=device)
        self.k = [empty] * self.n_layers  # (B, Hkv, guardadas, d_k) por camada
        self.v = [empty] * self.n_layers
        self.positions = torch.zeros(0, dtype=torch.long)  # (guardadas,) posições absolutas
        self._new: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self.length = 0

    @classmethod
    def for_model(cls, model: "TinyModel", batch: int, n_sinks: int, w: int) -> "SinkKVCache":
        cfg = model.config
        p = next(model.parameters())
        return cls(cfg.n_layers, batch, cfg.n_kv_heads, cfg.d_k, n_sinks, w, dtype=p.dtype, device=p.device)

    @property
    def n_kept(self) -> int:
        """Quantas posições estão guardadas entre chamadas (<= n_sinks + w - 1)."""
        return int(self.positions.numel())

    def check_room(self, T: int) -> None:
        """Nunca falta espaço: a janela anda."""

    def key_positions(self, T: int) -> torch.Tensor:
        """Posições absolutas das chaves que `update` devolve numa chamada de T posições."""
        return torch.cat([self.positions, torch.arange(self.length, self.length + T)])  # (m,)

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        """Junta k, v (B, Hkv, T, d_k) às guardadas; devolve (B, Hkv, guardadas + T, d_k)."""
        if not 0 <= layer < self.n_layers:
            raise ValueError(f"camada {layer} fora do cache: escolha entre 0 e {self.n_layers - 1}")
        want = (self.batch, self.n_kv_heads, k.shape[-2], self.d_k)
        if tuple(k.shape) != want or tuple(v.shape) != want:
            raise ValueError(
                f"SinkKVCache espera k e v com forma (B, Hkv, T, d_k) = {want}, "
                f"veio k{tuple(k.shape)} e v{tuple(v.shape)}"
            )
        self._new[layer] = (k, v)
        return torch.cat([self.k[layer], k], dim=2), torch.cat([self.v[layer], v], dim=2)

    def advance(self, T: int) -> None:
        """Guarda o que a próxima consulta ainda pode ver e esquece o resto.

        A próxima consulta está na posição L = length + T e vê as chaves j <
        n_sinks e L - w < j < L (a própria L chega com ela): só essas ficam.
        """
        if len(self._new) != self.n_layers:
            raise ValueError("advance antes de todas as camadas passarem por update")
        pos = self.key_positions(T)  # (guardadas + T,)
        L = self.length + T
        keep = (pos < self.n_sinks) | (pos > L - self.w)  # (guardadas + T,)
        for layer, (k, v) in self._new.items():
            self.k[layer] = torch.cat([self.k[layer], k], dim=2)[:, :, keep]
            self.v[layer] = torch.cat([self.v[layer], v], dim=2)[:, :, keep]
        self.positions = pos[keep]
        self._new = {}
        self.length = L

    def __repr__(self) -> str:
        return (f"SinkKVCache(n_sinks={self.n_sinks}, w={self.w}, length={self.length}, "
                f"guardadas={self.n_kept})")


# --------------------------------------------------------------------------
# Atenção multi-cabeça (MHA, MQA, GQA)
# --------------------------------------------------------------------------

class MultiHeadAttention(nn.Module):
    """Atenção causal com `n_heads` cabeças de consulta e `n_kv_heads` de chave/valor.

    n_kv_heads = n_heads: MHA clássica; n_kv_heads = 1: MQA; no meio: GQA, em
    que a cabeça de consulta h usa a cabeça de chave/valor h // G,
    G = n_heads // n_kv_heads. Projeções sem viés, d_k = d_model // n_heads.

    x: (B, T, D) -> (B, T, D). Com `rope=True`, Q e K são girados pela RoPE
    antes das pontuações (as chaves entram no cache já giradas).
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int | None = None,
                 rope: bool = False, rope_base: float = 10000.0, layer_idx: int = 0):
        super().__init__()
        d_model = _positive_int("d_model", d_model)
        n_heads = _positive_int("n_heads", n_heads)
        n_kv_heads = n_heads if n_kv_heads is None else _positive_int("n_kv_heads", n_kv_heads)
        if d_model % n_heads:
            raise ValueError(
                f"d_model deve ser múltiplo de n_heads (d_k = d_model / n_heads): "
                f"veio d_model={d_model}, n_heads={n_heads}"
            )
        if n_heads % n_kv_heads:
            raise ValueError(
                f"n_heads deve ser múltiplo de n_kv_heads (cada cabeça KV serve um grupo "
                f"do mesmo tamanho): veio n_heads={n_heads}, n_kv_heads={n_kv_heads}"
            )
        self.d_model, self.n_heads, self.n_kv_heads = d_model, n_heads, n_kv_heads
        self.d_k = d_model // n_heads
        self.group = n_heads // n_kv_heads  # G: consultas por cabeça KV
        if rope and self.d_k % 2:
            raise ValueError(f"a RoPE precisa de d_k par, veio d_k={self.d_k}")
        self.use_rope, self.rope_base, self.layer_idx = bool(rope), float(rope_base), layer_idx
        self.w_q = nn.Linear(d_model, n_heads * self.d_k, bias=False)
        self.w_k = nn.Linear(d_model, n_kv_heads * self.d_k, bias=False)
        self.w_v = nn.Linear(d_model, n_kv_heads * self.d_k, bias=False)
        self.w_o = nn.Linear(n_heads * self.d_k, d_model, bias=False)
        self.tracer: Tracer | None = None  # ligado por Tracer, só nesta camada

    def split_heads(self, x: torch.Tensor, n_heads: int) -> torch.Tensor:
        """(B, T, h * d_k) -> (B, h, T, d_k)."""
        B, T, _ = x.shape
        return x.view(B, T, n_heads, self.d_k).transpose(1, 2)  # (B, h, T, d_k)

    @staticmethod
    def merge_heads(x: torch.Tensor) -> torch.Tensor:
        """(B, h, T, d_k) -> (B, T, h * d_k): a concatenação das cabeças."""
        B, h, T, d_k = x.shape
        return x.transpose(1, 2).reshape(B, T, h * d_k)  # (B, T, h * d_k)

    def forward(self, x: torch.Tensor, cache: KVCache | None = None,
                rope_cs: tuple[torch.Tensor, torch.Tensor] | None = None, mask_mod=None) -> torch.Tensor:
        """x (B, T, D) -> (B, T, D). `mask_mod` (de `atencao.masks`, True = visível)
        troca a máscara causal; um cache com o atributo `mask_mod` (o `SinkKVCache`)
        traz a sua. A máscara é avaliada nas posições absolutas das consultas
        (start + t) e das chaves (as do cache, `cache.key_positions(T)`)."""
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(
                f"MultiHeadAttention espera x com forma (B, T, d_model={self.d_model}), "
                f"veio {tuple(x.shape)}"
            )
        B, T, _ = x.shape
        start = 0 if cache is None else cache.length
        tr = self.tracer
        q = self.split_heads(self.w_q(x), self.n_heads)  # (B, H, T, d_k)
        k = self.split_heads(self.w_k(x), self.n_kv_heads)  # (B, Hkv, T, d_k)
        v = self.split_heads(self.w_v(x), self.n_kv_heads)  # (B, Hkv, T, d_k)
        if tr is not None:
            tr._record("attn.q", q), tr._record("attn.k", k), tr._record("attn.v", v)
        if self.use_rope:
            if rope_cs is None:
                rope_cs = rope_angles(T, self.d_k, start, self.rope_base, q.dtype, q.device)
            q, k = apply_rope(q, *rope_cs), apply_rope(k, *rope_cs)  # formas iguais
            if tr is not None:
                tr._record("attn.rope_q", q), tr._record("attn.rope_k", k)
        if cache is not None:
            k, v = cache.update(self.layer_idx, k, v)  # (B, Hkv, m, d_k), m = start + T
        m, G, Hkv = k.shape[-2], self.group, self.n_kv_heads
        mask_mod = mask_mod if mask_mod is not None else getattr(cache, "mask_mod", None)
        # GQA/MQA: a cabeça de consulta h = kv * G + g usa a cabeça KV kv = h // G. Em vez de
        # copiar K e V G vezes (k.repeat_interleave(G, dim=1), que dá o mesmo resultado), as G
        # consultas de cada grupo viram linhas de uma mesma matriz: K e V são lidos uma vez só.
        qg = q.reshape(B, Hkv, G * T, self.d_k)  # (B, Hkv, G*T, d_k), linhas (g, t)
        s = (qg @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.d_k))  # (B, Hkv, G*T, m)
        if mask_mod is None:
            mask_np = causal_mask(T, m, start)  # (T, m), True = proibido
            mask = torch.from_numpy(mask_np).to(s.device)
            any_masked = mask_np.any()
        else:
            key_pos = getattr(cache, "key_positions", None)
            k_idx = key_pos(T) if key_pos is not None else torch.arange(m)  # (m,) posições absolutas
            q_idx = torch.arange(start, start + T)  # (T,)
            mask = (~_masks.evaluate(mask_mod, q_idx[:, None], k_idx[None, :])).to(s.device)  # (T, m)
            any_masked = bool(mask.any())
            empty_rows = mask.all(-1)  # (T,): consultas sem chave visível (saída 0, como em masks)
        if any_masked:  # decodificando um token com cache e máscara causal, nada é proibido
            s_masked = s.masked_fill(mask.repeat(G, 1), float("-inf"))  # (B, Hkv, G*T, m)
        else:
            s_masked = s
        a = torch.softmax(s_masked, dim=-1)  # (B, Hkv, G*T, m)
        if mask_mod is not None and bool(empty_rows.any()):
            a = a.masked_fill(empty_rows.repeat(G)[:, None], 0.0)  # softmax de nada: NaN -> 0
        mix = (a @ v).view(B, self.n_heads, T, self.d_k)  # (B, H, T, d_k)
        out = self.w_o(self.merge_heads(mix))  # (B, T, D): concatena as cabeças e aplica W_O
        if tr is not None:
            tr._record("attn.scores", s.view(B, self.n_heads, T, m))  # (B, H, T, m)
            tr._record("attn.mask", mask)
            tr._record("attn.softmax", a.view(B, self.n_heads, T, m))
            tr._record("attn.mix", mix), tr._record("attn.out", out)
        return out


# --------------------------------------------------------------------------
# Bloco e modelo
# --------------------------------------------------------------------------

@dataclass
class TinyConfig:
    """Configuração do modelo; os valores padrão são a configuração "tiny" do curso."""

    vocab_size: int = 1024  # V: tokens 0 .. V-1
    d_model: int = 128  # D: largura do fluxo residual (e dos embeddings)
    n_layers: int = 4  # blocos transformer empilhados
    n_heads: int = 4  # H: cabeças de consulta
    n_kv_heads: int = 2  # Hkv: cabeças de chave/valor (GQA: G = H / Hkv = 2 consultas por KV)
    d_ff: int = 384  # F: largura oculta do MLP SwiGLU (3 x D)
    rope_base: float = 10000.0  # base das frequências da RoPE
    norm_eps: float = 1e-5  # eps da RMSNorm (evita dividir por zero)
    tie_embeddings: bool = True  # a saída reusa a matriz de embeddings (V, D)

    def __post_init__(self):
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "n_kv_heads", "d_ff"):
            _positive_int(name, getattr(self, name))
        if self.d_model % self.n_heads:
            raise ValueError(
                f"d_model ({self.d_model}) deve ser múltiplo de n_heads ({self.n_heads})"
            )
        if self.n_heads % self.n_kv_heads:
            raise ValueError(
                f"n_heads ({self.n_heads}) deve ser múltiplo de n_kv_heads ({self.n_kv_heads})"
            )
        if self.d_k % 2:
            raise ValueError(f"a RoPE precisa de d_k par, veio d_k={self.d_k}")

    @property
    def d_k(self) -> int:
        """Dimensão por cabeça: d_model / n_heads (32 no tiny)."""
        return self.d_model // self.n_heads


class Block(nn.Module):
    """Bloco decodificador pré-norma:

        x = x + Atenção(RMSNorm(x))      (GQA causal, RoPE em Q e K)
        x = x + SwiGLU(RMSNorm(x))
    """

    def __init__(self, config: TinyConfig, layer_idx: int = 0):
        super().__init__()
        c = config
        self.norm1 = RMSNorm(c.d_model, c.norm_eps)
        self.attn = MultiHeadAttention(c.d_model, c.n_heads, c.n_kv_heads, rope=True,
                                       rope_base=c.rope_base, layer_idx=layer_idx)
        self.norm2 = RMSNorm(c.d_model, c.norm_eps)
        self.mlp = SwiGLU(c.d_model, c.d_ff)

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, rope_cs=None,
                mask_mod=None) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), cache=cache, rope_cs=rope_cs, mask_mod=mask_mod)  # (B, T, D)
        x = x + self.mlp(self.norm2(x))  # (B, T, D)
        return x


class TinyModel(nn.Module):
    """Modelo de linguagem causal: embeddings -> n_layers blocos -> RMSNorm -> logits.

    forward(idx (B, T) inteiros, cache=None, mask_mod=None) -> logits (B, T, V).
    Sem embeddings posicionais aprendidos: a posição entra só pela RoPE.
    `mask_mod` (de `atencao.masks`) troca a máscara causal em todas as camadas.
    """

    def __init__(self, config: TinyConfig | None = None):
        super().__init__()
        self.config = c = config if config is not None else TinyConfig()
        self.tok_emb = nn.Embedding(c.vocab_size, c.d_model)
        self.blocks = nn.ModuleList(Block(c, i) for i in range(c.n_layers))
        self.norm_f = RMSNorm(c.d_model, c.norm_eps)
        self.lm_head = nn.Linear(c.d_model, c.vocab_size, bias=False)
        if c.tie_embeddings:
            self.lm_head.weight = self.tok_emb.weight  # (V, D), um só parâmetro
        self.apply(self._init_weights)
        for b in self.blocks:  # projeções que somam no resíduo: menores (estilo GPT-2)
            for w in (b.attn.w_o.weight, b.mlp.w2.weight):
                nn.init.normal_(w, std=0.02 / math.sqrt(2 * c.n_layers))

    @staticmethod
    def _init_weights(mod):
        if isinstance(mod, (nn.Linear, nn.Embedding)):
            nn.init.normal_(mod.weight, std=0.02)

    def num_parameters(self) -> int:
        """Parâmetros distintos (a matriz compartilhada conta uma vez)."""
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx: torch.Tensor, cache: KVCache | None = None, mask_mod=None) -> torch.Tensor:
        c = self.config
        if not isinstance(idx, torch.Tensor) or idx.dtype not in (torch.int64, torch.int32):
            raise TypeError(
                "TinyModel espera idx como torch.Tensor de inteiros (B, T), "
                f"veio {type(idx).__name__}{'' if not isinstance(idx, torch.Tensor) else ' ' + str(idx.dtype)}"
            )
        if idx.ndim != 2 or idx.shape[1] == 0:
            raise ValueError(f"TinyModel espera idx com forma (B, T), T >= 1, veio {tuple(idx.shape)}")
        B, T = idx.shape
        start = 0
        if cache is not None:
            if cache.batch != B:
                raise ValueError(f"o cache foi criado para B={cache.batch}, mas idx tem B={B}")
            cache.check_room(T)
            start = cache.length
        x = self.tok_emb(idx)  # (B, T, D); índice fora de [0, V) dá IndexError do torch
        cs = rope_angles(T, c.d_k, start, c.rope_base, x.dtype, x.device)  # (T, d_k/2) x 2, uma vez
        for block in self.blocks:
            x = block(x, cache=cache, rope_cs=cs, mask_mod=mask_mod)  # (B, T, D)
        if cache is not None:
            cache.advance(T)
        return self.lm_head(self.norm_f(x))  # (B, T, V)

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int, use_cache: bool = True,
                 greedy: bool = True, temperature: float = 1.0,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        """Continua idx (B, T0) com max_new_tokens tokens; devolve (B, T0 + max_new_tokens).

        use_cache=True: a sequência inicial passa uma vez (preenche o KVCache) e
        cada passo seguinte processa só o token novo. use_cache=False: cada
        passo recalcula o modelo sobre a sequência inteira. Com greedy=True
        (argmax) os dois caminhos dão os mesmos tokens. Com greedy=False,
        amostra de softmax(logits / temperature) usando `generator`.
        """
        if not isinstance(idx, torch.Tensor) or idx.ndim != 2 or idx.shape[1] == 0:
            raise ValueError(
                "generate espera idx como torch.Tensor (B, T0) com T0 >= 1, veio "
                f"{tuple(idx.shape) if isinstance(idx, torch.Tensor) else type(idx).__name__}"
            )
        n_new = _positive_int("max_new_tokens", max_new_tokens, minimum=0)
        if not greedy and not temperature > 0:
            raise ValueError(f"temperature deve ser > 0, veio {temperature!r}")
        was_training = self.training
        self.eval()
        B, T0 = idx.shape
        out = torch.empty(B, T0 + n_new, dtype=idx.dtype, device=idx.device)  # (B, T0 + n)
        out[:, :T0] = idx

        def pick(logits):  # (B, V) -> (B,)
            if greedy:
                return logits.argmax(dim=-1)
            p = torch.softmax(logits.float() / temperature, dim=-1)
            return torch.multinomial(p, 1, generator=generator).squeeze(1)

        try:
            if n_new == 0:
                return out
            if use_cache:
                cache = KVCache.for_model(self, B, T0 + n_new)
                logits = self(idx, cache=cache)[:, -1]  # (B, V): prefill
                for t in range(T0, T0 + n_new):
                    out[:, t] = pick(logits)
                    if t + 1 < T0 + n_new:
                        logits = self(out[:, t:t + 1], cache=cache)[:, -1]  # (B, V), 1 posição
            else:
                for t in range(T0, T0 + n_new):
                    out[:, t] = pick(self(out[:, :t])[:, -1])  # recalcula tudo
            return out
        finally:
            self.train(was_training)


# --------------------------------------------------------------------------
# Tracer: fotografias nomeadas de uma camada e de uma cabeça
# --------------------------------------------------------------------------

SNAPSHOT_NAMES = {
    "attn.q": "consultas Q da cabeça, antes da RoPE: (n, d_k)",
    "attn.k": "chaves K novas da cabeça KV do grupo, antes da RoPE: (n, d_k)",
    "attn.v": "valores V novos da cabeça KV do grupo: (n, d_k)",
    "attn.rope_q": "consultas depois da RoPE: (n, d_k)",
    "attn.rope_k": "chaves novas depois da RoPE: (n, d_k)",
    "attn.scores": "pontuações Q K^T / sqrt(d_k), antes da máscara: (n, m)",
    "attn.mask": "máscara causal, True = proibido (igual para todas as cabeças): (n, m)",
    "attn.softmax": "pesos de atenção, linhas somam 1: (n, m)",
    "attn.mix": "saída da cabeça, pesos @ V, antes da concatenação: (n, d_k)",
    "attn.out": "saída da camada de atenção depois de W_O (todas as cabeças): (n, d_model)",
}


class SnapshotError(KeyError):
    """Nome de fotografia desconhecido ou ainda não gravado (mensagem em português)."""

    def __str__(self) -> str:
        return str(self.args[0])


class Tracer:
    """Grava as fotografias de `SNAPSHOT_NAMES` de uma camada e uma cabeça.

        tr = Tracer(model, layer=1, head=0)
        with tr:
            model(idx)
        tr["attn.softmax"]   # (n, m): sem a dimensão de lote (usa o exemplo `batch`)

    `model` é um TinyModel (camadas 0 .. n_layers-1) ou uma MultiHeadAttention
    (camada 0). Para K e V (e rope_k) grava a cabeça KV que a cabeça `head`
    usa, head // G. Se o modelo rodar várias vezes dentro do `with`, ficam as
    fotografias da última chamada. Fora do `with` nada é gravado e o modelo não
    paga nada.
    """

    def __init__(self, model: nn.Module, layer: int = 0, head: int = 0, batch: int = 0,
                 names=None):
        if isinstance(model, MultiHeadAttention):
            layers = [model]
        elif isinstance(getattr(model, "blocks", None), nn.ModuleList):
            layers = [b.attn for b in model.blocks]
        else:
            raise TypeError(
                f"Tracer espera um TinyModel ou uma MultiHeadAttention, veio {type(model).__name__}"
            )
        if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < len(layers):
            raise ValueError(
                f"camada {layer!r} não existe: as camadas válidas são 0 a {len(layers) - 1}"
            )
        self.attn = layers[int(layer)]
        H = self.attn.n_heads
        if isinstance(head, bool) or not isinstance(head, (int, np.integer)) or not 0 <= head < H:
            raise ValueError(f"cabeça {head!r} não existe: as cabeças válidas são 0 a {H - 1}")
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 0:
            raise ValueError(f"batch deve ser um inteiro >= 0, veio {batch!r}")
        if names is None:
            names = list(SNAPSHOT_NAMES)
        else:
            names = [names] if isinstance(names, str) else list(names)
            bad = [n for n in names if n not in SNAPSHOT_NAMES]
            if bad:
                raise ValueError(
                    f"fotografia(s) desconhecida(s): {bad}. Nomes válidos: {', '.join(SNAPSHOT_NAMES)}"
                )
        self.layer, self.head, self.batch = int(layer), int(head), int(batch)
        self.kv_head = self.head // self.attn.group
        self.names = names
        self.snapshots: dict[str, torch.Tensor] = {}

    def __enter__(self) -> "Tracer":
        if self.attn.tracer is not None:
            raise RuntimeError("esta camada já tem um Tracer ligado; use um de cada vez")
        self.snapshots = {}
        self.attn.tracer = self
        return self

    def __exit__(self, *exc) -> None:
        self.attn.tracer = None

    def _record(self, name: str, t: torch.Tensor) -> None:
        if name not in self.names:
            return
        if name == "attn.mask":
            snap = t  # (n, m): sem lote nem cabeça
        else:
            if self.batch >= t.shape[0]:
                raise ValueError(
                    f"Tracer(batch={self.batch}), mas o lote desta chamada tem só {t.shape[0]} exemplo(s)"
                )
            snap = t[self.batch]  # sem a dimensão de lote
            if name == "attn.out":
                pass  # (n, D)
            elif name in ("attn.k", "attn.v", "attn.rope_k"):
                snap = snap[self.kv_head]  # (n, d_k)
            else:
                snap = snap[self.head]  # (n, d_k) ou (n, m)
        self.snapshots[name] = snap.detach().clone()

    def __getitem__(self, name: str) -> torch.Tensor:
        if name not in SNAPSHOT_NAMES:
            raise SnapshotError(
                f"fotografia desconhecida: {name!r}. Nomes válidos: {', '.join(SNAPSHOT_NAMES)}"
            )
        if name not in self.snapshots:
            why = ("não foi pedida em names=" + str(self.names)) if name not in self.names else (
                "ainda não foi gravada: rode o modelo dentro de `with tracer:`")
            raise SnapshotError(f"a fotografia {name!r} {why}")
        return self.snapshots[name]

    def __contains__(self, name: str) -> bool:
        return name in self.snapshots

    def keys(self):
        return self.snapshots.keys()

    def __repr__(self) -> str:
        return (f"Tracer(camada={self.layer}, cabeça={self.head}, cabeça KV={self.kv_head}, "
                f"gravadas={list(self.snapshots)})")
