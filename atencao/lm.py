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
  `weights_only=True` (nenhum código é executado ao carregar). Os formatos
  dos arquivos estão em atencao/data/README.md.
- `load_corpus()` e `load_curve()`: o corpus congelado com os pesos (o que o
  capítulo 8 avalia, por mais que o livro mude depois) e a curva de treino;
  `corpus_status()` diz se a prosa do livro mudou desde o congelamento (só
  para o `make weights` avisar: o livro muda todo dia, e a página do cap. 8
  não se compara com ele; ela diz de que instantâneo, com nome e data, o
  corpus é; o que o teste exige é que pesos, ficha e corpus concordem).
- `repeated_tail`: o laço em que uma sequência gerada termina (a gulosa);
  `filter_logits`: o sorteio com temperatura, top-k e top-p (o mesmo do
  modelo na página); `sample_prompt`: o começo das amostras, que `make
  weights` também usa para gravar amostras em três pontos da curva;
  `token_losses` e `ov_readout`: a perda de cada alvo e o circuito OV de uma
  cabeça lido pela saída (a cabeça de maior ablação do cap. 8).
- `attention_maps`, `head_scores` e `ablate_head`: os pesos de atenção de todas
  as cabeças numa passada (pelo `Tracer`), as pontuações que podem dar nome a
  uma cabeça (token anterior, começo da palavra, primeiro token, indução) e a
  ablação de uma cabeça (a sua fatia de attn.mix zerada por um gancho antes de W_O).

Letras: L camadas, H cabeças de consulta, n posições, V vocabulário.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import platform
import re
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from .model import TinyConfig, TinyModel, Tracer
from .text import ROOT, BPETokenizer, Corpus, project_corpus

