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

As notas e os comentários vêm de report.collect (resultado + notas manuais e
comentários do formgrader, lidos por gradebook.py + atraso e multa) e o HTML usa
um modelo em português que estende o modelo clássico do nbconvert. Cada
página é um arquivo só: o MathJax (componente tex-svg-full, que já traz as
fontes em SVG e todas as extensões do TeX) vai dentro dela, então a
matemática aparece mesmo com a página aberta sozinha, sem internet.

As páginas ficam em `retornos/<aluno>/<tarefa>/`, não em `feedback/`: essa é a
pasta do "Generate Feedback" do formgrader, que inclui os testes ocultos. Antes
de gravar, toda página passa por `hidden_leaks`: se uma linha de teste oculto da
fonte aparecer no texto dela, a página é recusada (não é gravada). Um feedback
só é refeito quando o notebook corrigido, as notas ou a situação mudaram.
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
from pathlib import Path

import nbformat

from . import integrity
from .course import Workspace
from .deadlines import Deadlines
from .report import Row, collect, num
from .results import Status

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


# MathJax 3 inteiro num arquivo (pacote django-static-mathjax, o mesmo do livro): entrada TeX
# com todas as extensões e saída SVG com as fontes embutidas; nada é pedido depois.
MATHJAX_FILE = "tex-svg-full.js"


def mathjax_inline() -> str:
    """O MathJax para ir dentro de <script> (sem fechar a tag por acidente)."""
    import mathjax
    js = (Path(mathjax.__file__).parent / "static" / "mathjax" / "es5" / MATHJAX_FILE).read_text(encoding="utf-8")
    return js.replace("</script", "<\\/script")


def _template_digest() -> str:
    h = hashlib.sha256()
    for f in sorted(TEMPLATES.rglob("*")):
        if f.is_file():
            h.update(f.read_bytes())
    h.update(MATHJAX_FILE.encode())
    return h.hexdigest()


def _exporter():
    from nbconvert import HTMLExporter
    from traitlets.config import Config
    c = Config()
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]
    c.HTMLExporter.template_name = "feedback_ptbr"
    c.HTMLExporter.language_code = "pt"          # o nbconvert só aceita ISO 639-1
    return HTMLExporter(config=c)


def _status_text(row: Row) -> tuple[str, list[str]]:
    if row.status is Status.FLAGGED:
        return "em revisão pelo professor", []
    return row.status.pt, list(row.result.details)


def _late_text(row: Row) -> str:
    lt = row.lateness
    if lt.minutes is None:
        return ""
    if not lt.late:
        return "Entregue no prazo." if lt.minutes == 0 else \
            f"Entregue {lt.minutes} min depois do prazo, dentro da tolerância."
    h, m = divmod(lt.minutes, 60)
    text = f"Entregue com atraso de {f'{h} h ' if h else ''}{m} min."
    if lt.penalty:
        text += f" Multa por atraso: {_fmt(lt.penalty)} ponto(s)."
    return text


def _fmt(x) -> str:
    return num(x, ",") if x is not None else "—"


def _simple_page(title: str, lines: list[str]) -> str:
    body = "".join(f"<p>{html.escape(x)}</p>" for x in lines if x)
    return (f'<!DOCTYPE html><html lang="pt-BR"><head><meta charset="utf-8"><title>{html.escape(title)}'
            f'</title></head><body style="font-family: sans-serif; max-width: 50em; margin: 2em auto">'
            f"<h1>{html.escape(title)}</h1>{body}</body></html>\n")


# ----------------------------------------------------------------------------- testes ocultos

def _lines(cells) -> set[str]:
    return {line.strip() for c in cells for line in c.source.splitlines()}


def hidden_lines(source_nb, release_nb=None) -> list[str]:
    """As linhas de teste oculto de um notebook-fonte (entre BEGIN/END HIDDEN TESTS),
    sem as curtas demais para identificar alguma coisa (`)`, `else:`) e sem as que o
    aluno já vê, inteiras ou como trecho, na versão distribuída (`torch.manual_seed(0)`
    num teste visível)."""
    # a busca na página é por trecho (`hidden_leaks`), então o que conta como já visto também:
    # uma linha oculta que aparece dentro de uma linha distribuída (num comentário, numa
    # docstring da célula de preparação) não é segredo
    seen = "\n".join(c.source for c in release_nb.cells) if release_nb is not None else ""
    out = []
    for cell in source_nb.cells:
        inside = False
        for line in cell.source.splitlines():
            t = line.strip()
            if "BEGIN HIDDEN TESTS" in t:
                inside = True
            elif "END HIDDEN TESTS" in t:
                inside = False
            elif inside and len(t) >= 12 and t not in seen:
                out.append(t)
    return out


def student_lines(view) -> set[str]:
    """Linhas que o próprio aluno escreveu (células de solução e células que ele criou):
    repeti-las na página não revela nada. As células travadas não entram: é nelas que um
    teste oculto vazaria."""
    return _lines(c for c in view.cells if integrity.nbgrader_meta(c).get("solution")
                  or not integrity.grade_id(c))


def _page_text(page: str) -> str:
    import re
    page = re.sub(r"<script\b.*?</script>", " ", page, flags=re.S | re.I)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def hidden_leaks(page: str, hidden: list[str]) -> list[str]:
    """As linhas de teste oculto que aparecem no texto da página (sem as tags do HTML)."""
    text = _page_text(page)
    return [h for h in hidden if h in text]


