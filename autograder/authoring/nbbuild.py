"""Mapeia uma fonte de exercício (MyST Markdown, autograder/fontes/NN-slug.md) para o
notebook do nbgrader em solutions/ (o formato está em autograder/fontes/README.md).

A fonte diz o papel de cada célula por etiquetas; aqui esses papéis viram os
metadados do nbgrader e a experiência comum a todos os cadernos:

- `setup`: a célula de preparação, travada e recolhida (`jupyter.source_hidden`
  no JupyterLab/Notebook 7, `cellView: form` e a linha `# @title` no Colab), com
  `autograder/conferir.py`, `scoreboard.py` e `rules.py` inteiros no fim;
- `solution`: a célula que o aluno completa (precisa de `### BEGIN SOLUTION`);
- `tests` (com `points`): travada e com nota; ganha a etiqueta `raises-exception`
  ("Run All" não para na primeira tarefa que falha), uma primeira linha que avisa
  o placar de que a tarefa N começou e, no fim da parte visível,
  `print("Tarefa N: testes visíveis passaram.")`;
- `answer` (com `points`): resposta escrita, corrigida à mão (o texto da fonte é a
  resposta-modelo, posta entre `### BEGIN/END SOLUTION`);
- `scoreboard`: a célula do placar (travada);
- sem etiqueta: texto ou código de demonstração, travado e sem nota.

Toda célula de código travada (a preparação inclusive) termina com `_travar(...)`: os nomes
que ela define (funções, classes, módulos e os dados que os testes leem; não os que as células
de solução ou de testes também ligam). Na correção esses nomes são sempre os do corretor; no
Jupyter do aluno, cada célula de testes (`_tarefa`) desfaz a troca feita por uma célula dele,
avisa qual célula trocou e o placar repete o aviso: a nota do Jupyter é a da correção.

Numa célula de texto, a linha `% incluir: NOME` (um comentário do MyST) vira o
texto de `fontes/comum/NOME.md`, com `{arquivo}` trocado pelo nome do caderno;
numa de código, a linha `# incluir: NOME` vira `fontes/comum/NOME.py`.
Cada célula sai com um id estável, o `grade_id` (nbformat 4.5), para que o
JupyterLab não marque o caderno como modificado ao abri-lo.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parents[2]
FONTES = Path(__file__).resolve().parents[1] / "fontes"
COMUM = FONTES / "comum"
# o texto que vai no fim da célula de preparação: as funções de conferência (conferir.py), o
# placar e os nomes travados (scoreboard.py) e as regras comuns de "como calcular" (rules.py)
CONFERIR = "".join((Path(__file__).parent / nome).read_text(encoding="utf-8")
                   for nome in ("conferir.py", "scoreboard.py", "rules.py"))

TITULO_PREPARACAO = "# @title Preparação: rode esta célula (não precisa ler nem mudar)"
HIDDEN = "### BEGIN HIDDEN TESTS"
ROLES = ("setup", "solution", "tests", "answer", "scoreboard")
_INCLUIR_MD = re.compile(r"^% incluir: *([\w-]+) *$", re.M)
_INCLUIR_PY = re.compile(r"^# incluir: *([\w-]+) *$", re.M)
_AVISO = re.compile(r"Tarefa \d+: testes visíveis passaram")


MYST_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""


class FonteInvalida(ValueError):
    """A fonte MyST não segue o formato (autograder/fontes/README.md)."""


@dataclass(frozen=True)
class Tarefa:
    """Uma célula de testes com nota, na ordem do caderno (o placar as lista)."""

    numero: int
    grade_id: str
    titulo: str
    pontos: int
    secao: str


def _meta(grade_id, *, solution=False, grade=False, locked=False, points=None):
    m = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
         "solution": solution, "task": False}
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


def _comum(nome: str, ext: str, origem: str) -> str:
    path = COMUM / f"{nome}.{ext}"
    if not path.is_file():
        raise FonteInvalida(f"{origem}: `incluir: {nome}` pede {path.relative_to(ROOT)}, que não existe")
    return path.read_text(encoding="utf-8").strip("\n")


def _role(cell, origem: str) -> str | None:
    roles = [t for t in cell.metadata.get("tags", []) if t in ROLES]
    if len(roles) > 1:
        raise FonteInvalida(f"{origem}: a célula tem dois papéis, {roles}")
    return roles[0] if roles else None


def _titulo_da_tarefa(texto: str) -> str:
    """'## Tarefa 1 — pontuações com laços (2 pontos)' -> 'pontuações com laços'."""
    m = re.search(r"^##\s*Tarefa\s+\d+\s*[—:-]\s*(.+?)\s*(\(\d+ pontos?\))?\s*$", texto, re.M)
    return m[1] if m else ""


def build(path: Path) -> nbformat.NotebookNode:
    """O notebook de solutions/ (com soluções e testes ocultos) feito da fonte `path`."""
    return build_text(path.read_text(encoding="utf-8"), path.stem, path.name)


def build_text(text: str, slug: str, name: str = "") -> nbformat.NotebookNode:
    """O mesmo que `build`, de uma fonte MyST em texto (tarefas pequenas feitas nos testes)."""
    path = Path(name or f"{slug}.md")
    fonte = jupytext.reads(text, fmt="myst")
    nb = nbformat.v4.new_notebook()
    nb.metadata.update({
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    })
    ids: set[str] = set()
    tarefas: list[Tarefa] = []
    ultimo_titulo = ""
    do_aluno = _nomes_do_aluno_e_dos_testes(fonte)
    for n, cell in enumerate(fonte.cells):
        origem = f"{path.name}, célula {n + 1}"
        role = _role(cell, origem)
        extras = [t for t in cell.metadata.get("tags", []) if t not in ROLES]
        if extras:
            raise FonteInvalida(f"{origem}: etiquetas desconhecidas {extras} (papéis: {ROLES})")
        default = f"texto_{len(nb.cells)}" if cell.cell_type == "markdown" else f"codigo_{len(nb.cells)}"
        gid = cell.metadata.get("grade_id", default)
        if gid in ids:
            raise FonteInvalida(f"{origem}: grade_id repetido: {gid}")
        ids.add(gid)
        points = cell.metadata.get("points")
        if (role in ("tests", "answer")) != (points is not None):
            raise FonteInvalida(f"{origem}: `points` vai só (e sempre) nas células tests e answer")
        src = cell.source
        if cell.cell_type == "code":
            src = _INCLUIR_PY.sub(lambda m: _comum(m[1], "py", origem), src)
        if cell.cell_type == "markdown":
            src = _INCLUIR_MD.sub(lambda m: _comum(m[1], "md", origem).replace("{arquivo}", f"{slug}.ipynb"), src)
            ultimo_titulo = _titulo_da_tarefa(src) or ultimo_titulo
            if role == "answer":
                src = f"### BEGIN SOLUTION\n{src}\n### END SOLUTION"
                new = nbformat.v4.new_markdown_cell(src, metadata=_meta(gid, solution=True, grade=True,
                                                                         points=points))
            elif role is None:
                new = nbformat.v4.new_markdown_cell(src, metadata=_meta(gid, locked=True))
            else:
                raise FonteInvalida(f"{origem}: célula de texto com papel {role}")
        elif role == "setup":
            src = f"{TITULO_PREPARACAO}\n{src.rstrip()}\n\n{CONFERIR}"
            new = nbformat.v4.new_code_cell(_com_travar(src, do_aluno, origem), metadata=_meta(gid, locked=True))
            new.metadata["jupyter"] = {"source_hidden": True}  # JupyterLab, Notebook 7
            new.metadata["cellView"] = "form"  # Colab: mostra só a linha `# @title`
        elif role == "solution":
            if "### BEGIN SOLUTION" not in src:
                raise FonteInvalida(f"{origem} ({gid}): célula solution sem ### BEGIN SOLUTION")
            new = nbformat.v4.new_code_cell(src, metadata=_meta(gid, solution=True))
        elif role == "tests":
            secao = cell.metadata.get("secao") or _capitulo(fonte, slug)
            tarefa = Tarefa(len(tarefas) + 1, gid, ultimo_titulo, int(points), secao)
            tarefas.append(tarefa)
            new = nbformat.v4.new_code_cell(_celula_de_testes(src, tarefa, origem),
                                            metadata=_meta(gid, grade=True, locked=True, points=points))
            new.metadata["tags"] = ["raises-exception"]
        elif role == "scoreboard":
            new = nbformat.v4.new_code_cell(src, metadata=_meta(gid, locked=True))
        else:
            new = nbformat.v4.new_code_cell(_com_travar(src, do_aluno, origem), metadata=_meta(gid, locked=True))
        new.id = gid
        nb.cells.append(new)
    nbformat.validate(nb)
    return nb


def _nomes_globais(tree) -> list[tuple[str, bool]]:
    """(nome, é def/class/import?) de cada nome que o trecho liga no escopo global, em ordem
    (os comandos de nível de módulo, inclusive dentro de if/for/with/try; não os corpos de
    funções e classes)."""
    out: list[tuple[str, bool]] = []
    pilha = list(reversed(tree.body))
    while pilha:
        no = pilha.pop()
        if isinstance(no, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((no.name, True))
            continue
        if isinstance(no, (ast.Import, ast.ImportFrom)):
            out += [(a.asname or a.name.split(".")[0], True) for a in no.names if a.name != "*"]
            continue
        filhos = [getattr(no, campo, []) for campo in ("body", "orelse", "finalbody", "handlers")]
        for x in ast.walk(no):
            if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store) and not any(
                    x in ast.walk(f) for lista in filhos for f in lista):
                out.append((x.id, False))
        for lista in reversed(filhos):
            pilha.extend(reversed(lista))
    return out


def _codigo(src: str):
    try:
        return ast.parse(src)
    except SyntaxError:
        return None


def _nomes_do_aluno_e_dos_testes(fonte) -> tuple[set[str], set[str]]:
    """(nomes ligados pelas células de solução e de testes; nomes que as células de testes leem)."""
    ligados, lidos = set(), set()
    for cell in fonte.cells:
        if cell.cell_type != "code" or not {"solution", "tests"} & set(cell.metadata.get("tags", [])):
            continue
        tree = _codigo(cell.source)
        if tree is None:
            continue
        ligados |= {n for n, _ in _nomes_globais(tree)}
        if "tests" in cell.metadata.get("tags", []):
            locais = set()          # parâmetros e variáveis locais das funções do teste não são globais
            for f in ast.walk(tree):
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    locais |= {a.arg for a in ast.walk(f.args) if isinstance(a, ast.arg)}
                    locais |= {x.id for x in ast.walk(f) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
            lidos |= {x.id for x in ast.walk(tree) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)} - locais
    return ligados, lidos


def _com_travar(src: str, do_aluno: tuple[set[str], set[str]], origem: str) -> str:
    """A célula travada com `_travar(...)` no fim: os nomes que ela define (funções, classes,
    módulos e os dados que os testes leem) ficam registrados, e cada célula de testes confere,
    no Jupyter do aluno, que nenhuma célula dele os trocou (na correção eles são sempre os do
    corretor). Ficam de fora os nomes que as células de solução ou de testes também ligam."""
    tree = _codigo(src)
    if tree is None:
        raise FonteInvalida(f"{origem}: a célula travada não compila")
    ligados, lidos = do_aluno
    nomes = list(dict.fromkeys(
        n for n, definicao in _nomes_globais(tree)
        if (definicao or n in lidos) and n not in ligados and n != "_" and not n.startswith("__")))
    if not nomes:
        return src
    return (f"{src.rstrip()}\n\n\n_travar({', '.join(map(repr, nomes))})  "
            "# nomes do professor: os testes usam sempre estes (o placar avisa se uma célula sua os trocar)")


def _capitulo(fonte, slug: str) -> str:
    """A seção do livro de uma tarefa sem `secao`: o capítulo do caderno (do título)."""
    for c in fonte.cells:
        if c.cell_type == "markdown":
            m = re.search(r"^#\s+(Capítulo\s+\d+)\s*[—:-]\s*(.+)$", c.source, re.M)
            if m:
                titulo = re.sub(r"[\s:,]*\$[^$]*\$", "", m[2]).strip()    # sem fórmulas (texto puro)
                return f"{m[1]} do livro, {titulo}"
    return slug


def _celula_de_testes(src: str, tarefa: Tarefa, origem: str) -> str:
    """Avisa o placar no começo e no fim da parte visível (Tarefa N: testes visíveis passaram.)."""
    if _AVISO.search(src) or "_visiveis_passaram(" in src or "_tarefa(" in src:
        raise FonteInvalida(f"{origem}: o aviso do placar é posto pelo mapeador; tire-o da fonte")
    inicio = f"_tarefa({tarefa.numero}, {tarefa.titulo!r}, {tarefa.grade_id!r}, {tarefa.secao!r})"
    visivel, oculto, resto = src.partition(HIDDEN)
    src = f"{inicio}\n{visivel.rstrip()}\n_visiveis_passaram({tarefa.numero})\n{oculto}{resto}"
    return src.rstrip("\n")


def sources() -> list[Path]:
    """As fontes dos cadernos, em ordem (autograder/fontes/NN-slug.md)."""
    return sorted(p for p in FONTES.glob("[0-9][0-9]-*.md"))


def solution_path(slug: str, root: Path = ROOT) -> Path:
    return root / "solutions" / slug / f"{slug}.ipynb"


def write(path: Path, root: Path = ROOT) -> Path:
    """Escreve solutions/<slug>/<slug>.ipynb a partir da fonte `path`."""
    out = solution_path(path.stem, root)
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build(path), out)
    return out
