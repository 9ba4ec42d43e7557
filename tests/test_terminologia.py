"""Um vocabulário só: o glossário decide, este teste confere o livro e os exercícios.

Cada verbete de `book/apendices/glossario.md` pode terminar com uma frase
"Não usamos: *forma 1*, *forma 2*." As formas em itálico são as variantes que
o curso descartou (outro gênero, outra tradução, um falso cognato). Uma forma
com "…" vale para qualquer continuação da palavra ("*reescalon…*" pega
"reescalonar" e "reescalonados"). O teste procura essas formas, sem distinguir
maiúsculas, em todo o texto que uma pessoa lê:

- as páginas do livro (`book/**/*.md`, inclusive o código e os comentários);
- os cadernos de exercícios (`solutions/*/*.ipynb`): células de texto inteiras
  e, nas de código, as strings e os comentários (as mensagens do `conferir`, as
  docstrings, os enunciados).

E confere o outro lado: todo termo do glossário aparece no livro fora do
glossário (um verbete que o texto não usa sai do glossário, ou o texto passa
a usá-lo).
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "book" / "apendices" / "glossario.md"
RULE = re.compile(r"Não usamos:(.*?)\.(?=\s|$)", re.S)


def glossary_block() -> str:
    texto = GLOSSARY.read_text(encoding="utf-8")
    m = re.search(r"```\{glossary\}\n(.*?)\n```", texto, re.S)
    assert m, "glossario.md perdeu o bloco ```{glossary}"
    return m.group(1)


def ruled_out() -> list[str]:
    """As formas em itálico das frases "Não usamos: ..." do glossário."""
    formas = []
    for frase in RULE.findall(glossary_block()):
        formas += re.findall(r"\*([^*]+)\*", frase)
    return formas


def pattern(forma: str) -> re.Pattern:
    partes = [re.escape(p) for p in re.split(r"\s+", forma.strip())]
    corpo = r"\s+".join(partes).replace("…", r"[\w-]*")
    return re.compile(rf"(?<![\w-]){corpo}(?![\w])", re.I)


def headwords() -> list[str]:
    """O primeiro nome de cada verbete (o termo do livro)."""
    linhas = glossary_block().splitlines()
    nomes = []
    for anterior, linha in zip([""] + linhas, linhas):
        if linha and not linha.startswith((" ", ":")) and anterior.strip() == "":
            nomes.append(linha.strip())
    return nomes


def book_sources() -> list[tuple[str, list[str]]]:
    """(nome, linhas) de cada página do livro; no glossário, sem as frases "Não usamos"."""
    fontes = []
    for md in sorted((ROOT / "book").rglob("*.md")):
        texto = md.read_text(encoding="utf-8")
        if md == GLOSSARY:   # as próprias regras não contam (mantém os números de linha)
            texto = RULE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), texto)
        fontes.append((str(md.relative_to(ROOT)), texto.splitlines()))
    return fontes


def _strings_and_comments(codigo: str) -> list[tuple[int, str]]:
    """(linha, texto) de cada string e comentário de uma célula de código Python."""
    saida = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(codigo).readline):
            if tok.type in (tokenize.STRING, tokenize.COMMENT):
                for k, parte in enumerate(tok.string.splitlines()):
                    saida.append((tok.start[0] + k, parte))
            elif tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                saida.append((tok.start[0], tok.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # célula que não é Python válido (mágica, por exemplo): confere o texto todo
        saida = list(enumerate(codigo.splitlines(), start=1))
    return saida


def notebook_sources() -> list[tuple[str, list[tuple[int, str]]]]:
    fontes = []
    for nb_path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for n, cell in enumerate(nb["cells"], start=1):
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            if cell["cell_type"] == "markdown":
                linhas = list(enumerate(src.splitlines(), start=1))
            elif cell["cell_type"] == "code":
                linhas = _strings_and_comments(src)
            else:
                continue
            fontes.append((f"{nb_path.relative_to(ROOT)}, célula {n}", linhas))
    return fontes


def _achados(fontes, formas):
    regras = [(f, pattern(f)) for f in formas]
    achados = []
    for nome, linhas in fontes:
        for num, linha in linhas:
            for forma, rx in regras:
                for m in rx.finditer(linha):
                    achados.append(f"{nome}, linha {num}: {m.group(0)!r} (o glossário descarta *{forma}*)")
    return achados


def test_the_glossary_rules_some_variants_out():
    formas = ruled_out()
    assert len(formas) >= 10, f"esperava as frases 'Não usamos: ...' no glossário; achei {formas}"
    for esperado in ("passo para trás", "a FlashAttention", "o softmax", "portão", "reescalon…"):
        assert esperado in formas, f"o glossário deixou de descartar *{esperado}*"


def test_the_matcher_finds_variants_and_nothing_else():
    """O teste do teste: as regras pegam as variantes, com e sem maiúscula, e poupam as vizinhas."""
    assert pattern("o softmax").search("calcula O softmax online")
    assert not pattern("o softmax").search("o laço do softmax")      # "do" não é "o"
    assert not pattern("o softmax").search("a softmax online")
    assert pattern("reescalon…").search("os estados reescalonados")
    assert not pattern("reescalon…").search("os estados reescalados")
    assert pattern("a FlashAttention").search("como a FlashAttention-2")
    assert pattern("passo para trás").search("no passo\npara trás".replace("\n", " "))
    assert _achados([("x.md", [(3, "A FlashAttention guarda")])], ["a FlashAttention"]) == [
        "x.md, linha 3: 'A FlashAttention' (o glossário descarta *a FlashAttention*)"]


def test_book_uses_one_vocabulary():
    fontes = [(nome, list(enumerate(linhas, start=1))) for nome, linhas in book_sources()]
    achados = _achados(fontes, ruled_out())
    assert not achados, "variantes que o glossário descarta, no livro:\n" + "\n".join(achados)


def test_exercise_notebooks_use_one_vocabulary():
    if not any((ROOT / "solutions").glob("*/*.ipynb")):
        pytest.skip("solutions/ vazio: rode `python -m autograder.release`")
    achados = _achados(notebook_sources(), ruled_out())
    assert not achados, "variantes que o glossário descarta, nos exercícios:\n" + "\n".join(achados)


@pytest.mark.parametrize("termo", headwords())
def test_every_glossary_term_is_used_in_the_book(termo):
    texto = "\n".join("\n".join(linhas) for nome, linhas in book_sources() if not nome.endswith("glossario.md"))
    # Flexão: as palavras longas valem pelo radical ("teste oculto" acha "testes ocultos",
    # "conferir com" acha "conferida com").
    radicais = [re.escape(w[:-2]) + r"\w*" if len(w) >= 5 else re.escape(w) for w in termo.split()]
    assert re.search(r"(?<!\w)" + r"\s+".join(radicais), texto, re.I), (
        f"o termo {termo!r} do glossário não aparece em nenhuma página do livro: use-o no texto ou "
        "tire-o do glossário")
