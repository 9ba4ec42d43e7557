"""As versões da versão distribuída (release/) que o workspace já teve, para que um teste
corrigido depois da entrega não vire "célula de teste alterada" para todo mundo.

Quando o professor muda um teste na fonte, `Workspace.prepare` gera de novo release/; as
entregas feitas antes trazem a célula de teste da versão anterior, que a integridade
(worker/integrity.py) tomaria por edição do aluno. Cada correção guarda aqui, em
`.autograder/releases/<tarefa>/<notebook>-<sha256>.ipynb`, toda versão de release/ que viu
(antes e depois de gerar); `earlier_locked` diz, por célula travada, os textos que ela teve
nas versões anteriores: uma entrega com um desses textos recebe a célula nova sem ser marcada.
Um texto que nunca foi distribuído continua sendo edição do aluno.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import nbformat

from ..core.nbmeta import grade_id, is_locked
from ..core.workspace import Workspace


def _dir(ws: Workspace, assignment: str) -> Path:
    return ws.state / "releases" / assignment


def remember(ws: Workspace, assignments) -> None:
    """Guarda os notebooks de release/ das tarefas (cada versão uma vez)."""
    for a in assignments:
        rel = ws.release(a)
        if not rel.is_dir():
            continue
        for p in sorted(rel.glob("*.ipynb")):
            data = p.read_bytes()
            dest = _dir(ws, a) / f"{p.stem}-{hashlib.sha256(data).hexdigest()[:16]}.ipynb"
            if not dest.exists():
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)


def earlier_locked(ws: Workspace, assignment: str, name: str, current) -> dict[str, tuple[str, ...]]:
    """grade_id -> textos que a célula travada teve em versões anteriores de release/ (sem o
    texto atual); vazio se release/ nunca mudou."""
    now = {grade_id(c): c.source for c in current.cells if grade_id(c) and is_locked(c)}
    out: dict[str, set[str]] = {}
    for p in sorted(_dir(ws, assignment).glob(f"{name}-*.ipynb")):
        if p.stem[len(name) + 1:].count("-"):
            continue                      # outro notebook cujo nome começa com este
        try:
            old = nbformat.read(p, as_version=4)
        except Exception:  # noqa: BLE001 - uma cópia ilegível só não conta
            continue
        for c in old.cells:
            gid = grade_id(c)
            if gid in now and c.source != now[gid]:
                out.setdefault(gid, set()).add(c.source)
    return {gid: tuple(sorted(srcs)) for gid, srcs in out.items()}
