"""As entregas que chegam: pastas, zips, o zip do Moodle e o do Blackboard, `--pattern`;
cada uma vira uma `Submission` (aluno, tarefa, arquivos). Nada aqui corrige.

Portas: `gather` e `collect` (aqui); submissions.py junta por (aluno, tarefa) e escolhe os ids;
folders.py lê uma pasta, zips.py um zip (e os zips de aluno dentro dele); spool.py guarda os
bytes no disco (a turma nunca fica inteira na memória; os tetos são `CollectLimits`, em
core/settings.py); moodle_sheet.py, os horários da planilha de avaliação do Moodle (o zip
do Moodle não os traz).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

from ..core.settings import CollectLimits
from .folders import read_folder
from .spool import Spool
from .submissions import Collector, Submission
from .zips import read_zip


@dataclass
class Collection:
    """O que a coleta achou: as entregas, os avisos e os arquivos sem tarefa conhecida."""

    submissions: list[Submission]
    warnings: list[str]
    undecided: list[str] = field(default_factory=list)


def gather(path: Path, assignments: dict[str, list[str]], tz: ZoneInfo,
           only: str | None = None, pattern: str | None = None,
           limits: CollectLimits | None = None, spool: Spool | None = None) -> Collection:
    """spool: onde os bytes ficam (o planejador dá uma pasta no workspace; sem ela, uma
    pasta temporária que some com as entregas)."""
    path = Path(path)
    c = Collector(assignments, tz, only=only, pattern=pattern, limits=limits, spool=spool)
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