def check_nbgrader_feedback(ws: Workspace) -> list[Path]:
    """Páginas do "Generate Feedback" do formgrader (pasta feedback/) com testes ocultos."""
    bad = []
    root = ws.root / "feedback"
    if not root.is_dir():
        return bad
    cache: dict[str, list[str]] = {}
    for page in sorted(root.glob("*/*/*.html")):
        a, name = page.parent.name, page.stem
        src = ws.source(a) / f"{name}.ipynb"
        if not src.exists():
            continue
        if str(src) not in cache:
            rel = ws.release(a) / f"{name}.ipynb"
            cache[str(src)] = hidden_lines(nbformat.read(src, as_version=4),
                                           nbformat.read(rel, as_version=4) if rel.exists() else None)
        if hidden_leaks(page.read_text(encoding="utf-8", errors="replace"), cache[str(src)]):
            bad.append(page)
    return bad


def generate_feedback(ws: Workspace, deadlines: Deadlines, force: bool = False,
                      assignments=None) -> tuple[int, int, list[str]]:
    """Escreve retornos/<aluno>/<tarefa>/<nb>.html; devolve (escritos, já em dia, recusados)."""
    import warnings
    warnings.filterwarnings("ignore")
    state_f = ws.state / "feedback.json"
    state = json.loads(state_f.read_text()) if state_f.exists() and not force else {}
    exporter = None
    mathjax = None
    written = fresh = 0
    refused: list[str] = []
    template = _template_digest()
    hidden_cache: dict[tuple[str, str], list[str]] = {}
    for row in collect(ws, deadlines, assignments):
        r = row.result
        s, a = row.student, row.assignment
        for nbr in r.notebooks:
            name = nbr.notebook
            out = ws.feedback(s, a) / f"{name}.html"
            src = ws.autograded(s, a) / f"{name}.ipynb"
            key_src = src.read_bytes() if src.exists() else b""
            qs = [q for q in row.questions if q.notebook == name]
            key = hashlib.sha256(key_src + json.dumps(
                [r.key, str(nbr.status), row.score, row.pending, row.lateness.minutes, row.lateness.penalty,
                 [(q.score, q.comment) for q in qs], row.cell_comments, row.result.details, template],
                sort_keys=True, default=str).encode()).hexdigest()
            skey = f"{s}/{a}/{name}"
            if state.get(skey) == key and out.exists():
                fresh += 1
                continue
            status_text, messages = _status_text(row)
            if not src.exists():
                why = nbr.details or [nbr.status.pt]
                page = _simple_page(
                    f"{a} — {name}",
                    [f"Aluno(a): {s}", f"Nota: {_fmt(row.score)} de {_fmt(r.max_score)} pontos",
                     f"Situação: {status_text}", *why, _late_text(row)])
            else:
                if exporter is None:
                    exporter, mathjax = _exporter(), mathjax_inline()
                nb = student_view(nbformat.read(src, as_version=4),
                                  nbformat.read(ws.release(a) / f"{name}.ipynb", as_version=4))
                by_id = {q.q.grade_id: q for q in qs}
                toc, pending, total, top = [], 0.0, 0.0, 0.0
                for c in nb.cells:
                    m = integrity.nbgrader_meta(c)
                    q = by_id.get(m.get("grade_id")) if m.get("grade") else None
                    if q is None:
                        for nb_name, gid, _, text in row.cell_comments:   # célula de solução sem nota
                            if nb_name == name and gid == m.get("grade_id"):
                                m["comment"] = text
                        continue
                    m["score"], m["points"], m["title"] = q.score, q.q.max_score, q.q.title
                    m["comment"] = q.comment
                    toc.append({"grade_id": q.q.grade_id, "label": q.q.title or q.q.grade_id,
                                "score_text": _fmt(q.score) if q.score is not None
                                else "aguardando correção manual", "max_text": _fmt(q.q.max_score),
                                "comment": q.comment})
                    pending += q.q.max_score if q.score is None else 0.0
                    total += q.score or 0.0
                    top += q.q.max_score
                res = {"autograder": {
                    "student": s, "assignment": a, "notebook": name,
                    "score_text": _fmt(max(0.0, total - row.lateness.penalty)), "max_text": _fmt(top),
                    "pending_text": f"{_fmt(pending)} ponto(s) aguardando correção manual" if pending else "",
                    "status": str(r.status), "status_text": status_text, "messages": messages,
                    "late_text": _late_text(row), "toc": toc, "mathjax": mathjax}}
                page, _ = exporter.from_notebook_node(nb, resources=res)
            if (a, name) not in hidden_cache:
                source = ws.source(a) / f"{name}.ipynb"
                hidden_cache[(a, name)] = hidden_lines(
                    nbformat.read(source, as_version=4),
                    nbformat.read(ws.release(a) / f"{name}.ipynb", as_version=4)) if source.exists() else []
            own = student_lines(nb) if src.exists() else set()
            leaks = hidden_leaks(page, [h for h in hidden_cache[(a, name)] if h not in own])
            if leaks:
                refused.append(f"{skey}: a página mostraria {len(leaks)} linha(s) de teste oculto "
                               f"(p.ex. {leaks[0][:60]!r}); não foi gravada")
                out.unlink(missing_ok=True)
                state.pop(skey, None)
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(page, encoding="utf-8")
            state[skey] = key
            written += 1
    state_f.parent.mkdir(parents=True, exist_ok=True)
    state_f.write_text(json.dumps(state, indent=1, sort_keys=True))
    return written, fresh, refused
