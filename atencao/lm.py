"""O modelo tiny como modelo de linguagem do português: treino, avaliação e pesos (cap. 8 e 12).

O que este arquivo promete:
- `train_lm`: AdamW, passo de aprendizado com aquecimento linear e descida em
  cosseno, corte da norma do gradiente; com a mesma semente e o mesmo número de
  threads, dá os mesmos pesos bit a bit.
- `lm_loss` e `ngram_losses`: perda de validação (entropia cruzada média, em
  nats por token) do modelo e de dois modelos de contagem, unigrama e bigrama,
  sobre EXATAMENTE os mesmos alvos (todos os tokens da validação menos o
  primeiro).
- `load_lm()`: o tokenizador, o modelo, a ficha (`LMInfo`) e os ids da
  validação com que a ficha foi medida, que o curso traz
  em `atencao/data/`, gerados por `make weights` (`python -m atencao.lm`).
  Os pesos são um dicionário de tensores salvo com `torch.save` e lido com
  `weights_only=True` (nenhum código é executado ao carregar).
- `attention_maps` e `head_scores`: os pesos de atenção de todas as cabeças
  (pelo `Tracer`) e três pontuações que dão nome a uma cabeça: olhar o token
  anterior, olhar o primeiro token, e indução (numa sequência repetida, olhar o
  token que veio depois da ocorrência anterior do token atual).

Letras: L camadas, H cabeças de consulta, n posições, V vocabulário.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import platform
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from .model import TinyConfig, TinyModel, Tracer
from .text import BPETokenizer, Corpus, project_corpus

__all__ = [
    "DATA_DIR", "REPRO_TOLERANCE", "TrainConfig", "LMInfo", "NGramLosses", "encode_splits", "random_batch", "lr_at",
    "train_lm", "lm_loss", "ngram_losses", "save_lm", "load_lm", "attention_maps", "head_scores",
    "make_weights",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
TOKENIZER_FILE, WEIGHTS_FILE, INFO_FILE = "tokenizer.json", "tiny_lm.pt", "tiny_lm.json"

# Refazer `make weights` no mesmo texto dá a mesma perda de validação a menos
# disto (nats/token). Medido em 2026-11-30 (torch 2.13.0 CPU, x86_64): com 1 e
# com 2 threads os 600 passos deram pesos idênticos bit a bit (perda 3,6628 nas
# duas). A folga cobre outra CPU ou outra biblioteca de BLAS, que somam em
# outra ordem.
REPRO_TOLERANCE = 0.01


@dataclass(frozen=True)
class TrainConfig:
    """Hiperparâmetros do treino de `make weights` (os padrões são os dos pesos do curso)."""

    steps: int = 600  # passos de otimização (~11 passadas pelo treino)
    batch_size: int = 8  # B: janelas por passo
    context: int = 128  # T: tokens por janela (e o contexto máximo usado na avaliação)
    lr: float = 3e-3  # passo de aprendizado máximo
    min_lr_ratio: float = 0.1  # o cosseno desce até lr * min_lr_ratio
    warmup: int = 60  # passos de aquecimento linear
    weight_decay: float = 0.1  # decaimento de peso do AdamW (só nas matrizes)
    clip: float = 1.0  # norma máxima do gradiente
    seed: int = 0  # semente dos pesos iniciais e dos lotes


@dataclass(frozen=True)
class LMInfo:
    """A ficha dos pesos: de que corpus vieram, com que treino e que perda deram."""

    corpus_sha256: str
    val_loss: float  # nats por token, na validação do corpus de corpus_sha256
    train_tokens: int
    val_tokens: int
    train_seconds: float  # tempo de relógio do treino
    train_cpu_seconds: float  # tempo de CPU do processo (somando as threads): mede menos a disputa pela máquina
    threads: int
    torch_version: str
    model: dict  # campos de TinyConfig
    train: dict  # campos de TrainConfig


@dataclass(frozen=True)
class NGramLosses:
    """Perdas de validação dos modelos de contagem (nats por token)."""

    unigram: float  # P(b) com suavização add-1
    bigram: float  # P(b | a) com suavização add-k
    k: float  # o k do bigrama (o melhor numa grade, escolhido na própria validação)


def _check_ids(name: str, ids) -> torch.Tensor:
    if not isinstance(ids, torch.Tensor) or ids.ndim != 1 or ids.dtype != torch.long:
        raise TypeError(f"{name} deve ser um torch.Tensor 1-D de inteiros (torch.long), veio "
                        f"{type(ids).__name__}{'' if not isinstance(ids, torch.Tensor) else f' {ids.dtype} {tuple(ids.shape)}'}")
    return ids


def encode_splits(corpus: Corpus, tokenizer: BPETokenizer) -> tuple[torch.Tensor, torch.Tensor]:
    """(treino, validação) como tensores 1-D de ids: cada lado é o seu texto inteiro, codificado."""
    return (torch.tensor(tokenizer.encode(corpus.train_text), dtype=torch.long),
            torch.tensor(tokenizer.encode(corpus.val_text), dtype=torch.long))


def random_batch(ids: torch.Tensor, batch_size: int, context: int,
                 generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """B janelas sorteadas de ids: x (B, T) e y (B, T), y[t] = o token depois de x[t]."""
    ids = _check_ids("ids", ids)
    if ids.numel() < context + 1:
        raise ValueError(f"o texto tem {ids.numel()} tokens, menos que context + 1 = {context + 1}")
    start = torch.randint(0, ids.numel() - context, (batch_size,), generator=generator)  # (B,)
    w = ids[start[:, None] + torch.arange(context + 1)]  # (B, T + 1)
    return w[:, :-1], w[:, 1:]


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Passo de aprendizado no passo `step` (0, 1, ...): aquecimento linear e descida em cosseno."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    frac = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)  # 0 -> 1
    lo = cfg.lr * cfg.min_lr_ratio
    return lo + 0.5 * (cfg.lr - lo) * (1 + math.cos(math.pi * min(frac, 1.0)))


def train_lm(model: TinyModel, train_ids: torch.Tensor, cfg: TrainConfig = TrainConfig(),
             log_every: int = 0, val_ids: torch.Tensor | None = None) -> list[float]:
    """Treina `model` em janelas sorteadas de train_ids; devolve a perda de cada passo.

    Com log_every > 0, imprime a perda a cada log_every passos (e a de
    validação, se val_ids vier; medir não muda o treino).
    """
    train_ids = _check_ids("train_ids", train_ids)
    decay = [p for p in model.parameters() if p.ndim >= 2]  # matrizes e embeddings
    no_decay = [p for p in model.parameters() if p.ndim < 2]  # pesos das RMSNorm
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    V = model.config.vocab_size
    model.train()
    losses = []
    for step in range(cfg.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, cfg)
        x, y = random_batch(train_ids, cfg.batch_size, cfg.context, gen)  # (B, T) cada
        logits = model(x)  # (B, T, V)
        loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        opt.step()
        losses.append(loss.item())
        if log_every and (step + 1) % log_every == 0:
            val = "" if val_ids is None else f"  validação {lm_loss(model, val_ids, cfg.context):.3f}"
            print(f"passo {step + 1:5d}  perda {loss.item():.3f}{val}  lr {lr_at(step, cfg):.2e}", flush=True)
    model.eval()
    return losses


@torch.no_grad()
def lm_loss(model: TinyModel, ids: torch.Tensor, context: int = 128) -> float:
    """Entropia cruzada média (nats/token) prevendo ids[1:], em janelas seguidas de `context` tokens.

    A janela j lê ids[jT : jT + T] e prevê ids[jT + 1 : jT + T + 1]: cada token
    a partir do segundo é previsto uma vez, com de 1 a T tokens de contexto.
    """
    ids = _check_ids("ids", ids)
    if ids.numel() < 2:
        raise ValueError("são precisos pelo menos 2 tokens para medir a perda")
    was = model.training
    model.eval()
    total, count = 0.0, 0
    for s in range(0, ids.numel() - 1, context):
        w = ids[s: s + context + 1]  # (<= T + 1,)
        logits = model(w[None, :-1])[0]  # (n, V)
        total += F.cross_entropy(logits, w[1:], reduction="sum").item()
        count += w.numel() - 1
    model.train(was)
    return total / count


def ngram_losses(train_ids: torch.Tensor, val_ids: torch.Tensor, vocab_size: int,
                 ks=tuple(10.0 ** (e / 4) for e in range(-16, 1))) -> NGramLosses:
    """Unigrama (add-1) e bigrama (add-k) contados no treino, medidos nos alvos val_ids[1:].

    O k do bigrama é o melhor da grade `ks` NA PRÓPRIA VALIDAÇÃO: isso só
    favorece o bigrama, que é o adversário a vencer.
    """
    train_ids, val_ids = _check_ids("train_ids", train_ids), _check_ids("val_ids", val_ids)
    V = int(vocab_size)
    uni = torch.bincount(train_ids, minlength=V).double()  # (V,)
    p_uni = (uni + 1) / (uni.sum() + V)
    prev, nxt = val_ids[:-1], val_ids[1:]  # os mesmos alvos de lm_loss
    unigram = -p_uni[nxt].log().mean().item()
    pairs = torch.bincount(train_ids[:-1] * V + train_ids[1:], minlength=V * V).double().view(V, V)
    row = pairs.sum(1)  # (V,): c(a) como primeiro de um par
    c_ab, c_a = pairs[prev, nxt], row[prev]  # (N,) cada
    best = min((-((c_ab + k) / (c_a + k * V)).log().mean().item(), k) for k in ks)
    return NGramLosses(unigram=unigram, bigram=best[0], k=best[1])


def save_lm(model: TinyModel, tokenizer: BPETokenizer, info: LMInfo, val_ids: torch.Tensor,
            out_dir: str | Path = DATA_DIR) -> None:
    """Grava tokenizer.json, tiny_lm.pt (tensores) e tiny_lm.json (a ficha).

    tiny_lm.pt guarda {"state": pesos, "val_ids": a validação usada em
    info.val_loss}: com ela a perda registrada pode ser conferida mesmo depois
    que o texto do livro mudar.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(out / TOKENIZER_FILE)
    state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()
             if not (model.config.tie_embeddings and k == "lm_head.weight")}  # a matriz compartilhada vai uma vez
    torch.save({"state": state, "val_ids": _check_ids("val_ids", val_ids).clone()}, out / WEIGHTS_FILE)
    (out / INFO_FILE).write_text(json.dumps(dataclasses.asdict(info), indent=1, ensure_ascii=False) + "\n",
                                 encoding="utf-8")


