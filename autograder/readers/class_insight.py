"""A turma vista de cima no relatório (issue 40): lê o workspace e entrega a `insight/` o que
ela precisa; devolve as seções do relatório, os CSVs e os parágrafos opcionais do retorno.

De cada entrega corrigida (`Row`, de report.collect) e do notebook corrigido dela:

- as células de RESPOSTA de código (as de solução do nbgrader), para a semelhança; o código
  inicial que o release entrega nessas células é o molde (não conta); as células travadas e
  as saídas ficam de fora;
- para cada célula de teste, se a parte visível e a oculta passaram (do resultado) e a
  mensagem de falha da parte VISÍVEL, tirada só das saídas que o executor registrou como
  dela (`TestPart`). Da parte oculta não se lê saída nenhuma, e uma célula que rodou
  inteira (sem divisão) não dá mensagem: assim nem as entradas sorteadas nem o código dos
  testes ocultos chegam ao relatório. Por garantia, cada seção passa pelo mesmo filtro das
  páginas de retorno (`feedback.hidden_leaks`) e, se mostrasse uma linha de teste oculto,
  sai do relatório com um aviso.

A seção do livro a reler de cada teste: o título do caderno ("Capítulo 4 — A softmax"), o
título da tarefa a que o teste pertence e, se existir, a página do livro com o nome da
tarefa (book/parte1/04-softmax.md).

Nada sai da máquina e nenhuma nota muda: só se escrevem HTML e CSV em relatorio/.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..core import nbmeta
from ..core.results import Status, TestPart
from ..core.workspace import REPO, Workspace, cell_titles
from ..insight import render
from ..insight.mistakes import ClassMistakes, TestOutcome, analyze, headline
from ..insight.similarity import DEFAULT_THRESHOLD, Submission, find_similar
from .feedback import hidden_leaks, hidden_lines
from .report import Row

__all__ = ["Insight", "build_insight", "write_insight", "mistake_notes", "DEFAULT_THRESHOLD"]


@dataclass
class _Assignment:
    """O que se leu de uma tarefa: por aluno, as respostas e os resultados dos testes."""

    name: str
    starter: dict[str, str] = field(default_factory=dict)            # grade_id -> código inicial
    submissions: list[Submission] = field(default_factory=list)
    answers: dict[str, dict[str, str]] = field(default_factory=dict)  # aluno -> tarefa -> código
    outcomes: list[TestOutcome] = field(default_factory=list)
    sections: dict[str, str] = field(default_factory=dict)           # grade_id -> seção a reler
    hidden: list[str] = field(default_factory=list)                  # linhas de teste oculto


@dataclass
class Insight:
    """Por tarefa: os pares parecidos e os erros da turma, e as seções prontas."""

    threshold: float
    pairs: dict[str, list] = field(default_factory=dict)
    mistakes: dict[str, ClassMistakes] = field(default_factory=dict)
    html: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    messages: dict[tuple[str, str, str], str] = field(default_factory=dict)   # (tarefa, aluno, teste)


def _is_answer(cell) -> bool:
    return cell.cell_type == "code" and bool(nbmeta.nbgrader_meta(cell).get("solution"))


def _is_test(cell) -> bool:
    m = nbmeta.nbgrader_meta(cell)
    return cell.cell_type == "code" and bool(m.get("grade")) and not m.get("solution")


def visible_message(cell) -> str:
    """A mensagem de falha das partes visíveis de uma célula de teste corrigida (as saídas
    que o executor registrou como delas); vazia se não há parte visível que falhou."""
    parts = TestPart.from_metadata(cell.metadata.get("autograder"))
    outputs, pos, texts = list(cell.get("outputs", [])), 0, []
    for part in parts:
        chunk = outputs[pos: pos + part.outputs]
        pos += part.outputs
        if part.hidden is not False or part.passed:
            continue
        for o in chunk:
            if o.get("output_type") == "error":
                texts.append(f"{o.get('ename', '')}: {o.get('evalue', '')}")
            elif o.get("output_type") == "stream" and o.get("name") == "stderr":
                texts.append(str(o.get("text", "")))
    return headline("\n".join(texts))


def _chapter(release_nb) -> str:
    for c in release_nb.cells:
        if c.cell_type == "markdown":
            for line in c.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def _book_page(assignment: str) -> str:
    pages = sorted((REPO / "book").glob(f"*/{assignment}.md")) if (REPO / "book").is_dir() else []
    return str(pages[0].relative_to(REPO)) if pages else ""


def _read_release(ws: Workspace, a: _Assignment, notebooks: list[str]) -> dict[str, dict[str, str]]:
    """Molde, seções e linhas ocultas da tarefa; devolve notebook -> grade_id -> título."""
    titles_by_nb = {}
    page = _book_page(a.name)
    for name in notebooks:
        rel_path = ws.release(a.name) / f"{name}.ipynb"
        if not rel_path.exists():
            continue
        rel = nbformat.read(rel_path, as_version=4)
        titles = cell_titles(rel)
        titles_by_nb[name] = titles
        chapter = _chapter(rel)
        for c in rel.cells:
            gid = nbmeta.grade_id(c)
            if gid and _is_answer(c):
                a.starter[_key(name, gid, notebooks)] = c.source
            if gid and _is_test(c):
                where = ", ".join(dict.fromkeys(x for x in (chapter, titles.get(gid, "")) if x and x != gid))
                a.sections[gid] = where + (f" (livro: {page})" if page else "")
        src = ws.source(a.name) / f"{name}.ipynb"
        if src.exists():
            a.hidden += hidden_lines(nbformat.read(src, as_version=4), rel)
    return titles_by_nb


def _key(notebook: str, gid: str, notebooks: list[str]) -> str:
    return gid if len(notebooks) == 1 else f"{notebook}/{gid}"


def _read_assignment(ws: Workspace, name: str, rows: list[Row]) -> _Assignment:
    a = _Assignment(name)
    notebooks = sorted({n.notebook for r in rows for n in r.result.notebooks})
    titles_by_nb = _read_release(ws, a, notebooks)
    for row in rows:
        if row.status is Status.MISSING:
            continue
        cells: dict[str, str] = {}
        per_task: dict[str, list[str]] = {}
        per_test: dict[str, str] = {}        # teste -> as respostas logo antes dele
        messages: dict[tuple[str, str], str] = {}
        for nbr in row.result.notebooks:
            path = ws.autograded(row.student, name) / f"{nbr.notebook}.ipynb"
            if not path.exists():
                continue
            nb = nbformat.read(path, as_version=4)
            titles = titles_by_nb.get(nbr.notebook, {})
            since: list[str] = []
            for c in nb.cells:
                gid = nbmeta.grade_id(c)
                if gid and _is_answer(c):
                    cells[_key(nbr.notebook, gid, notebooks)] = c.source
                    per_task.setdefault(titles.get(gid, gid), []).append(c.source)
                    since.append(c.source)
                elif gid and _is_test(c):
                    messages[(nbr.notebook, gid)] = visible_message(c)
                    if since:
                        per_test[gid] = "\n\n".join(since)
                    since = []
        if cells:
            a.submissions.append(Submission(row.student, cells))
        a.answers[row.student] = {**{t: "\n\n".join(srcs) for t, srcs in per_task.items()}, **per_test}
        for nbr in row.result.notebooks:
            for q in nbr.questions:
                if q.kind != "test":
                    continue
                a.outcomes.append(TestOutcome(
                    row.student, q.title or q.grade_id, q.grade_id, q.score or 0.0, q.max_score,
                    q.visible_passed, q.hidden_passed, messages.get((nbr.notebook, q.grade_id), "")))
    return a


def _guarded(fragment: str, hidden: list[str], what: str, warnings: list[str]) -> str:
    leaks = hidden_leaks(fragment, hidden)
    if not leaks:
        return fragment
    warnings.append(f"{what}: a seção mostraria {len(leaks)} linha(s) de teste oculto e ficou de fora")
    return (f"<section><h2>{html.escape(what)}</h2><p>Esta seção mostraria uma linha de teste "
            "oculto e não foi escrita.</p></section>")


def build_insight(ws: Workspace, rows: list[Row], threshold: float | None = None) -> Insight:
    """Lê as entregas de cada tarefa e calcula semelhança e erros; nada é gravado aqui."""
    out = Insight(DEFAULT_THRESHOLD if threshold is None else threshold)
    by_a: dict[str, list[Row]] = {}
    for r in rows:
        by_a.setdefault(r.assignment, []).append(r)
    for name, rows_a in by_a.items():
        a = _read_assignment(ws, name, rows_a)
        pairs = find_similar(a.submissions, a.starter, threshold=out.threshold)
        result = analyze(a.outcomes, sections=a.sections, answers=a.answers)
        out.pairs[name], out.mistakes[name] = pairs, result
        out.messages.update({(name, o.student, o.grade_id): headline(o.visible_message)
                             for o in a.outcomes if o.visible_passed is False and o.visible_message})
        sim = render.similarity_html(pairs, assignment=name, threshold=out.threshold,
                                     students=len(a.submissions))
        mis = render.mistakes_html(result, assignment=name)
        out.html.append(_guarded(sim, a.hidden, f"Semelhança entre respostas: {name}", out.warnings))
        out.html.append(_guarded(mis, a.hidden, f"Os erros da turma: {name}", out.warnings))
    return out


CSV_FILES = ("similarity.csv", "mistakes.csv", "pass_rates.csv", "tasks.csv")


def write_insight(ws: Workspace, insight: Insight, sep: str = ";", decimal: str = ",") -> list[Path]:
    """relatorio/similarity.csv, mistakes.csv, pass_rates.csv e tasks.csv (sem nomes de aluno
    fora de similarity.csv, e sem exemplos de resposta)."""
    builders = (
        lambda a: render.similarity_rows(insight.pairs[a], a),
        lambda a: render.mistakes_rows(insight.mistakes[a], a),
        lambda a: render.pass_rate_rows(insight.mistakes[a], a),
        lambda a: render.task_rows(insight.mistakes[a], a),
    )
    out = []
    for fname, build in zip(CSV_FILES, builders):
        rows: list[list] = []
        for a in insight.mistakes:
            got = build(a)
            rows += got if not rows else got[1:]
        if not rows:
            continue
        path = ws.root / "relatorio" / fname
        path.parent.mkdir(exist_ok=True)
        path.write_text(render.csv_text(rows, sep=sep, decimal=decimal), encoding="utf-8")
        out.append(path)
    return out


def mistake_notes(insight: Insight, rows: list[Row]) -> dict[tuple[str, str, str], list[str]]:
    """(aluno, tarefa, notebook) -> parágrafos em português sobre os erros do aluno, para a
    página de retorno (opcional: `feedback --explain-mistakes`). Diz a mensagem do teste
    visível (que o aluno já vê na página) ou que a parte oculta falhou, quantos colegas
    tiveram o mesmo erro e a seção a reler; nunca as entradas nem o código ocultos."""
    nb_of = {(r.student, r.assignment, q.grade_id): n.notebook
             for r in rows for n in r.result.notebooks for q in n.questions}
    notes: dict[tuple[str, str, str], list[str]] = {}
    for a, result in insight.mistakes.items():
        for m in result.mistakes:
            others = m.count - 1
            company = (f" {others} {'colega da turma teve' if others == 1 else 'colegas da turma tiveram'}"
                       " o mesmo erro neste teste." if others else "")
            if m.hidden:
                what = ("a sua resposta passou na parte visível do teste, mas falhou na parte oculta, "
                        "que usa outras entradas (outras formas, tipos ou casos extremos).")
                todo = " Experimente a sua função com entradas que os testes visíveis não cobrem."
            else:
                what = "o teste visível falhou com a mensagem «{}»."
                todo = " Leia a mensagem completa na célula de testes, logo abaixo."
            reread = f" Vale reler: {m.section}." if m.section else ""
            for s in m.students:
                nb = nb_of.get((s, a, m.grade_id))
                if nb is not None:
                    mine = what.format(insight.messages.get((a, s, m.grade_id), m.template))
                    notes.setdefault((s, a, nb), []).append(
                        f"{m.task} (teste {m.grade_id}): {mine}{company}{todo}{reread}")
    return notes


def report_sections(ws: Workspace, insight: Insight) -> list[str]:
    """O que vai no fim do relatório: o estilo, a semelhança e os erros de cada tarefa e as
    últimas recorreções."""
    from .regrade import regrade_html
    return [render.INSIGHT_CSS, *insight.html, regrade_html(ws)]


def notes_html(notes: list[str]) -> str:
    if not notes:
        return ""
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return (f'<div class="ag-erros"><p><strong>Sobre os seus erros</strong> (o professor escolheu '
            f"mostrar este resumo):</p><ul>{items}</ul></div>")



def insight_settings(state: Path, threshold: float | None = None,
                     explain: bool | None = None) -> tuple[float, bool]:
    """O limiar de semelhança e a escolha de pôr os erros nos retornos, guardados em
    `.autograder/insight.json` (como o formato das planilhas): o que a linha de comando dá
    vale para os comandos seguintes (uma recorreção não tira os parágrafos dos retornos)."""
    import json
    f = Path(state) / "insight.json"
    saved = json.loads(f.read_text(encoding="utf-8")) if f.exists() else {}
    value = {"similarity_threshold": saved.get("similarity_threshold", DEFAULT_THRESHOLD),
             "explain_mistakes": saved.get("explain_mistakes", False)}
    if threshold is not None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"--similarity-threshold espera um número entre 0 e 1, veio {threshold}")
        value["similarity_threshold"] = threshold
    if explain is not None:
        value["explain_mistakes"] = explain
    if value != saved and (threshold is not None or explain is not None):
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(value), encoding="utf-8")
    return float(value["similarity_threshold"]), bool(value["explain_mistakes"])
