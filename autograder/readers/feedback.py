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
comentários do formgrader, lidos por store/gradebook.py + atraso e multa) e o HTML usa
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
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat
from atencao.fmt import num

from ..core import gradeboard, nbmeta
from ..core.workspace import Workspace
from ..core.deadlines import Deadlines
from .report import Row
from ..core.results import Status, TestPart

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
_OURS = {"CellTimeoutError", "DeadKernelError", "CellNotExecuted"}   # erros que o próprio corretor escreve

HIDDEN_PASSED = "✔ Testes ocultos: passaram."
HIDDEN_FAILED = ("✘ Testes ocultos: falharam. Eles conferem casos que os testes visíveis não "
                 "cobrem e não são mostrados; revise sua solução para entradas diferentes.")
HIDDEN_NOT_RUN = "– Testes ocultos: não rodaram (a parte visível falhou antes)."
HIDDEN_STOPPED = "– Testes ocultos: não rodaram (o notebook parou antes do fim, quando eles rodam)."
WHOLE_PASSED = "✔ Esta célula de testes passou."
WHOLE_FAILED = "✘ Esta célula de testes falhou (os detalhes incluem testes ocultos e não são mostrados)."


# marca (só na cópia que vira página) das células cujo texto é o da versão distribuída
TRUSTED = "autograder_trusted"


def _stream(text: str):
    return nbformat.v4.new_output("stream", name="stdout", text=text + "\n")


def student_view(autograded, release):
    """Cópia do notebook corrigido que pode ir para o aluno."""
    from nbgrader.preprocessors import ClearHiddenTests
    nb = copy.deepcopy(autograded)
    rel = {nbmeta.grade_id(c): c for c in release.cells if nbmeta.grade_id(c)}
    for cell in nb.cells:
        gid = nbmeta.grade_id(cell)
        meta = cell.metadata.pop("autograder", None) or {}
        cell.metadata.pop(TRUSTED, None)           # o aluno não escolhe o que é confiável
        if gid in rel and nbmeta.is_locked(rel[gid]):
            cell.source = rel[gid].source
            cell.metadata[TRUSTED] = True          # texto do curso: o markdown vai sem filtro
        m = nbmeta.nbgrader_meta(cell)
        if cell.cell_type != "code" or not m.get("grade") or m.get("solution"):
            continue
        parts = TestPart.from_metadata(meta)
        outputs, kept, pos = list(cell.outputs), [], 0
        if not parts:
            kept = [o for o in outputs if o.output_type == "error" and o.get("ename") in _OURS]
        for part in parts:
            chunk = outputs[pos: pos + part.outputs]
            pos += part.outputs
            if part.hidden is False:
                kept += chunk
            elif part.hidden is True:
                ours = [o for o in chunk if o.output_type == "error" and o.get("ename") in _OURS]
                kept.append(_stream(HIDDEN_PASSED if part.passed else HIDDEN_FAILED if part.ran
                                    else HIDDEN_STOPPED if ours else HIDDEN_NOT_RUN))
                kept += ours
            else:
                kept.append(_stream(WHOLE_PASSED if part.passed else WHOLE_FAILED))
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


# Matemática escrita como MathML na hora de gravar a página (latex2mathml, se instalado): o
# navegador a mostra sem script nenhum, e a página fica com dezenas de kB em vez dos 2,6 MB do
# MathJax dentro dela. Sem o latex2mathml, o MathJax inteiro vai na página, como antes.
_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$([^$\n]+?)\$", re.S)
_TAG = re.compile(r"(<[^>]*>)")
MATHML_TAGS = {"math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt", "mroot",
               "msub", "msup", "msubsup", "munder", "mover", "munderover", "mtable", "mtr", "mtd",
               "mstyle", "mpadded", "mphantom", "menclose", "semantics", "annotation"}
