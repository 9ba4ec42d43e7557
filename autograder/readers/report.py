"""Planilhas e relatório da turma, a partir dos resultados e do gradebook.

Só lê: os resultados (`JobResult`, `.autograder/results/`), as notas manuais e
os comentários do formgrader (store/gradebook.py) e os prazos do workspace
(core/deadlines.py). Nunca importa a correção (runner, job, executor).

- `grades.csv`: uma linha por aluno e tarefa: nota final (automática, ou a
  manual do formgrader onde houver, menos a multa por atraso), nota máxima,
  situação, atraso, multa, pontos ainda à espera de correção manual, os
  comentários do professor e os detalhes em português.
- `questions.csv`: uma linha por aluno, tarefa e questão (com o título da tarefa
  no notebook), com o resultado dos testes visíveis e ocultos e o comentário.
- `relatorio/index.html`: tabela por tarefa e situação, histograma das notas
  por tarefa, taxa de acerto por questão e a lista do que pede atenção (atraso,
  situação a revisar, detalhes como erro de sintaxe, resposta à espera de
  correção manual).

Tudo é ordenado (aluno, tarefa), e nada depende da hora em que se corrigiu:
rodar de novo dá arquivos idênticos.
"""

from __future__ import annotations

import html
import io
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import nbformat
from atencao.fmt import duration, fixed, num

from ..core.workspace import Workspace, cell_titles
from ..core.deadlines import Deadlines, Lateness
from .csvfile import CsvFormat, write_csv
from ..store.gradebook import Mark, read_marks
from ..core.results import JobResult, QuestionResult, Status
from ..store.result_files import read_result

GRADES_COLUMNS = ["student_id", "assignment", "score", "max_score", "auto_score", "penalty", "status",
                  "late", "late_minutes", "submitted_at", "needs_manual_grade", "comments", "details"]
QUESTIONS_COLUMNS = ["student_id", "assignment", "notebook", "grade_id", "title", "kind", "score",
                     "max_score", "manual", "needs_manual_grade", "visible_tests", "hidden_tests", "comment"]


def load_results(ws: Workspace, assignments=None) -> list[JobResult]:
    """Os resultados gravados (de `assignments`, se dado), ordenados por (aluno, tarefa).
    Um arquivo de outra versão do contrato é ignorado: a entrega ainda não foi corrigida."""
    base = ws.results_dir
    out = []
    if base.is_dir():
        for p in sorted(base.glob("*/*.json")):
            if assignments is not None and p.parent.name not in assignments:
                continue
            r = read_result(p)
            if r is not None:
                out.append(r)
    out.sort(key=lambda r: (r.student, r.assignment))
    return out


@dataclass
class QuestionRow:
    notebook: str
    q: QuestionResult
    score: float | None          # a manual, se houver; senão a automática; None = aguardando
    manual: bool = False
    comment: str = ""


@dataclass
class Row:
    """Uma entrega (aluno, tarefa) com tudo o que o professor deu depois da correção."""

    result: JobResult
    auto_score: float            # automática + manual (antes da multa)
    score: float                 # nota final (depois da multa, nunca abaixo de zero)
    pending: float               # pontos à espera de correção manual
    lateness: Lateness
    submitted_at: datetime | None
    questions: list[QuestionRow] = field(default_factory=list)
    cell_comments: list[tuple[str, str, str, str]] = field(default_factory=list)
    """Comentários em células sem nota (a solução de código): (notebook, grade_id, título, texto)."""

    @property
    def student(self) -> str:
        return self.result.student

    @property
    def assignment(self) -> str:
        return self.result.assignment

    @property
    def max_score(self) -> float:
        return self.result.max_score

    @property
    def status(self) -> Status:
        return self.result.status

    @property
    def comments(self) -> list[tuple[str, str]]:
        """(título da tarefa, comentário) de cada questão comentada no formgrader."""
        return ([(q.q.title or q.q.grade_id, q.comment) for q in self.questions if q.comment]
                + [(title, text) for _, _, title, text in self.cell_comments])

    @property
    def details(self) -> list[str]:
        r = self.result
        unknown = [self.lateness.text()] if self.lateness.unknown else []     # atraso não conferido
        return list(r.details) + list(r.flags) + list(r.notes) + unknown

    def attention(self) -> list[str]:
        """Por que esta linha pede atenção (vazia: não pede). Não entregue não é motivo."""
        why = []
        if self.status not in (Status.OK, Status.MISSING):
            why.append(self.status.pt)
        elif self.status is Status.OK and self.result.details:
            why.append("detalhes da correção")            # p.ex. erro de sintaxe num notebook ok
        if self.lateness.late:
            why.append(f"atraso de {duration(self.lateness.minutes)}")
        elif self.lateness.unknown:
            why.append("atraso não conferido (sem horário de entrega)")
        if self.pending:
            why.append(f"{num(self.pending, ',')} ponto(s) aguardando correção manual")
        return why


