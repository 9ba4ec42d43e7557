"""As turmas corrigidas UMA vez por bateria e usadas por vários arquivos (escopo de sessão):
a de cenários (`arquivos`, `turma`) e a dos cadernos do curso (`exercises_class`). Um teste
que muda um workspace copia antes (`clone_prepared`)."""

from __future__ import annotations

import time

import pytest

import cenarios
from autograder.core.workspace import Workspace
from grading import HAS_BWRAP, LIMITS, SLUG, WHY_NOT, git_status, read_csv, run_cli


@pytest.fixture(scope="session")
def arquivos(tmp_path_factory):
    """Fonte, workspace preparado (generate_assignment) e entregas da turma de fixtures."""
    base = tmp_path_factory.mktemp("turma")
    sol = base / "solucoes"
    cenarios.build_assignment(sol)
    ws = Workspace(base / "ws", sol)
    release = ws.prepare([SLUG])[SLUG].release[SLUG]
    subs = base / "entregas"
    paths = {"solution": str(sol / SLUG / f"{SLUG}.ipynb"), "gradebook": str(ws.db_path),
             "other_student": str(subs / "correct" / SLUG / f"{SLUG}.ipynb"),
             "submissions": str(subs)}
    students = cenarios.write_scenarios(release, subs, paths)
    (ws.root / "prazos.toml").write_text(
        f'fuso = "America/Sao_Paulo"\n[prazos]\n"{SLUG}" = "{cenarios.DEADLINE}"\n', encoding="utf-8")
    return {"base": base, "sol": sol, "ws": ws, "subs": subs, "students": students, "paths": paths}


@pytest.fixture(scope="session")
def turma(arquivos):
    """A turma de fixtures corrigida uma vez, com 2 processos e a sandbox."""
    before = git_status()
    t0 = time.monotonic()
    p = run_cli("grade", arquivos["subs"], "--workspace", arquivos["ws"].root, "--solutions", arquivos["sol"],
                "--jobs", "2", *LIMITS)
    return {**arquivos, "grades": read_csv(arquivos["ws"].root / "grades.csv"), "stderr": p.stderr,
            "seconds": time.monotonic() - t0, "git_before": before}


@pytest.fixture(scope="session")
def exercises_class(tmp_path_factory):
    """Todos os cadernos do curso numa turma só, corrigida uma vez pela linha de comando:
    `solucao` e `branco` entregam cada caderno (a solução de referência; o distribuído intocado),
    e as respostas plantadas e justas de tests/exercises/answers, em pacotes compatíveis (um
    aluno por pacote; `answers.cli.packs`), cada uma conferida pelo próprio contrato."""
    import csv

    import nbformat

    from answers import Fair, cli

    base = tmp_path_factory.mktemp("cadernos")
    subs, ws = base / "entregas", base / "ws"
    who = cli.build_class(subs, pack=True)
    assignments = sorted(p.name for p in (cli.ROOT / "solutions").iterdir() if any(p.glob("*.ipynb")))
    for a in assignments:
        for student, nb in (("solucao", cli.submission(a, Fair("a solução de referência"))),
                            ("branco", nbformat.read(cli.ROOT / "exercises" / a / f"{a}.ipynb", as_version=4))):
            d = subs / student / a
            d.mkdir(parents=True)
            nbformat.write(nb, d / f"{a}.ipynb")
    cli.grade(subs, ws)
    with open(ws / "grades.csv", encoding="utf-8", newline="") as f:
        grades = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(f)}
    with open(ws / "questions.csv", encoding="utf-8", newline="") as f:
        questions = list(csv.DictReader(f))
    return {"ws": ws, "who": who, "assignments": assignments, "grades": grades, "questions": questions}
