"""Feedback HTML por aluno: o que os testes visíveis disseram, nunca os ocultos.

O `generate_feedback` do nbgrader mostra o código e o traceback dos testes
ocultos (nbgrader #917, #1363). Aqui o notebook corrigido passa por
`student_view` antes de virar HTML:

- toda célula travada volta ao texto da versão distribuída (sem os testes
  ocultos), e o `ClearHiddenTests` do nbgrader passa por cima, por garantia;
- numa célula de teste, ficam as saídas das partes visíveis (o executor
  registrou quantas saídas são de cada parte); cada parte oculta vira uma
  linha "passaram / falharam / não rodaram", sem saída nem traceback; uma
  célula que não pôde ser dividida não mostra saída nenhuma.

As notas vêm do gradebook final pelo `GetGrades` do nbgrader (inclui as
notas manuais) e o HTML usa um modelo em português que estende o modelo
clássico do nbconvert. Um feedback só é refeito quando o notebook corrigido,
as notas ou a situação mudaram.
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
import os
from pathlib import Path

import nbformat

from . import integrity
from .course import Workspace
from .report import STATUS_PT, load_results, num

TEMPLATES = Path(__file__).parent / "templates"
_OURS = {"CellTimeoutError", "DeadKernelError", "CellNotExecuted"}   # erros que o próprio corretor escreve

HIDDEN_PASSED = "✔ Testes ocultos: passaram."
HIDDEN_FAILED = ("✘ Testes ocultos: falharam. Eles conferem casos que os testes visíveis não "
                 "cobrem e não são mostrados; revise sua solução para entradas diferentes.")
HIDDEN_NOT_RUN = "– Testes ocultos: não rodaram (a parte visível falhou antes)."
WHOLE_PASSED = "✔ Esta célula de testes passou."
WHOLE_FAILED = "✘ Esta célula de testes falhou (os detalhes incluem testes ocultos e não são mostrados)."


def _stream(text: str):
    return nbformat.v4.new_output("stream", name="stdout", text=text + "\n")


def student_view(autograded, release):
    """Cópia do notebook corrigido que pode ir para o aluno."""
    from nbgrader.preprocessors import ClearHiddenTests
    nb = copy.deepcopy(autograded)
    rel = {integrity.grade_id(c): c for c in release.cells if integrity.grade_id(c)}
    for cell in nb.cells:
        gid = integrity.grade_id(cell)
        meta = cell.metadata.pop("autograder", None) or {}
        if gid in rel and integrity._is_locked(rel[gid]):
            cell.source = rel[gid].source
        m = integrity.nbgrader_meta(cell)
        if cell.cell_type != "code" or not m.get("grade") or m.get("solution"):
            continue
        parts = meta.get("parts")
        outputs, kept, pos = list(cell.outputs), [], 0
        if not parts:
            kept = [o for o in outputs if o.output_type == "error" and o.get("ename") in _OURS]
        for part in parts or []:
            chunk = outputs[pos: pos + part["outputs"]]
            pos += part["outputs"]
            if part["hidden"] is False:
                kept += chunk
            elif part["hidden"] is True:
                kept.append(_stream(HIDDEN_PASSED if part["passed"]
                                    else HIDDEN_FAILED if part["ran"] else HIDDEN_NOT_RUN))
                kept += [o for o in chunk if o.output_type == "error" and o.get("ename") in _OURS]
            else:
                kept.append(_stream(WHOLE_PASSED if part["passed"] else WHOLE_FAILED))
                kept += [o for o in chunk if o.output_type == "error" and o.get("ename") in _OURS]
        cell.outputs = kept
    nb, _ = ClearHiddenTests().preprocess(nb, {})
    return nb


MATHJAX_CDN = "https://cdn.jsdelivr.net/npm/mathjax@3.2.2/es5/tex-chtml.js"
# O que o feedback usa do MathJax 3 (pacote django-static-mathjax, o mesmo do livro):
# o componente TeX -> CHTML, as fontes e as extensões do TeX que ele carrega sob demanda.
MATHJAX_PARTS = ["tex-chtml.js", "output/chtml/fonts", "input/tex/extensions"]


def copy_mathjax(feedback_root: Path) -> None:
    """feedback/_mathjax: uma cópia por workspace, para as páginas abrirem sem internet."""
    import shutil

    import mathjax
    es5 = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    dest = feedback_root / "_mathjax"
    if (dest / "tex-chtml.js").exists():
        return
    tmp = feedback_root / "_mathjax.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for part in MATHJAX_PARTS:
        src = es5 / part
        if src.is_dir():
            shutil.copytree(src, tmp / part)
        else:
            (tmp / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, tmp / part)
    try:
        os.replace(tmp, dest)
    except OSError:          # um aluno chamado "_mathjax": as páginas usam a CDN
        shutil.rmtree(tmp, ignore_errors=True)


def _template_digest() -> str:
    h = hashlib.sha256()
    for f in sorted(TEMPLATES.rglob("*")):
        if f.is_file():
            h.update(f.read_bytes())
    return h.hexdigest()


def _exporter():
    from nbconvert import HTMLExporter
    from traitlets.config import Config
    c = Config()
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]
    c.HTMLExporter.template_name = "feedback_ptbr"
    c.HTMLExporter.language_code = "pt"          # o nbconvert só aceita ISO 639-1
    return HTMLExporter(config=c)


def _status_text(r: dict) -> tuple[str, list[str]]:
    st = r["status"]
    if st == "flagged":
        return "em revisão pelo professor", []
    msgs = list(r.get("details", []))
    return STATUS_PT.get(st, st), msgs


def _late_text(late_minutes: int | None) -> str:
    if late_minutes is None:
        return ""
    if late_minutes == 0:
        return "Entregue no prazo."
    h, m = divmod(late_minutes, 60)
    return f"Entregue com atraso de {f'{h} h ' if h else ''}{m} min."


def _fmt(x) -> str:
    return num(x).replace(".", ",") if x is not None else "—"


def _simple_page(title: str, lines: list[str]) -> str:
    body = "".join(f"<p>{html.escape(x)}</p>" for x in lines)
    return (f'<!DOCTYPE html><html lang="pt-BR"><head><meta charset="utf-8"><title>{html.escape(title)}'
            f'</title></head><body style="font-family: sans-serif; max-width: 50em; margin: 2em auto">'
            f"<h1>{html.escape(title)}</h1>{body}</body></html>\n")


def generate_feedback(ws: Workspace, deadlines, force: bool = False) -> tuple[int, int]:
    """Escreve feedback/<aluno>/<tarefa>/<nb>.html; devolve (escritos, já em dia)."""
    import warnings

    from nbgrader.preprocessors import GetGrades
    from datetime import datetime

    from .report import collect_rows
    warnings.filterwarnings("ignore")
    from nbgrader.api import Gradebook

    from .runner import grade_rows
    grades, _ = collect_rows(ws, deadlines)
    rows = {(g["student_id"], g["assignment"]): g for g in grades}
    with Gradebook(ws.db_url) as gb:
        manual = {k: g.manual_score for k, g in grade_rows(gb).items()}
    state_f = ws.state / "feedback.json"
    state = json.loads(state_f.read_text()) if state_f.exists() and not force else {}
    exporter = None
    written = fresh = 0
    copy_mathjax(ws.root / "feedback")
    template = _template_digest()
    for r in load_results(ws):
        s, a = r["student"], r["assignment"]
        row = rows[(s, a)]
        release_dir = ws.release(a)
        for nbr in r["notebooks"]:
            name = nbr["notebook"]
            out = ws.feedback(s, a) / f"{name}.html"
            src = ws.autograded(s, a) / f"{name}.ipynb"
            key_src = src.read_bytes() if src.exists() else b""
            key = hashlib.sha256(key_src + json.dumps([r["key"], row, nbr["status"], template], sort_keys=True)
                                 .encode()).hexdigest()
            skey = f"{s}/{a}/{name}"
            if state.get(skey) == key and out.exists():
                fresh += 1
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            status_text, messages = _status_text(r)
            ts = datetime.fromisoformat(r["timestamp"]) if r.get("timestamp") else None
            late = deadlines.late_minutes(a, ts) if r["status"] != "missing" else None
            if not src.exists():
                why = nbr["details"] or [STATUS_PT.get(nbr["status"], nbr["status"])]
                out.write_text(_simple_page(
                    f"{a} — {name}",
                    [f"Aluno(a): {s}", f"Nota: 0 de {_fmt(r['max_score'])} pontos",
                     f"Situação: {status_text}", *why, _late_text(late)]), encoding="utf-8")
            else:
                if exporter is None:
                    exporter = _exporter()
                nb = student_view(nbformat.read(src, as_version=4),
                                  nbformat.read(release_dir / f"{name}.ipynb", as_version=4))
                res = {"nbgrader": {"student": s, "assignment": a, "notebook": name,
                                    "db_url": ws.db_url}}
                nb, res = GetGrades().preprocess(nb, res)
                auto = {c["grade_id"]: c["score"] for c in nbr["cells"]}
                for c in nb.cells:       # no gradebook, "sem nota" vira 0: aqui fica "aguardando"
                    gid = integrity.grade_id(c)
                    if gid in auto and auto[gid] is None and manual.get((s, a, name, gid)) is None:
                        c.metadata.nbgrader["score"] = None
                toc, pending = [], 0.0
                for c in nb.cells:
                    m = integrity.nbgrader_meta(c)
                    if m.get("grade"):
                        label = ("Resposta escrita" if c.cell_type == "markdown"
                                 else "Resposta em código" if m.get("solution") else "Testes")
                        toc.append({"grade_id": m["grade_id"], "label": f"{label} ({m['grade_id']})",
                                    "score_text": _fmt(m.get("score")) if m.get("score") is not None
                                    else "aguardando correção manual", "max_text": _fmt(m.get("points"))})
                        if m.get("score") is None:
                            pending += float(m.get("points") or 0)
                res["autograder"] = {
                    "student": s, "assignment": a, "notebook": name,
                    "score_text": _fmt(sum(float(c.metadata.nbgrader.get("score") or 0) for c in nb.cells
                                           if integrity.nbgrader_meta(c).get("grade"))),
                    "max_text": _fmt(res["nbgrader"]["max_score"]),
                    "pending_text": f"{_fmt(pending)} ponto(s) aguardando correção manual" if pending else "",
                    "status": r["status"], "status_text": status_text, "messages": messages,
                    "late_text": _late_text(late), "toc": toc,
                    # feedback/<aluno>/<tarefa>/<notebook>.html -> feedback/_mathjax
                    "mathjax_local": "../../_mathjax/tex-chtml.js", "mathjax_cdn": MATHJAX_CDN}
                body, _ = exporter.from_notebook_node(nb, resources=res)
                out.write_text(body, encoding="utf-8")
            state[skey] = key
            written += 1
    state_f.parent.mkdir(parents=True, exist_ok=True)
    state_f.write_text(json.dumps(state, indent=1, sort_keys=True))
    return written, fresh
