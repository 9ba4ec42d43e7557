"""Recorreção (`python -m autograder regrade`): o que mudou, teste a teste, e o código curto
de cada página de retorno que acha a linha.

Só lê resultados (`JobResult`) e escreve o que a recorreção mudou; a recorreção em si é a
mesma correção de `grade` (plan/runner.py, com o filtro de alunos e `regrade=True`), com
as mesmas entradas ocultas: a semente sai de core/student_seed.py, como em toda correção.

- `request_id(result)`: 8 caracteres hexadecimais tirados do aluno, da tarefa e da chave do
  resultado (a impressão digital da entrega corrigida). Vai na página de retorno; o aluno o
  cita num pedido de revisão e `find-id` (ou `regrade --id`) acha a linha. Uma recorreção
  que muda a nota muda a chave e, com ela, o código; o antigo continua achável pelos
  arquivos `regrade-*.csv`, que guardam os dois.
- `diff_rows(before, after)`: uma linha por teste de cada entrega recorrigida, com o
  veredito (partes visível e oculta) e os pontos antes e depois, e se mudou.
- `write_regrade_csv` grava `relatorio/regrade-AAAAmmdd-HHMMSS.csv`; `regrade_html`, a seção
  do relatório com as últimas recorreções (só as linhas que mudaram).
"""

from __future__ import annotations

import csv
import hashlib
import html
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from atencao.fmt import num
from ..core.results import JobResult
from ..core.workspace import Workspace
from .csvfile import CsvFormat, write_csv

REGRADE_COLUMNS = ["student_id", "assignment", "notebook", "grade_id", "title", "kind",
                   "before_visible", "after_visible", "before_hidden", "after_hidden",
                   "before_score", "after_score", "max_score", "changed", "before_id", "after_id"]
ID_LENGTH = 8
REPORT_DIR = "relatorio"
SHOWN_REGRADES = 5          # recorreções mostradas no relatório (as mais novas)


def request_id(result: JobResult) -> str:
    """O código curto da entrega corrigida (8 caracteres hexadecimais)."""
    text = f"{result.student}\0{result.assignment}\0{result.key}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:ID_LENGTH]


def _verdict(v) -> str:
    return "" if v is None else ("passed" if v else "failed")


def diff_rows(before: JobResult | None, after: JobResult) -> list[dict]:
    """Uma linha por questão de `after` (e pelas que sumiram de `before`)."""
    old = {}
    if before is not None:
        old = {(n.notebook, q.grade_id): q for n in before.notebooks for q in n.questions}
    rows, seen = [], set()
    bid = request_id(before) if before is not None else ""
    aid = request_id(after)

    def row(nb, q_old, q_new):
        ref = q_new or q_old
        bv = (_verdict(q_old.visible_passed), _verdict(q_old.hidden_passed), q_old.score) if q_old else ("", "", None)
        av = (_verdict(q_new.visible_passed), _verdict(q_new.hidden_passed), q_new.score) if q_new else ("", "", None)
        return {"student_id": after.student, "assignment": after.assignment, "notebook": nb,
                "grade_id": ref.grade_id, "title": ref.title, "kind": ref.kind,
                "before_visible": bv[0], "after_visible": av[0], "before_hidden": bv[1], "after_hidden": av[1],
                "before_score": "" if bv[2] is None else num(bv[2]),
                "after_score": "" if av[2] is None else num(av[2]),
                "max_score": num(ref.max_score), "changed": "true" if bv != av else "false",
                "before_id": bid, "after_id": aid}

    for n in after.notebooks:
        for q in n.questions:
            seen.add((n.notebook, q.grade_id))
            rows.append(row(n.notebook, old.get((n.notebook, q.grade_id)), q))
    for (nb, gid), q in old.items():
        if (nb, gid) not in seen:
            rows.append(row(nb, q, None))
    return rows


def regrade_path(ws: Workspace, when: datetime) -> Path:
    return ws.root / REPORT_DIR / f"regrade-{when.strftime('%Y%m%d-%H%M%S')}.csv"


def write_regrade_csv(ws: Workspace, rows: list[dict], when: datetime) -> Path:
    """Grava as linhas com vírgula e ponto decimal (arquivo de registro, lido de volta por
    `regrade_html` e `find_id`); um segundo arquivo no mesmo segundo ganha um sufixo."""
    path = regrade_path(ws, when)
    i = 1
    while path.exists():
        i += 1
        path = path.with_name(f"regrade-{when.strftime('%Y%m%d-%H%M%S')}-{i}.csv")
    return write_csv(path, REGRADE_COLUMNS, rows, CsvFormat(","))


