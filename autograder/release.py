"""`python -m autograder release`: regenera solutions/ e exercises/.

1. `python -m autograder.fontes` reescreve solutions/<slug>/<slug>.ipynb a
   partir das fontes em texto (autograder/fontes/capNN.py);
2. para cada tarefa, `nbgrader generate_assignment` num curso temporário (com
   gradebook temporário, nada fica no repositório além de exercises/) e a
   versão do aluno substitui exercises/<slug>/.

`--verificar` não escreve nada: gera num diretório temporário e compara com
o que está em exercises/, saindo com código 1 se algo divergir (para testes
e CI: exercises/ tem de ser exatamente o que o nbgrader gera).
"""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .course import REPO, _quiet_nbgrader, nbgrader_config


def generate_release(solutions: Path, out: Path, assignments: list[str] | None = None) -> list[str]:
    """Gera a versão do aluno de cada tarefa em out/<tarefa>/; devolve as tarefas."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    _quiet_nbgrader()
    names = assignments or sorted(p.name for p in solutions.iterdir()
                                  if p.is_dir() and any(p.glob("*.ipynb")))
    with tempfile.TemporaryDirectory(prefix="autograder-release-") as tmp:
        root = Path(tmp)
        cfg = nbgrader_config(root, f"sqlite:///{root / 'gradebook.db'}")
        api = NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)
        for a in names:
            shutil.copytree(solutions / a, root / "source" / a,
                            ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
            r = api.generate_assignment(a, force=True, create=True)
            if not r.get("success"):
                raise RuntimeError(f"o nbgrader não gerou '{a}':\n{r.get('error') or r.get('log')}")
            shutil.rmtree(out / a, ignore_errors=True)
            shutil.copytree(root / "release" / a, out / a)
    return names


def _diff(a: Path, b: Path) -> list[str]:
    out = []
    cmp = filecmp.dircmp(a, b)
    out += [f"só em exercises/: {x}" for x in cmp.left_only]
    out += [f"faltando em exercises/: {x}" for x in cmp.right_only]
    for f in cmp.common_files:
        if (a / f).read_bytes() != (b / f).read_bytes():
            out.append(f"diferente: {f}")
    for d in cmp.common_dirs:
        out += [f"{d}/{x}" for x in _diff(a / d, b / d)]
    return out


def release(repo: Path = REPO, check: bool = False) -> int:
    solutions, exercises = repo / "solutions", repo / "exercises"
    if not check:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(repo)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
        r = subprocess.run([sys.executable, "-m", "autograder.fontes"], cwd=repo, env=env)
        if r.returncode != 0:
            print("erro: `python -m autograder.fontes` falhou", file=sys.stderr)
            return r.returncode
    if not solutions.is_dir():
        print(f"erro: {solutions} não existe (nenhuma fonte em autograder/fontes?)", file=sys.stderr)
        return 1
    if not check:
        exercises.mkdir(exist_ok=True)
        for a in generate_release(solutions, exercises):
            print(f"gerado: exercises/{a}/")
        return 0
    with tempfile.TemporaryDirectory(prefix="autograder-verifica-") as tmp:
        names = generate_release(solutions, Path(tmp))
        problems = []
        for a in names:
            if not (exercises / a).is_dir():
                problems.append(f"{a}: exercises/{a}/ não existe")
                continue
            problems += [f"{a}: {p}" for p in _diff(exercises / a, Path(tmp) / a)]
    if problems:
        print("exercises/ não é o que o nbgrader gera de solutions/ (rode `make release`):",
              file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print(f"exercises/ confere com solutions/ ({len(names)} tarefa(s))")
    return 0
