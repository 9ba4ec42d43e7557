"""Quanto ocupa o KV cache: MHA, GQA/MQA, janela deslizante (com ralos) e
atenção latente (cap. 12).

O que este arquivo promete:

* ``KVConfig``: o que decide o tamanho do cache de um modelo (camadas, cabeças
  de chave/valor, dimensão por cabeça, quantas camadas têm janela e de que
  tamanho, a dimensão latente do MLA), com a fonte de cada número publicado.
* ``kv_cache_bytes(cfg, T, batch, bytes_per_elem)``: bytes do cache de
  ``batch`` sequências de T tokens. Por camada e por token:
      MHA/GQA/MQA   2 · Hkv · d_h      elementos (chave e valor; MHA: Hkv = H)
      MLA           d_c + d_h^R        elementos (o vetor latente comprimido e
                                       a chave da RoPE, guardados uma vez só,
                                       sem o fator 2; DeepSeek-V2, tabela 1)
  e uma camada com janela w (e s ralos) guarda no máximo w + s tokens,
  por mais longo que seja T.
* ``kv_bytes_per_token``: o mesmo dividido por T (o custo médio de um token).
* ``from_tiny`` (o modelo do curso), ``course_variants`` (as alternativas
  aplicadas ao modelo do curso, para a figura) e ``PUBLISHED`` (configurações
  publicadas, cada uma com a sua fonte).

Os testes conferem ``kv_cache_bytes`` com os buffers de verdade do
``KVCache``, do ``PagedKVCache`` e do ``SinkKVCache`` (atencao.model), e a
fórmula do MLA com a conta da tabela 1 do DeepSeek-V2, (d_c + d_h^R) l =
9/2 · d_h · l com d_c = 4 d_h e d_h^R = d_h / 2.

O que este cálculo não inclui: quantização do cache (o −93,3 % do DeepSeek-V2
em relação ao DeepSeek 67B é o número do artigo, medido na implantação deles;
não sai só desta conta), blocos parcialmente cheios do cache paginado
(menos de um bloco por sequência) e os ralos aprendidos do gpt-oss (um
logit por cabeça, sem chave nem valor no cache).

Referências: Shazeer (2019, MQA); Ainslie et al. (2023, GQA); Jiang et al.
(2023, Mistral 7B); DeepSeek-AI (2024, DeepSeek-V2); Gemma Team (2025,
Gemma 3); OpenAI (2025, gpt-oss-120b & gpt-oss-20b model card); Xiao et al.
(2023, StreamingLLM).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = [
    "KVConfig",
    "kv_cache_bytes",
    "kv_bytes_per_token",
    "from_tiny",
    "course_variants",
    "PUBLISHED",
    "table",
]


def _int(name, val, minimum):
    if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < minimum:
        raise ValueError(f"{name} deve ser um inteiro >= {minimum}, veio {val!r}")
    return int(val)


@dataclass(frozen=True)
class KVConfig:
    """O que decide o tamanho do KV cache de um modelo."""

    name: str  # nome curto, para legendas
    n_layers: int  # camadas de atenção
    n_heads: int  # H: cabeças de consulta (não entram na conta; só para a legenda)
    n_kv_heads: int  # Hkv: cabeças de chave/valor (MHA: = H; MQA: 1; GQA: no meio)
    d_head: int  # d_h: dimensão de cada cabeça (de chave e de valor)
    window: int | None = None  # w: janela das camadas locais (None: nenhuma camada local)
    n_local_layers: int = 0  # quantas das n_layers usam a janela
    n_sinks: int = 0  # ralos guardados nas camadas locais (StreamingLLM)
    latent_dim: int | None = None  # d_c do MLA (None: não é MLA)
    rope_dim: int = 0  # d_h^R do MLA: a chave da RoPE guardada à parte
    source: str = ""  # de onde vêm os números

    def __post_init__(self):
        _int("n_layers", self.n_layers, 1)
        _int("n_heads", self.n_heads, 1)
        _int("n_kv_heads", self.n_kv_heads, 1)
        _int("d_head", self.d_head, 1)
        _int("n_local_layers", self.n_local_layers, 0)
        _int("n_sinks", self.n_sinks, 0)
        _int("rope_dim", self.rope_dim, 0)
        if self.n_local_layers > self.n_layers:
            raise ValueError(
                f"n_local_layers ({self.n_local_layers}) não pode passar de n_layers ({self.n_layers})"
            )
        if self.window is None:
            if self.n_local_layers or self.n_sinks:
                raise ValueError("camadas locais e ralos precisam de uma janela (window)")
        else:
            _int("window", self.window, 1)
        if self.latent_dim is not None:
            _int("latent_dim", self.latent_dim, 1)
            if self.n_local_layers:
                raise ValueError("este cálculo não combina MLA com camadas de janela")

    def elements_per_token_per_layer(self) -> int:
        """Elementos guardados por token numa camada sem janela."""
        if self.latent_dim is not None:
            return self.latent_dim + self.rope_dim  # c_KV e a chave da RoPE, uma vez só
        return 2 * self.n_kv_heads * self.d_head  # uma chave e um valor por cabeça KV


def kv_cache_bytes(cfg: KVConfig, T: int, batch: int = 1, bytes_per_elem: int = 2) -> int:
    """Bytes do KV cache de `batch` sequências de T tokens (bfloat16: 2 bytes).

    Camadas globais guardam os T tokens; camadas locais, no máximo
    window + n_sinks (o que a máscara ``with_sinks`` ainda deixa ver).
    """
    T = _int("T", T, 0)
    batch = _int("batch", batch, 1)
    bytes_per_elem = _int("bytes_per_elem", bytes_per_elem, 1)
    per_tok = cfg.elements_per_token_per_layer()
    n_global = cfg.n_layers - cfg.n_local_layers
    kept_local = 0 if cfg.window is None else min(T, cfg.window + cfg.n_sinks)
    elems = per_tok * (n_global * T + cfg.n_local_layers * kept_local)
    return batch * elems * bytes_per_elem


def kv_bytes_per_token(cfg: KVConfig, T: int, bytes_per_elem: int = 2) -> float:
    """Custo médio de um token num contexto de T tokens: kv_cache_bytes / T."""
    T = _int("T", T, 1)
    return kv_cache_bytes(cfg, T, 1, bytes_per_elem) / T


def from_tiny(config=None, name: str = "tiny (curso)") -> KVConfig:
    """O KVConfig do modelo do curso (``atencao.model.TinyConfig``)."""
    from .model import TinyConfig

    c = config if config is not None else TinyConfig()
    return KVConfig(name, c.n_layers, c.n_heads, c.n_kv_heads, c.d_k,
                    source="atencao.model.TinyConfig (a configuração tiny do curso)")


def course_variants(config=None, window: int = 128, local_per_global: int = 1, n_sinks: int = 4) -> dict:
    """O modelo do curso com cada alternativa, para a figura.

    MHA (Hkv = H), GQA (o do curso), MQA (Hkv = 1), GQA + janela (as camadas
    alternando local e global como no gpt-oss quando local_per_global = 1; 5
    locais por global no Gemma 3), o mesmo com n_sinks ralos, e MLA com as
    proporções do DeepSeek-V2 (d_c = 4 d_h, d_h^R = d_h / 2).
    """
    base = from_tiny(config)
    L, d = base.n_layers, base.d_head
    local_per_global = _int("local_per_global", local_per_global, 1)
    n_local = L - L // (local_per_global + 1)  # a última camada de cada grupo é global
    return {
        "MHA": replace(base, name="MHA", n_kv_heads=base.n_heads),
        "GQA": replace(base, name="GQA"),
        "MQA": replace(base, name="MQA", n_kv_heads=1),
        "GQA + janela": replace(base, name=f"GQA + janela {window}", window=window, n_local_layers=n_local),
        "GQA + janela + ralos": replace(base, name=f"GQA + janela {window} + {n_sinks} ralos",
                                             window=window, n_local_layers=n_local, n_sinks=n_sinks),
        "MLA": replace(base, name="MLA", latent_dim=4 * d, rope_dim=d // 2),
    }


# Configurações publicadas. Cada número vem da fonte citada ao lado.
PUBLISHED = {
    # Jiang et al. (2023), "Mistral 7B", tabela 1: 32 camadas, 32 cabeças, 8 cabeças KV,
    # head_dim 128, window_size 4096 (todas as camadas com janela).
    "Mistral 7B": KVConfig("Mistral 7B", 32, 32, 8, 128, window=4096, n_local_layers=32,
                           source="Jiang et al. (2023), Mistral 7B, tabela 1"),
    # DeepSeek-AI (2024), "DeepSeek-V2", seção 3.1.2: 60 camadas, n_h = 128 cabeças de
    # d_h = 128, d_c = 512, d_h^R = 64. Tabela 1: cache por token (d_c + d_h^R) l.
    "DeepSeek-V2": KVConfig("DeepSeek-V2 (MLA)", 60, 128, 128, 128, latent_dim=512, rope_dim=64,
                            source="DeepSeek-AI (2024), DeepSeek-V2, seção 3.1.2 e tabela 1"),
    # A mesma arquitetura do DeepSeek-V2 se guardasse chaves e valores de todas as cabeças
    # (MHA), para comparar: 2 n_h d_h l por token (DeepSeek-V2, tabela 1).
    "DeepSeek-V2 como MHA": KVConfig("DeepSeek-V2 se fosse MHA", 60, 128, 128, 128,
                                     source="DeepSeek-AI (2024), DeepSeek-V2, tabela 1 (linha MHA)"),
    # Gemma Team (2025), "Gemma 3 Technical Report": 5 camadas locais (janela de 1024) para
    # cada global; config.json de google/gemma-3-27b-pt: 62 camadas, 32 cabeças, 16 cabeças
    # KV, head_dim 128; camada i global quando (i + 1) % 6 == 0, ou seja 10 globais e 52 locais.
    "Gemma 3 27B": KVConfig("Gemma 3 27B", 62, 32, 16, 128, window=1024, n_local_layers=52,
                            source="Gemma Team (2025), Gemma 3; config.json de google/gemma-3-27b-pt"),
    # OpenAI (2025), "gpt-oss-120b & gpt-oss-20b Model Card": 36 camadas alternando janela de
    # 128 tokens e atenção completa; 64 cabeças de consulta, 8 de chave/valor, head_dim 64.
    # Os ralos do gpt-oss são logits aprendidos, sem entrada no cache: n_sinks = 0.
    "gpt-oss-120b": KVConfig("gpt-oss-120b", 36, 64, 8, 64, window=128, n_local_layers=18,
                             source="OpenAI (2025), gpt-oss model card; config.json de openai/gpt-oss-120b"),
}


def table(configs, T: int, batch: int = 1, bytes_per_elem: int = 2) -> list[dict]:
    """Uma linha por configuração: nome, bytes por token (médio em T), bytes totais,
    e a fração em relação à primeira configuração (para a figura)."""
    configs = list(configs.values()) if isinstance(configs, dict) else list(configs)
    if not configs:
        raise ValueError("table precisa de ao menos uma configuração")
    rows = []
    first = kv_cache_bytes(configs[0], T, batch, bytes_per_elem)
    for c in configs:
        total = kv_cache_bytes(c, T, batch, bytes_per_elem)
        rows.append({
            "nome": c.name,
            "bytes_por_token": total / (batch * T) if T else 0.0,
            "bytes_total": total,
            "fracao_da_primeira": total / first if first else float("nan"),
            "fonte": c.source,
        })
    return rows
