"""Fontes dos cadernos do nbgrader: um MyST Markdown por caderno (`NN-slug.md`).

O formato está em README.md, nesta pasta. `python -m autograder.fontes`
reescreve solutions/<slug>/<slug>.ipynb a partir delas; `make release` faz
isso e depois gera exercises/ com o nbgrader.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from autograder.authoring import nbbuild


def slugs() -> list[str]:
    return [p.stem for p in nbbuild.sources()]


def load(slug: str) -> nbformat.NotebookNode:
    """O notebook de solutions/ do caderno `slug`, feito agora da fonte (sem gravar)."""
    return nbbuild.build(nbbuild.SOURCES / f"{slug}.md")


def build_all(root: Path = nbbuild.ROOT) -> list[Path]:
    return [nbbuild.write(p, root) for p in nbbuild.sources()]
