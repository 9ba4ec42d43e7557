"""HTML e CSV das leituras da turma: funções puras que devolvem texto e linhas.

O HTML é um fragmento (uma `<section>`) para o relatório da turma; todo texto vindo de
fora (nomes, código, mensagens) passa por `html.escape`. Os números saem no formato
brasileiro (vírgula decimal). As linhas de CSV têm cabeçalho em inglês e números como
`float`; `csv_text` as escreve com `;` e vírgula decimal (ou o que quem chama pedir).
"""

from __future__ import annotations

import csv
import io
from html import escape
from typing import Iterable, Sequence

from .mistakes import ClassMistakes
from .similarity import SimilarPair

__all__ = [
    "INSIGHT_CSS", "SIMILARITY_NOTICE", "fmt_num", "fmt_pct", "similarity_html", "similarity_rows",
    "mistakes_html", "mistakes_rows", "pass_rate_rows", "task_rows", "csv_text",
]

# O estilo das seções (vai uma vez no relatório): trechos lado a lado na tela larga, um
# embaixo do outro no celular; tabelas e código rolam de lado em vez de alargar a página.
INSIGHT_CSS = (
    "<style>.insight-side{display:grid;grid-template-columns:1fr 1fr;gap:1em}"
    ".insight-side>div{min-width:0}"
    ".insight-scroll{overflow-x:auto;max-width:100%}"
    "section[class^=insight] pre{overflow-x:auto;background:#f6f8fa;padding:.5em;font-size:.85em}"
    ".insight-mistake{border-left:4px solid #c0392b;padding-left:.8em;margin:1em 0}"
    ".insight-notice{background:#fff8e1;border:1px solid #e0c060;padding:.2em 1em;margin:1em 0}"
    "@media (max-width:700px){.insight-side{grid-template-columns:1fr}"
    "section[class^=insight] table{font-size:.85em}"
    # no celular, as tabelas largas viram um cartão por linha, cada valor com o nome da coluna
    ".insight-cards thead{display:none}.insight-cards tr{display:block;border:1px solid #bbb;"
    "margin:.5em 0}.insight-cards td{display:block;border:none}"
    ".insight-cards td::before{content:attr(data-label) \": \";font-weight:bold}}</style>"
)

SIMILARITY_NOTICE = (
    '<div class="insight-notice"><p><strong>O que a semelhança diz, e o que não diz.</strong> '
    "A nota de um par é a fração "
    "do código de resposta do aluno com menos código que também aparece no outro, depois de "
    "tirar o código inicial que todos receberam, os comentários, os espaços e os nomes de "
    "variáveis e os números. Uma nota alta diz que os dois códigos têm a mesma estrutura em "
    "trechos longos: vale abrir os trechos lado a lado e conversar com os dois.</p>"
    "<p>Uma nota alta <strong>não</strong> prova cópia nem diz quem copiou de quem: respostas "
    "curtas, um jeito de escrever ensinado em aula, o mesmo exemplo do livro ou um estudo em "
    "grupo permitido também se parecem. Uma nota baixa também não prova que não houve cópia. "
    "É um indicador para uma pessoa conferir, nunca um veredito; nenhuma nota muda por causa "
    "dele, e nada sai desta máquina.</p></div>"
)


def fmt_num(x: float, digits: int = 2) -> str:
    """Número no formato brasileiro: 1.234,56."""
    s = f"{x:,.{digits}f}"
    return s.replace(",", "\0").replace(".", ",").replace("\0", ".")


def fmt_pct(x: float | None, digits: int = 0) -> str:
    """Porcentagem com espaço que não quebra antes do %: "50\u00a0%" (o % não vai sozinho
    para a linha de baixo)."""
    return "—" if x is None else f"{fmt_num(100 * x, digits)}\u00a0%"


def _lines(span: tuple[int, int]) -> str:
    return f"linha {span[0]}" if span[0] == span[1] else f"linhas {span[0]}–{span[1]}"


