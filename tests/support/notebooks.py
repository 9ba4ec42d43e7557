"""Cadernos do curso para os testes do corretor: o distribuído de uma tarefa e uma célula dele."""

from __future__ import annotations

from pathlib import Path

import nbformat

from autograder.core import nbmeta

ROOT = Path(__file__).resolve().parents[2]
CAP1 = "01-pontuacoes"


def release(slug: str = CAP1) -> nbformat.NotebookNode:
    """O caderno distribuído (exercises/) da tarefa `slug`."""
    return nbformat.read(ROOT / "exercises" / slug / f"{slug}.ipynb", as_version=4)


def cell(nb, gid: str):
    """A célula de `grade_id` `gid`."""
    return next(c for c in nb.cells if nbmeta.grade_id(c) == gid)
