"""Quem é quem: como o AVA conhece cada aluno do workspace.

O zip do Moodle dá o nome e o número de participante de cada entrega
(`record_identities`, chamado pela coleta do planejador); a lista da turma
(`--roster`, guardada em `roster.csv`) completa e corrige por cima. Quem lê
(`identities`) são as exportações para o AVA (readers/exports.py).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from ..core.workspace import Workspace

if TYPE_CHECKING:
    from ..collect.submissions import Submission


@dataclass
class Identity:
    """Como o AVA conhece um aluno (o id do workspace é o nome da pasta da entrega)."""

    student_id: str
    name: str = ""
    email: str = ""
    participant: str = ""      # número de participante do Moodle (nome da pasta no zip)
    sis_id: str = ""           # matrícula
    section: str = ""


ROSTER_COLUMNS = ["student_id", "name", "email", "participant", "sis_id", "section"]


def record_identities(ws: Workspace, subs: "Iterable[Submission]") -> None:
    """Guarda o nome e o número de participante que o zip do Moodle deu a cada aluno
    (`Submission.participant` e `Submission.name`, lidos pela coleta)."""
    f = ws.state / "identities.json"
    known = json.loads(f.read_text(encoding="utf-8")) if f.exists() else {}
    changed = False
    for s in subs:
        new = {"name": s.name.strip(), "participant": s.participant or ""}
        if not new["participant"] and not new["name"]:
            continue
        if known.get(s.student) != new:
            known[s.student] = new
            changed = True
    if changed:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(known, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")


def read_roster(path: Path) -> dict[str, Identity]:
    """Lista da turma: CSV com `student_id` (o nome da pasta/arquivo da entrega) e, se
    houver, name, email, participant, sis_id, section; separador ',' ou ';'."""
    text = Path(path).read_text(encoding="utf-8-sig")
    first = text.splitlines()[0] if text.strip() else ""
    sep = ";" if first.count(";") > first.count(",") else ","
    rows = list(csv.DictReader(io.StringIO(text), delimiter=sep))
    cols = [c.strip() for c in (rows[0].keys() if rows else first.split(sep))]
    if "student_id" not in cols:
        raise ValueError(f"{path}: a lista da turma precisa da coluna student_id (o nome da pasta ou "
                         f"do arquivo de cada aluno); colunas aceitas: {', '.join(ROSTER_COLUMNS)}; "
                         f"vieram: {', '.join(cols) or 'nenhuma'}")
    out = {}
    for i, r in enumerate(rows, start=2):
        r = {(k or "").strip(): (v or "").strip() for k, v in r.items()}
        if not r.get("student_id"):
            raise ValueError(f"{path}, linha {i}: student_id vazio")
        out[r["student_id"]] = Identity(**{k: r.get(k, "") for k in ROSTER_COLUMNS})
    return out


def identities(ws: Workspace) -> dict[str, Identity]:
    """Zip do Moodle e, por cima, a lista da turma do workspace (roster.csv)."""
    out: dict[str, Identity] = {}
    f = ws.state / "identities.json"
    if f.exists():
        for sid, d in json.loads(f.read_text(encoding="utf-8")).items():
            out[sid] = Identity(sid, name=d.get("name", ""), participant=d.get("participant", ""))
    roster = ws.root / "roster.csv"
    if roster.exists():
        for sid, ident in read_roster(roster).items():
            base = out.get(sid, Identity(sid))
            out[sid] = Identity(sid, **{k: getattr(ident, k) or getattr(base, k)
                                        for k in ROSTER_COLUMNS if k != "student_id"})
    return out


def install_roster(ws: Workspace, path: Path) -> None:
    """Valida a lista da turma e a guarda no workspace (roster.csv), para todo comando seguinte."""
    read_roster(path)
    ws.root.mkdir(parents=True, exist_ok=True)
    (ws.root / "roster.csv").write_bytes(Path(path).read_bytes())
