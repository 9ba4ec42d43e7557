"""O contrato de resultados: o único vocabulário entre a correção e quem a lê.

A camada de correção (job, executor) produz um `JobResult` por entrega (um
aluno, uma tarefa); o escritor do gradebook, os CSVs, o relatório e o
feedback só leem esses objetos (e o gradebook). Uma situação é um `Status`,
nunca uma string solta; a gravação em JSON (`.autograder/results/`) e a
leitura passam por `to_json` / `from_json` daqui, e por nenhum outro lugar.

Hierarquia:

    JobResult (aluno, tarefa)
      └─ NotebookResult (um .ipynb esperado da tarefa)
           └─ QuestionResult (uma célula de nota do nbgrader: teste, resposta escrita)
                └─ TestPart (um trecho de uma célula de teste: visível ou oculto)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Iterable

VERSION = "2"


class Status(str, Enum):
    """Situação de um notebook ou de uma entrega (o valor é o que vai no CSV)."""

    OK = "ok"
    MISSING = "missing"                    # não entregue
    INVALID = "invalid-notebook"           # JSON quebrado, não UTF-8, fora do formato
    TIMEOUT = "timeout"                    # tempo-limite por célula ou por notebook
    CRASHED = "crashed"                    # kernel morreu, memória esgotada, não iniciou
    TAMPERED = "tampered"                  # célula travada apagada ou editada (restaurada)
    FLAGGED = "flagged"                    # algo a revisar por uma pessoa (a nota fica)

    def __str__(self) -> str:  # noqa: D105 - "ok", não "Status.OK"
        return self.value

    @property
    def pt(self) -> str:
        """Nome em português, para quem lê (relatório, feedback)."""
        return STATUS_PT[self]


STATUS_PT = {
    Status.OK: "ok",
    Status.MISSING: "não entregue",
    Status.INVALID: "notebook inválido",
    Status.TIMEOUT: "tempo esgotado",
    Status.CRASHED: "kernel falhou",
    Status.TAMPERED: "célula de teste alterada",
    Status.FLAGGED: "para revisão",
}

# Gravidade: a primeira situação desta lista que aparecer vence.
SEVERITY = [Status.FLAGGED, Status.TAMPERED, Status.CRASHED, Status.TIMEOUT,
            Status.INVALID, Status.MISSING, Status.OK]


def worst(statuses: Iterable[Status | str]) -> Status:
    """A situação mais grave entre `statuses` (OK se vazia)."""
    present = {Status(s) for s in statuses}
    for s in SEVERITY:
        if s in present:
            return s
    return Status.OK


@dataclass
class TestPart:
    """Um trecho de uma célula de teste: visível (hidden=False) ou oculto (True).

    hidden=None: a célula rodou inteira (alguma parte não compilava sozinha)."""

    hidden: bool | None
    outputs: int = 0          # quantas saídas da célula são deste trecho
    passed: bool = False
    ran: bool = False

    @staticmethod
    def to_metadata(parts: "list[TestPart]") -> dict:
        """O que vai em `metadata["autograder"]` da célula de teste corrigida (o executor grava;
        a nota e as páginas de retorno leem com `from_metadata`)."""
        return {"parts": [asdict(p) for p in parts]}

    @staticmethod
    def from_metadata(meta: dict | None) -> "list[TestPart]":
        return [TestPart(**p) for p in ((meta or {}).get("parts") or [])]


@dataclass(frozen=True)
class GradeCell:
    """Uma célula de nota do notebook distribuído (core/workspace.py, `grade_cells_of`): o que a
    correção preenche em cada questão, e o que uma questão sem nota automática mostra."""

    grade_id: str
    kind: str                 # "test" | "written" | "code-answer"
    max_score: float
    title: str = ""           # o título da tarefa no notebook


@dataclass
class QuestionResult:
    """Uma célula de nota do nbgrader (teste automático, resposta escrita ou de código)."""

    grade_id: str
    kind: str                 # "test" | "written" | "code-answer"
    max_score: float
    score: float | None = 0.0
    needs_manual: bool = False
    visible_passed: bool | None = None
    hidden_passed: bool | None = None
    title: str = ""           # o título da tarefa no notebook (ex.: "Tarefa 1 — softmax estável")

    @classmethod
    def zero(cls, cell: GradeCell) -> "QuestionResult":
        """Uma questão sem nota automática (notebook ausente, inválido ou que não rodou)."""
        return cls(cell.grade_id, cell.kind, cell.max_score, title=cell.title)


@dataclass
class NotebookResult:
    notebook: str
    status: Status = Status.OK
    details: list[str] = field(default_factory=list)   # por que a situação não é ok (aparece no CSV)
    flags: list[str] = field(default_factory=list)     # motivos de "flagged"
    notes: list[str] = field(default_factory=list)     # observações que não mudam a situação
    questions: list[QuestionResult] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def auto_score(self) -> float:
        return sum((q.score or 0.0) for q in self.questions)


@dataclass
class JobResult:
    """Uma entrega (aluno, tarefa): o que a correção devolve e o que fica gravado."""

    student: str
    assignment: str
    key: str                                  # impressão digital da entrega (retomada)
    timestamp: str | None = None              # ISO 8601 com fuso, ou None
    notebooks: list[NotebookResult] = field(default_factory=list)
    status: Status = Status.OK
    participant: str | None = None            # número de participante do Moodle, se o zip trouxe
    collection_notes: list[str] = field(default_factory=list)   # observações da coleta (links, tamanhos...)
    version: str = VERSION

    # -- agregados ----------------------------------------------------------------
    @property
    def details(self) -> list[str]:
        return [d for n in self.notebooks for d in n.details]

    @property
    def flags(self) -> list[str]:
        return [f for n in self.notebooks for f in n.flags]

    @property
    def notes(self) -> list[str]:
        return [x for n in self.notebooks for x in n.notes] + list(self.collection_notes)

    @property
    def auto_score(self) -> float:
        return sum(n.auto_score for n in self.notebooks)

    @property
    def max_score(self) -> float:
        return sum(q.max_score for n in self.notebooks for q in n.questions)

    @property
    def seconds(self) -> float:
        return round(sum(n.seconds for n in self.notebooks), 3)

    def finish(self) -> "JobResult":
        """Calcula a situação da entrega a partir das dos notebooks."""
        if not self.notebooks or all(n.status is Status.MISSING for n in self.notebooks):
            self.status = Status.MISSING
        else:
            self.status = worst(n.status for n in self.notebooks)
        return self

    # -- JSON -----------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=1, sort_keys=True, default=str)

    @classmethod
    def from_json(cls, text: str) -> "JobResult":
        d = json.loads(text)
        if d.get("version") != VERSION:
            raise ValueError(f"resultado na versão {d.get('version')!r}, esperada {VERSION!r}")
        nbs = []
        for n in d.pop("notebooks"):
            qs = [QuestionResult(**q) for q in n.pop("questions")]
            nbs.append(NotebookResult(**{**n, "status": Status(n["status"]), "questions": qs}))
        return cls(**{**d, "status": Status(d["status"]), "notebooks": nbs})
