"""Um vocabulário só: o glossário decide, este teste confere o livro e os exercícios.

Cada verbete de `book/apendices/glossario.md` pode terminar com uma frase
"Não usamos: *forma 1*, *forma 2*." As formas em itálico são as variantes que
o curso descartou (outro gênero, outra tradução, um falso cognato). Uma forma
com "…" vale para qualquer continuação da palavra ("*reescalon…*" pega
"reescalonar" e "reescalonados"); um "(…)" sozinho vale para até três palavras
quaisquer ("*confer… (…) contra*" pega "conferir a saída contra"). O teste
procura essas formas, sem distinguir maiúsculas, **por parágrafo** (uma forma
quebrada entre duas linhas também conta), em todo o texto que uma pessoa lê:

- as páginas do livro (`book/**/*.md`, inclusive o código e os comentários);
- cada trecho de arquivo que uma página mostra com `literalinclude`;
- as docstrings, os comentários e as mensagens de `atencao/**/*.py`, de
  `atencao/kernels/*.cu` e de `bench/*.py`, que o texto manda ler;
- os cadernos de exercícios (`solutions/*/*.ipynb`): células de texto inteiras
  e, nas de código, as strings e os comentários (as mensagens do `conferir`, as
  docstrings, os enunciados).

Além das formas escritas, o gênero: um verbete que declara "Masculino: **os**
FLOPs" ou "Feminino, como "função": **a** softmax" descarta também toda forma
do outro gênero antes do termo (artigo, contração, "quantas", "toda",
"essa", "uma", ...): `gendered_forms` as gera.

E confere o outro lado: todo termo do glossário aparece no livro fora do
glossário (um verbete que o texto não usa sai do glossário, ou o texto passa
a usá-lo).
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
    """A regex de uma forma descartada: palavras separadas por qualquer espaço
    (quebra de linha inclusive), "…" no fim de uma palavra para qualquer
    continuação, "(…)" para até três palavras quaisquer."""
    partes = []
    for p in re.split(r"\s+", forma.strip()):
        if p == "(…)":
            partes.append(r"(?:\S+\s+){0,3}?")
        else:
            partes.append(re.escape(p).replace("…", r"[\w-]*") + r"\s+")
    corpo = "".join(partes)
    corpo = corpo[: -len(r"\s+")] if corpo.endswith(r"\s+") else corpo
    return re.compile(rf"(?<![\w-]){corpo}(?![\w])", re.I)


def headwords() -> list[str]:
    """O primeiro nome de cada verbete (o termo do livro)."""
    linhas = glossary_block().splitlines()
    nomes = []
    for anterior, linha in zip([""] + linhas, linhas):
        if linha and not linha.startswith((" ", ":")) and anterior.strip() == "":
            nomes.append(linha.strip())
    return nomes


# Os determinantes de cada gênero que podem vir logo antes de um termo do glossário.
FEMININE = ("a", "as", "da", "das", "na", "nas", "pela", "pelas", "à", "às", "uma", "umas", "numa", "numas",
            "duma", "dumas", "quanta", "quantas", "toda", "todas", "esta", "estas", "essa", "essas", "desta",
            "destas", "dessa", "dessas", "nesta", "nestas", "nessa", "nessas", "aquela", "aquelas", "outra",
            "outras", "mesma", "mesmas", "muita", "muitas", "pouca", "poucas", "nenhuma", "alguma", "algumas",
            "sua", "suas", "nossa", "nossas")
MASCULINE = ("o", "os", "do", "dos", "no", "nos", "pelo", "pelos", "ao", "aos", "um", "uns", "num", "nuns",
             "dum", "duns", "quanto", "quantos", "todo", "todos", "este", "estes", "esse", "esses", "deste",
             "destes", "desse", "desses", "neste", "nestes", "nesse", "nesses", "aquele", "aqueles", "outro",
             "outros", "mesmo", "mesmos", "muito", "muitos", "pouco", "poucos", "nenhum", "algum", "alguns",
             "seu", "seus", "nosso", "nossos")
GENDER = re.compile(r"(Masculino|Feminino)[^:]*:\s*\*\*(?:os|as|o|a)\*\*\s+([^\s,.;]+)")


def declared_genders() -> dict[str, str]:
    """{termo: "Masculino" ou "Feminino"} dos verbetes que declaram o gênero do termo."""
    return {termo: genero for genero, termo in GENDER.findall(" ".join(glossary_block().split()))}


def gendered_forms() -> list[str]:
    """Cada determinante do outro gênero seguido do termo ("quantas FLOPs", "o softmax", ...)."""
    formas = []
    for termo, genero in declared_genders().items():
        formas += [f"{d} {termo}" for d in (FEMININE if genero == "Masculino" else MASCULINE)]
    return formas


def all_ruled_out() -> list[str]:
    """As formas escritas do glossário e as do outro gênero, sem repetir."""
    return list(dict.fromkeys(ruled_out() + gendered_forms()))


# Um trecho de texto: (onde, número da primeira linha, texto). Os achados dão a
# linha exata dentro do trecho.
Trecho = tuple[str, int, str]


def paragraphs(nome: str, texto: str, primeira: int = 1) -> list[Trecho]:
    """Os parágrafos (blocos separados por linha em branco) de um texto."""
    saida, linha = [], primeira
    for bloco in re.split(r"(\n[ \t]*\n)", texto):
        if bloco.strip() and not re.fullmatch(r"\n[ \t]*\n", bloco):
            saida.append((nome, linha, bloco))
        linha += bloco.count("\n")
    return saida


def book_pages() -> list[tuple[Path, str]]:
    """(arquivo, texto) de cada página do livro; no glossário, sem as frases "Não usamos"."""
    paginas = []
    for md in sorted((ROOT / "book").rglob("*.md")):
        texto = md.read_text(encoding="utf-8")
        if md == GLOSSARY:   # as próprias regras não contam (mantém os números de linha)
            texto = RULE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), texto)
        paginas.append((md, texto))
    return paginas


def book_sources() -> list[Trecho]:
    return [t for md, texto in book_pages() for t in paragraphs(str(md.relative_to(ROOT)), texto)]


def _strings_and_comments(codigo: str) -> list[tuple[int, str]]:
    """(linha, texto) de cada string de uma célula ou arquivo Python e de cada
    grupo de comentários em linhas seguidas (um comentário que continua na linha
    de baixo é uma frase só)."""
    saida: list[tuple[int, str]] = []
    ultimo_comentario = -2
    try:
        for tok in tokenize.generate_tokens(io.StringIO(codigo).readline):
            if tok.type == tokenize.COMMENT:
                texto = tok.string.lstrip("#").strip()
                if saida and tok.start[0] == ultimo_comentario + 1 and saida[-1][1] is not None:
                    saida[-1] = (saida[-1][0], saida[-1][1] + "\n" + texto)
                else:
                    saida.append((tok.start[0], texto))
                ultimo_comentario = tok.start[0]
            elif tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                saida.append((tok.start[0], tok.string))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        # célula que não é Python válido (mágica, por exemplo): confere o texto todo
        saida = [(1, codigo)]
    return saida


def _c_comments_and_strings(codigo: str) -> list[tuple[int, str]]:
    """(linha, texto) dos comentários (`//` em linhas seguidas formam um grupo,
    `/* */`) e das strings de um arquivo C/CUDA."""
    saida: list[tuple[int, str]] = []
    ultimo = -2
    for m in re.finditer(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"', codigo, re.S):
        linha = codigo.count("\n", 0, m.start()) + 1
        texto = m.group(0)
        if texto.startswith("//"):
            texto = texto[2:].strip()
            if saida and linha == ultimo + 1:
                saida[-1] = (saida[-1][0], saida[-1][1] + "\n" + texto)
                ultimo = linha
                continue
            ultimo = linha
        saida.append((linha, texto))
    return saida


def code_files() -> list[Path]:
    """Os arquivos de código que o texto manda ler."""
    return (sorted((ROOT / "atencao").rglob("*.py")) + sorted((ROOT / "atencao").rglob("*.cu"))
            + sorted((ROOT / "bench").glob("*.py")))


def code_sources(arquivos: list[Path] | None = None) -> list[Trecho]:
    trechos = []
    for f in code_files() if arquivos is None else arquivos:
        codigo = f.read_text(encoding="utf-8")
        partes = _c_comments_and_strings(codigo) if f.suffix == ".cu" else _strings_and_comments(codigo)
        nome = str(f.relative_to(ROOT)) if f.is_relative_to(ROOT) else str(f)
        for linha, texto in partes:
            trechos += paragraphs(nome, texto, linha)
    return trechos


LITERALINCLUDE = re.compile(r"```\{literalinclude\}[ \t]+(\S+)[ \t]*\n((?::[\w-]+:.*\n)*)```")


def _opcao(opcoes: str, nome: str) -> str | None:
    m = re.search(rf"^:{nome}:[ \t]*(.*)$", opcoes, re.M)
    if not m:
        return None
    valor = m.group(1).strip()
    return valor[1:-1] if len(valor) >= 2 and valor[0] == valor[-1] == '"' else valor


def included_range(arquivo: Path, opcoes: str) -> tuple[int, list[str]]:
    """(primeira linha, linhas) do trecho que um `literalinclude` mostra, com as
    opções que o livro usa: pyobject, lines, start-at/start-after, end-at/end-before
    (nesta ordem, como no Sphinx)."""
    linhas = arquivo.read_text(encoding="utf-8").splitlines()
    inicio = 0
    obj = _opcao(opcoes, "pyobject")
    if obj:
        alvo = ast.parse("\n".join(linhas))
        for nome in obj.split("."):
            alvo = next(n for n in ast.iter_child_nodes(alvo)
                        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                        and n.name == nome)
        inicio, linhas = alvo.lineno - 1, linhas[alvo.lineno - 1: alvo.end_lineno]
    faixa = _opcao(opcoes, "lines")
    if faixa:
        a, _, b = faixa.partition("-")
        inicio, linhas = inicio + int(a) - 1, linhas[int(a) - 1: int(b) if b else None]
    for chave, inclui in (("start-at", True), ("start-after", False)):
        marca = _opcao(opcoes, chave)
        if marca is not None:
            k = next(i for i, ln in enumerate(linhas) if marca in ln)
            k = k if inclui else k + 1
            inicio, linhas = inicio + k, linhas[k:]
    for chave, inclui in (("end-at", True), ("end-before", False)):
        marca = _opcao(opcoes, chave)
        if marca is not None:
            k = next(i for i, ln in enumerate(linhas) if marca in ln)
            linhas = linhas[: k + 1 if inclui else k]
    return inicio + 1, linhas


def literalinclude_sources() -> list[Trecho]:
    """Cada trecho que uma página mostra com `literalinclude`, inteiro (código,
    docstrings e comentários), por parágrafo."""
    trechos = []
    for md, texto in book_pages():
        for m in LITERALINCLUDE.finditer(texto):
            arquivo = (md.parent / m.group(1)).resolve()
            primeira, linhas = included_range(arquivo, m.group(2))
            nome = f"{md.relative_to(ROOT)} (literalinclude de {arquivo.relative_to(ROOT)})"
            trechos += paragraphs(nome, "\n".join(linhas), primeira)
    return trechos


def notebook_sources() -> list[Trecho]:
    fontes = []
    for nb_path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for n, cell in enumerate(nb["cells"], start=1):
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            nome = f"{nb_path.relative_to(ROOT)}, célula {n}"
            if cell["cell_type"] == "markdown":
                fontes += paragraphs(nome, src)
            elif cell["cell_type"] == "code":
                for linha, texto in _strings_and_comments(src):
                    fontes += paragraphs(nome, texto, linha)
    return fontes


def _literal(forma: str) -> str:
    """O maior pedaço literal da forma (em minúsculas): um trecho sem ele não casa com a regra."""
    pedacos = [w.split("…")[0] for w in re.split(r"\s+", forma.strip()) if w != "(…)"]
    return max(pedacos, key=len).lower()


def _achados(fontes: list[Trecho], formas) -> list[str]:
    regras = [(f, pattern(f), _literal(f)) for f in formas]
    achados = []
    for nome, primeira, texto in fontes:
        baixo = texto.lower()
        for forma, rx, literal in regras:
            if literal not in baixo:      # o filtro só poupa a regex: o achado é o mesmo
                continue
            for m in rx.finditer(texto):
                num = primeira + texto.count("\n", 0, m.start())
                achados.append(f"{nome}, linha {num}: {' '.join(m.group(0).split())!r} "
                               f"(o glossário descarta *{forma}*)")
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
    assert pattern("confer… (…) contra").search("conferir um kernel contra o PyTorch")
    assert pattern("confer… (…) contra").search("conferimos contra o SDPA")
    assert not pattern("confer… (…) contra").search("conferir se a saída do kernel bate, contra")


def test_a_form_broken_across_lines_is_found():
    """A regra vale por parágrafo: a quebra de linha no meio da forma não a esconde
    (o teste antigo lia linha por linha e deixava passar "passada para a / frente")."""
    texto = "Um parágrafo sobre a\npassada para a\nfrente do modelo.\n\nOutro: conferido\ncontra o SDPA."
    achados = _achados(paragraphs("x.md", texto), ["passada para a frente", "confer… (…) contra"])
    assert achados == [
        "x.md, linha 2: 'passada para a frente' (o glossário descarta *passada para a frente*)",
        "x.md, linha 5: 'conferido contra' (o glossário descarta *confer… (…) contra*)"]
    # mas não junta dois parágrafos: "o" no fim de um e "softmax" no começo do outro
    assert not _achados(paragraphs("x.md", "termina com o\n\nsoftmax começa"), ["o softmax"])


def test_a_docstring_shown_by_literalinclude_is_read(tmp_path):
    """O trecho de um `literalinclude` conta como texto da página: uma docstring
    com forma descartada, mostrada por `:pyobject:`, aparece no achado (e o trecho
    de fora do objeto, não)."""
    fonte = tmp_path / "k.py"
    fonte.write_text('"""Fora do trecho: o softmax."""\n\n\ndef f():\n    """Calcula o\n    softmax online."""\n'
                     "    return 1\n", encoding="utf-8")
    primeira, linhas = included_range(fonte, ":pyobject: f\n:language: python\n")
    assert primeira == 4 and linhas[0] == "def f():" and len(linhas) == 4
    achados = _achados(paragraphs("k.py", "\n".join(linhas), primeira), ["o softmax"])
    assert achados == ["k.py, linha 5: 'o softmax' (o glossário descarta *o softmax*)"]
    primeira, linhas = included_range(fonte, ':pyobject: f\n:start-at: "    return"\n')
    assert (primeira, linhas) == (7, ["    return 1"])


def test_the_glossary_genders_rule_out_every_form_of_the_other_gender():
    """N14 da revisão de 2026-12-05: "quantas FLOPs" escapava (a regra listava só *as/das/nas FLOPs*)."""
    generos = declared_genders()
    assert generos.get("FLOPs") == "Masculino" and generos.get("softmax") == "Feminino", generos
    assert generos.get("SDPA") == "Masculino" and generos.get("GQA") == "Feminino", generos
    assert generos.get("FlashAttention") == "Masculino", generos
    formas = all_ruled_out()
    for texto in ("quantas FLOPs", "todas as FLOPs e", "essa SDPA", "numa FlashAttention-2", "este softmax",
                  "um GQA"):
        assert _achados(paragraphs("x.md", texto), formas), texto
    for texto in ("quantos FLOPs", "o SDPA", "a softmax", "o FlashAttention-2", "a GQA", "muitos FLOPs"):
        assert not _achados(paragraphs("x.md", texto), formas), texto


def test_book_uses_one_vocabulary():
    achados = _achados(book_sources(), all_ruled_out())
    assert not achados, "variantes que o glossário descarta, no livro:\n" + "\n".join(achados)


def test_literalinclude_ranges_use_one_vocabulary():
    trechos = literalinclude_sources()
    assert len({nome for nome, _, _ in trechos}) >= 5, "esperava os literalinclude dos capítulos"
    achados = _achados(trechos, all_ruled_out())
    assert not achados, ("variantes que o glossário descarta, em trechos que as páginas mostram "
                         "(literalinclude):\n" + "\n".join(achados))


def test_package_and_bench_use_one_vocabulary():
    """Docstrings, comentários e mensagens de atencao/ (com o .cu) e de bench/."""
    trechos = code_sources()
    nomes = {nome for nome, _, _ in trechos}
    assert "atencao/kernels/naive_attention.cu" in nomes and "bench/gpu.py" in nomes
    achados = _achados(trechos, all_ruled_out())
    assert not achados, "variantes que o glossário descarta, no código que o texto manda ler:\n" + "\n".join(achados)


def test_code_reader_joins_comment_lines_and_reads_cuda(tmp_path):
    py = tmp_path / "a.py"
    py.write_text("x = 1  # usa o\n# softmax de cada linha\ny = 'passo para trás'\n", encoding="utf-8")
    cu = tmp_path / "a.cu"
    cu.write_text("int x; // o\n// softmax estável\n/* passo\n   para trás */\nprintf(\"ok\");\n", encoding="utf-8")
    achados = _achados(code_sources([py, cu]), ["o softmax", "passo para trás"])
    assert len(achados) == 4, achados
    assert any("a.py, linha 1: 'o softmax'" in a for a in achados)
    assert any("a.cu, linha 3: 'passo para trás'" in a for a in achados)


def test_exercise_notebooks_use_one_vocabulary():
    if not any((ROOT / "solutions").glob("*/*.ipynb")):
        pytest.skip("solutions/ vazio: rode `python -m autograder.release`")
    achados = _achados(notebook_sources(), all_ruled_out())
    assert not achados, "variantes que o glossário descarta, nos exercícios:\n" + "\n".join(achados)


@pytest.mark.parametrize("termo", headwords())
def test_every_glossary_term_is_used_in_the_book(termo):
    texto = "\n".join(t for md, t in book_pages() if md != GLOSSARY)
    # Flexão: as palavras longas valem pelo radical ("teste oculto" acha "testes ocultos",
    # "conferir com" acha "conferida com").
    radicais = [re.escape(w[:-2]) + r"\w*" if len(w) >= 5 else re.escape(w) for w in termo.split()]
    assert re.search(r"(?<!\w)" + r"\s+".join(radicais), texto, re.I), (
        f"o termo {termo!r} do glossário não aparece em nenhuma página do livro: use-o no texto ou "
        "tire-o do glossário")
