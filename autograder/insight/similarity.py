"""Semelhança entre as respostas de uma tarefa: um indicador para uma pessoa conferir,
nunca um veredito.

Entrada: por aluno, o código das células de resposta de UMA tarefa (`Submission`), e o
código inicial que o release entrega em cada uma dessas células (o molde, que todos
recebem e por isso não conta). As células travadas ficam de fora porque quem chama só
passa as células de resposta; as saídas não entram.

Como funciona (a ideia do MOSS: Schleimer, Wilkerson e Aiken, "Winnowing: local
algorithms for document fingerprinting", SIGMOD 2003):

1. Normalização pelo `tokenize` do Python: comentários, espaços e linhas em branco somem;
   cada nome vira um marcador pelo papel que tem (definido em `def`/`class`, chamado,
   ou usado como valor); literais viram um marcador; palavras-chave, operadores e nomes
   de atributo (`torch.softmax`, `.masked_fill`) ficam. Trocar nomes de variáveis,
   números, textos ou comentários não muda a sequência.
2. k-gramas de fichas normalizadas, cada um com um hash estável (CRC-32, igual em todo
   processo), e o "winnowing": de cada janela de `window` hashes seguidos fica o menor.
   Todo trecho comum com pelo menos `k + window - 1` fichas deixa ao menos uma impressão
   em comum.
3. As impressões são um conjunto: a ordem das funções não importa (trocar a ordem só
   perde os poucos k-gramas que cruzam a fronteira entre elas).
4. Um índice invertido impressão → alunos dá os pares candidatos (só quem divide alguma
   impressão vira par), em vez de comparar todos os pares; impressões que aparecem em
   mais de `max_students` alunos (o jeito comum de escrever a resposta) são ignoradas, o
   que também mantém o custo quase linear no tamanho da turma. Consequência: um grupo de
   mais de `max_students` respostas iguais não aparece (como no MOSS); suba o valor para
   procurar um grupo assim.
5. A nota do par é a fração das impressões do aluno com MENOS impressões que aparece no
   outro (contenção): acrescentar código morto na cópia não a dilui.

Por que não uma biblioteca: o copydetect 0.5.0 (MIT) faz normalização (pygments) e
winnowing, mas o `CopyDetector` lê arquivos do disco e compara todos os pares (n²
comparações: 499.500 para 1.000 alunos), e o molde dele é por arquivo, não por célula;
o Dolos é JavaScript (npm). O que precisamos (só Python, por célula, índice invertido,
trechos por linha das células) cabe em ~200 linhas da biblioteca padrão, sem dependência
nova.
"""

from __future__ import annotations

import io
import keyword
import tokenize
import zlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

__all__ = [
    "DEFAULT_THRESHOLD", "DEFAULT_K", "DEFAULT_WINDOW", "DEFAULT_MAX_STUDENTS",
    "Submission", "Fragment", "SimilarPair", "normalize", "fingerprints", "find_similar",
]

# Escolhidos pela turma sintética dos testes (tests/grader/insight/test_similarity.py), com
# k = 8 e janela 4: as cópias disfarçadas dão de 0,78 (funções reordenadas + código morto) a
# 0,96 (nomes e comentários trocados); as respostas corretas independentes, no máximo 0,25
# (duas softmax estáveis escritas do mesmo jeito de livro). O limiar 0,5 fica entre os dois,
# com folga dos dois lados. Com k = 6 as cópias sobem pouco e o ruído entre independentes
# sobe mais; com k = 12 as cópias com código morto caem a 0,70. No bench (1.000 alunos
# sintéticos, bench/bench_similarity.py) as cópias plantadas ficam acima de 0,9.
DEFAULT_THRESHOLD = 0.5
DEFAULT_K = 8
DEFAULT_WINDOW = 4
# Uma impressão em mais que 10 alunos é o jeito comum de escrever e não conta: o padrão do
# MOSS (a opção -m: "the maximum number of times a given passage may appear before it is
# ignored", 10). No bench (1.000 alunos), 10 % da turma em vez de 10 deixava 53 pares honestos
# acima do limiar, contra 14; e o custo fica limitado: cada impressão gera no máximo 45 pares.
DEFAULT_MAX_STUDENTS = 10
DEFAULT_MIN_FINGERPRINTS = 6    # respostas com menos impressões que isso não formam par