def collect(ws: Workspace, deadlines: Deadlines, assignments=None) -> list[Row]:
    """As linhas da turma: resultados + notas manuais e comentários + atraso e multa."""
    from .gaps import complete
    results = complete(ws, load_results(ws, assignments))     # sem tarefa de zeros; quem faltou, igual
    marks: dict = read_marks(ws, {r.assignment for r in results}) if results else {}
    rows = []
    titles: dict[tuple[str, str], dict[str, str]] = {}
    for r in results:
        qrows, total, pending = [], 0.0, 0.0
        for nbr in r.notebooks:
            for q in nbr.questions:
                m: Mark = marks.get((r.student, r.assignment, nbr.notebook, q.grade_id), Mark())
                sc = m.manual_score if m.manual_score is not None else q.score
                if sc is None:
                    pending += q.max_score
                total += sc or 0.0
                qrows.append(QuestionRow(nbr.notebook, q, sc, m.manual_score is not None, m.comment))
        ts = datetime.fromisoformat(r.timestamp) if r.timestamp else None
        late = deadlines.lateness(r.assignment, ts, r.max_score) if r.status is not Status.MISSING \
            else Lateness(None)
        seen = {(q.notebook, q.q.grade_id) for q in qrows}
        others = []
        for (st, a, nb, gid), m in marks.items():
            if (st, a) == (r.student, r.assignment) and m.comment and (nb, gid) not in seen:
                if (a, nb) not in titles:
                    rel = ws.release(a) / f"{nb}.ipynb"
                    titles[(a, nb)] = cell_titles(nbformat.read(rel, as_version=4)) if rel.exists() else {}
                others.append((nb, gid, titles[(a, nb)].get(gid, gid), m.comment))
        rows.append(Row(r, total, max(0.0, total - late.penalty), pending, late,
                        ts.astimezone(deadlines.tz) if ts else None, qrows, others))
    return rows


def _passfail(v) -> str:
    return "" if v is None else ("passed" if v else "failed")


def grade_record(row: Row, fmt: CsvFormat) -> dict:
    n = lambda x: num(x, fmt.decimal)  # noqa: E731
    lt = row.lateness
    return {"student_id": row.student, "assignment": row.assignment, "score": n(row.score),
            "max_score": n(row.max_score), "auto_score": n(row.auto_score), "penalty": n(lt.penalty),
            "status": str(row.status),
            "late": "" if lt.minutes is None else ("true" if lt.late else "false"),
            "late_minutes": "" if lt.minutes is None else str(lt.minutes),
            "submitted_at": row.submitted_at.isoformat() if row.submitted_at else "",
            "needs_manual_grade": n(row.pending),
            "comments": " | ".join(f"{t}: {c}" for t, c in row.comments),
            "details": " | ".join(row.details)}


def question_records(row: Row, fmt: CsvFormat) -> list[dict]:
    n = lambda x: num(x, fmt.decimal)  # noqa: E731
    return [{"student_id": row.student, "assignment": row.assignment, "notebook": q.notebook,
             "grade_id": q.q.grade_id, "title": q.q.title, "kind": q.q.kind, "score": n(q.score),
             "max_score": n(q.q.max_score), "manual": "true" if q.manual else "false",
             "needs_manual_grade": "true" if q.score is None else "false",
             "visible_tests": _passfail(q.q.visible_passed), "hidden_tests": _passfail(q.q.hidden_passed),
             "comment": q.comment} for q in row.questions]


def write_csvs(ws: Workspace, rows: list[Row], fmt: CsvFormat | None = None) -> list[Row]:
    """grades.csv e questions.csv a partir das linhas já calculadas (`collect`)."""
    fmt = fmt or CsvFormat()
    write_csv(ws.root / "grades.csv", GRADES_COLUMNS, [grade_record(r, fmt) for r in rows], fmt)
    write_csv(ws.root / "questions.csv", QUESTIONS_COLUMNS,
              [q for r in rows for q in question_records(r, fmt)], fmt)
    return rows


# ----------------------------------------------------------------------------- relatório HTML

def _png(fig) -> str:
    import base64
    buf = io.BytesIO()
    # sem metadados de data/versão: o mesmo resultado dá o mesmo arquivo
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode()


def _histograms(grades_by_a: dict[str, list["Row"]]):
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
        scores = [r.score for r in rows_a]
        top = max(r.max_score for r in rows_a) or 1.0
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


def _pass_rates(questions_by_a: dict[str, list["QuestionRow"]]):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    n = len(questions_by_a)
    height = 0.6 + sum(0.9 + 0.4 * len({q.q.title for q in qs}) for qs in questions_by_a.values())
    sizes = [len({q.q.title for q in qs}) + 1.5 for qs in questions_by_a.values()]
    fig, axes = plt.subplots(n, 1, figsize=(7.5, height), squeeze=False, layout="constrained",
                             gridspec_kw={"height_ratios": sizes})
    for ax, (a, qs) in zip(axes.flat, questions_by_a.items()):
        ids = list(dict.fromkeys(q.q.title for q in qs))
        rate = []
        for title in ids:
            rows = [q for q in qs if q.q.title == title]
            full = sum(1 for q in rows if q.score is not None and q.score >= q.q.max_score)
            rate.append(100.0 * full / len(rows))
        ax.barh(ids[::-1], rate[::-1], color="#4c956c")
        ax.set_xlim(0, 100)
        ax.set_xlabel("alunos com nota cheia na questão (%)")
        ax.set_title(a, fontsize=10)
        for y, v in enumerate(rate[::-1]):
            ax.text(min(v + 1, 92), y, f"{fixed(v, 0)}%", va="center", fontsize=8)
    fig.suptitle("Taxa de acerto por questão (testes automáticos)", fontsize=12)
    out = _png(fig)
    plt.close(fig)
    return out


