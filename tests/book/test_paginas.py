"""Páginas que o leitor pode rodar de novo, de cima para baixo.

O código que um capítulo mostra (inclusive o recolhido em "Mostrar o código",
tag `hide-input`) é o que vai no .ipynb baixado (book/_ext/baixar.py tira as
células `remove-cell` e `remove-input`). Então nenhuma célula mostrada pode
usar um nome que só uma célula removida define: o leitor que copia o código da
página, ou roda o caderno baixado, levaria um NameError. A análise é estática
(ast): nomes lidos numa célula mostrada contra os definidos nas células
mostradas anteriores, nos builtins e nos módulos importados.
"""

from __future__ import annotations

import ast
import re
import builtins
import sys
from pathlib import Path

import pytest
from myst_nb.core.read import read_myst_markdown_notebook

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from baixar import REMOVED_TAGS  # noqa: E402

CHAPTERS = sorted(ROOT.glob("book/parte*/*.md"))
IPYTHON_NAMES = {"get_ipython", "display", "In", "Out", "_"}


def cells(path: Path):
    nb = read_myst_markdown_notebook(path.read_text(encoding="utf-8"))
    for c in nb.cells:
        if c.cell_type == "code":
            yield set(c.metadata.get("tags", [])), c.source


def defined(tree: ast.AST) -> set[str]:
    """Nomes que o código define em qualquer escopo (atribuição, import, def, for...)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            a = node.args if not isinstance(node, ast.ClassDef) else None
            if a is not None:
                out |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
                out |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
        elif isinstance(node, ast.Lambda):
            a = node.args
            out |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(al.asname or al.name).split(".")[0] for al in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return out


def used(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def parse(source: str) -> ast.AST:
    # Linhas mágicas do IPython (%time, !pip) não são Python: saem da análise.
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    return ast.parse("\n".join(lines))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_shown_code_does_not_depend_on_removed_cells(path):
    known = set(dir(builtins)) | IPYTHON_NAMES
    only_removed: dict[str, int] = {}
    problems = []
    for n, (tags, source) in enumerate(cells(path), start=1):
        tree = parse(source)
        if tags & REMOVED_TAGS:
            for name in defined(tree) - known:
                only_removed.setdefault(name, n)
            continue
        for name in sorted(used(tree) - known - defined(tree)):
            if name in only_removed:
                problems.append(f"célula {n} usa `{name}`, definido só na célula removida "
                                f"{only_removed[name]}")
        known |= defined(tree)
    assert not problems, (f"{path.relative_to(ROOT)}: quem roda a página de cima para baixo leva "
                          "NameError; mostre (tag hide-input) a célula que define o nome:\n"
                          + "\n".join(problems))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_import_cell_is_shown_collapsed(path):
    """A célula que importa o pacote do curso aparece recolhida, nunca removida."""
    imports = [(tags, src) for tags, src in cells(path) if "import atencao" in src]
    assert imports, f"{path.relative_to(ROOT)}: nenhuma célula importa atencao"
    tags, _ = imports[0]
    assert not tags & REMOVED_TAGS, (f"{path.relative_to(ROOT)}: a primeira célula que importa "
                                    f"atencao está removida ({sorted(tags)}); use hide-input")


def test_no_machine_path_in_downloads_or_kernel_warnings():
    """Os .ipynb baixados não mostram caminhos da máquina que construiu o livro
    (repositório, site-packages absoluto), e nenhuma página mostra o arquivo
    temporário de uma célula do kernel (`/tmp/ipykernel_1234/5678.py:1: Aviso`,
    o que um `warnings.warn` feito numa célula escreve). Os caminhos nas páginas
    HTML ficam com tests/book/test_links.py."""
    html = ROOT / "_build" / "html"
    assert (html / "index.html").exists(), "rode `make book` (o `make test` faz isso antes)"
    in_downloads = re.compile(re.escape(str(ROOT)) + r"|ipykernel_\d+|/[\w./-]*/site-packages/")
    found = []
    for path in sorted(html.rglob("*.ipynb")) + sorted(html.rglob("*.html")):
        pattern = in_downloads if path.suffix == ".ipynb" else re.compile(r"ipykernel_\d+")
        for m in pattern.finditer(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(html)}: {m.group(0)}")
    assert not found, "caminhos da máquina no site:\n" + "\n".join(found[:20])


def test_download_rewrite_keeps_shown_cells_installs_package_and_strips_paths():
    import nbformat
    from baixar import INSTALL_TAG, rewrite_download

    nb = nbformat.v4.new_notebook()
    shown = nbformat.v4.new_code_cell("import atencao as at", metadata={"tags": ["hide-input"]})
    shown.outputs = [nbformat.v4.new_output("error", ename="ValueError", evalue="x", traceback=[
        f"File {ROOT}/atencao/core.py:87", "File /opt/py/lib/python3.11/site-packages/torch/x.py:1"])]
    nb.cells = [shown,
                nbformat.v4.new_code_cell("texto('a', 1)", metadata={"tags": ["remove-cell"]}),
                nbformat.v4.new_code_cell("Markdown(t)", metadata={"tags": ["remove-input"]}),
                nbformat.v4.new_markdown_cell("texto")]
    out = rewrite_download(nb, "https://github.com/org/repo/", "abc123", ROOT)
    assert INSTALL_TAG in out.cells[0].metadata["tags"]
    assert ('%pip install --quiet {_opcoes} {_pacotes} "atencao @ git+https://github.com/org/repo@abc123"'
            in out.cells[0].source)
    # o torch que falta é o fixado em requirements-aluno.txt, de CPU no Linux (issue 41)
    assert '"torch": "2.13.0"' in out.cells[0].source and '+= "+cpu"' in out.cells[0].source
    assert [c.source for c in out.cells[1:]] == ["import atencao as at", "texto"]
    assert out.cells[1].outputs[0]["traceback"] == [
        "File atencao/core.py:87", "File site-packages/torch/x.py:1"]
    assert out.metadata["curso"]["download"] is True
