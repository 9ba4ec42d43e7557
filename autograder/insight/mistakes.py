"""Os erros da turma, com nome: o que cada teste pegou, agrupado, contado e ligado à seção
do livro a reler.

Entrada: um `TestOutcome` por (aluno, célula de teste), com os pontos, se a parte visível
e a oculta passaram, e a mensagem de falha da parte VISÍVEL. A parte oculta não tem campo
de mensagem: o que o teste oculto disse (as entradas sorteadas, o código dele) não chega
aqui e, portanto, não pode aparecer no relatório; a falha dela vira só "falhou na parte
oculta".

Agrupamento: a mensagem visível é reduzida à linha que diz o erro (a última linha de
exceção de um traceback, sem o "AssertionError: ") e normalizada: números (também com
vírgula decimal), formas como `(2, 3)` ou `torch.Size([2, 3])` e nomes entre aspas viram
marcadores: "maior diferença: 0,98 na posição (2, 3)" e "maior diferença: 0,12 na posição
(0, 1)" são o mesmo erro. Um erro é (tarefa, célula de teste, mensagem normalizada). Quando a
parte visível falha, o erro contado é o dela (a oculta costuma falhar junto, pelo mesmo
motivo); a falha da oculta só conta quando a visível passou ou não existe.

Discriminação de cada tarefa: a correlação de Pearson entre a nota do aluno na tarefa e a
nota dele no resto da lista (o total menos a tarefa: a "correlação item-resto", que não
se infla com a própria tarefa; com nota 0/1 é a ponto-bisserial corrigida; Nunnally e
Bernstein, *Psychometric Theory*, 3ª ed., 1994, cap. 8). Perto de 0: a tarefa não separa
quem foi bem na lista de quem foi mal; negativa: quem vai bem no resto erra esta (vale
reler o enunciado ou o teste). Sem variação (todos com a mesma nota) ou com menos de 3
alunos, não há número (None).

A seção a reler vem de um mapa grade_id → seção (texto ou endereço), que quem chama monta
das fontes das tarefas (autograder/fontes/NN-slug.md: cada tarefa diz o capítulo e a seção
do livro que a ensina); uma célula de teste sem seção fica sem.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Mapping

__all__ = [
    "HIDDEN_FAILURE", "TestOutcome", "Mistake", "TestStats", "TaskStats", "ClassMistakes",
    "headline", "normalize_message", "analyze",
]

HIDDEN_FAILURE = "falhou na parte oculta"
NO_MESSAGE = "falhou na parte visível (sem mensagem)"


@dataclass(frozen=True)
class TestOutcome:
    """O resultado de uma célula de teste para um aluno.

    `visible_passed`/`hidden_passed`: None quando a célula não tem essa parte (ou ela não
    rodou separada). `visible_message`: a mensagem de falha da parte visível; vazia quando
    passou. Não existe mensagem da parte oculta, de propósito."""

    __test__ = False   # não é uma classe de testes do pytest

    student: str
    task: str
    grade_id: str
    points: float
    max_points: float
    visible_passed: bool | None = None
    hidden_passed: bool | None = None
    visible_message: str = ""


@dataclass(frozen=True)
class Mistake:
    """Um erro da turma: quantos alunos, a mensagem com marcadores, um exemplo real da
    mensagem visível, a seção a reler e até dois exemplos anônimos de resposta."""

    task: str
    grade_id: str
    hidden: bool
    template: str
    example_message: str
    count: int
    section: str | None
    examples: tuple[str, ...]
    students: tuple[str, ...]      # para o professor; os renderizadores não mostram


@dataclass(frozen=True)
class TestStats:
    """A taxa de acerto de uma célula de teste, com a parte visível e a oculta separadas."""

    __test__ = False
    task: str
    grade_id: str
    visible_rate: float | None     # fração dos alunos com a parte visível que passaram
    visible_n: int
    hidden_rate: float | None
    hidden_n: int


@dataclass(frozen=True)
class TaskStats:
    task: str
    mean: float
    max_points: float
    discrimination: float | None
    n: int


@dataclass(frozen=True)
class ClassMistakes:
    mistakes: tuple[Mistake, ...]
    tests: tuple[TestStats, ...]
    tasks: tuple[TaskStats, ...]


_EXC_LINE = re.compile(r"^\s*(?:[\w.]+\.)?(?:[A-Z]\w*(?:Error|Exception|Warning)|AssertionError)\b:?\s*(.*)$")
_NUMBER = re.compile(r"(?<![\w.])[-+−]?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?(?![\w])|\b(?:nan|inf)\b", re.I)
_SHAPE = re.compile(r"(?:torch\.Size\(\s*)?[\(\[]\s*#(?:\s*,\s*#)*\s*,?\s*[\)\]](?:\s*\))?")
_QUOTED = re.compile(r"'[^'\n]{1,60}'|\"[^\"\n]{1,60}\"|`[^`\n]{1,60}`|«[^»\n]{1,60}»")


def headline(message: str) -> str:
    """A linha que diz o erro: num traceback, a última linha de exceção (sem o nome da
    exceção quando ela traz texto); fora dele, a primeira linha não vazia."""
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    if not lines:
        return ""
    for ln in reversed(lines):
        m = _EXC_LINE.match(ln)
        if m:
            return m.group(1).strip() or ln.rstrip(":")
    return lines[0]


def normalize_message(message: str) -> str:
    """A mensagem com marcadores: números → #, formas → (…), nomes entre aspas → «…»."""
    text = headline(message)
    text = _QUOTED.sub("«…»", text)
    text = _NUMBER.sub("#", text)
    text = _SHAPE.sub("(…)", text)
    text = re.sub(r"#(?:\s*[x×]\s*#)+", "(…)", text)    # 2 x 3, 4×4
    return re.sub(r"\s+", " ", text).strip()


