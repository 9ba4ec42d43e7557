"""Extensão Sphinx do curso.

1. Serve o MathJax 3 de uma cópia local, para o livro abrir sem internet. A
   cópia vem do pacote PyPI `django-static-mathjax` (MathJax 3.2.2, fixado em
   requirements.txt); copiamos só o que a saída CHTML usa para _static/mathjax/.
2. A diretiva ``exercicio`` liga um capítulo ao seu caderno de exercícios:
   copia exercises/<slug>/<slug>.ipynb para o site (exercicios/<slug>.ipynb) e
   monta o link do Colab a partir do endereço do repositório em _config.yml
   (uma só configuração para todos os links). Um slug sem caderno é erro.

       ```{exercicio} 01-pontuacoes
       ```
"""

from __future__ import annotations

import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

import mathjax  # pacote do django-static-mathjax

ES5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
PARTS = ["tex-chtml.js", "input", "output/chtml", "ui", "a11y", "adaptors", "sre"]
SITE_DIR = "exercicios"


def _repo_root(app) -> Path:
    return Path(app.confdir)


def _exercise(app, slug: str) -> Path:
    return _repo_root(app) / "exercises" / slug / f"{slug}.ipynb"


class Exercicio(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        slug = self.arguments[0].strip()
        src = _exercise(self.env.app, slug)
        if not src.exists():
            raise self.error(f"caderno de exercícios não encontrado: {src} (rode `make release`)")
        self.env.note_dependency(str(src))
        self.env.app.env.curso_exercicios = getattr(self.env.app.env, "curso_exercicios", set()) | {slug}
        depth = self.env.docname.count("/")
        href = "../" * depth + f"{SITE_DIR}/{slug}.ipynb"
        opts = self.config.html_theme_options
        repo = opts.get("repository_url", "").rstrip("/")
        branch = opts.get("repository_branch", "main") or "main"
        colab = repo.replace("https://github.com/", "https://colab.research.google.com/github/")
        colab += f"/blob/{branch}/exercises/{slug}/{slug}.ipynb"

        box = nodes.admonition(classes=["tip", "exercicio"])
        box += nodes.title(text=f"Exercícios: {slug}.ipynb")
        para = nodes.paragraph()
        para += nodes.Text("Baixe o caderno ")
        para += nodes.reference("", f"{slug}.ipynb", refuri=href, classes=["exercicio-download"])
        para += nodes.Text(" e abra no JupyterLab, ou ")
        para += nodes.reference("", "abra no Google Colab", refuri=colab, classes=["exercicio-colab"])
        para += nodes.Text(". As células de teste mostram o que se espera; a correção também usa testes ocultos.")
        box += para
        return [box]


def _set_path(app, config):
    config.mathjax_path = "mathjax/tex-chtml.js"  # relativo a _static/


def _copy(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    dest = Path(app.outdir) / "_static" / "mathjax"
    for part in PARTS:
        src, dst = ES5 / part, dest / part
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    # Copia todos os cadernos de exercícios (não só os citados nesta construção
    # incremental): o site sempre oferece a versão atual de exercises/.
    out = Path(app.outdir) / SITE_DIR
    out.mkdir(exist_ok=True)
    for nb in sorted((_repo_root(app) / "exercises").glob("*/*.ipynb")):
        shutil.copy2(nb, out / nb.name)


def setup(app):
    if not (ES5 / "tex-chtml.js").exists():
        raise RuntimeError(f"MathJax local não encontrado em {ES5}; rode `make` para instalar")
    app.connect("config-inited", _set_path)
    app.connect("build-finished", _copy)
    app.add_directive("exercicio", Exercicio)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