def similarity_html(pairs: Sequence[SimilarPair], *, assignment: str, threshold: float,
                    students: int | None = None) -> str:
    """Os pares acima do limiar, do mais parecido ao menos, cada um com os trechos em comum
    lado a lado (num `<details>`)."""
    out = [f'<section class="insight-similarity"><h2>Semelhança entre respostas: {escape(assignment)}</h2>',
           SIMILARITY_NOTICE]
    who = f" entre {students} alunos" if students is not None else ""
    if not pairs:
        out.append(f"<p>Nenhum par{who} com semelhança de {fmt_pct(threshold)} ou mais.</p></section>")
        return "".join(out)
    out.append(f"<p>{len(pairs)} {'par' if len(pairs) == 1 else 'pares'}{who} com semelhança de "
               f"{fmt_pct(threshold)} ou mais.</p>")
    out.append('<div class="insight-scroll"><table class="insight-cards"><thead><tr><th>aluno A</th><th>aluno B</th><th>semelhança</th>'
               '<th>Jaccard</th><th>impressões em comum</th><th>trechos</th></tr></thead><tbody>')
    for p in pairs:
        out.append(f'<tr><td data-label="aluno A">{escape(p.a)}</td><td data-label="aluno B">{escape(p.b)}</td>'
                   f'<td data-label="semelhança">{fmt_pct(p.score)}</td><td data-label="Jaccard">{fmt_pct(p.jaccard)}</td>'
                   f'<td data-label="impressões em comum">{p.shared}</td>'
                   f'<td data-label="trechos">{len(p.fragments)}</td></tr>')
    out.append("</tbody></table></div>")
    for p in pairs:
        out.append(f"<details><summary>{escape(p.a)} e {escape(p.b)}: {fmt_pct(p.score)}</summary>")
        for f in p.fragments:
            out.append(
                f'<div class="insight-fragment"><p>Célula <code>{escape(f.grade_id)}</code></p>'
                '<div class="insight-side">'
                f"<div><p>{escape(p.a)}, {_lines(f.lines_a)}</p><pre>{escape(f.code_a)}</pre></div>"
                f"<div><p>{escape(p.b)}, {_lines(f.lines_b)}</p><pre>{escape(f.code_b)}</pre></div>"
                "</div></div>")
        out.append("</details>")
    out.append("</section>")
    return "".join(out)


def similarity_rows(pairs: Iterable[SimilarPair], assignment: str) -> list[list]:
    """Uma linha por par: assignment, student_a, student_b, score, jaccard, shared, cells,
    fragments (grade_id:linhas_a~linhas_b, separados por espaço)."""
    rows: list[list] = [["assignment", "student_a", "student_b", "score", "jaccard",
                         "shared_fingerprints", "cells", "fragments"]]
    for p in pairs:
        cells = " ".join(sorted({f.grade_id for f in p.fragments}))
        frags = " ".join(f"{f.grade_id}:{f.lines_a[0]}-{f.lines_a[1]}~{f.lines_b[0]}-{f.lines_b[1]}"
                         for f in p.fragments)
        rows.append([assignment, p.a, p.b, p.score, p.jaccard, p.shared, cells, frags])
    return rows


def _disc(x: float | None) -> str:
    return "—" if x is None else fmt_num(x, 2)