MATHML_ATTRIBUTES = {"display", "mathvariant", "stretchy", "fence", "separator", "lspace", "rspace",
                     "columnalign", "rowalign", "accent", "accentunder", "movablelimits", "linethickness",
                     "width", "height", "depth", "linebreak", "notation", "xmlns", "displaystyle",
                     "scriptlevel", "minsize", "maxsize", "symmetric", "largeop", "form", "encoding"}


def mathml_available() -> bool:
    try:
        import latex2mathml.converter  # noqa: F401
    except ImportError:
        return False
    return True


def render_math(html_text) -> str:
    """Troca `$...$` e `$$...$$` do texto (fora de <code>, <pre> e <script>) por MathML.
    Uma fórmula que o conversor não entende fica como estava, entre cifrões."""
    text = html_text.decode() if isinstance(html_text, bytes) else str(html_text)
    if "$" not in text or not mathml_available():
        return text
    import bleach
    from latex2mathml.converter import convert

    def one(m):
        tex = html.unescape(m.group(1) if m.group(1) is not None else m.group(2)).strip()
        try:
            mathml = convert(tex, display="block" if m.group(1) is not None else "inline")
        except Exception:  # noqa: BLE001 - TeX que o conversor não conhece: fica o texto
            return m.group(0)
        # o TeX pode ser do aluno: `\href{javascript:...}`, `\style`, `\text{<script>}` não passam
        return bleach.clean(mathml, tags=MATHML_TAGS, attributes={"*": sorted(MATHML_ATTRIBUTES)},
                            strip=True, strip_comments=True)

    out, skip = [], 0
    for piece in _TAG.split(text):
        if piece.startswith("<"):
            name = re.match(r"</?\s*([a-zA-Z0-9]+)", piece)
            if name and name.group(1).lower() in ("code", "pre", "script", "style"):
                skip += -1 if piece.startswith("</") else (0 if piece.endswith("/>") else 1)
                skip = max(skip, 0)
            out.append(piece)
        else:
            out.append(piece if skip else _MATH.sub(one, piece))
    return "".join(out)


def _template_digest() -> str:
    h = hashlib.sha256()
    for f in sorted(TEMPLATES.rglob("*")):
        if f.is_file():
            h.update(f.read_bytes())
    h.update(MATHJAX_FILE.encode() + (b"mathml" if mathml_available() else b""))
    return h.hexdigest()


