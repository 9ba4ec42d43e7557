r"""Texto de verdade para o modelo tiny: o corpus do próprio livro e um tokenizador BPE (cap. 8).

O que este arquivo promete:
- `project_corpus()`: o texto em português que o curso escreveu para ser lido:
  a prosa das páginas `book/**/*.md` e das células de texto dos cadernos de
  exercícios (`exercises/*/*.ipynb`). Nada de README, CONTRIBUTING ou
  docstrings, nem o que mora em pastas de maquinaria do livro (`book/_static`,
  `book/_ext`, qualquer pasta que comece com "_"): o texto do corpus só muda
  quando muda a prosa do curso. `SOURCE_KINDS` dá o nome de cada fonte.
  Saem o cabeçalho jupytext, as células e blocos de código, a matemática em
  bloco, tabelas e comentários HTML. No meio do texto, a matemática simples
  vira texto (`$i$` -> "i", `$j \le i$` -> "j ≤ i") e a complicada vira o
  marcador FORMULA; cada `{glue:text}` vira o valor que a construção do livro
  colou (lido de `_build/jupyter_execute/**/*.glue.json`) ou, sem livro
  construído, o marcador VALOR; uma citação `{cite:p}` sai junto com o espaço
  antes dela, e `{cite:t}` vira "Sobrenome et al.". Determinístico: os mesmos
  arquivos dão o mesmo texto, o mesmo hash e a mesma divisão treino/validação.
- A divisão é por parágrafo, pelo hash do próprio parágrafo: um parágrafo vai
  para a validação quando o seu SHA-256 é múltiplo de 10 (cerca de 10 %).
  Editar um parágrafo só pode mudar o lado desse parágrafo.
- `Corpus.save` / `Corpus.load`: o corpus congelado junto com os pesos
  (`atencao/data/corpus.json`), um instantâneo com nome e data (`name`,
  `date`: de que commit e de que dia é a prosa), com o hash da prosa de que veio
  (`source_sha256`, calculado sem os valores colados, para que só a prosa, e
  não a construção do livro, o mude).
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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Corpus", "project_corpus", "extract_prose", "render_math", "orphan_punctuation", "load_glue",
           "BPETokenizer", "ROOT", "PRETOKEN_PATTERN", "FORMULA", "VALOR", "CORPUS_FORMAT",
           "source_kind", "SOURCE_KINDS"]

ROOT = Path(__file__).resolve().parent.parent  # a raiz do repositório
FORMULA = "⟨fórmula⟩"  # matemática que não vira texto simples
VALOR = "⟨valor⟩"  # um {glue:text} sem o livro construído
CORPUS_FORMAT = "corpus-v1"

# O nome de cada fonte do corpus, pelo começo do caminho (a tabela do cap. 8).
SOURCE_KINDS = (("book/parte", "capítulos"), ("book/intro.md", "introdução"),
                ("book/apendices/", "apêndices"), ("exercises/", "cadernos de exercícios"))


def source_kind(path: str) -> str:
    """O nome da fonte de um parágrafo do corpus ("capítulos", "introdução", ...).

    ValueError se o caminho não for prosa do curso (um README, uma pasta de maquinaria)."""
    for prefix, name in SOURCE_KINDS:
        if path.startswith(prefix):
            return name
    raise ValueError(f"{path} não é prosa do curso (capítulos, introdução, apêndices ou cadernos)")

# Diretivas cujo conteúdo é prosa (fica); todas as outras cercas são código ou
# maquinaria do livro (saem inteiras: code-cell, literalinclude, math, ...).
_PROSE_DIRECTIVES = {"admonition", "note", "warning", "tip", "important", "tab-set", "tab-item",
                     "glossary", "figure"}
_FENCE = re.compile(r"^\s*(`{3,}|:{3,})\s*(?:\{([\w:-]+)\})?\s*(.*)$")

# --- matemática no texto -> texto ------------------------------------------

_SYMBOLS = {
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "cdot": "·", "times": "×",
    "approx": "≈", "to": "→", "infty": "∞", "sum": "Σ", "ell": "ℓ", "odot": "⊙", "dots": "…", "ldots": "…",
    "cdots": "…", "in": "∈", "pi": "π", "tau": "τ", "alpha": "α", "beta": "β", "theta": "θ", "Delta": "Δ",
    "lceil": "⌈", "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋", "log": "log", "exp": "exp", "max": "max",
    "min": "min", "sim": "~", "pm": "±", "mid": "|", "prime": "′", "sigma": "σ", "mu": "μ", "lambda": "λ",
    "epsilon": "ε", "varepsilon": "ε", "gamma": "γ", "delta": "δ", "phi": "φ", "partial": "∂",
}
_SPACES = {",", ";", ":", " ", "quad", "qquad", "!"}
_TEXTLIKE = {"text", "mathrm", "operatorname", "mathbf", "mathit", "textrm", "mathsf", "boldsymbol"}
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _group(tex: str, i: int) -> tuple[str, int]:
    """O argumento que começa em tex[i]: {…} (sem as chaves), um comando \\x ou um caractere."""
    if tex[i] == "{":
        depth, j = 0, i
        while j < len(tex):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1:j], j + 1
            j += 1
        raise ValueError("chave sem par")
    if tex[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
        return m.group(0), i + len(m.group(0))
    return tex[i], i + 1


def _render(tex: str) -> str:
    out, i = [], 0
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            name, i = m.group(1), i + len(m.group(0))
            if name in _SPACES:
                out.append(" ")
            elif name in _SYMBOLS:
                out.append(_SYMBOLS[name])
            elif name in _TEXTLIKE or name == "mathbb":
                arg, i = _group(tex, i)
                out.append({"R": "ℝ", "N": "ℕ", "Z": "ℤ"}.get(arg, arg) if name == "mathbb" else arg)
            elif name == "sqrt":
                arg, i = _group(tex, i)
                r = _render(arg)
                out.append("√" + (r if len(r) == 1 or r.replace("_", "").isalnum() else f"({r})"))
            elif name == "tilde":
                arg, i = _group(tex, i)
                out.append(_render(arg) + "\u0303")
            elif name == "top":
                out.append("ᵀ")
            else:
                raise ValueError(f"comando sem tradução: \\{name}")
        elif c in "^_":
            arg, i = _group(tex, i + 1)
            if arg[1:] in _TEXTLIKE | {"mathbb", "sqrt", "tilde"}:  # d_\text{model}: o comando e o seu argumento
                inner, i = _group(tex, i)
                arg = f"{arg}{{{inner}}}"
            r = _render(arg).strip()
            if c == "^" and r == "ᵀ":
                out.append("ᵀ")
            elif c == "^" and r.isdigit():
                out.append(r.translate(_SUPERSCRIPT))
            else:
                out.append(c + (r if len(r) == 1 or r.isalnum() else f"({r})"))
        elif c in "{}":
            i += 1  # chaves de agrupamento
        else:
            out.append(c)
            i += 1
    return "".join(out)


def render_math(tex: str) -> str:
    """Matemática do texto como texto simples (`j \\le i` -> "j ≤ i"), ou FORMULA se não der."""
    try:
        text = _render(tex)
    except (ValueError, AttributeError, IndexError):
        return FORMULA
    text = re.sub(r"\s+", " ", text).strip()
    if not text or "\\" in text or len(text) > 40:
        return FORMULA
    return text


# --- papéis MyST ------------------------------------------------------------

_GLUE = re.compile(r"\{glue(?::\w+)?\}`([^`:]+)(?::[^`]*)?`")
_CITE_P = re.compile(r"\s*\{cite(?::p|:ps)?\}`[^`]*`")
_CITE_T = re.compile(r"\{cite:t\}`([^`]*)`")
_ROLE_WITH_TEXT = re.compile(r"\{(?:term|doc|ref|numref)\}`([^`<]*?)\s*(?:<[^`]*>)?`")
_OTHER_ROLE = re.compile(r"\{[\w:-]+\}`([^`]*)`")
_MATH = re.compile(r"(?<!\\)\$([^$]+)\$")
_DISPLAY_INLINE = re.compile(r"\$\$.*?\$\$")
_INLINE_AFTER = [
    (re.compile(r"`([^`]*)`"), r"\1"),  # código no texto: fica o nome, sem as crases
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # [texto](endereço) -> texto
    (re.compile(r"<!--.*?-->"), ""),
    (re.compile(r"\*\*|__|(?<!\w)[*_]|[*_](?!\w)"), ""),  # ênfase
]
# pontuação solta: depois de espaço e antes de espaço ou do fim (" , ", " ."), ")" depois de
# espaço, "( " e "()" solto; " .ipynb", " ...", " :]" e "f()" (código no texto) não são buracos
_ORPHAN = re.compile(r"(?<=\s)[,.;:!?](?=\s|$)|(?<=\s)\)|\(\s|(?<![\w)\]])\(\)")


def orphan_punctuation(paragraph: str) -> list[str]:
    """Os buracos de um parágrafo: pontuação depois de um espaço (" ,", " ."), "( " ou "()"."""
    return [paragraph[max(0, m.start() - 12): m.end() + 12] for m in _ORPHAN.finditer(paragraph)]


def _bib_names(root: Path) -> dict[str, str]:
    """chave -> "Sobrenome", "Sobrenome e Outro" ou "Sobrenome et al." (de book/references.bib)."""
    bib = root / "book" / "references.bib"
    if not bib.is_file():
        return {}
    names = {}
    for m in re.finditer(r"@\w+\{([^,\s]+),(.*?)\n\}", bib.read_text(encoding="utf-8"), re.S):
        a = re.search(r"author\s*=\s*\{(.*?)\},?\s*\n", m.group(2), re.S)
        if not a:
            continue
        authors = [x.strip() for x in re.split(r"\s+and\s+", re.sub(r"\s+", " ", a.group(1)))]
        last = [re.sub(r"[{}]", "", x.split(",")[0] if "," in x else x.split()[-1]) for x in authors]
        names[m.group(1)] = (last[0] if len(last) == 1 else f"{last[0]} e {last[1]}" if len(last) == 2
                             else f"{last[0]} et al.")
    return names


def _clean_inline(text: str, glue: Mapping[str, str] | None = None,
                  cites: Mapping[str, str] | None = None) -> str:
    text = _CITE_P.sub("", text)
    text = _CITE_T.sub(lambda m: (cites or {}).get(m.group(1).split(",")[0].strip(), "os autores"), text)
    text = _GLUE.sub(lambda m: (glue or {}).get(m.group(1).strip(), VALOR), text)
    text = _ROLE_WITH_TEXT.sub(r"\1", text)
    text = _OTHER_ROLE.sub(r"\1", text)
    text = _DISPLAY_INLINE.sub(FORMULA, text)
    text = _MATH.sub(lambda m: render_math(m.group(1)), text)
    for pat, rep in _INLINE_AFTER:
        text = pat.sub(rep, text)
    return re.sub(r"\s+", " ", text).strip()


def _strip_line(line: str) -> str:
    line = re.sub(r"^\s*#+\s*", "", line)  # títulos
    return re.sub(r"^\s*(?:[-+*]|\d+\.)\s+", "", line)  # itens de lista


def extract_prose(markdown: str, glue: Mapping[str, str] | None = None,
                  cites: Mapping[str, str] | None = None) -> list[str]:
    """Parágrafos de prosa de uma página MyST (veja o que sai no docstring do módulo).

    `glue`: nome -> valor dos {glue:text} desta página (sem ele, VALOR);
    `cites`: chave bibliográfica -> nome dos autores, para {cite:t}.
    """
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

    def clean(text: str) -> str:
        return _clean_inline(text, glue, cites)

    def flush():
        if current:
            par = clean(" ".join(current))
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
                    paragraphs.append(clean(rest))  # o título da caixa é prosa
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


def glue_text(plain: str) -> str:
    """Um valor colado como o `{glue:text}` o mostra: o `text/plain` da saída, sem as aspas
    de um repr de texto (`'0,23'` vira 0,23)."""
    try:
        return str(ast.literal_eval(plain))
    except (ValueError, SyntaxError):
        return plain


def load_glue(glue_file: Path) -> dict[str, str]:
    """Os valores colados numa página: o `<página>.glue.json` que o myst-nb grava ao construir o livro."""
    if not glue_file.is_file():
        return {}
    out = {}
    for name, item in json.loads(glue_file.read_text(encoding="utf-8")).items():
        plain = item.get("data", {}).get("text/plain")
        if plain is not None:
            out[name] = glue_text(plain)
    return out


@dataclass(frozen=True)
class Corpus:
    """A prosa do curso em parágrafos, com a divisão treino/validação e o hash."""

    paragraphs: tuple[str, ...]  # na ordem dos arquivos (ordenados pelo caminho)
    is_val: tuple[bool, ...]  # um por parágrafo: True = validação
    origin: tuple[str, ...]  # um por parágrafo: o arquivo de que veio, relativo à raiz
    source_sha256: str = ""  # hash da prosa sem os valores colados (veja o docstring do módulo)
    glue: str = ""  # de onde vieram os valores colados (ou que não vieram)
    name: str = ""  # o nome do instantâneo (de que commit é a prosa)
    date: str = ""  # o dia do instantâneo, AAAA-MM-DD

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

    def save(self, path: str | Path) -> None:
        """Grava o corpus congelado (JSON em UTF-8, um parágrafo por linha)."""
        head = {"formato": CORPUS_FORMAT, "sha256": self.sha256, "source_sha256": self.source_sha256,
                "glue": self.glue, "nome": self.name, "data": self.date}
        rows = [json.dumps([o, int(v), p], ensure_ascii=False)
                for p, v, o in zip(self.paragraphs, self.is_val, self.origin)]
        Path(path).write_text(json.dumps(head, ensure_ascii=False)[:-1] + ',\n "paragraphs": [\n'
                              + ",\n".join(rows) + "\n]}\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "Corpus":
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"corpus congelado não encontrado em {path}: gere com `make weights`")
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("formato") != CORPUS_FORMAT:
            raise ValueError(f"{path}: formato {data.get('formato')!r}, esperava {CORPUS_FORMAT!r}")
        rows = data["paragraphs"]
        corpus = cls(tuple(r[2] for r in rows), tuple(bool(r[1]) for r in rows), tuple(r[0] for r in rows),
                     data["source_sha256"], data["glue"], data.get("nome", ""), data.get("data", ""))
        if corpus.sha256 != data["sha256"]:
            raise ValueError(f"{path}: o texto não bate com o hash gravado (arquivo alterado à mão?)")
        return corpus


def _is_val(paragraph: str) -> bool:
    return int(hashlib.sha256(paragraph.encode("utf-8")).hexdigest(), 16) % 10 == 0


def _documents(root: Path, glue_dir: Path) -> list[tuple[str, str, Path | None]]:
    """(caminho relativo, texto MyST, arquivo .glue.json ou None) de cada fonte, em ordem de caminho."""
    book = sorted(f for f in (root / "book").rglob("*.md")
                  if f.name != "README.md" and not any(part.startswith("_")
                                                       for part in f.relative_to(root / "book").parts[:-1]))
    if not book:
        raise FileNotFoundError(f"nenhuma página .md em {root / 'book'}: o corpus começa pela prosa do livro")
    docs = []
    for f in book:
        rel = f.relative_to(root)
        glue = glue_dir / rel.with_suffix(".glue.json")
        docs.append((rel.as_posix(), f.read_text(encoding="utf-8"), glue))
    for f in sorted((root / "exercises").glob("*/*.ipynb")):
        cells = json.loads(f.read_text(encoding="utf-8"))["cells"]
        md = "\n\n".join(c["source"] if isinstance(c["source"], str) else "".join(c["source"])
                         for c in cells if c["cell_type"] == "markdown")
        docs.append((f.relative_to(root).as_posix(), md, None))
    return docs


def project_corpus(root: str | Path | None = None, use_glue: bool = True,
                   glue_dir: str | Path | None = None) -> Corpus:
    """A prosa do livro e dos cadernos de exercícios, em parágrafos, sem repetições.

    use_glue=True substitui cada {glue:text} pelo valor da última construção
    do livro (`glue_dir`, por padrão `<root>/_build/jupyter_execute`), se houver; use_glue=False põe sempre
    VALOR. O `source_sha256` é sempre o do texto com VALOR: só a prosa o muda.
    """
    root = Path(root) if root is not None else ROOT
    glue_dir = Path(glue_dir) if glue_dir is not None else root / "_build" / "jupyter_execute"
    docs = _documents(root, glue_dir)
    cites = _bib_names(root)

    def build(glued: bool) -> tuple[list[str], list[str]]:
        seen: set[str] = set()
        paragraphs, origin = [], []
        for rel, md, glue_file in docs:
            glue = load_glue(glue_file) if glued and glue_file is not None else {}
            for p in extract_prose(md, glue, cites):
                if p not in seen:
                    seen.add(p)
                    paragraphs.append(p)
                    origin.append(rel)
        return paragraphs, origin

    bare, _ = build(False)
    source = hashlib.sha256("\n".join(bare).encode("utf-8")).hexdigest()
    has_glue = use_glue and any(g is not None and g.is_file() for _, _, g in docs)
    paragraphs, origin = build(True) if has_glue else (bare, _)
    glue = "valores colados pela construção do livro" if has_glue else f"sem o livro construído: {VALOR}"
    return Corpus(tuple(paragraphs), tuple(_is_val(p) for p in paragraphs), tuple(origin), source, glue)


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
