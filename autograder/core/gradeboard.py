"""O placar da correção: o que a célula `placar()` mostra no notebook corrigido.

No Jupyter do aluno, `placar()` (authoring/scoreboard.py) lê o que as células de testes
registraram no kernel dele. Na correção os testes rodam no kernel do corretor, então o
placar do kernel do aluno ficaria vazio ("nenhuma célula de testes rodou ainda") embaixo
de um notebook corrigido. Aqui a saída dessa célula é trocada pelo placar da própria nota:
em worker/notebook.py, com as notas automáticas (o que o formgrader mostra), e em
readers/feedback.py, com as notas finais (manuais inclusive) da página do aluno.

Só a biblioteca padrão e o formatador de números: quem chama passa as questões já lidas.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from atencao.fmt import num

SOURCE = "placar()"       # o texto da célula do placar em todo caderno (papel `scoreboard` das fontes)
HEADER = "Placar da correção (testes visíveis e ocultos; a nota de cada tarefa)"


@dataclass(frozen=True)
class Line:
    """Uma questão no placar."""

    title: str
    kind: str                      # "test" | "written" | "code-answer"
    score: float | None            # None: aguardando correção manual
    max_score: float
    visible: bool | None = None    # testes visíveis passaram?
    hidden: bool | None = None     # testes ocultos passaram?
    manual: bool = False           # nota dada à mão no formgrader


def is_scoreboard(cell) -> bool:
    """A célula do placar: código, travada, sem nota, cujo texto é só `placar()`."""
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    return (cell.get("cell_type") == "code" and bool(meta.get("locked")) and not meta.get("grade")
            and str(cell.get("source", "")).strip() == SOURCE)


_TEX = {r"\times": "×", r"\cdot": "·", r"\ell": "ℓ", r"\le": "≤", r"\ge": "≥", r"\to": "→",
        r"\alpha": "α", r"\tau": "τ", r"\sqrt": "√", r"\sum": "Σ", r"\infty": "∞", r"\top": "ᵀ",
        r"\,": " "}


def plain(title: str) -> str:
    """O título sem TeX cru (o placar é texto): `$T \\times T$` vira T × T, `$QK^\\top$` vira QKᵀ."""
    def clean(m):
        t = m.group(1)
        t = re.sub(r"\\(?:mathrm|text|mathbf|operatorname)\{([^{}]*)\}", r"\1", t)
        t = re.sub(r"\\sqrt\{([^{}]*)\}", r"√\1", t)
        t = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", t)
        for tex, txt in sorted(_TEX.items(), key=lambda kv: -len(kv[0])):
            t = re.sub(re.escape(tex) + r"(?![A-Za-z])", txt, t)
        t = re.sub(r"[_^]\{([^{}]*)\}", r"\1", t)
        t = t.replace("_", "").replace("^", "").replace("{", "").replace("}", "").replace("\\", "")
        return re.sub(r"\s+", " ", t).strip()
    return re.sub(r"\$\$?([^$]+)\$\$?", clean, title)


def _points(x: float) -> str:
    return f"{num(x, ',')} ponto" + ("" if float(x) == 1 else "s")


def _line(q: Line) -> str:
    title = plain(q.title).strip() or "questão"
    if q.score is None:
        return f"⏳ {title}: aguardando correção manual (vale {_points(q.max_score)})"
    mark = "✅" if q.score >= q.max_score else ("❌" if q.score <= 0 else "◐")
    text = f"{mark} {title}: {num(q.score, ',')} de {_points(q.max_score)}"
    if q.manual:
        return text + " (correção do professor)"
    if q.kind == "test" and q.score < q.max_score:
        if q.visible is False:
            text += " (falhou nos testes visíveis)"
        elif q.visible and q.hidden is False:
            text += " (passou nos testes visíveis; falhou nos ocultos)"
        elif q.visible is None and q.hidden is None:
            text += " (os testes não chegaram a rodar)"
    return text


def text(lines: list[Line]) -> str:
    """O placar inteiro, uma questão por linha, e a soma dos pontos."""
    if not lines:
        return "Placar da correção: este notebook não tem questões com nota."
    got = sum(q.score or 0.0 for q in lines)
    top = sum(q.max_score for q in lines)
    pending = sum(q.max_score for q in lines if q.score is None)
    out = [HEADER, ""] + [_line(q) for q in lines] + [""]
    total = f"Soma das questões: {num(got, ',')} de {_points(top)}"
    if pending:
        total += f" ({_points(pending)} aguardando correção manual)"
    out.append(total + ".")
    return "\n".join(out) + "\n"


def fill(nb, lines: list[Line]) -> bool:
    """Troca a saída da célula do placar pelo placar da correção; False se o notebook não tem
    essa célula (o resto do notebook não muda)."""
    import nbformat
    cells = [c for c in nb.cells if is_scoreboard(c)]
    for cell in cells:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text(lines))]
    return bool(cells)
