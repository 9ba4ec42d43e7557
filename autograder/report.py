"""Planilhas e relatório da turma, a partir dos resultados e do gradebook.

- `grades.csv`: uma linha por aluno e tarefa: nota (automática + manual do
  gradebook), nota máxima, situação (ok, missing, timeout, crashed, tampered,
  invalid-notebook, flagged), atraso (com o fuso dos prazos), pontos ainda à
  espera de correção manual e os detalhes em português.
- `questions.csv`: uma linha por aluno, tarefa e questão (célula de nota), com
  o resultado dos testes visíveis e ocultos.
- `relatorio/index.html`: tabela por tarefa e situação, histograma das notas
  por tarefa, taxa de acerto por questão (matplotlib, rótulos em português) e a
  lista das linhas que pedem atenção.

Tudo é ordenado (aluno, tarefa), e nada depende da hora em que se corrigiu:
rodar de novo dá arquivos idênticos.
"""

from __future__ import annotations

import csv
import html
import io
import json
from datetime import datetime
from pathlib import Path

from .course import Workspace
from .submissions import Deadlines

GRADES_COLUMNS = ["student_id", "assignment", "score", "max_score", "status", "late", "late_minutes",
                  "submitted_at", "needs_manual_grade", "details"]
QUESTIONS_COLUMNS = ["student_id", "assignment", "notebook", "grade_id", "kind", "score", "max_score",
                     "needs_manual_grade", "visible_tests", "hidden_tests"]
STATUS_PT = {
    "ok": "ok", "missing": "não entregue", "timeout": "tempo esgotado", "crashed": "kernel caiu",
    "tampered": "testes alterados", "invalid-notebook": "notebook inválido",
    "flagged": "suspeita de trapaça",
}


def num(x) -> str:
    if x is None:
        return ""
    x = round(float(x), 4)
    return str(int(x)) if x == int(x) else f"{x:g}"


def load_results(ws: Workspace) -> list[dict]:
    base = ws.state / "resultados"
    out = []
    if base.is_dir():
        for p in sorted(base.glob("*/*.json")):
            try:
                out.append(json.loads(p.read_text(encoding="utf-8")))
            except (OSError, json.JSONDecodeError):
                continue
    out.sort(key=lambda r: (r["student"], r["assignment"]))
    return out


def _passfail(v) -> str:
    return "" if v is None else ("passed" if v else "failed")


def collect_rows(ws: Workspace, deadlines: Deadlines):
    """(linhas de grades.csv, linhas de questions.csv) com as notas do gradebook."""
    import warnings

    from nbgrader.api import Gradebook

    from .runner import grade_rows
    warnings.filterwarnings("ignore", module="nbgrader")
    results = load_results(ws)
    grades, questions = [], []
    with Gradebook(ws.db_url) as gb:
        manual = {k: g.manual_score for k, g in grade_rows(gb).items()}
        for r in results:
            s, a = r["student"], r["assignment"]
            score, pending = 0.0, 0.0
            for nbr in r["notebooks"]:
                for c in nbr["cells"]:
                    m = manual.get((s, a, nbr["notebook"], c["grade_id"]))
                    cell_score = m if m is not None else c["score"]
                    if cell_score is None:
                        pending += c["max_score"]
                    score += cell_score or 0.0
                    questions.append({
                        "student_id": s, "assignment": a, "notebook": nbr["notebook"],
                        "grade_id": c["grade_id"], "kind": c["kind"], "score": num(cell_score),
                        "max_score": num(c["max_score"]),
                        "needs_manual_grade": "true" if cell_score is None else "false",
                        "visible_tests": _passfail(c.get("visible_passed")),
                        "hidden_tests": _passfail(c.get("hidden_passed"))})
            ts = datetime.fromisoformat(r["timestamp"]) if r.get("timestamp") else None
            late_min = deadlines.late_minutes(a, ts) if r["status"] != "missing" else None
            details = list(r.get("details", [])) + list(r.get("flags", [])) + list(r.get("notes", []))
            grades.append({
                "student_id": s, "assignment": a, "score": num(score), "max_score": num(r["max_score"]),
                "status": r["status"],
                "late": "" if late_min is None else ("true" if late_min > 0 else "false"),
                "late_minutes": "" if late_min is None else str(late_min),
                "submitted_at": ts.astimezone(deadlines.tz).isoformat() if ts else "",
                "needs_manual_grade": num(pending),
                "details": " | ".join(details)})
    return grades, questions


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(buf.getvalue(), encoding="utf-8")
    tmp.replace(path)


def write_csvs(ws: Workspace, deadlines: Deadlines) -> tuple[list[dict], list[dict]]:
    grades, questions = collect_rows(ws, deadlines)
    _write_csv(ws.root / "grades.csv", GRADES_COLUMNS, grades)
    _write_csv(ws.root / "questions.csv", QUESTIONS_COLUMNS, questions)
    return grades, questions
