"""Texto de verdade para o modelo tiny: o corpus do próprio livro e um tokenizador BPE (cap. 8).

O que este arquivo promete:
- `project_corpus()`: o texto em português que o projeto escreveu: a prosa
  das páginas `book/**/*.md` (sem cabeçalho jupytext, células e blocos de
  código, matemática, marcação MyST, referências `glue`, tabelas e
  comentários HTML), as células de texto dos cadernos de exercícios, o README,
  o CONTRIBUTING e as docstrings do código. Determinístico: os mesmos arquivos
  dão o mesmo texto, o mesmo hash e a mesma divisão treino/validação.
- A divisão é por parágrafo, pelo hash do próprio parágrafo: um parágrafo vai
  para a validação quando o seu SHA-256 é múltiplo de 10 (cerca de 10 %).
  Editar um parágrafo só pode mudar o lado desse parágrafo.
- `BPETokenizer`: BPE em bytes (*byte-level*), como o do GPT-2. O vocabulário
  começa nos 256 bytes e cada fusão aprendida acrescenta um token; com 768
  fusões são os 1.024 tokens da configuração tiny. Qualquer texto UTF-8 vira
  tokens (não há "token desconhecido") e `decode(encode(s)) == s`.

Nada é baixado: o texto é o que o projeto escreveu.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Corpus", "project_corpus", "extract_prose", "BPETokenizer", "ROOT", "PRETOKEN_PATTERN"]

ROOT = Path(__file__).resolve().parent.parent  # a raiz do repositório

# Diretivas cujo conteúdo é prosa (fica); todas as outras cercas são código ou
# maquinaria do livro (saem inteiras: code-cell, literalinclude, math, ...).
_PROSE_DIRECTIVES = {"admonition", "note", "warning", "tip", "important", "tab-set", "tab-item",
                     "glossary", "figure"}
_FENCE = re.compile(r"^\s*(`{3,}|:{3,})\s*(?:\{([\w:-]+)\})?\s*(.*)$")
_INLINE = [
    (re.compile(r"\{(?:term|doc)\}`([^`<]*?)\s*(?:<[^`]*>)?`"), r"\1"),  # {term}`cabeças <cabeça>` -> cabeças
    (re.compile(r"\{[\w:-]+\}`[^`]*`"), ""),  # {cite:p}`...`, {glue:text}`...`, outros papéis
    (re.compile(r"\$\$.*?\$\$"), ""),  # matemática em bloco numa linha
    (re.compile(r"(?<!\\)\$[^$]+\$"), ""),  # matemática no texto
    (re.compile(r"`([^`]*)`"), r"\1"),  # código no texto: fica o nome, sem as crases
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # [texto](endereço) -> texto
    (re.compile(r"<!--.*?-->"), ""),
    (re.compile(r"\*\*|__|(?<!\w)[*_]|[*_](?!\w)"), ""),  # ênfase
]


@dataclass(frozen=True)
class Corpus:
    """A prosa do livro em parágrafos, com a divisão treino/validação e o hash."""

    paragraphs: tuple[str, ...]  # na ordem dos arquivos (ordenados pelo caminho)
    is_val: tuple[bool, ...]  # um por parágrafo: True = validação
    origin: tuple[str, ...]  # um por parágrafo: de que fonte veio (livro, exercícios, ...)

    @property
    def text(self) -> str:
        """O corpus inteiro: os parágrafos separados por uma quebra de linha."""
        return "\n".join(self.paragraphs)

    @property
    def train_text(self) -> str:
        return "\n".join(p for p, v in zip(self.paragraphs, self.is_val) if not v)

    @property
    def val_text(self) -> str:
        return "\n".join(p for p, v in zip(self.paragraphs, self.is_val) if v)

    @property
    def sha256(self) -> str:
        """Impressão digital do texto: muda se qualquer parágrafo mudar."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def _is_val(paragraph: str) -> bool:
    return int(hashlib.sha256(paragraph.encode("utf-8")).hexdigest(), 16) % 10 == 0