__all__ = [
    "DATA_DIR", "REPRO_TOLERANCE", "TrainConfig", "LMInfo", "NGramLosses", "TrainingCurve", "CorpusStatus",
    "encode_splits", "random_batch", "lr_at", "train_lm", "lm_loss", "ngram_losses", "bigram_sample",
    "save_lm", "load_lm", "load_corpus", "load_curve", "corpus_status", "attention_maps", "word_starts",
    "head_scores", "ablate_head", "ablation_deltas", "known_word_share", "vocabulary", "make_weights",
    "sample_prompt", "repeated_tail", "SAMPLE_STEPS", "SAMPLE_TEMPERATURE", "SAMPLE_COUNT", "SAMPLE_NEW",
    "filter_logits", "ov_readout", "token_losses",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
TOKENIZER_FILE, WEIGHTS_FILE, INFO_FILE = "tokenizer.json", "tiny_lm.pt", "tiny_lm.json"
CORPUS_FILE, CURVE_FILE = "corpus.json", "training_curve.json"

# Refazer o treino sobre o corpus congelado (`python -m atencao.lm --frozen`, o
# teste lento de tests/atencao/test_lm.py) dá a mesma perda de validação a menos disto
# (nats/token). Com a mesma CPU, a mesma versão do torch e o mesmo número de
# threads, os pesos saem idênticos bit a bit; a folga cobre outra CPU ou outra
# biblioteca de BLAS, que somam em outra ordem (os pesos de atencao/data deram
# 3,5386 com 1 thread, torch 2.13.0 CPU, x86_64).
REPRO_TOLERANCE = 0.01

# Amostras gravadas na curva de treino (make weights): nos passos SAMPLE_STEPS que
# existirem (e sempre no último), SAMPLE_COUNT continuações de SAMPLE_NEW tokens
# sorteadas com temperatura SAMPLE_TEMPERATURE (semente 0) e a gulosa, todas do
# começo de `sample_prompt`. Gerar não muda o treino (um gerador próprio, fora dos lotes).
SAMPLE_STEPS = (100, 300)
SAMPLE_TEMPERATURE = 0.8
SAMPLE_COUNT = 8
SAMPLE_NEW = 60
PROMPT_TOKENS = 16


@dataclass(frozen=True)
class TrainConfig:
    """Hiperparâmetros do treino de `make weights` (os padrões são os dos pesos do curso)."""

    steps: int = 600  # passos de otimização
    batch_size: int = 8  # B: janelas por passo
    context: int = 128  # T: tokens por janela (e o contexto máximo usado na avaliação)
    lr: float = 3e-3  # passo de aprendizado máximo
    min_lr_ratio: float = 0.1  # o cosseno desce até lr * min_lr_ratio
    warmup: int = 60  # passos de aquecimento linear
    weight_decay: float = 0.1  # decaimento de peso do AdamW (só nas matrizes)
    clip: float = 1.0  # norma máxima do gradiente
    seed: int = 0  # semente dos pesos iniciais e dos lotes
    eval_every: int = 25  # a curva de treino mede as perdas a cada tantos passos (não muda o treino)


@dataclass(frozen=True)
class LMInfo:
    """A ficha dos pesos: de que corpus vieram, com que treino e que perda deram."""

    corpus_sha256: str  # o texto congelado em corpus.json (Corpus.sha256)
    corpus_source_sha256: str  # a prosa do livro de que ele veio (Corpus.source_sha256)
    val_loss: float  # nats por token, na validação do corpus de corpus_sha256
    train_tokens: int
    val_tokens: int
    train_seconds: float  # tempo de relógio do treino (sem as medidas da curva)
    train_cpu_seconds: float  # tempo de CPU do processo (somando as threads), sem as medidas da curva
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


@dataclass(frozen=True)
class TrainingCurve:
    """A curva de treino gravada por `make weights` (training_curve.json)."""

    batch_loss: list[float]  # perda do lote de cada passo (passos 1, 2, ..., steps)
    eval_steps: list[int]  # passos em que as perdas abaixo foram medidas (0 = antes do treino)
    train_loss: list[float]  # perda num trecho fixo do treino, do tamanho da validação
    val_loss: list[float]  # perda na validação inteira
    prompt: list[int] = dataclasses.field(default_factory=list)  # o começo das amostras (sample_prompt)
    # uma entrada por ponto da curva com amostras: {"step", "greedy": [ids], "sampled": [[ids], ...]}
    # (só os tokens novos; "sampled" com temperatura SAMPLE_TEMPERATURE, semente 0)
    samples: list[dict] = dataclasses.field(default_factory=list)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(dataclasses.asdict(self), separators=(",", ":")) + "\n",
                              encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "TrainingCurve":
        return cls(**json.loads(Path(path).read_text(encoding="utf-8")))


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
             log_every: int = 0, val_ids: torch.Tensor | None = None,
             on_eval: Callable[[int], None] | None = None) -> list[float]:
    """Treina `model` em janelas sorteadas de train_ids; devolve a perda de cada passo.

    Com log_every > 0, imprime a perda a cada log_every passos (e a de
    validação, se val_ids vier). `on_eval(passo)` é chamada antes do treino
    (passo 0), a cada cfg.eval_every passos e no fim, com o modelo em modo de
    avaliação; medir não muda o treino (nem o sorteio dos lotes).
    """
    train_ids = _check_ids("train_ids", train_ids)
    decay = [p for p in model.parameters() if p.ndim >= 2]  # matrizes e embeddings
    no_decay = [p for p in model.parameters() if p.ndim < 2]  # pesos das RMSNorm
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=cfg.lr, betas=(0.9, 0.95), eps=1e-8)
    gen = torch.Generator().manual_seed(cfg.seed + 1)
    V = model.config.vocab_size

    def evaluate(step: int) -> None:
        if on_eval is not None:
            model.eval()
            on_eval(step)
            model.train()

    model.train()
    evaluate(0)
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
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.steps:
            evaluate(step + 1)
        if log_every and (step + 1) % log_every == 0:
            val = "" if val_ids is None else f"  validação {lm_loss(model, val_ids, cfg.context):.3f}"
            print(f"passo {step + 1:5d}  perda {loss.item():.3f}{val}  lr {lr_at(step, cfg):.2e}", flush=True)
    model.eval()
    return losses