def load_lm(data_dir: str | Path = DATA_DIR) -> tuple[BPETokenizer, TinyModel, LMInfo, torch.Tensor]:
    """(tokenizador, modelo em modo de avaliação, ficha, ids da validação do treino) de `make weights`."""
    d = Path(data_dir)
    missing = [f for f in (TOKENIZER_FILE, WEIGHTS_FILE, INFO_FILE) if not (d / f).is_file()]
    if missing:
        raise FileNotFoundError(f"faltam {missing} em {d}: gere os pesos com `make weights`")
    info = LMInfo(**json.loads((d / INFO_FILE).read_text(encoding="utf-8")))
    tokenizer = BPETokenizer.load(d / TOKENIZER_FILE)
    model = TinyModel(TinyConfig(**info.model))
    saved = torch.load(d / WEIGHTS_FILE, map_location="cpu", weights_only=True)
    state = saved["state"]
    if model.config.tie_embeddings:
        state["lm_head.weight"] = state["tok_emb.weight"]
    model.load_state_dict(state)
    if tokenizer.vocab_size != model.config.vocab_size:
        raise ValueError(f"o tokenizador tem {tokenizer.vocab_size} tokens e o modelo, "
                         f"{model.config.vocab_size}: gere os dois juntos com `make weights`")
    return tokenizer, model.eval(), info, saved["val_ids"]


