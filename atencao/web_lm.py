"""O modelo do curso no navegador (cap. 8): os pesos e o tokenizador num formato que o JavaScript lê.

O que este arquivo promete:
- `export_web_lm(out_dir)`: grava em `out_dir` dois arquivos, gerados dos
  pesos que o curso traz (`atencao/data/`, de `make weights`), nunca
  versionados: `lm_weights.bin`, todos os tensores em float32 little-endian,
  um depois do outro, e `lm_manifest.json`, com a configuração do modelo
  (`TinyConfig`), o nome, a forma e a posição de cada tensor, o hash SHA-256
  do binário e as fusões do tokenizador BPE. A matriz de embeddings
  compartilhada com a saída (`tie_embeddings`) vai uma vez só.
- O binário tem no máximo `MAX_BYTES` (8 MiB); um modelo maior é erro claro,
  e não um download escondido de dezenas de megabytes.
- Regravar com os mesmos pesos não reescreve os arquivos (só atualiza a data
  de modificação): a construção incremental do livro não recopia 4 MB.

Quem lê: `book/_static/modelo/lm.js` (o BPE e o passo à frente em JavaScript,
sem biblioteca) e `book/_ext/modelo_web.py` (a extensão Sphinx que chama
`export_web_lm` ao fim da construção, para `_static/modelo/` do site).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .text import PRETOKEN_PATTERN

__all__ = ["FORMAT", "MAX_BYTES", "WEIGHTS_NAME", "MANIFEST_NAME", "TensorEntry", "WebManifest",
           "build_manifest", "export_web_lm", "web_tensors"]

FORMAT = "atencao-lm-f32-v1"  # muda se o leiaute do binário mudar (o lm.js confere)
MAX_BYTES = 8 * 2**20  # teto do que o leitor baixa ao apertar o botão
WEIGHTS_NAME, MANIFEST_NAME = "lm_weights.bin", "lm_manifest.json"


@dataclass(frozen=True)
class TensorEntry:
    """Um tensor do binário: nome do state_dict, forma e posição (em números float32)."""

    name: str
    shape: tuple[int, ...]
    offset: int  # índice do primeiro float32 no binário
    size: int  # quantos float32


@dataclass(frozen=True)
class WebManifest:
    """O que o lm.js precisa para montar o modelo sem adivinhar nada."""

    format: str
    config: dict  # campos de TinyConfig (vocab_size, d_model, n_layers, n_heads, ...)
    tensors: tuple[TensorEntry, ...]
    nbytes: int  # tamanho do binário
    sha256: str  # do binário
    pretokenization: str  # a expressão regular do Python (o lm.js confere que é a que ele traduziu)
    char_classes: tuple[int, ...]  # (início, classe) de cada trecho de code points; veja char_class_runs
    merges: tuple[tuple[int, int], ...]  # a fusão r junta (a, b) no token 256 + r
    # as palavras do texto de treino (atencao.lm.vocabulary), em ordem: a "fração de palavras
    # conhecidas" que a figura mede nas continuações, como o capítulo 8 mede
    vocabulary: tuple[str, ...] = ()

    def to_json(self) -> str:
        d = dataclasses.asdict(self)
        return json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n"


# As classes de caractere da pré-tokenização (PRETOKEN_PATTERN), como o `re` do
# Python as vê: 0 letra ([^\W\d_]), 1 dígito decimal (\d), 2 espaço (\s), 3 o
# resto ([^\s\w] ou "_"). Elas dependem da tabela Unicode do Python que
# construiu o livro; a do navegador pode ser de outra versão do Unicode (o
# Node 20 discorda do Python 3.11 em ~14 mil code points), então o lm.js não
# usa as dele: recebe os trechos daqui.
CHAR_CLASSES = (r"[^\W\d_]", r"\d", r"\s", r"[^\s\w]|_")
_ALL_CODE_POINTS = None


def char_class_runs() -> tuple[int, ...]:
    """(início, classe, início, classe, ...) dos trechos de code points 0 .. 0x10FFFF de mesma classe.

    Os substitutos (U+D800 .. U+DFFF), que não são caracteres, entram na classe 3.
    """
    global _ALL_CODE_POINTS
    if _ALL_CODE_POINTS is None:  # os substitutos viram "\x00" (classe 3): o texto precisa ser UTF-8 válido
        _ALL_CODE_POINTS = ("".join(map(chr, range(0xD800))) + "\x00" * 0x800
                            + "".join(map(chr, range(0xE000, 0x110000))))
    cls = np.full(0x110000, 3, dtype=np.uint8)
    for k, pat in enumerate(CHAR_CLASSES[:3]):
        for m in re.finditer(f"(?:{pat})+", _ALL_CODE_POINTS):
            cls[m.start():m.end()] = k
    starts = np.r_[0, np.flatnonzero(np.diff(cls)) + 1]
    return tuple(int(v) for pair in zip(starts, cls[starts]) for v in pair)


def web_tensors(model) -> list[tuple[str, np.ndarray]]:
    """(nome, float32 contíguo) de cada parâmetro, na ordem do state_dict; a matriz atada vai uma vez."""
    tied = model.config.tie_embeddings
    out = []
    for name, t in model.state_dict().items():
        if tied and name == "lm_head.weight":
            continue  # é a mesma matriz de tok_emb.weight
        out.append((name, np.ascontiguousarray(t.detach().cpu().float().numpy(), dtype="<f4")))
    return out


def build_manifest(model, tokenizer, vocabulary=()) -> tuple[WebManifest, bytes]:
    """O manifesto e os bytes do binário para `model` e `tokenizer` (nada é gravado)."""
    tensors, chunks, offset = [], [], 0
    for name, arr in web_tensors(model):
        tensors.append(TensorEntry(name, tuple(int(s) for s in arr.shape), offset, int(arr.size)))
        chunks.append(arr.tobytes())
        offset += arr.size
    blob = b"".join(chunks)
    if len(blob) > MAX_BYTES:
        raise ValueError(
            f"os pesos em float32 têm {len(blob) / 2**20:.1f} MiB, mais que o teto de "
            f"{MAX_BYTES / 2**20:.0f} MiB do modelo no navegador: diminua o modelo ou mude o formato "
            f"({FORMAT}) em atencao/web_lm.py e em book/_static/modelo/lm.js juntos")
    if tokenizer.vocab_size != model.config.vocab_size:
        raise ValueError(f"o tokenizador tem {tokenizer.vocab_size} tokens e o modelo, "
                         f"{model.config.vocab_size}: gere os dois juntos com `make weights`")
    manifest = WebManifest(
        format=FORMAT, config=dataclasses.asdict(model.config), tensors=tuple(tensors),
        nbytes=len(blob), sha256=hashlib.sha256(blob).hexdigest(),
        pretokenization=PRETOKEN_PATTERN, char_classes=char_class_runs(),
        merges=tuple(tuple(m) for m in tokenizer.merges), vocabulary=tuple(sorted(vocabulary)))
    return manifest, blob


def _write_if_changed(path: Path, data: bytes) -> bool:
    if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
        os.utime(path)  # igual: não regrava, só marca como conferido agora (book/_ext/modelo_web.py)
        return False
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # quem lê nunca vê um arquivo pela metade
    return True


def export_web_lm(out_dir: str | Path, data_dir: str | Path | None = None) -> WebManifest:
    """Grava lm_weights.bin e lm_manifest.json em out_dir, dos pesos de `data_dir` (padrão: os do curso)."""
    from . import lm  # torch só aqui: importar este módulo não custa o torch

    tokenizer, model, _, _ = lm.load_lm() if data_dir is None else lm.load_lm(data_dir)
    corpus = lm.load_corpus() if data_dir is None else lm.load_corpus(data_dir)
    manifest, blob = build_manifest(model, tokenizer, lm.vocabulary(corpus.train_text))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _write_if_changed(out / WEIGHTS_NAME, blob)
    _write_if_changed(out / MANIFEST_NAME, manifest.to_json().encode("utf-8"))
    return manifest
