"""Constrói notebooks-fonte do nbgrader (solutions/) com os metadados certos.

Uso (num script ou no terminal):

    from autograder.nbbuild import Notebook
    nb = Notebook("01-pontuacoes", titulo="Capítulo 1 — Pontuações")
    nb.md("Texto de abertura ...")
    nb.setup("import numpy as np\\nimport torch")      # + a função conferir
    nb.solution("def scores(q, k):\\n    ### BEGIN SOLUTION\\n    ...\\n    ### END SOLUTION",
                grade_id="scores")
    nb.tests("conferir(...)\\n### BEGIN HIDDEN TESTS\\n...\\n### END HIDDEN TESTS",
             grade_id="test_scores_forma", points=2)
    nb.written("Explique por que ...", grade_id="explique_escala", points=2)
    nb.save()   # -> solutions/01-pontuacoes/01-pontuacoes.ipynb

Cada célula de teste é travada (locked) e vale pontos; a célula de preparação
é travada e inclui `autograder/conferir.py` inteiro.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CONFERIR = (Path(__file__).parent / "conferir.py").read_text(encoding="utf-8")


def _meta(grade_id, *, solution=False, grade=False, locked=False, points=None, task=False):
    m = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
         "solution": solution, "task": task}
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


class Notebook:
    def __init__(self, slug: str, titulo: str):
        self.slug = slug
        self.nb = nbformat.v4.new_notebook()
        self.nb.metadata.update({
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        })
        self._ids: set[str] = set()
        self.md(f"# {titulo}", grade_id="titulo")

    def _id(self, grade_id):
        if grade_id in self._ids:
            raise ValueError(f"grade_id repetido: {grade_id}")
        self._ids.add(grade_id)
        return grade_id

    def md(self, text: str, grade_id: str | None = None):
        """Texto travado (enunciado)."""
        gid = self._id(grade_id or f"texto_{len(self.nb.cells)}")
        self.nb.cells.append(nbformat.v4.new_markdown_cell(text, metadata=_meta(gid, locked=True)))

    def code(self, src: str, grade_id: str | None = None):
        """Código de demonstração, travado e sem nota."""
        gid = self._id(grade_id or f"codigo_{len(self.nb.cells)}")
        self.nb.cells.append(nbformat.v4.new_code_cell(src, metadata=_meta(gid, locked=True)))

    def setup(self, imports: str):
        """Imports do aluno + funções de conferência (travado)."""
        self.code(imports.rstrip() + "\n\n" + CONFERIR, grade_id="preparacao")

    def solution(self, src: str, grade_id: str):
        """Célula que o aluno completa (### BEGIN/END SOLUTION no código)."""
        if "### BEGIN SOLUTION" not in src:
            raise ValueError(f"{grade_id}: célula de solução sem ### BEGIN SOLUTION")
        self.nb.cells.append(nbformat.v4.new_code_cell(
            src, metadata=_meta(self._id(grade_id), solution=True)))

    def tests(self, src: str, grade_id: str, points: int):
        """Célula de testes com pontos (visíveis + ### BEGIN/END HIDDEN TESTS)."""
        self.nb.cells.append(nbformat.v4.new_code_cell(
            src, metadata=_meta(self._id(grade_id), grade=True, locked=True, points=points)))

    def written(self, pergunta: str, resposta_modelo: str, grade_id: str, points: int):
        """Pergunta aberta, corrigida à mão: enunciado travado + célula de resposta."""
        self.md(pergunta, grade_id=f"{grade_id}_enunciado")
        src = f"### BEGIN SOLUTION\n{resposta_modelo}\n### END SOLUTION"
        self.nb.cells.append(nbformat.v4.new_markdown_cell(
            src, metadata=_meta(self._id(grade_id), solution=True, grade=True, points=points)))

    @property
    def path(self) -> Path:
        return ROOT / "solutions" / self.slug / f"{self.slug}.ipynb"

    def save(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.validate(self.nb)
        nbformat.write(self.nb, self.path)
        return self.path