@torch.no_grad()
def lm_loss(model: TinyModel, ids: torch.Tensor, context: int = 128, chunk: int = 16) -> float:
    """Entropia cruzada média (nats/token) prevendo ids[1:], em janelas seguidas de `context` tokens.

    A janela j lê ids[jT : jT + T] e prevê ids[jT + 1 : jT + T + 1]: cada token
    a partir do segundo é previsto uma vez, com de 1 a T tokens de contexto.
    As janelas completas passam em lotes de `chunk` (a mesma conta, mais rápida).
    """
    ids = _check_ids("ids", ids)
    if ids.numel() < 2:
        raise ValueError("são precisos pelo menos 2 tokens para medir a perda")
    was = model.training
    model.eval()
    n_full = (ids.numel() - 1) // context  # janelas com T + 1 tokens
    total, count = 0.0, 0
    if n_full:
        win = ids[torch.arange(n_full)[:, None] * context + torch.arange(context + 1)]  # (J, T + 1)
        for c in range(0, n_full, chunk):
            w = win[c:c + chunk]
            logits = model(w[:, :-1])  # (b, T, V)
            total += F.cross_entropy(logits.flatten(0, 1), w[:, 1:].flatten(), reduction="sum").item()
            count += w[:, 1:].numel()
    rest = ids[n_full * context:]
    if rest.numel() >= 2:
        logits = model(rest[None, :-1])[0]  # (n, V)
        total += F.cross_entropy(logits, rest[1:], reduction="sum").item()
        count += rest.numel() - 1
    model.train(was)
    return total / count


@torch.no_grad()
def token_losses(model: TinyModel, ids: torch.Tensor, context: int = 128, chunk: int = 16) -> torch.Tensor:
    """(N - 1,): a perda (nats) de cada alvo ids[1:], com as mesmas janelas de `lm_loss` (a média é ela)."""
    ids = _check_ids("ids", ids)
    if ids.numel() < 2:
        raise ValueError("são precisos pelo menos 2 tokens para medir a perda")
    was = model.training
    model.eval()
    n_full = (ids.numel() - 1) // context
    parts = []
    if n_full:
        win = ids[torch.arange(n_full)[:, None] * context + torch.arange(context + 1)]  # (J, T + 1)
        for c in range(0, n_full, chunk):
            w = win[c:c + chunk]
            logits = model(w[:, :-1])  # (b, T, V)
            parts.append(F.cross_entropy(logits.flatten(0, 1), w[:, 1:].flatten(), reduction="none"))
    rest = ids[n_full * context:]
    if rest.numel() >= 2:
        parts.append(F.cross_entropy(model(rest[None, :-1])[0], rest[1:], reduction="none"))
    model.train(was)
    return torch.cat(parts)


def _bigram_table(train_ids: torch.Tensor, vocab_size: int) -> torch.Tensor:
    V = int(vocab_size)
    return torch.bincount(train_ids[:-1] * V + train_ids[1:], minlength=V * V).double().view(V, V)  # (V, V)


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
    pairs = _bigram_table(train_ids, V)
    row = pairs.sum(1)  # (V,): c(a) como primeiro de um par
    c_ab, c_a = pairs[prev, nxt], row[prev]  # (N,) cada
    best = min((-((c_ab + k) / (c_a + k * V)).log().mean().item(), k) for k in ks)
    return NGramLosses(unigram=unigram, bigram=best[0], k=best[1])


def bigram_sample(train_ids: torch.Tensor, vocab_size: int, k: float, start: torch.Tensor, n_new: int,
                  generator: torch.Generator) -> torch.Tensor:
    """Continua start (B, T0) com n_new tokens sorteados do bigrama add-k: (B, T0 + n_new)."""
    probs = _bigram_table(_check_ids("train_ids", train_ids), vocab_size) + k  # (V, V)
    probs = probs / probs.sum(1, keepdim=True)
    out = [start]
    last = start[:, -1]  # (B,)
    for _ in range(n_new):
        last = torch.multinomial(probs[last], 1, generator=generator).squeeze(1)  # (B,)
        out.append(last[:, None])
    return torch.cat(out, dim=1)


