"""Mapeia uma fonte de exercício (MyST Markdown, autograder/fontes/NN-slug.md) para o
notebook do nbgrader em solutions/ (o formato está em autograder/fontes/README.md).

A fonte diz o papel de cada célula por etiquetas; aqui esses papéis viram os
metadados do nbgrader e a experiência comum a todos os cadernos:

- `setup`: a célula de preparação, travada e recolhida (`jupyter.source_hidden`
  no JupyterLab/Notebook 7, `cellView: form` e a linha `# @title` no Colab), com
  `autograder/authoring/conferir.py`, `scoreboard.py` e `rules.py` inteiros no fim;
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
SOURCES = Path(__file__).resolve().parents[1] / "fontes"
COMMON = SOURCES / "comum"
# o texto que vai no fim da célula de preparação: as funções de conferência (conferir.py), o
# placar e os nomes travados (scoreboard.py) e as regras comuns de "como calcular" (rules.py)
CONFERIR = "".join((Path(__file__).parent / fname).read_text(encoding="utf-8")
                   for fname in ("conferir.py", "scoreboard.py", "rules.py"))

SETUP_TITLE = "# @title Preparação: rode esta célula (não precisa ler nem mudar)"
HIDDEN = "### BEGIN HIDDEN TESTS"
ROLES = ("setup", "solution", "tests", "answer", "scoreboard")
_INCLUDE_MD = re.compile(r"^% incluir: *([\w-]+) *$", re.M)
_INCLUDE_PY = re.compile(r"^# incluir: *([\w-]+) *$", re.M)
_NOTICE = re.compile(r"Tarefa \d+: testes visíveis passaram")


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


class InvalidSource(ValueError):
    """A fonte MyST não segue o formato (autograder/fontes/README.md)."""


@dataclass(frozen=True)
class Task:
    """Uma célula de testes com nota, na ordem do caderno (o placar as lista)."""

    number: int
    grade_id: str
    title: str
    points: int
    section: str


def _meta(grade_id, *, solution=False, grade=False, locked=False, points=None):
    m = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
         "solution": solution, "task": False}
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


def _common(fname: str, ext: str, where: str) -> str:
    path = COMMON / f"{fname}.{ext}"
    if not path.is_file():
        raise InvalidSource(f"{where}: `incluir: {fname}` pede {path.relative_to(ROOT)}, que não existe")
    return path.read_text(encoding="utf-8").strip("\n")


def _role(cell, where: str) -> str | None:
    roles = [t for t in cell.metadata.get("tags", []) if t in ROLES]
    if len(roles) > 1:
        raise InvalidSource(f"{where}: a célula tem dois papéis, {roles}")
    return roles[0] if roles else None


def _task_title(markdown: str) -> str:
    """'## Tarefa 1 — pontuações com laços (2 pontos)' -> 'pontuações com laços'."""
    m = re.search(r"^##\s*Tarefa\s+\d+\s*[—:-]\s*(.+?)\s*(\(\d+ pontos?\))?\s*$", markdown, re.M)
    return m[1] if m else ""


def build(path: Path) -> nbformat.NotebookNode:
    """O notebook de solutions/ (com soluções e testes ocultos) feito da fonte `path`."""
    return build_text(path.read_text(encoding="utf-8"), path.stem, path.name)


def build_text(text: str, slug: str, name: str = "") -> nbformat.NotebookNode:
    """O mesmo que `build`, de uma fonte MyST em texto (tarefas pequenas feitas nos testes)."""
    path = Path(name or f"{slug}.md")
    source_nb = jupytext.reads(text, fmt="myst")
    nb = nbformat.v4.new_notebook()
    nb.metadata.update({
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    })
    ids: set[str] = set()
    tasks: list[Task] = []
    last_title = ""
    student_names = _student_and_test_names(source_nb)
    for n, cell in enumerate(source_nb.cells):
        where = f"{path.name}, célula {n + 1}"
        role = _role(cell, where)
        extras = [t for t in cell.metadata.get("tags", []) if t not in ROLES]
        if extras:
            raise InvalidSource(f"{where}: etiquetas desconhecidas {extras} (papéis: {ROLES})")
        default = f"texto_{len(nb.cells)}" if cell.cell_type == "markdown" else f"codigo_{len(nb.cells)}"
        gid = cell.metadata.get("grade_id", default)
        if gid in ids:
            raise InvalidSource(f"{where}: grade_id repetido: {gid}")
        ids.add(gid)
        points = cell.metadata.get("points")
        if (role in ("tests", "answer")) != (points is not None):
            raise InvalidSource(f"{where}: `points` vai só (e sempre) nas células tests e answer")
        src = cell.source
        if cell.cell_type == "code":
            src = _INCLUDE_PY.sub(lambda m: _common(m[1], "py", where), src)
        if cell.cell_type == "markdown":
            src = _INCLUDE_MD.sub(lambda m: _common(m[1], "md", where).replace("{arquivo}", f"{slug}.ipynb"), src)
            last_title = _task_title(src) or last_title
            if role == "answer":
                src = f"### BEGIN SOLUTION\n{src}\n### END SOLUTION"
                new = nbformat.v4.new_markdown_cell(src, metadata=_meta(gid, solution=True, grade=True,
                                                                         points=points))
            elif role is None:
                new = nbformat.v4.new_markdown_cell(src, metadata=_meta(gid, locked=True))
            else:
                raise InvalidSource(f"{where}: célula de texto com papel {role}")
        elif role == "setup":
            src = f"{SETUP_TITLE}\n{src.rstrip()}\n\n{CONFERIR}"
            new = nbformat.v4.new_code_cell(_with_lock(src, student_names, where), metadata=_meta(gid, locked=True))
            new.metadata["jupyter"] = {"source_hidden": True}  # JupyterLab, Notebook 7
            new.metadata["cellView"] = "form"  # Colab: mostra só a linha `# @title`
        elif role == "solution":
            if "### BEGIN SOLUTION" not in src:
                raise InvalidSource(f"{where} ({gid}): célula solution sem ### BEGIN SOLUTION")
            new = nbformat.v4.new_code_cell(src, metadata=_meta(gid, solution=True))
        elif role == "tests":
            section = cell.metadata.get("secao") or _chapter(source_nb, slug)
            task = Task(len(tasks) + 1, gid, last_title, int(points), section)
            tasks.append(task)
            new = nbformat.v4.new_code_cell(_tests_cell(src, task, where),
                                            metadata=_meta(gid, grade=True, locked=True, points=points))
            new.metadata["tags"] = ["raises-exception"]
        elif role == "scoreboard":
            new = nbformat.v4.new_code_cell(src, metadata=_meta(gid, locked=True))
        else:
            new = nbformat.v4.new_code_cell(_with_lock(src, student_names, where), metadata=_meta(gid, locked=True))
        new.id = gid
        nb.cells.append(new)
    nbformat.validate(nb)
    return nb


def _global_names(tree) -> list[tuple[str, bool]]:
    """(nome, é def/class/import?) de cada nome que o trecho liga no escopo global, em ordem
    (os comandos de nível de módulo, inclusive dentro de if/for/with/try; não os corpos de
    funções e classes)."""
    out: list[tuple[str, bool]] = []
    stack = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((stmt.name, True))
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out += [(a.asname or a.name.split(".")[0], True) for a in stmt.names if a.name != "*"]
            continue
        children = [getattr(stmt, field_name, []) for field_name in ("body", "orelse", "finalbody", "handlers")]
        for x in ast.walk(stmt):
            if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store) and not any(
                    x in ast.walk(f) for block in children for f in block):
                out.append((x.id, False))
        for block in reversed(children):
            stack.extend(reversed(block))
    return out


def _parse_code(src: str):
    try:
        return ast.parse(src)
    except SyntaxError:
        return None


def _student_and_test_names(source_nb) -> tuple[set[str], set[str]]:
    """(nomes ligados pelas células de solução e de testes; nomes que as células de testes leem)."""
    bound, read_names = set(), set()
    for cell in source_nb.cells:
        if cell.cell_type != "code" or not {"solution", "tests"} & set(cell.metadata.get("tags", [])):
            continue
        tree = _parse_code(cell.source)
        if tree is None:
            continue
        bound |= {n for n, _ in _global_names(tree)}
        if "tests" in cell.metadata.get("tags", []):
            local_names = set()          # parâmetros e variáveis locais das funções do teste não são globais
            for f in ast.walk(tree):
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    local_names |= {a.arg for a in ast.walk(f.args) if isinstance(a, ast.arg)}
                    local_names |= {x.id for x in ast.walk(f) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
            read_names |= {x.id for x in ast.walk(tree) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)} - local_names
    return bound, read_names


def _with_lock(src: str, student_names: tuple[set[str], set[str]], where: str) -> str:
    """A célula travada com `_travar(...)` no fim: os nomes que ela define (funções, classes,
    módulos e os dados que os testes leem) ficam registrados, e cada célula de testes confere,
    no Jupyter do aluno, que nenhuma célula dele os trocou (na correção eles são sempre os do
    corretor). Ficam de fora os nomes que as células de solução ou de testes também ligam."""
    tree = _parse_code(src)
    if tree is None:
        raise InvalidSource(f"{where}: a célula travada não compila")
    bound, read_names = student_names
    found = list(dict.fromkeys(
        n for n, is_definition in _global_names(tree)
        if (is_definition or n in read_names) and n not in bound and n != "_" and not n.startswith("__")))
    if not found:
        return src
    return (f"{src.rstrip()}\n\n\n_travar({', '.join(map(repr, found))})  "
            "# nomes do professor: os testes usam sempre estes (o placar avisa se uma célula sua os trocar)")


def _chapter(source_nb, slug: str) -> str:
    """A seção do livro de uma tarefa sem `secao`: o capítulo do caderno (do título)."""
    for c in source_nb.cells:
        if c.cell_type == "markdown":
            m = re.search(r"^#\s+(Capítulo\s+\d+)\s*[—:-]\s*(.+)$", c.source, re.M)
            if m:
                title = re.sub(r"[\s:,]*\$[^$]*\$", "", m[2]).strip()    # sem fórmulas (texto puro)
                return f"{m[1]} do livro, {title}"
    return slug


def _tests_cell(src: str, task: Task, where: str) -> str:
    """Avisa o placar no começo e no fim da parte visível (Tarefa N: testes visíveis passaram.)."""
    if _NOTICE.search(src) or "_visiveis_passaram(" in src or "_tarefa(" in src:
        raise InvalidSource(f"{where}: o aviso do placar é posto pelo mapeador; tire-o da fonte")
    start = f"_tarefa({task.number}, {task.title!r}, {task.grade_id!r}, {task.section!r})"
    visible, hidden, rest = src.partition(HIDDEN)
    src = f"{start}\n{visible.rstrip()}\n_visiveis_passaram({task.number})\n{hidden}{rest}"
    return src.rstrip("\n")


def sources() -> list[Path]:
    """As fontes dos cadernos, em ordem (autograder/fontes/NN-slug.md)."""
    return sorted(p for p in SOURCES.glob("[0-9][0-9]-*.md"))


def solution_path(slug: str, root: Path = ROOT) -> Path:
    return root / "solutions" / slug / f"{slug}.ipynb"


def write(path: Path, root: Path = ROOT) -> Path:
    """Escreve solutions/<slug>/<slug>.ipynb a partir da fonte `path`."""
    out = solution_path(path.stem, root)
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build(path), out)
    return out
