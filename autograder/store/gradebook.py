"""O gradebook do nbgrader (`gradebook.db` do workspace): o único módulo que o lê e escreve.

- `merge_results` leva as notas automáticas dos `JobResult` para o gradebook
  (um só escritor, no fim da correção), sem apagar as notas manuais;
- `set_due_dates` grava o prazo de cada tarefa (o formgrader mostra a "Due Date");
- `read_marks` devolve o que o professor deu à mão no formgrader: a nota
  manual de cada célula e o comentário (`Comment.manual_comment` da API do
  nbgrader), para os CSVs, as exportações, o relatório e o feedback.

Chave de uma célula: (aluno, tarefa, notebook, grade_id). Consultas em lote: a
API célula a célula do nbgrader levava segundos por dezena de alunos.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable

from ..core.workspace import Workspace
from ..core.results import JobResult

Key = tuple[str, str, str, str]          # (aluno, tarefa, notebook, grade_id)


@dataclass(frozen=True)
class Mark:
    """O que o professor deu a uma célula no formgrader."""

    manual_score: float | None = None
    comment: str = ""


def _quiet() -> None:
    warnings.filterwarnings("ignore", module="nbgrader")


def _joined(gb, model, assignments, students=None):
    from nbgrader.api import (Assignment, BaseCell, Notebook, Student, SubmittedAssignment,
                              SubmittedNotebook)
    q = (gb.db.query(model, BaseCell.name, Notebook.name, Assignment.name, Student.id)
         .join(BaseCell, model.cell_id == BaseCell.id)
         .join(SubmittedNotebook, model.notebook_id == SubmittedNotebook.id)
         .join(Notebook, SubmittedNotebook.notebook_id == Notebook.id)
         .join(SubmittedAssignment, SubmittedNotebook.assignment_id == SubmittedAssignment.id)
         .join(Assignment, SubmittedAssignment.assignment_id == Assignment.id)
         .join(Student, SubmittedAssignment.student_id == Student.id))
    if assignments is not None:
        q = q.filter(Assignment.name.in_(list(assignments)))
    if students is not None:
        q = q.filter(Student.id.in_(list(students)))
    return {(st, a, nb, cell): obj for obj, cell, nb, a, st in q.all()}


def grade_rows(gb, assignments: Iterable[str] | None = None,
               students: Iterable[str] | None = None) -> dict[Key, object]:
    """Todas as notas (`nbgrader.api.Grade`) numa consulta; só destes alunos, se dados."""
    from nbgrader.api import Grade
    return _joined(gb, Grade, assignments, students)


def comment_rows(gb, assignments: Iterable[str] | None = None) -> dict[Key, object]:
    """Todos os comentários (`nbgrader.api.Comment`) numa consulta."""
    from nbgrader.api import Comment
    return _joined(gb, Comment, assignments)


def read_marks(ws: Workspace, assignments: Iterable[str] | None = None) -> dict[Key, Mark]:
    """Notas manuais e comentários do formgrader; só as células que têm algum dos dois."""
    from nbgrader.api import Gradebook
    _quiet()
    if not ws.db_path.exists():
        return {}
    with Gradebook(ws.db_url) as gb:
        scores = {k: g.manual_score for k, g in grade_rows(gb, assignments).items()
                  if g.manual_score is not None}
        comments = {k: (c.manual_comment or "").strip() for k, c in comment_rows(gb, assignments).items()
                    if (c.manual_comment or "").strip()}
    return {k: Mark(scores.get(k), comments.get(k, "")) for k in sorted(set(scores) | set(comments))}


def merge_results(ws: Workspace, results: Iterable[JobResult]) -> None:
    """Leva as notas automáticas dos resultados para o gradebook.db.

    Notas manuais (dadas no formgrader) ficam; a célula continua marcada para
    revisão, como faz o SaveAutoGrades do nbgrader."""
    from nbgrader.api import Gradebook, Student, SubmittedAssignment
    _quiet()
    results = {(r.student, r.assignment): r for r in results}
    if not results:
        return
    with Gradebook(ws.db_url) as gb:
        students = {sid for (sid,) in gb.db.query(Student.id).all()}
        subs = {(x.student_id, x.assignment.name): x for x in gb.db.query(SubmittedAssignment).all()}
        for (s, a), r in sorted(results.items()):
            if s not in students:
                gb.add_student(s)
                students.add(s)
            ts = None
            if r.timestamp:
                ts = datetime.fromisoformat(r.timestamp).astimezone(timezone.utc).replace(tzinfo=None)
            sub = subs.get((s, a))
            if sub is None:
                gb.add_submission(a, s, timestamp=ts)
            elif sub.timestamp != ts:
                sub.timestamp = ts
        gb.db.commit()
        # só os alunos do lote (o corretor junta um lote a cada 20 s, e a turma pode ter milhares);
        # lote grande (a junção do fim): a tarefa inteira, sem estourar o limite de parâmetros do sqlite
        who = {s for s, _ in results}
        grades = grade_rows(gb, {a for _, a in results}, who if len(who) <= 500 else None)
        for (s, a), r in results.items():
            for nbr in r.notebooks:
                for q in nbr.questions:
                    g = grades.get((s, a, nbr.notebook, q.grade_id))
                    if g is None:
                        continue
                    g.auto_score = q.score
                    g.needs_manual_grade = g.manual_score is not None or q.score is None
        gb.db.commit()


def set_due_dates(ws: Workspace, due: dict) -> None:
    """O prazo de cada tarefa no gradebook (`Assignment.duedate`, em UTC sem fuso, como o
    nbgrader guarda): o formgrader mostra a "Due Date" de prazos.toml (não "None") e conta o
    atraso das entregas como o corretor. Tarefa sem prazo no workspace: sem prazo no gradebook."""
    from nbgrader.api import Assignment, Gradebook
    _quiet()
    if not ws.db_path.exists():
        return
    with Gradebook(ws.db_url) as gb:
        for asg in gb.db.query(Assignment).all():
            d = due.get(asg.name)
            want = d.astimezone(timezone.utc).replace(tzinfo=None) if d is not None else None
            if asg.duedate != want:
                asg.duedate = want
        gb.db.commit()


# Tabelas com dados de alunos; a semente fica só com curso, tarefas, notebooks e células.
_STUDENT_TABLES = ("grade", "comment", "submitted_notebook", "submitted_assignment", "student")


def seed_bytes(ws: Workspace) -> bytes:
    """O gradebook sem nenhum aluno: as tarefas, os notebooks e as células (com o texto
    dos testes ocultos, que o OverwriteCells do nbgrader devolve na correção).

    É o que um trabalhador do Dask precisa para rodar os pré-processadores do nbgrader
    num gradebook só dele, sem acesso ao do professor (worker/tasks.py)."""
    import sqlite3
    import tempfile
    from pathlib import Path

    src = sqlite3.connect(f"file:{ws.db_path}?mode=ro", uri=True)
    with tempfile.TemporaryDirectory() as t:
        path = Path(t) / "seed.db"
        dst = sqlite3.connect(path)
        try:
            src.backup(dst)
            for table in _STUDENT_TABLES:
                dst.execute(f'DELETE FROM "{table}"')
            dst.commit()
            dst.execute("VACUUM")
        finally:
            dst.close()
            src.close()
        return path.read_bytes()


def write_seed(data: bytes, path) -> str:
    """Grava a semente em `path` (o gradebook local de um trabalhador); devolve a URL do sqlite."""
    from pathlib import Path
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return f"sqlite:///{path}"
