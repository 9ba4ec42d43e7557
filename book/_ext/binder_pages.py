"""Os cadernos que o botão do Binder abre, gerados do repositório pelo binder/postBuild.

    python book/_ext/binder_pages.py            # todas as páginas com código
    BINDER_PAGES="book/parte1/04-softmax" python book/_ext/binder_pages.py

O botão do Binder (book/_ext/curso.py, `binder_notebook`) abre
`notebooks/<parte>/<capítulo>.ipynb`. Esse caderno não está no repositório: o
mybinder.org roda o binder/postBuild ao montar a imagem, numa cópia nova do
repositório, e o postBuild chama este programa, que faz para cada capítulo do
sumário (_toc.yml) o que a construção do livro faz para o botão de download:

1. lê a página MyST com o leitor do myst_nb (as mesmas células da construção);
2. executa o caderno no kernel do ambiente do Binder (nbclient, como o
   myst_nb; uma célula com erro para tudo, fora as `raises-exception`);
3. reescreve-o com `rewrite_download` de book/_ext/baixar.py: a 1ª célula que
   instala o pacote (ou para com uma mensagem em português), os números
   colados escritos no texto, caixas e referências em Markdown comum, o número
   do capítulo no título, sem as células `remove-cell`.

O que a construção tira do Sphinx, aqui sai do repositório: os valores colados
das saídas de glue do caderno executado (`glued_values`), as citações de
book/references.bib (`book_citations`), o endereço do repositório de
_config.yml e o número do capítulo da ordem do _toc.yml (`chapter_numbers`,
conferido contra o do Sphinx em cada construção do livro, baixar.py).
Os rótulos `{ref}` do livro têm todos texto explícito, então não precisam do
índice de rótulos do Sphinx.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baixar import PageContext, book_citations, chapter_numbers, glued_values, rewrite_download  # noqa: E402
from curso import binder_notebook  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CELL_TIMEOUT = 300   # segundos por célula, o `execute.timeout` do _config.yml


@dataclass(frozen=True)
class Page:
    """Uma página do sumário com código: o docname e o número do capítulo ("4")."""
    docname: str
    number: str

    def source(self, root: Path) -> Path:
        return root / f"{self.docname}.md"

    def notebook(self, root: Path) -> Path:
        return root / binder_notebook(self.docname)


def _has_code(source: Path) -> bool:
    """A página é um caderno (tem `kernelspec` no cabeçalho), como o tema decide os botões."""
    from myst_nb.core.read import read_myst_markdown_notebook

    nb = read_myst_markdown_notebook(source.read_text(encoding="utf-8"))
    return "kernelspec" in nb.metadata


def pages(root: Path = ROOT) -> list[Page]:
    """As páginas do sumário que têm código, na ordem do livro."""
    return [Page(doc, num) for doc, num in chapter_numbers(root).items()
            if _has_code(root / f"{doc}.md")]


def repository(root: Path) -> tuple[str, str]:
    """(url, ramo) do repositório, de `repository` no _config.yml."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    repo = config.get("repository") or {}
    url, branch = (repo.get("url") or "").rstrip("/"), repo.get("branch") or "main"
    if not url:
        raise SystemExit("_config.yml sem `repository.url`: não há de onde instalar o pacote do curso")
    return url, branch


def build_page(page: Page, root: Path = ROOT) -> Path:
    """Executa e reescreve o caderno de `page`; devolve o caminho gravado."""
    from myst_nb.core.read import read_myst_markdown_notebook
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    source = page.source(root)
    nb = read_myst_markdown_notebook(source.read_text(encoding="utf-8"))
    dest = page.notebook(root)
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name=nb.metadata.kernelspec.name,
                       resources={"metadata": {"path": str(dest.parent)}}).execute()
    except CellExecutionError as err:
        raise SystemExit(f"{source.relative_to(root)}: uma célula falhou ao executar o capítulo "
                         f"para o Binder:\n{err}") from None
    url, branch = repository(root)
    ctx = PageContext(glue=glued_values(nb), citations=book_citations(root), number=page.number,
                      source_dir=source.parent)
    nbformat.write(rewrite_download(nb, url, branch, root, ctx), dest)
    return dest


def main() -> None:
    wanted = os.environ.get("BINDER_PAGES", "").split()
    todo = [p for p in pages() if not wanted or p.docname in wanted]
    unknown = set(wanted) - {p.docname for p in todo}
    if unknown:
        raise SystemExit(f"BINDER_PAGES: páginas fora do sumário ou sem código: {sorted(unknown)}")
    for page in todo:
        print(f"Binder: {page.docname}.md -> {build_page(page).relative_to(ROOT)}", flush=True)


if __name__ == "__main__":
    main()
