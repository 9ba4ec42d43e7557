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
    "ok": "ok", "missing": "não entregue", "timeout": "tempo esgotado", "crashed": "falha na execução",
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


# ----------------------------------------------------------------------------- relatório HTML

def _pt(x: float, nd: int = 1) -> str:
    return f"{x:.{nd}f}".replace(".", ",")


def _png(fig) -> str:
    import base64
    buf = io.BytesIO()
    # sem metadados de data/versão: o mesmo resultado dá o mesmo arquivo
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode()


def _histograms(grades_by_a: dict[str, list[dict]]):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(grades_by_a)
    cols = min(3, n)
    rows = -(-n // cols)
    # layout "constrained": o tight_layout não reserva lugar para o suptitle
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.0 * rows), squeeze=False,
                             layout="constrained")
    for ax, (a, rows_a) in zip(axes.flat, grades_by_a.items()):
        scores = [float(r["score"]) for r in rows_a]
        top = max(float(r["max_score"]) for r in rows_a) or 1.0
        bins = [i * top / 10 for i in range(11)]
        ax.hist(scores, bins=bins, color="#3b6ea5", edgecolor="white")
        ax.set_title(a, fontsize=10)
        ax.set_xlabel("nota (pontos)")
        ax.set_ylabel("alunos")
        ax.set_xlim(0, top)
        ax.yaxis.get_major_locator().set_params(integer=True)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle("Distribuição das notas por tarefa", fontsize=12)
    out = _png(fig)
    plt.close(fig)
    return out


def _pass_rates(questions_by_a: dict[str, list[dict]]):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(questions_by_a)
    height = 0.6 + sum(0.9 + 0.4 * len({q["grade_id"] for q in qs}) for qs in questions_by_a.values())
    sizes = [len({q["grade_id"] for q in qs}) + 1.5 for qs in questions_by_a.values()]
    fig, axes = plt.subplots(n, 1, figsize=(7.5, height), squeeze=False, layout="constrained",
                             gridspec_kw={"height_ratios": sizes})
    for ax, (a, qs) in zip(axes.flat, questions_by_a.items()):
        ids = list(dict.fromkeys(q["grade_id"] for q in qs))
        rate = []
        for gid in ids:
            rows = [q for q in qs if q["grade_id"] == gid]
            full = sum(1 for q in rows if q["score"] != "" and float(q["score"]) >= float(q["max_score"]))
            rate.append(100.0 * full / len(rows))
        ax.barh(ids[::-1], rate[::-1], color="#4c956c")
        ax.set_xlim(0, 100)
        ax.set_xlabel("alunos com nota cheia na questão (%)")
        ax.set_title(a, fontsize=10)
        for y, v in enumerate(rate[::-1]):
            ax.text(min(v + 1, 92), y, f"{_pt(v, 0)}%", va="center", fontsize=8)
    fig.suptitle("Taxa de acerto por questão (testes automáticos)", fontsize=12)
    out = _png(fig)
    plt.close(fig)
    return out


def write_report(ws: Workspace, deadlines: Deadlines) -> Path:
    """relatorio/index.html: resumo, gráficos e as linhas que pedem atenção."""
    import statistics

    grades, questions = write_csvs(ws, deadlines)
    by_a: dict[str, list[dict]] = {}
    for g in grades:
        by_a.setdefault(g["assignment"], []).append(g)
    q_by_a: dict[str, list[dict]] = {}
    for q in questions:
        if q["kind"] == "test":
            q_by_a.setdefault(q["assignment"], []).append(q)
    statuses = [s for s in ["ok", "missing", "timeout", "crashed", "tampered", "invalid-notebook", "flagged"]]
    e = html.escape
    parts = ['<!DOCTYPE html><html lang="pt-BR"><head><meta charset="utf-8">',
             "<title>Relatório da correção</title><style>",
             "body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:.25em .6em}"
             "th{background:#eef2f6}td.n{text-align:right}img{max-width:100%}",
             "</style></head><body><h1>Relatório da correção</h1>"]
    parts.append(f"<p>{len({g['student_id'] for g in grades})} aluno(s), {len(by_a)} tarefa(s), "
                 f"{len(grades)} linha(s) em <code>grades.csv</code>. Prazos no fuso {e(str(deadlines.tz))}.</p>")
    parts.append("<h2>Resumo por tarefa</h2><table><tr><th>tarefa</th><th>alunos</th><th>média</th>"
                 "<th>mediana</th><th>máximo</th><th>atrasados</th>"
                 + "".join(f"<th>{e(STATUS_PT[s])}</th>" for s in statuses) + "</tr>")
    for a, rows in by_a.items():
        sc = [float(r["score"]) for r in rows]
        top = float(rows[0]["max_score"])
        late = sum(1 for r in rows if r["late"] == "true")
        parts.append(f"<tr><td>{e(a)}</td><td class=n>{len(rows)}</td><td class=n>{_pt(statistics.mean(sc))}</td>"
                     f"<td class=n>{_pt(statistics.median(sc))}</td><td class=n>{_pt(top, 0)}</td>"
                     f"<td class=n>{late}</td>"
                     + "".join(f"<td class=n>{sum(1 for r in rows if r['status'] == s)}</td>" for s in statuses)
                     + "</tr>")
    parts.append("</table>")
    if by_a:
        parts.append(f'<h2>Notas</h2><img alt="Histogramas das notas de cada tarefa" '
                     f'src="data:image/png;base64,{_histograms(by_a)}">')
    if q_by_a:
        parts.append(f'<h2>Questões</h2><img alt="Porcentagem de alunos com nota cheia em cada questão" '
                     f'src="data:image/png;base64,{_pass_rates(q_by_a)}">')
    attention = [g for g in grades if g["status"] != "ok" or g["late"] == "true"]
    parts.append(f"<h2>Pedem atenção ({len(attention)})</h2>")
    if attention:
        parts.append("<table><tr><th>aluno</th><th>tarefa</th><th>nota</th><th>situação</th>"
                     "<th>atraso</th><th>detalhes</th></tr>")
        for g in attention:
            late = f"{g['late_minutes']} min" if g["late"] == "true" else ""
            parts.append(f"<tr><td>{e(g['student_id'])}</td><td>{e(g['assignment'])}</td>"
                         f"<td class=n>{e(g['score'].replace('.', ','))} / {e(g['max_score'])}</td>"
                         f"<td>{e(STATUS_PT.get(g['status'], g['status']))}</td><td>{late}</td>"
                         f"<td>{e(g['details'])}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>Nenhuma.</p>")
    parts.append("</body></html>\n")
    out = ws.root / "relatorio" / "index.html"
    out.parent.mkdir(exist_ok=True)
    out.write_text("".join(parts), encoding="utf-8")
    return out