def write_report(ws: Workspace, rows: list[Row], deadlines: Deadlines, extra: list[str] = ()) -> Path:
    """relatorio/index.html a partir das linhas já calculadas: resumo, gráficos e o que pede atenção;
    `extra`: seções prontas (HTML) que vêm depois (a turma vista de cima, as recorreções)."""
    import statistics

    by_a: dict[str, list[Row]] = {}
    for g in rows:
        by_a.setdefault(g.assignment, []).append(g)
    q_by_a: dict[str, list[QuestionRow]] = {}
    for g in rows:
        for q in g.questions:
            if q.q.kind == "test":
                q_by_a.setdefault(g.assignment, []).append(q)
    from . import gaps
    known = gaps.names(ws)
    statuses = list(Status)
    e = html.escape
    parts = ['<!DOCTYPE html><html lang="pt-BR"><head><meta charset="utf-8">',
             "<title>Relatório da correção</title><style>",
             "body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:.25em .6em}"
             "th{background:#eef2f6}td.n{text-align:right}img{max-width:100%}",
             "</style></head><body><h1>Relatório da correção</h1>"]
    parts.append(f"<p>{len({g.student for g in rows})} aluno(s), {len(by_a)} tarefa(s), "
                 f"{len(rows)} linha(s) em <code>grades.csv</code>. Prazos no fuso {e(str(deadlines.tz))}; "
                 f"{e(deadlines.describe_policy())}.</p>")
    if (warn := gaps.unknown_lateness(rows)):
        parts.append(f'<p style="color:#b35900"><b>Atenção:</b> {e(warn)}</p>')
    parts.append("<h2>Resumo por tarefa</h2><table><tr><th>tarefa</th><th>prazo</th><th>alunos</th><th>média</th>"
                 "<th>mediana</th><th>máximo</th><th>atrasados</th><th>aguardando correção manual</th>"
                 + "".join(f"<th>{e(s.pt)}</th>" for s in statuses) + "</tr>")
    for a, rows_a in by_a.items():
        sc = [r.score for r in rows_a]
        due = deadlines.due.get(a)
        parts.append(f"<tr><td>{e(a)}</td><td>{e(due.astimezone(deadlines.tz).strftime('%d/%m/%Y %H:%M')) if due else '—'}</td>"
                     f"<td class=n>{len(rows_a)}</td><td class=n>{fixed(statistics.mean(sc))}</td>"
                     f"<td class=n>{fixed(statistics.median(sc))}</td><td class=n>{fixed(rows_a[0].max_score, 0)}</td>"
                     f"<td class=n>{sum(1 for r in rows_a if r.lateness.late)}</td>"
                     f"<td class=n>{sum(1 for r in rows_a if r.pending)}</td>"
                     + "".join(f"<td class=n>{sum(1 for r in rows_a if r.status is s)}</td>" for s in statuses)
                     + "</tr>")
    parts.append("</table>")
    if by_a:
        parts.append(f'<h2>Notas</h2><img alt="Histogramas das notas de cada tarefa" '
                     f'src="data:image/png;base64,{_histograms(by_a)}">')
    if q_by_a:
        parts.append(f'<h2>Questões</h2><img alt="Porcentagem de alunos com nota cheia em cada questão" '
                     f'src="data:image/png;base64,{_pass_rates(q_by_a)}">')
    attention = [(g, g.attention()) for g in rows]
    attention = [(g, why) for g, why in attention if why]
    parts.append(f"<h2>Pedem atenção ({len(attention)})</h2>")
    if attention:
        parts.append("<table><tr><th>aluno</th><th>tarefa</th><th>nota</th><th>por quê</th>"
                     "<th>detalhes</th></tr>")
        for g, why in attention:
            parts.append(f"<tr><td>{e(gaps.label(g.student, known))}</td><td>{e(g.assignment)}</td>"
                         f"<td class=n>{e(num(g.score, ','))} / {e(num(g.max_score, ','))}</td>"
                         f"<td>{e('; '.join(why))}</td><td>{e(' | '.join(g.details))}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>Nenhuma.</p>")
    absent = gaps.absent_by_assignment(rows, known)
    parts.append(f"<h2>Não entregaram ({sum(map(len, absent.values()))})</h2>")
    parts.append("".join(f"<p><b>{e(a)}</b>: {e(', '.join(who))}</p>" for a, who in sorted(absent.items()))
                 or "<p>Ninguém.</p>")
    parts.extend(extra)
    parts.append("</body></html>\n")
    out = ws.root / "relatorio" / "index.html"
    out.parent.mkdir(exist_ok=True)
    out.write_text("".join(parts), encoding="utf-8")
    return out