def _pearson(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    if n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _pick_examples(students: list[str], answers: Mapping[str, Mapping[str, str]], task: str,
                   n: int = 2, grade_id: str = "") -> tuple[str, ...]:
    """Até n respostas diferentes entre si, na ordem dos alunos (determinística). Anônimas:
    o relatório não diz de quem são, e o identificador do aluno, se aparecer no código
    (num comentário, por exemplo), vira «aluno». A resposta de um aluno é a da célula de
    teste (`answers[aluno][grade_id]`, as células de resposta logo antes dela), se houver,
    ou a da tarefa inteira (`answers[aluno][task]`)."""
    out: list[str] = []
    for s in sorted(students):
        mine = answers.get(s) or {}
        src = mine.get(grade_id) or mine.get(task)
        if src and len(s) >= 3:
            src = src.replace(s, "«aluno»")
        if src and src.strip() and src not in out:
            out.append(src)
        if len(out) == n:
            break
    return tuple(out)


def analyze(outcomes: Iterable[TestOutcome], *, sections: Mapping[str, str] | None = None,
            answers: Mapping[str, Mapping[str, str]] | None = None,
            totals: Mapping[str, float] | None = None) -> ClassMistakes:
    """Os erros agrupados (do mais comum ao menos), as taxas por teste e a discriminação
    por tarefa.

    `sections`: grade_id → seção do livro a reler. `answers`: aluno → tarefa (ou grade_id
    do teste) → o código da resposta (para os exemplos anônimos). `totals`: aluno → nota total da lista; sem
    ele, a soma dos pontos dos testes recebidos."""
    sections = sections or {}
    answers = answers or {}
    outs = list(outcomes)
    groups: dict[tuple[str, str, bool, str], list[TestOutcome]] = defaultdict(list)
    vis: dict[tuple[str, str], list[bool]] = defaultdict(list)
    hid: dict[tuple[str, str], list[bool]] = defaultdict(list)
    order: dict[tuple[str, str], int] = {}
    for o in outs:
        key = (o.task, o.grade_id)
        order.setdefault(key, len(order))
        if o.visible_passed is not None:
            vis[key].append(bool(o.visible_passed))
        if o.hidden_passed is not None:
            hid[key].append(bool(o.hidden_passed))
        if o.visible_passed is False:
            template = normalize_message(o.visible_message) or NO_MESSAGE
            groups[(o.task, o.grade_id, False, template)].append(o)
        elif o.hidden_passed is False:
            groups[(o.task, o.grade_id, True, HIDDEN_FAILURE)].append(o)
    mistakes = []
    for (task, gid, hidden, template), members in groups.items():
        students = sorted({m.student for m in members})
        example = "" if hidden else headline(sorted(members, key=lambda m: m.student)[0].visible_message)
        mistakes.append(Mistake(task, gid, hidden, template, example, len(students),
                                sections.get(gid), _pick_examples(students, answers, task, grade_id=gid),
                                tuple(students)))
    mistakes.sort(key=lambda m: (-m.count, order[(m.task, m.grade_id)], m.hidden, m.template))

    tests = []
    for key in sorted(order, key=order.get):
        v, h = vis.get(key, []), hid.get(key, [])
        tests.append(TestStats(key[0], key[1], sum(v) / len(v) if v else None, len(v),
                               sum(h) / len(h) if h else None, len(h)))

    per_task: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    task_max: dict[str, dict[str, float]] = defaultdict(dict)
    students_all: set[str] = set()
    for o in outs:
        per_task[o.task][o.student] += o.points
        task_max[o.task][o.grade_id] = o.max_points
        students_all.add(o.student)
    if totals is None:
        totals = {s: sum(per_task[t].get(s, 0.0) for t in per_task) for s in students_all}
    tasks = []
    task_order = list(dict.fromkeys(k[0] for k in sorted(order, key=order.get)))
    for t in task_order:
        studs = sorted(s for s in students_all if s in totals)
        xs = [per_task[t].get(s, 0.0) for s in studs]
        rest = [totals[s] - x for s, x in zip(studs, xs)]
        mean = sum(xs) / len(xs) if xs else 0.0
        tasks.append(TaskStats(t, mean, sum(task_max[t].values()), _pearson(xs, rest), len(studs)))
    return ClassMistakes(tuple(mistakes), tuple(tests), tuple(tasks))
