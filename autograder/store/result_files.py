"""Os resultados gravados: `.autograder/results/<tarefa>/<aluno>.json`, um `JobResult` cada.

Escritos só pelo planejador (plan/runner.py), à medida que as tarefas do Dask
voltam; lidos pela retomada (plan/runner.py) e por quem só lê (readers/report.py, readers/feedback.py), sem
importar a correção.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.results import JobResult


def write_result(path: Path, result: JobResult) -> None:
    """Grava `result.to_json()` de forma atômica (quem lê nunca vê meio arquivo)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(result.to_json(), encoding="utf-8")
    os.replace(tmp, path)


def read_result(path: Path) -> JobResult | None:
    """O resultado gravado, ou None: ausente, ilegível ou de outra versão do contrato
    (um resultado antigo conta como "ainda não corrigido" e a entrega é corrigida de novo)."""
    try:
        return JobResult.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError, KeyError):
        return None