@torch.no_grad()
def attention_maps(model: TinyModel, idx: torch.Tensor) -> torch.Tensor:
    """Pesos de atenção (attn.softmax) de todas as camadas e cabeças para idx (1, n): (L, H, n, n)."""
    if not isinstance(idx, torch.Tensor) or idx.ndim != 2 or idx.shape[0] != 1:
        raise ValueError(f"attention_maps espera idx com forma (1, n), veio "
                         f"{tuple(idx.shape) if isinstance(idx, torch.Tensor) else type(idx).__name__}")
    c = model.config
    maps = []
    for layer in range(c.n_layers):
        for head in range(c.n_heads):
            tr = Tracer(model, layer=layer, head=head, names=["attn.softmax"])
            with tr:
                model(idx)
            maps.append(tr["attn.softmax"])  # (n, n)
    n = idx.shape[1]
    return torch.stack(maps).view(c.n_layers, c.n_heads, n, n)  # (L, H, n, n)


def head_scores(maps: torch.Tensor, period: int | None = None) -> dict[str, torch.Tensor]:
    """Pontuações por cabeça, cada uma (L, H), médias sobre as consultas i >= 1.

    - "anterior": peso em i - 1 (cabeça do token anterior);
    - "primeiro": peso na posição 0 (cabeça que "estaciona" no primeiro token);
    - "inducao" (só com `period` = R, para uma sequência em que o trecho de R
      tokens se repete): nas consultas da repetição, i >= R, peso em i - R + 1,
      o token que veio DEPOIS da ocorrência anterior do token atual.
    """
    if maps.ndim != 4 or maps.shape[-1] != maps.shape[-2] or maps.shape[-1] < 2:
        raise ValueError(f"head_scores espera pesos (L, H, n, n) com n >= 2, veio {tuple(maps.shape)}")
    n = maps.shape[-1]
    i = torch.arange(1, n)
    out = {"anterior": maps[..., i, i - 1].mean(-1), "primeiro": maps[..., i, 0].mean(-1)}
    if period is not None:
        if not 1 <= period < n:
            raise ValueError(f"period deve estar entre 1 e n - 1 = {n - 1}, veio {period}")
        j = torch.arange(period, n)
        out["inducao"] = maps[..., j, j - period + 1].mean(-1)
    return out


