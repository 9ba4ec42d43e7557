"""As entregas que chegam: pastas, zips, o zip do Moodle e o do Blackboard, `--pattern`;
cada uma vira uma `Submission` (aluno, tarefa, arquivos). Nada aqui corrige.

Portas: `gather` e `collect` (aqui); submissions.py junta por (aluno, tarefa) e escolhe os ids;
folders.py lê uma pasta, zips.py um zip; moodle_sheet.py, os horários da planilha de avaliação
do Moodle (o zip do Moodle não os traz).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

from .folders import read_folder
from .submissions import Collector, Submission
from .zips import read_zip


@dataclass
class Collection:
    """O que a coleta achou: as entregas, os avisos e os arquivos sem tarefa conhecida."""

    submissions: list[Submission]
    warnings: list[str]
    undecided: list[str] = field(default_factory=list)


def gather(path: Path, assignments: dict[str, list[str]], tz: ZoneInfo,
           only: str | None = None, pattern: str | None = None) -> Collection:
    path = Path(path)
    c = Collector(assignments, tz, only=only, pattern=pattern)
    if path.is_dir():
        read_folder(c, path)
    elif zipfile.is_zipfile(path):
        read_zip(c, path)
    else:
        raise ValueError(f"{path}: esperava uma pasta <aluno>/<tarefa>/<notebook>.ipynb ou um .zip")
    return Collection(c.result(), c.warnings, c.undecided)


def collect(path: Path, assignments: dict[str, list[str]], tz: ZoneInfo,
            only: str | None = None, pattern: str | None = None) -> tuple[list[Submission], list[str]]:
    got = gather(path, assignments, tz, only=only, pattern=pattern)
    return got.submissions, got.warnings
