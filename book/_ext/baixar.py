"""Extensão Sphinx: o .ipynb que o leitor baixa de um capítulo roda fora do repositório.

O sphinx-book-theme oferece, no botão de download, o caderno executado de cada
página MyST (`_build/jupyter_execute/<página>.ipynb`, copiado para
`_sources/`). Como sai do JB1, esse caderno não roda fora do repositório: a
primeira célula importa `atencao`, que nada instala, e os tracebacks trazem os
caminhos da máquina que construiu o livro. Ao fim da construção, cada um desses
cadernos é reescrito assim:

1. uma primeira célula instala o pacote do curso do repositório configurado em
   `_config.yml` (`repository.url` e `repository.branch`) quando `atencao` não
   está instalado (`%pip install "atencao @ git+<url>@<ref>"`; o pacote está na
   raiz do repositório, sem subpasta). A ref é o ramo configurado; na
   construção do GitHub Actions (que publica o site), é o commit construído
   (`GITHUB_SHA`), para o caderno instalar o pacote da mesma versão da página;
2. saem as células `remove-cell` e `remove-input`: o caderno baixado tem o
   código que a página mostra (inclusive o recolhido em "Mostrar o código"),
   na mesma ordem; tests/test_paginas.py garante que nenhuma célula mostrada
   usa um nome definido só numa célula removida;
3. as saídas perdem os caminhos da máquina (`strip_machine_paths` de curso.py).

A reescrita é idempotente (marca `metadata.curso.download`): uma página que
não foi reescrita nesta construção incremental já está pronta.

O tema só copia o caderno e mostra o botão ".ipynb" quando há algum botão de
lançamento configurado (é `add_launch_buttons` quem copia); `_offer_notebook`
faz a cópia sempre, para o download não depender dessa configuração.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat

from curso import strip_machine_paths

REMOVED_TAGS = {"remove-cell", "remove-input"}
INSTALL_TAG = "course-install"  # a célula de instalação (os testes a reconhecem por esta tag)


def install_requirement(repo_url: str, ref: str) -> str:
    """A linha do pip que instala o pacote do curso do repositório, no ramo ou commit `ref`."""
    return f"atencao @ git+{repo_url.rstrip('/')}@{ref}"


def install_cell(repo_url: str, ref: str) -> nbformat.NotebookNode:
    source = (
        "# Este caderno usa o pacote do curso (`import atencao as at`). Fora do\n"
        "# repositório (no Colab, noutra pasta), ele é instalado do GitHub na\n"
        "# primeira vez, com numpy, torch e matplotlib se faltarem.\n"
        "import importlib\n"
        "import importlib.util\n"
        "\n"
        'if importlib.util.find_spec("atencao") is None:\n'
        f'    %pip install --quiet "{install_requirement(repo_url, ref)}"\n'
        "    importlib.invalidate_caches()\n"
    )
    return nbformat.v4.new_code_cell(source, metadata={"tags": [INSTALL_TAG]})


def _clean(value, root: Path):
    if isinstance(value, str):
        return strip_machine_paths(value, root)
    if isinstance(value, list):
        return [_clean(v, root) for v in value]
    if isinstance(value, dict):
        return {k: (v if k.startswith("image/") else _clean(v, root)) for k, v in value.items()}
    return value


def rewrite_download(nb: nbformat.NotebookNode, repo_url: str, ref: str,
                     root: Path) -> nbformat.NotebookNode:
    """O caderno executado de uma página, pronto para rodar fora do repositório."""
    cells = [install_cell(repo_url, ref)]
    for cell in nb.cells:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & REMOVED_TAGS:
            continue
        if cell.cell_type == "code":
            cell.outputs = [nbformat.from_dict(_clean(dict(o), root)) for o in cell.outputs]
        cells.append(cell)
    nb.cells = cells
    nb.metadata.setdefault("curso", {})["download"] = True
    return nb


def _rewrite_all(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    opts = app.config.html_theme_options
    repo_url = opts.get("repository_url", "")
    ref = os.environ.get("GITHUB_SHA") or opts.get("repository_branch", "") or "main"
    sources = Path(app.outdir) / "_sources"
    for path in sorted(sources.rglob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if nb.metadata.get("curso", {}).get("download"):
            continue
        if not repo_url:
            raise RuntimeError(
                f"{path.name}: sem `repository.url` em _config.yml não há de onde instalar o "
                "pacote do curso no .ipynb baixado")
        nbformat.write(rewrite_download(nb, repo_url, ref, Path(app.confdir)), path)


def _offer_notebook(app, pagename, templatename, context, doctree):
    """Põe o caderno executado da página em _sources/ e o oferece no botão de download."""
    if doctree is None or app.builder.format != "html":
        return
    if not context.get("sourcename", "").endswith((".md", ".md.txt")):
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.exists():   # página sem código (não é um caderno)
        return
    dest = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(executed, dest)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    # Antes dos botões do cabeçalho do sphinx-book-theme (prioridade 501).
    app.connect("html-page-context", _offer_notebook, priority=500)
    app.connect("build-finished", _rewrite_all)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
