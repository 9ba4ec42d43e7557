"""Entregas sintéticas a partir das soluções reais (para o benchmark do corretor).

Um aluno "completo" tem o código entre `### BEGIN SOLUTION` / `### END
SOLUTION` da fonte (sem os marcadores, como um aluno escreveria); um "em
branco" entrega a versão distribuída intacta; um "parcial" resolve só a
primeira metade das células de solução. Tudo determinístico.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat

_MARK = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


def _student_text(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if not _MARK.match(line))


def _gid(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def fill(release_nb, source_nb, fraction: float):
    """A versão distribuída com a fração `fraction` das soluções preenchida."""
    answers = {_gid(c): _student_text(c.source) for c in source_nb.cells
               if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    order = [g for g in (_gid(c) for c in release_nb.cells) if g in answers]
    chosen = set(order[: round(len(order) * fraction)])
    nb = copy.deepcopy(release_nb)
    for cell in nb.cells:
        if _gid(cell) in chosen:
            cell.source = answers[_gid(cell)]
    return nb


KINDS = [("completo", 1.0), ("parcial", 0.5), ("completo", 1.0), ("em-branco", 0.0)]


def write_class(solutions: Path, releases: Path, dest: Path, n: int) -> list[str]:
    """dest/<aluno>/<tarefa>/<nb>.ipynb para n alunos e todas as tarefas de solutions/."""
    students = []
    for i in range(n):
        kind, frac = KINDS[i % len(KINDS)]
        student = f"aluno{i + 1:02d}-{kind}"
        students.append(student)
        for adir in sorted(p for p in solutions.iterdir() if p.is_dir()):
            for src in sorted(adir.glob("*.ipynb")):
                rel = nbformat.read(releases / adir.name / src.name, as_version=4)
                nb = fill(rel, nbformat.read(src, as_version=4), frac)
                out = dest / student / adir.name / src.name
                out.parent.mkdir(parents=True, exist_ok=True)
                nbformat.write(nb, out)
    return students