def _clean_inline(text: str) -> str:
    for pat, rep in _INLINE:
        text = pat.sub(rep, text)
    return re.sub(r"\s+", " ", text).strip()


def _strip_line(line: str) -> str:
    line = re.sub(r"^\s*#+\s*", "", line)  # títulos
    return re.sub(r"^\s*(?:[-+*]|\d+\.)\s+", "", line)  # itens de lista


def extract_prose(markdown: str) -> list[str]:
    """Parágrafos de prosa de uma página MyST (veja o que sai no docstring do módulo)."""
    if not isinstance(markdown, str):
        raise TypeError(f"extract_prose espera o texto da página (str), veio {type(markdown).__name__}")
    lines = markdown.splitlines()
    i = 0
    if lines and lines[0].strip() == "---":  # cabeçalho jupytext/kernelspec
        fim = next((j for j in range(1, len(lines)) if lines[j].strip() == "---"), None)
        if fim is None:
            raise ValueError("cabeçalho '---' sem o '---' que o fecha")
        i = fim + 1
    paragraphs: list[str] = []
    current: list[str] = []
    stack: list[tuple[str, str]] = []  # cercas abertas de diretivas de prosa: (cerca, nome)

    def flush():
        if current:
            par = _clean_inline(" ".join(current))
            if sum(ch.isalpha() for ch in par) >= 20:  # sobras de marcação não são parágrafos
                paragraphs.append(par)
            current.clear()

    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if stack and line.strip() == stack[-1][0]:  # fecha uma diretiva de prosa
            flush()
            stack.pop()
            i += 1
            continue
        if m:
            fence, name, rest = m.group(1), m.group(2), m.group(3)
            flush()
            if name in _PROSE_DIRECTIVES:
                stack.append((fence, name))
                if name == "admonition" and sum(c.isalpha() for c in rest) >= 20:
                    paragraphs.append(_clean_inline(rest))  # o título da caixa é prosa
                i += 1
                while i < len(lines) and re.match(r"^\s*:[\w-]+:", lines[i]):  # opções da diretiva
                    i += 1
                continue
            # código, literalinclude, bibliography...: pula até a cerca que fecha
            i += 1
            while i < len(lines) and not re.match(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$", lines[i]):
                i += 1
            i += 1
            continue
        s = line.strip()
        if s.startswith("$$"):  # matemática em bloco
            flush()
            if not (len(s) > 2 and s.endswith("$$")):
                i += 1
                while i < len(lines) and not lines[i].strip().endswith("$$"):
                    i += 1
            i += 1
            continue
        if not s or s.startswith("|") or re.match(r"^\([\w-]+\)=$", s) or s.startswith("<!--"):
            flush()  # linha em branco, tabela, rótulo (cap-x)=, comentário
            i += 1
            continue
        if stack and stack[-1][1] == "glossary" and not line.startswith((" ", "\t")):
            flush()  # nome do termo (em português e em inglês): só a definição é prosa
            i += 1
            continue
        if re.match(r"^\s*#", line):  # um título é um parágrafo
            flush()
            current.append(_strip_line(line))
            flush()
            i += 1
            continue
        current.append(_strip_line(line))
        i += 1
    flush()
    return [p for p in (re.sub(r"\s+", " ", p).strip() for p in paragraphs) if p]


def _docstring_paragraphs(source: str) -> list[str]:
    """Parágrafos de prosa das docstrings de um arquivo Python (exemplos de código ficam de fora)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node) or ""
            for par in re.split(r"\n\s*\n", doc):
                lines = par.splitlines()
                if any(ln.startswith((" ", "\t")) for ln in lines):
                    continue  # indentado: exemplo de código ou tabela
                text = _clean_inline(" ".join(_strip_line(ln) for ln in lines))
                letters = sum(ch.isalpha() or ch == " " for ch in text)
                if sum(ch.isalpha() for ch in text) >= 20 and letters >= 0.85 * len(text):
                    out.append(text)
    return out


def project_corpus(root: str | Path | None = None) -> Corpus:
    """O texto que o projeto escreveu, em parágrafos, sem repetições.

    Fontes, nesta ordem (cada uma em ordem de caminho): as páginas do livro
    (`book/**/*.md`), as células de texto dos cadernos de exercícios
    (`exercises/*/*.ipynb`), `README.md` e `CONTRIBUTING.md`, e as docstrings
    dos pacotes `atencao` e `autograder`.
    """
    root = Path(root) if root is not None else ROOT
    book = sorted((root / "book").rglob("*.md"))
    if not book:
        raise FileNotFoundError(f"nenhuma página .md em {root / 'book'}: o corpus começa pela prosa do livro")
    sources: list[tuple[str, list[str]]] = [
        ("livro", [p for f in book for p in extract_prose(f.read_text(encoding="utf-8"))]),
    ]
    cadernos = []
    for f in sorted((root / "exercises").glob("*/*.ipynb")):
        for cell in json.loads(f.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                src = cell["source"]
                cadernos += extract_prose(src if isinstance(src, str) else "".join(src))
    sources.append(("exercícios", cadernos))
    sources.append(("README e CONTRIBUTING", [p for name in ("README.md", "CONTRIBUTING.md")
                                             if (root / name).is_file()
                                             for p in extract_prose((root / name).read_text(encoding="utf-8"))]))
    pys = sorted((root / "atencao").rglob("*.py")) + sorted((root / "autograder").rglob("*.py"))
    sources.append(("docstrings", [p for f in pys for p in _docstring_paragraphs(f.read_text(encoding="utf-8"))]))
    seen: set[str] = set()
    paragraphs, origin = [], []
    for name, pars in sources:
        for p in pars:
            if p not in seen:
                seen.add(p)
                paragraphs.append(p)
                origin.append(name)
    return Corpus(tuple(paragraphs), tuple(_is_val(p) for p in paragraphs), tuple(origin))


# --------------------------------------------------------------------------
# BPE em bytes
# --------------------------------------------------------------------------

# Pré-tokenização: o texto é cortado em pedaços (uma palavra com o espaço que a
# precede, um número, pontuação, espaços) e as fusões nunca atravessam pedaços.
PRETOKEN_PATTERN = r" ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+"
_PRETOKEN = re.compile(PRETOKEN_PATTERN)


class BPETokenizer:
    """Tokenizador BPE em bytes: 256 tokens de um byte + uma fusão por token novo.

    A fusão número r junta o par de tokens (a, b) no token 256 + r. Treinar
    (`train`) é repetir: conte os pares vizinhos em todo o corpus, funda o mais
    frequente. Codificar (`encode`) é aplicar as mesmas fusões, sempre a de
    menor número primeiro, dentro de cada pedaço da pré-tokenização.
    """

    def __init__(self, merges: list[tuple[int, int]]):
        self.merges = [tuple(int(t) for t in m) for m in merges]
        self.vocab: list[bytes] = [bytes([b]) for b in range(256)]
        for r, (a, b) in enumerate(self.merges):
            if not (0 <= a < 256 + r and 0 <= b < 256 + r):
                raise ValueError(f"fusão {r} = ({a}, {b}) usa um token que ainda não existe (< {256 + r})")
            self.vocab.append(self.vocab[a] + self.vocab[b])
        self.rank = {m: r for r, m in enumerate(self.merges)}
        self._cache: dict[str, list[int]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @classmethod
    def train(cls, text: str, vocab_size: int = 1024) -> "BPETokenizer":
        """Aprende vocab_size - 256 fusões em `text`; empates vão para o par de menores números."""
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 256:
            raise ValueError(f"vocab_size deve ser um inteiro >= 256 (os bytes), veio {vocab_size!r}")
        counts = Counter(_PRETOKEN.findall(text))
        words = [list(w.encode("utf-8")) for w in counts]  # cada pedaço distinto, em bytes
        freq = list(counts.values())
        pairs: Counter = Counter()  # (a, b) -> quantas vezes aparece no corpus
        where: dict[tuple[int, int], set[int]] = {}  # (a, b) -> pedaços em que aparece
        for w, (seq, f) in enumerate(zip(words, freq)):
            for p in zip(seq, seq[1:]):
                pairs[p] += f
                where.setdefault(p, set()).add(w)
        merges = []
        for new in range(256, vocab_size):
            if not pairs:
                break  # o texto acabou de ser todo fundido
            best = max(pairs, key=lambda p: (pairs[p], -p[0], -p[1]))
            merges.append(best)
            for w in where.pop(best):
                seq, f = words[w], freq[w]
                for p in zip(seq, seq[1:]):  # tira os pares antigos deste pedaço...
                    pairs[p] -= f
                    if pairs[p] <= 0:
                        del pairs[p]
                merged, j = [], 0
                while j < len(seq):
                    if j + 1 < len(seq) and (seq[j], seq[j + 1]) == best:
                        merged.append(new)
                        j += 2
                    else:
                        merged.append(seq[j])
                        j += 1
                words[w] = merged
                for p in zip(merged, merged[1:]):  # ... e põe os novos
                    pairs[p] += f
                    where.setdefault(p, set()).add(w)
        return cls(merges)

    def _encode_piece(self, piece: str) -> list[int]:
        ids = self._cache.get(piece)
        if ids is not None:
            return ids
        ids = list(piece.encode("utf-8"))
        while len(ids) > 1:
            r, j = min((self.rank.get(p, len(self.rank)), j) for j, p in enumerate(zip(ids, ids[1:])))
            if r == len(self.rank):
                break  # nenhuma fusão conhecida sobrou
            ids[j:j + 2] = [256 + r]
        self._cache[piece] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """Texto -> lista de ids em [0, vocab_size)."""
        if not isinstance(text, str):
            raise TypeError(f"encode espera um texto (str), veio {type(text).__name__}")
        out: list[int] = []
        for piece in _PRETOKEN.findall(text):
            out += self._encode_piece(piece)
        return out

    def decode(self, ids) -> str:
        """Ids -> texto. Bytes que não formam UTF-8 válido (um corte no meio de um 'ç') viram '�'."""
        ids = ids.tolist() if hasattr(ids, "tolist") else list(ids)
        bad = [t for t in ids if not 0 <= int(t) < self.vocab_size]
        if bad:
            raise ValueError(f"ids fora do vocabulário [0, {self.vocab_size}): {bad[:5]}")
        return b"".join(self.vocab[int(t)] for t in ids).decode("utf-8", errors="replace")

    def pieces(self, text: str) -> list[str]:
        """Os tokens de `text`, cada um como texto (para mostrar como uma frase se divide)."""
        return [self.vocab[t].decode("utf-8", errors="replace") for t in self.encode(text)]

    def save(self, path: str | Path) -> None:
        data = {"tipo": "BPE em bytes", "vocab_size": self.vocab_size,
                "pretokenizacao": PRETOKEN_PATTERN, "merges": [list(m) for m in self.merges]}
        Path(path).write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "BPETokenizer":
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"tokenizador não encontrado em {path}: gere com `make weights`")
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("pretokenizacao") != PRETOKEN_PATTERN:
            raise ValueError(f"{path} foi treinado com outra pré-tokenização; gere de novo com `make weights`")
        return cls([tuple(m) for m in data["merges"]])

    def __repr__(self) -> str:
        return f"BPETokenizer(vocab_size={self.vocab_size}, fusões={len(self.merges)})"