@dataclass(frozen=True)
class Submission:
    """As células de resposta de um aluno numa tarefa: grade_id → código-fonte."""

    student: str
    cells: Mapping[str, str]


@dataclass(frozen=True)
class Fragment:
    """Um trecho em comum: as linhas (1-based, inclusivas) da mesma célula nos dois alunos."""

    grade_id: str
    lines_a: tuple[int, int]
    lines_b: tuple[int, int]
    code_a: str
    code_b: str


@dataclass(frozen=True)
class SimilarPair:
    """Um par acima do limiar. `score` é a contenção (0 a 1); `jaccard`, a interseção sobre a
    união; `shared`, quantas impressões os dois dividem."""

    a: str
    b: str
    score: float
    jaccard: float
    shared: int
    fragments: tuple[Fragment, ...]


@dataclass(frozen=True)
class _Token:
    text: str
    line: int        # linha inicial no código original
    end_line: int


def _strip_magics(source: str) -> str:
    """Troca por linhas vazias as linhas do IPython (`%magic`, `!comando`), que o tokenize
    não lê; os números das linhas ficam os mesmos."""
    out = []
    for line in source.splitlines():
        s = line.lstrip()
        out.append("" if s.startswith(("%", "!")) else line)
    return "\n".join(out) + "\n"


def normalize(source: str) -> list[_Token]:
    """As fichas normalizadas de um código (veja o passo 1 do módulo). Código que não
    tokeniza até o fim (um parêntese aberto, uma indentação errada) rende as fichas até
    o ponto do erro."""
    raw: list[tokenize.TokenInfo] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(_strip_magics(source)).readline):
            raw.append(tok)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    significant = [t for t in raw if t.type not in (
        tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT,
        tokenize.ENCODING, tokenize.ENDMARKER)]
    out: list[_Token] = []
    for i, t in enumerate(significant):
        prev = significant[i - 1] if i else None
        nxt = significant[i + 1] if i + 1 < len(significant) else None
        if t.type == tokenize.NAME:
            if keyword.iskeyword(t.string) or keyword.issoftkeyword(t.string):
                text = t.string
            elif prev is not None and prev.string == ".":
                text = "." + t.string            # atributo: o nome da biblioteca fica
            elif prev is not None and prev.string in ("def", "class"):
                text = "D"                       # nome definido
            elif nxt is not None and nxt.string == "(":
                text = "C"                       # nome chamado
            else:
                text = "V"                       # nome usado como valor
        elif t.type == tokenize.NUMBER:
            text = "0"
        elif t.type == tokenize.STRING:
            text = "S"
        elif t.type == tokenize.NEWLINE or t.string == ";":
            text = ";"
        elif t.string == "." and nxt is not None and nxt.type == tokenize.NAME:
            continue                             # o ponto vai junto do atributo
        else:
            text = t.string
        out.append(_Token(text, t.start[0], t.end[0]))
    return out


def _hash(texts: Sequence[str]) -> int:
    return zlib.crc32("\x1f".join(texts).encode("utf-8"))


def fingerprints(tokens: Sequence[_Token], k: int = DEFAULT_K,
                 window: int = DEFAULT_WINDOW) -> dict[int, tuple[int, int]]:
    """Winnowing: hash → (linha inicial, linha final) da primeira ocorrência escolhida.

    Código com menos de k fichas rende uma única impressão (se tiver alguma ficha)."""
    if not tokens:
        return {}
    if len(tokens) < k:
        return {_hash([t.text for t in tokens]): (tokens[0].line, tokens[-1].end_line)}
    texts = [t.text for t in tokens]
    hashes = [_hash(texts[i:i + k]) for i in range(len(tokens) - k + 1)]
    chosen: dict[int, tuple[int, int]] = {}
    last = -1
    w = min(window, len(hashes))
    for start in range(len(hashes) - w + 1):
        # o menor da janela; no empate, o mais à direita (Schleimer et al., 2003)
        pos = min(range(start, start + w), key=lambda j: (hashes[j], -j))
        if pos != last:
            last = pos
            chosen.setdefault(hashes[pos], (tokens[pos].line, tokens[pos + k - 1].end_line))
    return chosen