def mistakes_html(result: ClassMistakes, *, assignment: str, max_mistakes: int = 30) -> str:
    """Os erros mais comuns (sem nome de aluno), as taxas de acerto por teste (visível e
    oculta separadas) e a discriminação por tarefa."""
    out = [f'<section class="insight-mistakes"><h2>Os erros da turma: {escape(assignment)}</h2>']
    out.append("<h3>Tarefas</h3><p>Discriminação: a correlação entre a nota na tarefa e a nota "
               "no resto da lista (de −1 a 1). Perto de 0, a tarefa não separa quem foi bem de "
               "quem foi mal; negativa, vale reler o enunciado e o teste.</p>")
    out.append('<div class="insight-scroll"><table><thead><tr><th>tarefa</th><th>média</th><th>discriminação</th>'
               "<th>alunos</th></tr></thead><tbody>")
    for t in result.tasks:
        out.append(f"<tr><td>{escape(t.task)}</td><td>{fmt_num(t.mean, 2)} de {fmt_num(t.max_points, 2)}"
                   f"</td><td>{_disc(t.discrimination)}</td><td>{t.n}</td></tr>")
    out.append("</tbody></table></div><h3>Testes</h3><div class=\"insight-scroll\"><table><thead><tr><th>tarefa</th><th>teste</th>"
               "<th>acertos na parte visível</th><th>acertos na parte oculta</th></tr></thead><tbody>")
    for s in result.tests:
        out.append(f"<tr><td>{escape(s.task)}</td><td><code>{escape(s.grade_id)}</code></td>"
                   f"<td>{fmt_pct(s.visible_rate)} ({s.visible_n})</td>"
                   f"<td>{fmt_pct(s.hidden_rate)} ({s.hidden_n})</td></tr>")
    out.append("</tbody></table></div><h3>Erros mais comuns</h3>")
    if not result.mistakes:
        out.append("<p>Nenhum teste falhou.</p>")
    for m in result.mistakes[:max_mistakes]:
        what = escape(m.template)
        out.append(f'<div class="insight-mistake"><p><strong>{m.count} '
                   f"{'aluno' if m.count == 1 else 'alunos'}</strong> em {escape(m.task)} "
                   f"(<code>{escape(m.grade_id)}</code>): {what}</p>")
        if m.example_message and m.example_message != m.template:
            out.append(f"<p>Por exemplo: {escape(m.example_message)}</p>")
        if m.section:
            out.append(f"<p>Reler: {escape(m.section)}</p>")
        for i, ex in enumerate(m.examples, 1):
            out.append(f"<details><summary>Exemplo {i} de resposta (anônimo)</summary>"
                       f"<pre>{escape(ex)}</pre></details>")
        out.append("</div>")
    out.append("</section>")
    return "".join(out)


def mistakes_rows(result: ClassMistakes, assignment: str) -> list[list]:
    """Uma linha por erro (sem nomes de alunos nem exemplos de resposta)."""
    rows: list[list] = [["assignment", "task", "grade_id", "part", "mistake", "example", "students",
                         "section"]]
    for m in result.mistakes:
        rows.append([assignment, m.task, m.grade_id, "hidden" if m.hidden else "visible", m.template,
                     m.example_message, m.count, m.section or ""])
    return rows


def pass_rate_rows(result: ClassMistakes, assignment: str) -> list[list]:
    rows: list[list] = [["assignment", "task", "grade_id", "visible_pass_rate", "visible_n",
                         "hidden_pass_rate", "hidden_n"]]
    for s in result.tests:
        rows.append([assignment, s.task, s.grade_id, s.visible_rate, s.visible_n, s.hidden_rate, s.hidden_n])
    return rows


def task_rows(result: ClassMistakes, assignment: str) -> list[list]:
    rows: list[list] = [["assignment", "task", "mean", "max_points", "discrimination", "students"]]
    for t in result.tasks:
        rows.append([assignment, t.task, t.mean, t.max_points, t.discrimination, t.n])
    return rows


def csv_text(rows: Iterable[Sequence], *, sep: str = ";", decimal: str = ",", digits: int = 4) -> str:
    """As linhas em CSV: floats com `digits` casas e o separador decimal pedido; None vazio."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=sep, lineterminator="\n")
    for row in rows:
        cells = []
        for v in row:
            if v is None:
                cells.append("")
            elif isinstance(v, float):
                cells.append(f"{v:.{digits}f}".replace(".", decimal))
            else:
                cells.append(v)
        w.writerow(cells)
    return buf.getvalue()
