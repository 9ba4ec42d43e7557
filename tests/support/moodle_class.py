"""Uma turma falsa do Moodle (issue 41): tarefas minúsculas com placar, zips "Baixar todas as
submissões" de uma tarefa cada, a planilha de avaliação que o Moodle baixa e a lista da turma."""

from __future__ import annotations

import copy
import zipfile
from pathlib import Path

import nbformat

from autograder.authoring.nbbuild import MYST_HEADER, build_text


def build(solutions: Path, slug: str, factor: int) -> Path:
    """Uma tarefa de uma função (`vezes(x)` = factor·x), com teste oculto e a célula do placar."""
    text = MYST_HEADER + f"""
+++ {{"grade_id": "titulo"}}

# Tarefa {slug}

```{{code-cell}}
:tags: [setup]
:grade_id: preparacao

import numpy as np
```

+++

## Tarefa 1 — vezes {factor} (2 pontos)

```{{code-cell}}
:tags: [solution]
:grade_id: vezes

def vezes(x):
    ### BEGIN SOLUTION
    return {factor} * x
    ### END SOLUTION
```

```{{code-cell}}
:tags: [tests]
:grade_id: test_vezes
:points: 2

conferir("vezes", vezes(np.arange(3.0)), {factor} * np.arange(3.0))
### BEGIN HIDDEN TESTS
conferir("vezes (oculto)", vezes(np.array([-1.5])), np.array([-1.5 * {factor}]))
### END HIDDEN TESTS
```

```{{code-cell}}
:tags: [scoreboard]
:grade_id: placar

placar()
```
"""
    path = solutions / slug / f"{slug}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build_text(text, slug), path)
    return path


def answer(release, code: str):
    """O notebook distribuído com a célula da solução trocada por `code`."""
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "vezes":
            cell.source = code
    return nb


def moodle_zip(path: Path, slug: str, entries: dict[tuple[str, str], object]) -> Path:
    """O zip de uma tarefa, com pastas: (nome, participante) -> notebook."""
    with zipfile.ZipFile(path, "w") as z:
        for (name, participant), nb in entries.items():
            z.writestr(f"{name}_{participant}_assignsubmission_file_/{slug}.ipynb", nbformat.writes(nb))
    return path


def worksheet(path: Path, people: list[tuple[str, str, str]], top: int) -> Path:
    """A planilha de avaliação como um Moodle em português a baixa: (participante, nome, envio)."""
    lines = ['Identificador,"Nome completo","Endereço de email",Status,Nota,"Nota máxima",'
             '"Nota pode ser alterada","Última modificação (envio)","Última modificação (nota)",'
             '"Comentários de feedback"']
    for participant, name, when in people:
        status = "Nenhum envio" if when == "-" else "Enviado para avaliação"
        lines.append(f'Participante{participant},"{name}",,"{status}",,{top},Sim,"{when}",-,')
    path.write_text("\ufeff" + "\n".join(lines) + "\n", encoding="utf-8")
    return path