def _cell_prints(source: str, starter: str, k: int, window: int) -> dict[int, tuple[int, int]]:
    prints = fingerprints(normalize(source), k, window)
    if starter.strip():
        # o molde: todos os k-gramas dele (não só os escolhidos), para nenhum sobrar
        stoks = normalize(starter)
        texts = [t.text for t in stoks]
        boiler = {_hash(texts[i:i + k]) for i in range(max(1, len(texts) - k + 1))}
        prints = {h: v for h, v in prints.items() if h not in boiler}
    return prints


def _lines(source: str, span: tuple[int, int]) -> str:
    lines = source.splitlines()
    return "\n".join(lines[span[0] - 1:span[1]])


def _fragments(grade_id: str, spans: list[tuple[tuple[int, int], tuple[int, int]]],
               src_a: str, src_b: str) -> list[Fragment]:
    """Junta os trechos de impressões em comum que se encostam nos dois alunos."""
    spans.sort()
    merged: list[list[int]] = []
    for (a0, a1), (b0, b1) in spans:
        if merged:
            m = merged[-1]
            if a0 <= m[1] + 1 and b0 <= m[3] + 1 and b1 >= m[2] - 1:
                m[1], m[2], m[3] = max(m[1], a1), min(m[2], b0), max(m[3], b1)
                continue
        merged.append([a0, a1, b0, b1])
    return [Fragment(grade_id, (a0, a1), (b0, b1), _lines(src_a, (a0, a1)), _lines(src_b, (b0, b1)))
            for a0, a1, b0, b1 in merged]


def find_similar(submissions: Iterable[Submission], starter: Mapping[str, str] | None = None, *,
                 threshold: float = DEFAULT_THRESHOLD, k: int = DEFAULT_K,
                 window: int = DEFAULT_WINDOW, max_students: int = DEFAULT_MAX_STUDENTS,
                 min_fingerprints: int = DEFAULT_MIN_FINGERPRINTS) -> list[SimilarPair]:
    """Os pares de alunos com `score >= threshold`, do mais parecido ao menos (empates pela
    ordem dos nomes), cada um com os trechos em comum.

    `starter`: grade_id → código inicial da célula no release (o molde). Uma impressão
    presente em mais de `max_students` alunos é o jeito comum de escrever e não conta.
    Nada é gravado nem sai da máquina; nenhuma nota muda."""
    starter = starter or {}
    subs = list(submissions)
    # impressões por aluno: (grade_id, hash) → (linha inicial, linha final)
    prints: list[dict[tuple[str, int], tuple[int, int]]] = []
    for sub in subs:
        mine: dict[tuple[str, int], tuple[int, int]] = {}
        for gid, src in sub.cells.items():
            for h, span in _cell_prints(src or "", starter.get(gid, ""), k, window).items():
                mine[(gid, h)] = span
        prints.append(mine)
    index: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, mine in enumerate(prints):
        for key in mine:
            index[key].append(i)
    common = {key for key, who in index.items() if len(who) > max_students}
    sizes = [len(mine.keys() - common) if common else len(mine) for mine in prints]
    shared: dict[tuple[int, int], int] = defaultdict(int)
    for key, who in index.items():
        if len(who) < 2 or key in common:
            continue
        for x in range(len(who)):
            for y in range(x + 1, len(who)):
                shared[(who[x], who[y])] += 1
    pairs: list[SimilarPair] = []
    for (i, j), count in shared.items():
        small = min(sizes[i], sizes[j])
        if small < min_fingerprints:
            continue
        score = count / small
        if score < threshold:
            continue
        jac = count / (sizes[i] + sizes[j] - count)
        a, b = subs[i], subs[j]
        if b.student < a.student:
            a, b, i, j = b, a, j, i
        by_cell: dict[str, list] = defaultdict(list)
        for key, span_a in prints[i].items():
            if key in common:
                continue
            span_b = prints[j].get(key)
            if span_b is not None:
                by_cell[key[0]].append((span_a, span_b))
        frags: list[Fragment] = []
        for gid in sorted(by_cell):
            frags += _fragments(gid, by_cell[gid], a.cells[gid], b.cells[gid])
        pairs.append(SimilarPair(a.student, b.student, score, jac, count, tuple(frags)))
    pairs.sort(key=lambda p: (-p.score, -p.shared, p.a, p.b))
    return pairs