# O HTML que vem do aluno (markdown das células dele, saídas de código) passa por este filtro:
# a estrutura de um texto (parágrafos, títulos, listas, tabelas, ênfase, código, links) fica,
# e nada que rode ou busque algo sozinho (script, on*, style, iframe, img da rede) sobrevive.
SAFE_TAGS = {"a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "div", "dl", "dt", "em", "h1", "h2",
             "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "span", "strong",
             "sub", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul"}
SAFE_PROTOCOLS = {"http", "https", "mailto", "data"}


def _safe_attribute(tag: str, name: str, value: str) -> bool:
    if name in ("class", "id", "title", "alt", "colspan", "rowspan", "align"):
        return True
    if tag == "a" and name == "href":
        return not value.strip().lower().startswith("data:")
    if tag == "img" and name == "src":            # só imagem embutida: nada é buscado na rede
        return value.strip().lower().startswith("data:image/")
    return False


def sanitize(html_text) -> str:
    """O HTML do aluno sem nada que rode ou busque algo: o filtro `clean_html` do modelo."""
    import bleach
    text = html_text.decode() if isinstance(html_text, bytes) else str(html_text)
    return bleach.clean(text, tags=SAFE_TAGS, attributes=_safe_attribute, protocols=SAFE_PROTOCOLS,
                        strip=True, strip_comments=True)


# O que o pygments escreve ao colorir código: só estas marcas, com o texto escapado (&lt; &gt;
# &amp; &quot; &#39;). Código colorido que só tem delas vai sem passar pelo bleach, que nas
# páginas de retorno era ~40 % do tempo (a célula de preparação tem dezenas de milhares de
# <span>); qualquer outra marca passa por `sanitize`, como antes.
_PYGMENTS_TAG = re.compile(r'</?(?:div|pre|span)(?: class="[\w .-]*")?>')
IMAGE_ALT = "Figura gerada pelo notebook"
_IMG_WITHOUT_ALT = re.compile(r"<img(?![^>]*\balt=)", re.I)


def clean_code(highlighted) -> str:
    """O filtro `clean_code` do modelo: o código colorido pelo pygments, ou filtrado por `sanitize`
    se tiver qualquer marca que o pygments não escreve."""
    text = str(highlighted)
    return text if "<" not in _PYGMENTS_TAG.sub("", text) else sanitize(text)


def _exporter():
    from nbconvert import HTMLExporter
    from nbconvert.exporters.templateexporter import TemplateExporter
    from nbconvert.filters.highlight import Highlight2HTML
    from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
    from traitlets.config import Config

    class FeedbackExporter(HTMLExporter):
        """O HTMLExporter sem a releitura da página inteira pelo BeautifulSoup (~25 % do tempo de
        uma página): ela só punha um texto alternativo em inglês nas imagens sem um (aqui, em
        português, `IMAGE_ALT`) e `tabindex` em classes do modelo `lab`, que este não usa."""

        def from_notebook_node(self, nb, resources=None, **kw):
            lang = nb.metadata.get("language_info", {})
            if "highlight_code" not in self.filters:
                self.register_filter("highlight_code", Highlight2HTML(
                    pygments_lexer=lang.get("pygments_lexer", lang.get("name")), parent=self))
            resources = self._init_resources(resources)
            self.register_filter("filter_data_type", WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources))
            page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            return _IMG_WITHOUT_ALT.sub(f'<img alt="{IMAGE_ALT}"', page), resources

    c = Config()
    c.HTMLExporter.filters = {"clean_html": sanitize, "clean_code": clean_code, "render_math": render_math}
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]
    c.HTMLExporter.template_name = "feedback_ptbr"
    c.HTMLExporter.language_code = "pt"          # o nbconvert só aceita ISO 639-1
    # o HTML do aluno (células que ele escreve, saídas de código) passa por `sanitize`; as
    # células travadas (o texto do curso, restaurado da versão distribuída por student_view)
    # são renderizadas sem filtro (modelo feedback_ptbr)
    c.HTMLExporter.sanitize_html = True
    return FeedbackExporter(config=c)


def _status_text(row: Row) -> tuple[str, list[str]]:
    if row.status is Status.FLAGGED:
        return "em revisão pelo professor", []
    return row.status.pt, list(row.result.details)


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
    return _lines(c for c in view.cells if nbmeta.nbgrader_meta(c).get("solution")
                  or not nbmeta.grade_id(c))


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


@dataclass(frozen=True)
class PageHeader:
    """O cabeçalho de uma página de retorno: o que o modelo em português mostra no topo."""

    student: str               # o nome como a lista da turma ou o zip o dá ("José Fábio")
    title: str
    score_text: str
    max_text: str
    pending_text: str
    status: str
    status_text: str
    messages: list[str]
    late_text: str
    assignment_text: str       # com vários notebooks: a nota da tarefa (a multa entra uma vez, aqui)
    toc: list[dict]
    mathjax: str

    def resources(self) -> dict:
        return {"autograder": asdict(self)}


def _title(a: str, name: str) -> str:
    return a if a == name else f"{a} — {name}"