def make_weights(cfg: TrainConfig = TrainConfig(), out_dir: str | Path = DATA_DIR,
                 log_every: int = 100) -> LMInfo:
    """Corpus -> tokenizador -> treino -> avaliação -> arquivos em out_dir (é o `make weights`)."""
    corpus = project_corpus()
    tokenizer = BPETokenizer.train(corpus.train_text, TinyConfig().vocab_size)
    train_ids, val_ids = encode_splits(corpus, tokenizer)
    torch.manual_seed(cfg.seed)
    model = TinyModel(TinyConfig(vocab_size=tokenizer.vocab_size))
    t0, c0 = time.perf_counter(), time.process_time()
    train_lm(model, train_ids, cfg, log_every=log_every, val_ids=val_ids)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0  # inclui as medidas de validação do registro (~1 passo cada)
    info = LMInfo(corpus_sha256=corpus.sha256, val_loss=lm_loss(model, val_ids, cfg.context),
                  train_tokens=train_ids.numel(), val_tokens=val_ids.numel(), train_seconds=round(seconds, 1),
                  train_cpu_seconds=round(cpu, 1),
                  threads=torch.get_num_threads(), torch_version=torch.__version__,
                  model=dataclasses.asdict(model.config), train=dataclasses.asdict(cfg))
    save_lm(model, tokenizer, info, val_ids, out_dir)
    return info


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m atencao.lm",
        description="Treina o tokenizador e o modelo tiny na prosa do projeto e grava os pesos (make weights).")
    parser.add_argument("--steps", type=int, default=TrainConfig.steps, help="passos de treino")
    parser.add_argument("--out", default=str(DATA_DIR), help="pasta de saída (padrão: atencao/data)")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps deve ser >= 1, veio {args.steps}")
    cfg = dataclasses.replace(TrainConfig(), steps=args.steps)
    print(f"treinando com {torch.get_num_threads()} thread(s) em {platform.machine()}: {cfg}", flush=True)
    info = make_weights(cfg, args.out)
    bigram = ngram_losses(*encode_splits(project_corpus(), BPETokenizer.load(Path(args.out) / TOKENIZER_FILE)),
                          info.model["vocab_size"]).bigram
    print(f"perda de validação {info.val_loss:.4f} (bigrama {bigram:.4f}); "
          f"treino: {info.train_seconds:.1f} s de relógio, {info.train_cpu_seconds:.1f} s de CPU; "
          f"corpus {info.corpus_sha256[:12]}")


if __name__ == "__main__":
    main()