# --------------------------------------------------------------------------
# os arquivos de atencao/data
# --------------------------------------------------------------------------

def save_lm(model: TinyModel, tokenizer: BPETokenizer, info: LMInfo, val_ids: torch.Tensor,
            out_dir: str | Path = DATA_DIR, corpus: Corpus | None = None,
            curve: TrainingCurve | None = None) -> None:
    """Grava tokenizer.json, tiny_lm.pt (tensores), tiny_lm.json (a ficha), corpus.json e a curva.

    tiny_lm.pt guarda {"state": pesos, "val_ids": a validação usada em
    info.val_loss}; corpus.json é o texto congelado de onde saíram o
    tokenizador, o treino e a validação.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(out / TOKENIZER_FILE)
    state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()
             if not (model.config.tie_embeddings and k == "lm_head.weight")}  # a matriz compartilhada vai uma vez
    torch.save({"state": state, "val_ids": _check_ids("val_ids", val_ids).clone()}, out / WEIGHTS_FILE)
    (out / INFO_FILE).write_text(json.dumps(dataclasses.asdict(info), indent=1, ensure_ascii=False) + "\n",
                                 encoding="utf-8")
    if corpus is not None:
        corpus.save(out / CORPUS_FILE)
    if curve is not None:
        curve.save(out / CURVE_FILE)


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


def load_corpus(data_dir: str | Path = DATA_DIR) -> Corpus:
    """O corpus congelado com os pesos (atencao/data/corpus.json): o que o capítulo 8 avalia."""
    return Corpus.load(Path(data_dir) / CORPUS_FILE)


def load_curve(data_dir: str | Path = DATA_DIR) -> TrainingCurve:
    """A curva de treino gravada por `make weights`."""
    path = Path(data_dir) / CURVE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"curva de treino não encontrada em {path}: gere com `make weights`")
    return TrainingCurve.load(path)


@dataclass(frozen=True)
class CorpusStatus:
    """O corpus congelado comparado com a prosa atual do livro (quando o livro está por perto)."""

    frozen_source_sha256: str
    book_source_sha256: str | None  # None: não há book/ aqui (o pacote instalado, o caderno baixado)

    @property
    def stale(self) -> bool | None:
        """True: a prosa do livro mudou depois do congelamento; None: não dá para saber."""
        return None if self.book_source_sha256 is None else self.book_source_sha256 != self.frozen_source_sha256

    def message(self) -> str:
        if self.stale is None:
            return "o texto do livro não está aqui; os números vêm só do corpus congelado com os pesos"
        if self.stale:
            return ("a prosa do livro mudou depois que o corpus foi congelado com os pesos; os números desta "
                    "página continuam os do corpus congelado (`make weights` congela o texto novo e treina de novo)")
        return "o corpus congelado com os pesos é a prosa atual do livro"


def corpus_status(data_dir: str | Path = DATA_DIR, root: str | Path = ROOT) -> CorpusStatus:
    """Compara o `source_sha256` do corpus congelado com o da prosa de `root`/book, se existir."""
    frozen = load_corpus(data_dir).source_sha256
    if not (Path(root) / "book").is_dir():
        return CorpusStatus(frozen, None)
    return CorpusStatus(frozen, project_corpus(root, use_glue=False).source_sha256)


# --------------------------------------------------------------------------
# gerar texto: o começo, o sorteio filtrado e o laço da decodificação gulosa
# --------------------------------------------------------------------------

def sample_prompt(corpus: Corpus, tokenizer: BPETokenizer, n: int = PROMPT_TOKENS) -> list[int]:
    """Os n primeiros tokens do primeiro parágrafo da validação, nos capítulos, com mais de 300
    caracteres e começando por maiúscula: o começo das amostras do cap. 8 e da curva de treino."""
    paragraph = next(p for p, v, o in zip(corpus.paragraphs, corpus.is_val, corpus.origin)
                     if v and o.startswith("book/parte") and len(p) > 300 and p[0].isupper())
    return tokenizer.encode(paragraph)[:n]


def filter_logits(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> torch.Tensor:
    """As probabilidades de sorteio (..., V): softmax(logits / temperatura), só entre os top_k
    tokens mais prováveis e, deles, só o menor conjunto cuja soma chega a top_p (o núcleo),
    renormalizado. O mesmo filtro do modelo na página do cap. 8 (book/_static/modelo/lm.js)."""
    if not temperature > 0:
        raise ValueError(f"temperature deve ser > 0, veio {temperature!r}")
    p = torch.softmax(logits.double() / temperature, dim=-1)
    order = p.argsort(dim=-1, descending=True, stable=True)
    sorted_p = p.gather(-1, order)
    keep = torch.ones_like(sorted_p, dtype=torch.bool)
    if top_k is not None:
        keep[..., top_k:] = False
    if top_p is not None:
        before = sorted_p.cumsum(-1) - sorted_p  # a massa dos mais prováveis antes deste
        keep &= before < top_p
    keep[..., 0] = True  # o mais provável fica sempre
    sorted_p = sorted_p * keep
    out = torch.zeros_like(p).scatter(-1, order, sorted_p)
    return out / out.sum(-1, keepdim=True)


def repeated_tail(ids, max_period: int = 20, min_repeats: int = 2, min_tokens: int = 8) -> tuple[int, int] | None:
    """(início, período) do laço em que a sequência termina, ou None.

    Um laço: a partir de `início`, cada token é igual ao de `período` posições
    antes, por pelo menos `min_repeats` períodos inteiros e `min_tokens` tokens,
    com período ≤ max_period. Entre os períodos possíveis, vale o que começa
    mais cedo (o laço mais longo); num empate, o menor período. Um laço que só
    começa no fim da sequência também conta: o que importa é como ela termina.
    """
    seq = list(ids.tolist() if isinstance(ids, torch.Tensor) else ids)
    n, best = len(seq), None
    for p in range(1, max_period + 1):
        start = n - p  # o último período inteiro; volte enquanto o token bater com o de p à frente
        while start > 0 and seq[start - 1] == seq[start - 1 + p]:
            start -= 1
        if n - start >= max(min_repeats * p, min_tokens) and (best is None or start < best[0]):
            best = (start, p)
    return best


# --------------------------------------------------------------------------
# o que as cabeças fazem: pesos, pontuações e ablação
# --------------------------------------------------------------------------

class _AllHeads(Tracer):
    """Um Tracer que guarda os pesos de TODAS as cabeças e de todo o lote: (B, H, n, m)."""

    def _record(self, name: str, t: torch.Tensor) -> None:
        if name == "attn.softmax":
            self.snapshots[name] = t.detach().clone()


@torch.no_grad()
def attention_maps(model: TinyModel, idx: torch.Tensor) -> torch.Tensor:
    """Pesos de atenção (attn.softmax) de todas as camadas e cabeças.

    idx (1, n) -> (L, H, n, n); idx (B, n) com B > 1 -> (B, L, H, n, n).
    Uma passada só: um Tracer por camada, todos ligados ao mesmo tempo.
    """
    if not isinstance(idx, torch.Tensor) or idx.ndim != 2:
        raise ValueError(f"attention_maps espera idx com forma (B, n), veio "
                         f"{tuple(idx.shape) if isinstance(idx, torch.Tensor) else type(idx).__name__}")
    tracers = [_AllHeads(model, layer=layer, names=["attn.softmax"]) for layer in range(model.config.n_layers)]
    for tr in tracers:
        tr.__enter__()
    try:
        model(idx)
    finally:
        for tr in tracers:
            tr.__exit__(None, None, None)
    maps = torch.stack([tr["attn.softmax"] for tr in tracers], dim=1)  # (B, L, H, n, n)
    return maps[0] if idx.shape[0] == 1 else maps


def word_starts(pieces: list[bytes]) -> list[int]:
    """Para cada token (os seus bytes, `tokenizer.vocab[id]`), a posição do token que começa a sua
    palavra: o último até ele que NÃO continua uma palavra (não começa com letra ASCII nem com um
    byte >= 0x80 de uma letra acentuada), ou a posição 0."""
    starts, cur = [], 0
    for i, p in enumerate(pieces):
        continues = bool(p) and (chr(p[0]).isalpha() and p[0] < 0x80 or p[0] >= 0x80)
        if i == 0 or not continues:
            cur = i
        starts.append(cur)
    return starts


def head_scores(maps: torch.Tensor, period: int | None = None,
                starts: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """Pontuações por cabeça, médias sobre as consultas; maps (..., n, n) -> (...,) cada.

    - "anterior": peso em i - 1, consultas i >= 1 (cabeça do token anterior);
    - "primeiro": peso na posição 0, consultas i >= 1 (o "ralo");
    - "comeco" (com `starts`, (..., n) ou (n,): o começo da palavra de cada
      posição): peso em starts[i], nas consultas em que o começo da palavra
      fica ANTES de i - 1 (onde essa hipótese e a do token anterior
      discordam); "anterior_onde_discordam" é o peso em i - 1 nas mesmas
      consultas, para comparar as duas no mesmo terreno;
    - "inducao" (só com `period` = R, para uma sequência em que o trecho de R
      tokens se repete): nas consultas da repetição, i >= R, peso em i - R + 1,
      o token que veio DEPOIS da ocorrência anterior do token atual.
    """
    if maps.ndim < 2 or maps.shape[-1] != maps.shape[-2] or maps.shape[-1] < 2:
        raise ValueError(f"head_scores espera pesos (..., n, n) com n >= 2, veio {tuple(maps.shape)}")
    n = maps.shape[-1]
    i = torch.arange(1, n)
    out = {"anterior": maps[..., i, i - 1].mean(-1), "primeiro": maps[..., i, 0].mean(-1)}
    if starts is not None:
        st = starts.to(torch.long).expand(*maps.shape[:-1])  # (..., n)
        diverge = (st < torch.arange(n) - 1).to(maps.dtype)  # (..., n): consultas em que discordam
        got = maps.gather(-1, st.unsqueeze(-1)).squeeze(-1)  # (..., n): peso no começo da palavra
        prev = torch.cat([torch.zeros_like(maps[..., :1, 0]), maps[..., i, i - 1]], dim=-1)  # (..., n)
        den = diverge.sum(-1).clamp(min=1)
        out["comeco"] = (got * diverge).sum(-1) / den
        out["anterior_onde_discordam"] = (prev * diverge).sum(-1) / den
    if period is not None:
        if not 1 <= period < n:
            raise ValueError(f"period deve estar entre 1 e n - 1 = {n - 1}, veio {period}")
        j = torch.arange(period, n)
        out["inducao"] = maps[..., j, j - period + 1].mean(-1)
    return out


@contextmanager
def ablate_head(model: TinyModel, layer: int, head: int):
    """Dentro do `with`, a saída da cabeça (layer, head) (a sua fatia de attn.mix) vale zero.

    Um gancho antes de W_O zera as colunas head*d_k:(head+1)*d_k da
    concatenação das cabeças; o resto do modelo roda como sempre.
    """
    c = model.config
    if not (0 <= layer < c.n_layers and 0 <= head < c.n_heads):
        raise ValueError(f"cabeça ({layer}, {head}) não existe: camadas 0 a {c.n_layers - 1}, "
                         f"cabeças 0 a {c.n_heads - 1}")
    d_k = c.d_k

    def zero(_module, args):
        (x,) = args  # (B, T, H * d_k)
        x = x.clone()
        x[..., head * d_k:(head + 1) * d_k] = 0
        return (x,)

    handle = model.blocks[layer].attn.w_o.register_forward_pre_hook(zero)
    try:
        yield model
    finally:
        handle.remove()


@torch.no_grad()
def ov_readout(model: TinyModel, layer: int, head: int) -> torch.Tensor:
    """(V, V): a linha t é o que a cabeça (layer, head) escreve quando lê só o token t, lido
    direto pela saída do modelo (logits, sem as camadas seguintes).

    O circuito OV: o embedding de t passa pela RMSNorm da camada, por W_V (a cabeça KV
    do grupo), pela fatia da cabeça em W_O, e vai para o vocabulário pelos pesos da
    RMSNorm final e pela matriz de saída. Na camada 0 a entrada é exatamente o
    embedding; nas seguintes, o resíduo já tem mais coisa, e a leitura é uma aproximação.
    """
    c = model.config
    if not (0 <= layer < c.n_layers and 0 <= head < c.n_heads):
        raise ValueError(f"cabeça ({layer}, {head}) não existe")
    block, d_k = model.blocks[layer], c.d_k
    g = head // (c.n_heads // c.n_kv_heads)
    x = block.norm1(model.tok_emb.weight)  # (V, D)
    v = x @ block.attn.w_v.weight[g * d_k:(g + 1) * d_k].T  # (V, d_k)
    out = v @ block.attn.w_o.weight[:, head * d_k:(head + 1) * d_k].T  # (V, D)
    return (out * model.norm_f.weight) @ model.lm_head.weight.T  # (V, V)


def ablation_deltas(model: TinyModel, val_ids: torch.Tensor, context: int = 128) -> torch.Tensor:
    """(L, H): quanto a perda de validação sobe ao zerar cada cabeça, uma de cada vez."""
    base = lm_loss(model, val_ids, context)
    c = model.config
    out = torch.zeros(c.n_layers, c.n_heads)
    for layer in range(c.n_layers):
        for head in range(c.n_heads):
            with ablate_head(model, layer, head):
                out[layer, head] = lm_loss(model, val_ids, context) - base
    return out


_WORD = re.compile(r"[^\W\d_]+")


def known_word_share(text: str, vocabulary: set[str], min_len: int = 1) -> tuple[float, int]:
    """(fração das palavras de `text` que estão em `vocabulary`, número de palavras); minúsculas.

    Com min_len > 1, só contam as palavras com pelo menos min_len letras: as de uma letra
    ("a", "e", "o") estão sempre no vocabulário e inflam a fração.
    """
    words = [w.lower() for w in _WORD.findall(text) if len(w) >= min_len]
    if not words:
        return float("nan"), 0
    return sum(w in vocabulary for w in words) / len(words), len(words)


def vocabulary(text: str) -> set[str]:
    """As palavras (sequências de letras, em minúsculas) de um texto."""
    return {w.lower() for w in _WORD.findall(text)}


# --------------------------------------------------------------------------
# make weights
# --------------------------------------------------------------------------

def _snapshot_name() -> dict:
    """O nome e a data de um corpus congelado agora: o commit da prosa (se houver git) e o dia (UTC)."""
    import datetime
    import subprocess

    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "book", "exercises"],
                               capture_output=True, text=True, check=True).stdout.strip()
        name = f"prosa do curso no commit {commit}" + (" (com mudanças ainda sem commit)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        name = "prosa do curso (sem git)"
    return {"name": name, "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat()}


def make_weights(cfg: TrainConfig = TrainConfig(), out_dir: str | Path = DATA_DIR,
                 log_every: int = 100, corpus: Corpus | None = None,
                 glue_dir: str | Path | None = None) -> LMInfo:
    """Corpus -> tokenizador -> treino (com a curva) -> avaliação -> arquivos em out_dir.

    Sem `corpus`, extrai a prosa atual do livro (é o `make weights`); com ele
    (o corpus congelado), refaz o treino sobre o mesmo texto.
    """
    if corpus is None:
        corpus = dataclasses.replace(project_corpus(glue_dir=glue_dir), **_snapshot_name())
    tokenizer = BPETokenizer.train(corpus.train_text, TinyConfig().vocab_size)
    train_ids, val_ids = encode_splits(corpus, tokenizer)
    train_probe = train_ids[:val_ids.numel()]  # um trecho fixo do treino, do tamanho da validação
    prompt = sample_prompt(corpus, tokenizer)
    sample_at = {s for s in SAMPLE_STEPS if s < cfg.steps} | {cfg.steps}
    torch.manual_seed(cfg.seed)
    model = TinyModel(TinyConfig(vocab_size=tokenizer.vocab_size))
    eval_steps, tr_curve, val_curve, samples = [], [], [], []
    spent = [0.0, 0.0]  # relógio e CPU gastos medindo a curva

    def on_eval(step: int) -> None:
        t, c = time.perf_counter(), time.process_time()
        eval_steps.append(step)
        tr_curve.append(lm_loss(model, train_probe, cfg.context))
        val_curve.append(lm_loss(model, val_ids, cfg.context))
        if step in sample_at:
            start = torch.tensor([prompt])  # (1, n)
            with torch.no_grad():
                greedy = model.generate(start, SAMPLE_NEW)[0, len(prompt):]
                sampled = model.generate(start.expand(SAMPLE_COUNT, -1), SAMPLE_NEW, greedy=False,
                                         temperature=SAMPLE_TEMPERATURE,
                                         generator=torch.Generator().manual_seed(0))[:, len(prompt):]
            samples.append({"step": step, "greedy": greedy.tolist(), "sampled": sampled.tolist()})
        spent[0] += time.perf_counter() - t
        spent[1] += time.process_time() - c

    t0, c0 = time.perf_counter(), time.process_time()
    batch = train_lm(model, train_ids, cfg, log_every=log_every, val_ids=val_ids if log_every else None,
                     on_eval=on_eval)
    seconds = time.perf_counter() - t0 - spent[0]
    cpu = time.process_time() - c0 - spent[1]
    info = LMInfo(corpus_sha256=corpus.sha256, corpus_source_sha256=corpus.source_sha256,
                  val_loss=lm_loss(model, val_ids, cfg.context),
                  train_tokens=train_ids.numel(), val_tokens=val_ids.numel(), train_seconds=round(seconds, 1),
                  train_cpu_seconds=round(cpu, 1),
                  threads=torch.get_num_threads(), torch_version=torch.__version__,
                  model=dataclasses.asdict(model.config), train=dataclasses.asdict(cfg))
    curve = TrainingCurve(batch_loss=batch, eval_steps=eval_steps, train_loss=tr_curve, val_loss=val_curve,
                          prompt=prompt, samples=samples)
    save_lm(model, tokenizer, info, val_ids, out_dir, corpus=corpus, curve=curve)
    return info


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m atencao.lm",
        description="Congela a prosa do livro, treina o tokenizador e o modelo tiny nela e grava tudo "
                    "em atencao/data (make weights).")
    parser.add_argument("--steps", type=int, default=TrainConfig.steps, help="passos de treino")
    parser.add_argument("--out", default=str(DATA_DIR), help="pasta de saída (padrão: atencao/data)")
    parser.add_argument("--frozen", action="store_true",
                        help="treina de novo sobre o corpus congelado em atencao/data (confere a reprodução)")
    parser.add_argument("--glue-dir", default=None,
                        help="onde estão os .glue.json da construção do livro (padrão: _build/jupyter_execute)")
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps deve ser >= 1, veio {args.steps}")
    cfg = dataclasses.replace(TrainConfig(), steps=args.steps)
    corpus = None
    if args.frozen:
        corpus = load_corpus()
        print(f"corpus congelado: {corpus.sha256[:12]} ({len(corpus.paragraphs)} parágrafos)")
    elif (DATA_DIR / CORPUS_FILE).is_file():
        print(f"antes: {corpus_status().message()}")
    print(f"treinando com {torch.get_num_threads()} thread(s) em {platform.machine()}: {cfg}", flush=True)
    info = make_weights(cfg, args.out, corpus=corpus, glue_dir=args.glue_dir)
    frozen = load_corpus(args.out)
    bigram = ngram_losses(*encode_splits(frozen, BPETokenizer.load(Path(args.out) / TOKENIZER_FILE)),
                          info.model["vocab_size"]).bigram
    print(f"perda de validação {info.val_loss:.4f} (bigrama {bigram:.4f}); "
          f"treino: {info.train_seconds:.1f} s de relógio, {info.train_cpu_seconds:.1f} s de CPU; "
          f"corpus {info.corpus_sha256[:12]} ({frozen.glue})")


if __name__ == "__main__":
    main()