def _header(row: Row, name: str, display: str, mathjax: str = "") -> PageHeader:
    """A nota do notebook vem das linhas (`report.collect`), nunca recalculada da página; a
    multa por atraso é da tarefa e entra só na nota da tarefa (uma vez por tarefa)."""
    qs = [q for q in row.questions if q.notebook == name]
    several = len(row.result.notebooks) > 1
    status_text, messages = _status_text(row)
    nb_score = sum(q.score or 0.0 for q in qs)
    nb_max = sum(q.q.max_score for q in qs)
    pending = sum(q.q.max_score for q in qs if q.score is None)
    toc = [{"grade_id": q.q.grade_id, "label": q.q.title or q.q.grade_id,
            "score_text": _fmt(q.score) if q.score is not None else "aguardando correção manual",
            "max_text": _fmt(q.q.max_score), "comment": q.comment} for q in qs]
    return PageHeader(
        student=display, title=_title(row.assignment, name),
        score_text=_fmt(nb_score if several else row.score),
        max_text=_fmt(nb_max if several else row.max_score),
        pending_text=f"{_fmt(pending)} ponto(s) aguardando correção manual" if pending else "",
        status=str(row.status), status_text=status_text, messages=messages,
        late_text=row.lateness.text(),
        assignment_text=(f"Nota da tarefa (todos os notebooks{', com a multa por atraso' if row.lateness.penalty else ''}): "
                         f"{_fmt(row.score)} de {_fmt(row.max_score)} pontos") if several else "",
        toc=toc, mathjax=mathjax)


def _annotate(nb, row: Row, name: str) -> None:
    """Põe nas células (cópia que vai para o aluno) a nota, o título e o comentário de cada questão."""
    by_id = {q.q.grade_id: q for q in row.questions if q.notebook == name}
    for c in nb.cells:
        m = nbmeta.nbgrader_meta(c)
        q = by_id.get(m.get("grade_id")) if m.get("grade") else None
        if q is None:
            for nb_name, gid, _, text in row.cell_comments:   # célula de solução sem nota
                if nb_name == name and gid == m.get("grade_id"):
                    m["comment"] = text
            continue
        m["score"], m["points"], m["title"], m["comment"] = q.score, q.q.max_score, q.q.title, q.comment


def _scoreboard(nb, row: Row, name: str) -> None:
    """A célula `placar()` mostra a nota desta página (manuais inclusive), nunca o placar vazio
    do kernel do aluno (issue 41)."""
    gradeboard.fill(nb, [gradeboard.Line(q.q.title, q.q.kind, q.score, q.q.max_score, q.q.visible_passed,
                                         q.q.hidden_passed, q.manual)
                         for q in row.questions if q.notebook == name])


def _page_key(row: Row, name: str, src_bytes: bytes, display: str, template: str) -> str:
    r = row.result
    nbr = next(n for n in r.notebooks if n.notebook == name)
    qs = [q for q in row.questions if q.notebook == name]
    return hashlib.sha256(src_bytes + json.dumps(
        [r.key, str(nbr.status), row.score, row.pending, row.lateness.minutes, row.lateness.penalty,
         [(q.score, q.comment) for q in qs], row.cell_comments, r.details, template, display],
        sort_keys=True, default=str).encode()).hexdigest()