def read_regrades(ws: Workspace) -> list[tuple[Path, list[dict]]]:
    """Os arquivos de recorreção do workspace, do mais novo ao mais antigo."""
    out = []
    for p in sorted((ws.root / REPORT_DIR).glob("regrade-*.csv"), reverse=True):
        with open(p, encoding="utf-8-sig", newline="") as f:
            out.append((p, list(csv.DictReader(f))))
    return out


@dataclass(frozen=True)
class Found:
    student: str
    assignment: str
    current: bool           # o código é o da página atual (False: de antes de uma recorreção)
    where: str              # de onde veio: o resultado gravado ou o arquivo de recorreção


def find_id(ws: Workspace, results: list[JobResult], code: str) -> list[Found]:
    """As entregas com este código: nos resultados atuais e nas recorreções passadas."""
    code = code.strip().lower()
    out = [Found(r.student, r.assignment, True, str(ws.result_path(r.student, r.assignment)))
           for r in results if request_id(r) == code]
    seen = {(f.student, f.assignment) for f in out}
    for p, rows in read_regrades(ws):
        for r in rows:
            key = (r["student_id"], r["assignment"])
            if code in (r.get("before_id"), r.get("after_id")) and key not in seen:
                seen.add(key)
                out.append(Found(*key, False, p.name))
    return out


def _verdict_pt(v: str) -> str:
    return {"passed": "passou", "failed": "falhou"}.get(v, "—")


def _code(x: str) -> str:
    return f"<code>{html.escape(x)}</code>" if x else "—"


def regrade_html(ws: Workspace) -> str:
    """A seção "Recorreções" do relatório: as últimas, com as linhas que mudaram."""
    regrades = read_regrades(ws)
    if not regrades:
        return ""
    e = html.escape
    out = ['<section class="insight-regrade"><h2>Recorreções</h2>',
           "<p>Cada recorreção (<code>python -m autograder regrade</code>) corrige de novo só os "
           "alunos e as tarefas pedidos, com as mesmas entradas ocultas, e grava o que mudou, teste a "
           "teste, num arquivo <code>relatorio/regrade-*.csv</code>. Abaixo, as mais recentes; "
           "a tabela mostra só as questões que mudaram.</p>"]
    for p, rows in regrades[:SHOWN_REGRADES]:
        changed = [r for r in rows if r["changed"] == "true"]
        pairs = sorted({(r["student_id"], r["assignment"]) for r in rows})
        out.append(f"<h3><code>{e(p.name)}</code></h3><p>{len(pairs)} entrega(s) recorrigida(s): "
                   + e(", ".join(f"{s} ({a})" for s, a in pairs))
                   + f"; {len(changed)} de {len(rows)} questão(ões) mudaram.</p>")
        if not changed:
            continue
        out.append('<div class="insight-scroll"><table class="insight-cards"><thead><tr><th>aluno</th><th>tarefa</th>'
                   "<th>teste</th><th>visível antes → depois</th><th>oculta antes → depois</th>"
                   "<th>pontos antes → depois</th><th>código</th></tr></thead><tbody>")
        for r in changed:
            pts = lambda x: x.replace(".", ",") if x else "—"  # noqa: E731
            out.append(
                f'<tr><td data-label="aluno">{e(r["student_id"])}</td><td data-label="tarefa">{e(r["assignment"])}</td>'
                f'<td data-label="teste">{e(r["title"] or r["grade_id"])} (<code>{e(r["grade_id"])}</code>)</td>'
                f'<td data-label="parte visível">{_verdict_pt(r["before_visible"])} → {_verdict_pt(r["after_visible"])}</td>'
                f'<td data-label="parte oculta">{_verdict_pt(r["before_hidden"])} → {_verdict_pt(r["after_hidden"])}</td>'
                f'<td data-label="pontos">{e(pts(r["before_score"]))} → {e(pts(r["after_score"]))} '
                f'de {e(pts(r["max_score"]))}</td>'
                f'<td data-label="código">{_code(r["before_id"])} → {_code(r["after_id"])}</td></tr>')
        out.append("</tbody></table></div>")
    out.append("</section>")
    return "".join(out)
