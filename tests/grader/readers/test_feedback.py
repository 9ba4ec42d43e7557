"""As páginas de retorno dos alunos (readers/feedback.py), sem kernel: seguras para mandar.

Cenários da revisão de segurança (M1): o HTML do aluno nunca roda na página, o nome e a
multa aparecem uma vez, a matemática vira MathML sem nada executável.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser

import nbformat
import pytest

from autograder.core.deadlines import Lateness
from autograder.core.results import JobResult, NotebookResult, QuestionResult
from autograder.core.workspace import Workspace
from autograder.readers.report import QuestionRow, Row


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False if tag == "script" else self._in_script

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def _parsed(page: str) -> _Tags:
    p = _Tags()
    p.feed(page)
    return p


ATTACK = ('<script>steal()</script><img src=x onerror="alert(1)">'
          '<img src="https://evil.example/t.png"><a href="javascript:alert(3)">clique</a>'
          '<iframe src="https://evil.example/"></iframe><b onmouseover="alert(4)">negrito</b>')

# código do aluno que tenta fechar o <pre> do realce e abrir HTML seu
CODE_ATTACK = 'x = "</pre></div><script>steal()</script>"  # <img src=x onload=steal()>\n%timeit x'


def _cell(kind, source, **nbg):
    c = nbformat.v4.new_markdown_cell(source) if kind == "md" else nbformat.v4.new_code_cell(source)
    if nbg:
        c.metadata["nbgrader"] = {"schema_version": 3, "locked": False, "solution": False, "grade": False,
                                  "task": False, **nbg}
    return c


def _notebooks(answer: str, html_out: str):
    course = "# Tarefa do curso\n\nO curso pode usar <b>HTML</b> e $x^2$."
    release = nbformat.v4.new_notebook(cells=[
        _cell("md", course, grade_id="intro", locked=True),
        _cell("md", "Explique.", grade_id="explique", solution=True, grade=True, points=5),
        _cell("code", "def f(x):\n    return x", grade_id="f", solution=True)])
    graded = nbformat.from_dict(json.loads(nbformat.writes(release)))
    graded.cells[1].source = answer
    graded.cells[2].outputs = [nbformat.v4.new_output(
        "display_data", data={"text/html": html_out, "text/plain": "x"})]
    graded.cells.append(_cell("md", "Minha célula: " + ATTACK))        # célula que o aluno criou
    graded.cells.append(_cell("code", CODE_ATTACK))                     # e uma de código
    return release, graded


def _feedback_ws(tmp_path, student, a, names_nbs):
    ws = Workspace(tmp_path / "fb")
    for name in names_nbs:
        release, graded = _notebooks("Resposta: " + ATTACK, ATTACK)
        for folder, nb in [(ws.release(a), release), (ws.source(a), release), (ws.autograded(student, a), graded)]:
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, folder / f"{name}.ipynb")
    return ws


def _two_notebook_row(student, a):
    qs = [QuestionResult("explique", "written", 5.0, s) for s in (4.0, 5.0)]
    res = JobResult(student, a, "k", None, [NotebookResult("nb1", questions=[qs[0]]),
                                            NotebookResult("nb2", questions=[qs[1]])])
    late = Lateness(2056, True, 2, 2.0)
    return Row(res, 9.0, 7.0, 0.0, late, None,
               [QuestionRow("nb1", qs[0], 4.0), QuestionRow("nb2", qs[1], 5.0)], [])


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    from autograder.readers.feedback import generate_feedback
    a, student = "tarefa-dupla", "Jose-Fabio"
    ws = _feedback_ws(tmp_path_factory.mktemp("fb"), student, a, ["nb1", "nb2"])
    written, _, refused = generate_feedback(ws, [_two_notebook_row(student, a)], {student: "José Fábio"})
    assert (written, refused) == (2, [])
    return {n: (ws.feedback(student, a) / f"{n}.html").read_text(encoding="utf-8") for n in ("nb1", "nb2")}


def test_student_html_never_runs_in_the_feedback_page(pages):
    """M1: nem <script>, nem on*, nem recurso remoto, nem javascript: vindo de uma célula do aluno."""
    for page in pages.values():
        p = _Tags()
        p.feed(page)
        assert not any("steal()" in s or "alert(1)" in s for s in p.scripts)
        assert "<script>steal()" not in page and 'onerror="alert' not in page
        for tag, attrs in p.tags:
            assert not [k for k in attrs if k.startswith("on")], (tag, attrs)
            for k in ("src", "href", "data"):
                v = (attrs.get(k) or "").strip().lower()
                assert not v.startswith("javascript:"), (tag, attrs)
                if tag in ("img", "iframe", "script", "link", "video", "audio", "source", "object", "embed"):
                    assert not v.startswith(("http:", "https:", "//")), (tag, attrs)
        assert "<b>HTML</b>" in page and "<h1" in page        # o texto do curso continua formatado
        assert "<p>Resposta: " in page and "<b>negrito</b>" in page    # e o do aluno, filtrado


def test_feedback_names_the_student_and_takes_the_penalty_once(pages):
    nb1, nb2 = pages["nb1"], pages["nb2"]
    assert "José Fábio" in nb1 and "Jose-Fabio</b>" not in nb1
    assert "Nota: 4 de 5 pontos" in nb1 and "Nota: 5 de 5 pontos" in nb2     # sem a multa
    for page in (nb1, nb2):                       # a multa de 2 pontos, uma vez, na nota da tarefa
        assert "7 de 10 pontos" in page and "34 h 16 min" in page


def test_math_written_as_mathml_is_safe_and_small():
    """Com o latex2mathml, a fórmula vira MathML na hora de gravar (sem MathJax na página); o
    TeX do aluno não leva link javascript:, estilo nem script para a página."""
    pytest.importorskip("latex2mathml")
    from autograder.readers.feedback import render_math
    out = render_math(r"<p>Seja $x^2$ e $$\sum_j e^{x_j}$$</p><code>$HOME</code>")
    assert out.count("<math") == 2 and 'display="block"' in out and "<code>$HOME</code>" in out
    evil = render_math(r"<p>$\href{javascript:alert(1)}{x}$ $\style{color:red}{y}$ "
                       r"$\text{&lt;script&gt;alert(2)&lt;/script&gt;}$</p>")
    assert "<math" in evil and "javascript" not in evil and "style=" not in evil and "<script" not in evil


def test_student_code_is_shown_escaped_and_every_image_says_what_it_is(pages):
    """O código do aluno vai colorido (pygments) e escapado, não como HTML; nenhuma imagem fica sem
    texto alternativo, e o texto é em português."""
    from autograder.readers.feedback import IMAGE_ALT
    for page in pages.values():
        assert "&lt;/pre&gt;&lt;/div&gt;&lt;script&gt;steal()&lt;/script&gt;" in page
        assert "timeit" in page and "<script>steal()" not in page
        imgs = [attrs for tag, attrs in _parsed(page).tags if tag == "img"]
        assert imgs and all(a.get("alt") for a in imgs), imgs
        assert "No description" not in page and IMAGE_ALT in page


def test_code_with_a_tag_pygments_does_not_write_goes_through_the_sanitizer():
    """`clean_code` só deixa passar sem o bleach o que o pygments escreve (div, pre, span com
    classe); qualquer outra marca passa pelo filtro."""
    from nbconvert.filters.highlight import Highlight2HTML

    from autograder.readers.feedback import clean_code
    colored = Highlight2HTML(pygments_lexer="ipython3")(CODE_ATTACK)
    assert clean_code(colored) == colored
    forged = '<div class="highlight"><pre><span class="n">x</span><script>steal()</script>' \
             '<span onclick="alert(1)">y</span></pre></div>'
    out = clean_code(forged)
    assert "<script" not in out and "onclick" not in out and ">x</span>" in out