class _Pages:
    """O que as páginas de uma execução dividem: o exportador, o MathJax e as linhas ocultas."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self._exporter = None
        self._mathjax = ""
        self._hidden: dict[tuple[str, str], list[str]] = {}

    def render(self, row: Row, name: str, display: str, src: Path) -> tuple[str, set[str]]:
        """(HTML da página, linhas que o próprio aluno escreveu)."""
        a = row.assignment
        if not src.exists():
            nbr = next(n for n in row.result.notebooks if n.notebook == name)
            h = _header(row, name, display)
            page = _simple_page(h.title, [f"Aluno(a): {display}", f"Nota: {h.score_text} de {h.max_text} pontos",
                                          f"Situação: {h.status_text}", *(nbr.details or [nbr.status.pt]),
                                          h.late_text, h.assignment_text])
            return page, set()
        if self._exporter is None:
            self._exporter = _exporter()
            self._mathjax = "" if mathml_available() else mathjax_inline()
        nb = student_view(nbformat.read(src, as_version=4),
                          nbformat.read(self.ws.release(a) / f"{name}.ipynb", as_version=4))
        _annotate(nb, row, name)
        _scoreboard(nb, row, name)
        page, _ = self._exporter.from_notebook_node(nb, resources=_header(row, name, display,
                                                                        self._mathjax).resources())
        return page, student_lines(nb)

    def hidden(self, a: str, name: str) -> list[str]:
        if (a, name) not in self._hidden:
            source = self.ws.source(a) / f"{name}.ipynb"
            self._hidden[(a, name)] = hidden_lines(
                nbformat.read(source, as_version=4),
                nbformat.read(self.ws.release(a) / f"{name}.ipynb", as_version=4)) if source.exists() else []
        return self._hidden[(a, name)]


def generate_feedback(ws: Workspace, rows: list[Row], names: dict[str, str] | None = None,
                      force: bool = False, notes: dict | None = None) -> tuple[int, int, list[str]]:
    """Escreve retornos/<aluno>/<tarefa>/<nb>.html a partir das linhas já calculadas
    (`report.collect`); `names`: id -> nome como a lista da turma ou o zip o dá; `notes`:
    (aluno, tarefa, notebook) -> HTML a mais no topo da página (os erros da turma, opcional).
    Toda página leva o código curto da correção (readers/regrade.py, `page_extra`).
    Devolve (escritos, já em dia, recusados)."""
    import warnings
    warnings.filterwarnings("ignore")
    names = names or {}
    state_f = ws.state / "feedback.json"
    state = json.loads(state_f.read_text()) if state_f.exists() and not force else {}
    pages = _Pages(ws)
    written = fresh = 0
    refused: list[str] = []
    template = _template_digest()
    for row in rows:
        s, a = row.student, row.assignment
        display = names.get(s) or s
        for nbr in row.result.notebooks:
            name = nbr.notebook
            out = ws.feedback(s, a) / f"{name}.html"
            src = ws.autograded(s, a) / f"{name}.ipynb"
            extra = page_extra(row, (notes or {}).get((s, a, name), ""))
            key = _page_key(row, name, src.read_bytes() if src.exists() else b"", display, template + extra)
            skey = f"{s}/{a}/{name}"
            if state.get(skey) == key and out.exists():
                fresh += 1
                continue
            page, own = pages.render(row, name, display, src)
            page = insert_after_header(page, extra)
            leaks = hidden_leaks(page, [h for h in pages.hidden(a, name) if h not in own])
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


# ----------------------------------------------------------------------------- código e notas

def page_extra(row: Row, notes_html: str = "") -> str:
    """O bloco que vai logo depois do cabeçalho: o código curto da correção (para um pedido
    de revisão) e, se o professor pediu, o parágrafo sobre os erros do aluno."""
    from .regrade import request_id
    code = request_id(row.result)
    return (f'<div class="ag-codigo" data-request-id="{code}"><p>Código desta correção: '
            f"<code>{code}</code>. Para pedir revisão da nota, cite este código.</p>{notes_html}</div>")


def insert_after_header(page: str, block: str) -> str:
    """Põe `block` depois do `<div class="ag-cabecalho">` (contando os `<div>` até fechá-lo);
    numa página sem cabeçalho, depois do `<h1>`, ou antes do `</body>`."""
    if not block:
        return page
    start = page.find('<div class="ag-cabecalho">')
    if start >= 0:
        depth, pos = 0, start
        for m in re.finditer(r"<div\b|</div>", page[start:]):
            depth += 1 if m.group(0) == "<div" else -1
            if depth == 0:
                pos = start + m.end()
                return page[:pos] + block + page[pos:]
    end = page.find("</h1>")
    if end >= 0:
        return page[:end + 5] + block + page[end + 5:]
    return page.replace("</body>", block + "</body>", 1)
