"""O que um trabalhador devolve só vira nota se conferir com o que ele mesmo mandou.

O planejador não re-executa nada: confere, no que volta de cada tarefa
(`worker/tasks.py`, `TaskOutput`), o que dá para conferir sem confiar no
trabalhador:

- é a resposta desta tarefa: o mesmo aluno, tarefa e notebook, e o `run_id`
  desta rodada de `grade` (um resultado de outra rodada não entra);
- as questões são as do notebook distribuído (as células de nota que o
  planejador leu do workspace), com os mesmos pontos máximos, e nenhuma nota
  passa do máximo nem fica abaixo de zero;
- as notas batem com o notebook corrigido que voltou: cada uma é a que o
  nbgrader (`determine_grade`, a regra do `SaveAutoGrades` que a correção usou
  em `worker/notebook.py`, `score`) dá às saídas da célula de teste; sem
  notebook (não entregue, inválido, kernel que não iniciou, tempo esgotado),
  nenhuma nota acima de zero.

Um trabalhador adulterado que só troca as notas (o ataque da revisão C1) é
pego aqui; para passar, teria de forjar também as saídas dos testes no
notebook, que fica gravado em autograded/ para quem quiser ver. O resultado
recusado vira uma linha `crashed` com o motivo e o endereço do trabalhador,
sem chave (a próxima correção tenta de novo), e o `grade` termina com erro.
"""

from __future__ import annotations

from ..core.results import GradeCell
from ..worker.tasks import GradeTask, TaskOutput

TOL = 1e-9


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(float(a) - float(b)) <= TOL


def _fmt(x: float | None) -> str:
    return "sem nota" if x is None else f"{float(x):g}".replace(".", ",")


def _notebook_cells(raw: bytes) -> dict:
    """As células de nota do notebook corrigido, por grade_id, como o nbgrader as viu na memória
    (fontes e saídas em texto corrido, não em listas de linhas); sem validar o esquema: só lê."""
    from nbformat.v4 import nbjson
    from nbgrader.utils import is_grade
    nb = nbjson.reads(raw.decode("utf-8"))
    return {c.metadata.nbgrader.grade_id: c for c in nb.cells if is_grade(c)}


def _score_problems(out: TaskOutput, expected: dict[str, GradeCell]) -> list[str]:
    from nbgrader.utils import determine_grade
    try:
        cells = _notebook_cells(out.autograded)
    except (ValueError, KeyError, AttributeError, TypeError) as e:
        return [f"o notebook corrigido não pôde ser lido ({type(e).__name__})"]
    problems = []
    for q in out.result.questions:
        cell = cells.get(q.grade_id)
        if cell is None:
            if q.score:
                problems.append(f"{q.grade_id}: nota {_fmt(q.score)} sem a célula no notebook corrigido")
            continue
        try:
            points = float(cell.metadata.nbgrader.points)
            auto, _ = determine_grade(cell)
        except (ValueError, KeyError, AttributeError, TypeError) as e:
            problems.append(f"{q.grade_id}: célula de nota ilegível no notebook corrigido ({type(e).__name__})")
            continue
        if not _same(points, expected[q.grade_id].max_score):
            problems.append(f"{q.grade_id}: o notebook corrigido vale {_fmt(points)} pontos, a tarefa "
                            f"{_fmt(expected[q.grade_id].max_score)}")
        elif not _same(auto, q.score):
            problems.append(f"{q.grade_id}: nota {_fmt(q.score)}, mas as saídas do teste no notebook "
                            f"corrigido dão {_fmt(auto)}")
    return problems


def problems(out: object, task: GradeTask, cells: list[GradeCell]) -> list[str]:
    """O que não confere entre o que voltou e a tarefa mandada (vazio: o resultado vale)."""
    if not isinstance(out, TaskOutput):
        return [f"o trabalhador devolveu {type(out).__name__}, não o resultado de uma correção"]
    if (out.student, out.assignment, out.notebook) != (task.student, task.assignment, task.notebook):
        return [f"o resultado é de {out.student}/{out.assignment}/{out.notebook}, não desta tarefa"]
    if out.run_id != task.run_id:
        return ["o resultado não é desta rodada de correção (identificador da rodada diferente)"]
    expected = {c.grade_id: c for c in cells}
    got = [q.grade_id for q in out.result.questions]
    if sorted(got) != sorted(expected):
        return ["as questões do resultado não são as do notebook distribuído"]
    found = []
    for q in out.result.questions:
        top = expected[q.grade_id].max_score
        if not _same(q.max_score, top):
            found.append(f"{q.grade_id}: máximo {_fmt(q.max_score)} em vez de {_fmt(top)}")
        elif q.score is not None and not (-TOL <= q.score <= top + TOL):
            found.append(f"{q.grade_id}: nota {_fmt(q.score)} fora de 0 a {_fmt(top)}")
    if found:
        return found
    if out.autograded is None:
        return [f"{q.grade_id}: nota {_fmt(q.score)} sem notebook corrigido"
                for q in out.result.questions if q.score]
    return _score_problems(out, expected)


def rejection(out: object, task: GradeTask, cells: list[GradeCell], worker: str) -> str | None:
    """O motivo, para a linha e o failures.log, de recusar o resultado; None se ele vale."""
    found = problems(out, task, cells)
    if not found:
        return None
    shown = "; ".join(found[:3]) + (f"; e mais {len(found) - 3}" if len(found) > 3 else "")
    return (f"resultado recusado: o que o trabalhador {worker} devolveu não confere ({shown}). "
            "Nenhuma nota foi aceita para este notebook; confira esse trabalhador")
