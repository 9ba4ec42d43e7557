"""O que falta nas linhas da turma, dito às claras (issue 41).

- Uma tarefa que ninguém entregou (só linhas `missing`, p.ex. de uma correção antiga com
  dois prazos e o zip de uma tarefa só) não vira linhas nem coluna de zeros: `complete` a tira.
- Quem não entregou uma tarefa corrigida tem a mesma linha `missing`, venha do zip do Moodle
  (store/identities.py), da lista da turma (`roster.csv`) ou de outra correção: `complete`
  a acrescenta a quem não tem. As exportações para o AVA deixam a nota dela em branco
  ("Nenhum envio"), para um aluno como para o outro.
- Uma entrega sem horário numa tarefa com prazo (o zip do Moodle não traz horário) não é
  "no prazo": `unknown_lateness` é o aviso do relatório e da linha de comando.
- Os alunos aparecem pelo nome (`label`), com o id do workspace entre parênteses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.results import JobResult, NotebookResult, QuestionResult, Status
from ..core.workspace import Workspace
from ..store.identities import identities

if TYPE_CHECKING:
    from .report import Row


def _missing_like(template: JobResult, student: str) -> JobResult:
    """A linha `missing` de `student` na tarefa de `template` (os mesmos notebooks e questões)."""
    nbs = [NotebookResult(n.notebook, Status.MISSING, details=[f"{n.notebook}.ipynb não foi entregue"],
                          questions=[QuestionResult(q.grade_id, q.kind, q.max_score, title=q.title)
                                     for q in n.questions])
           for n in template.notebooks]
    return JobResult(student, template.assignment, "", None, nbs).finish()


def complete(ws: Workspace, results: list[JobResult]) -> list[JobResult]:
    """Os resultados sem as tarefas que ninguém entregou e com uma linha `missing` para cada
    aluno conhecido (zip, lista da turma, outras correções) que não entregou uma tarefa corrigida."""
    handed = {r.assignment for r in results if r.status is not Status.MISSING}
    kept = [r for r in results if r.assignment in handed]
    have = {(r.student, r.assignment) for r in kept}
    students = {r.student for r in kept} | set(identities(ws))
    template = {}
    for r in kept:
        template.setdefault(r.assignment, r)
    extra = [_missing_like(template[a], s) for a in sorted(handed) for s in sorted(students)
             if (s, a) not in have]
    return sorted(kept + extra, key=lambda r: (r.student, r.assignment))


def names(ws: Workspace) -> dict[str, str]:
    """id do workspace -> nome (do zip ou da lista da turma), para quem tem nome."""
    return {sid: ident.name for sid, ident in identities(ws).items() if ident.name}


def label(student: str, known: dict[str, str]) -> str:
    """"Maria Silva (Maria-Silva_103)": o nome primeiro; o id, que separa homônimos, depois."""
    name = known.get(student, "")
    return f"{name} ({student})" if name and name != student else student


def unknown_lateness(rows: "list[Row]") -> str | None:
    """O aviso de que o atraso de algumas entregas não foi conferido (tarefa com prazo, entrega
    sem horário), ou None."""
    unknown = [r for r in rows if r.lateness.unknown]
    if not unknown:
        return None
    tasks = sorted({r.assignment for r in unknown})
    return (f"{len(unknown)} entrega(s) de {', '.join(tasks)} sem horário de entrega: o atraso delas "
            "NÃO foi conferido (o zip do Moodle não traz o horário). Passe a planilha de avaliação "
            "do Moodle com `grade ... --moodle-worksheet ARQUIVO` (README, \"Turmas do Moodle\").")


def absent_by_assignment(rows: "list[Row]", known: dict[str, str]) -> dict[str, list[str]]:
    """tarefa -> nomes de quem não entregou."""
    out: dict[str, list[str]] = {}
    for r in rows:
        if r.status is Status.MISSING:
            out.setdefault(r.assignment, []).append(label(r.student, known))
    return out
