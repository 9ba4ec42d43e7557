"""Células que uma planilha leria como fórmula, em todo CSV que o corretor escreve (issue 42, L1).

A revisão de segurança achou `|calc` e `＝1+2` (largura total) crus nas exportações. Aqui cada
começo de fórmula (`=`, `+`, `-`, `@`, tabulação, CR, LF, `|`, toda forma que a NFKC leva a um
deles, e os mesmos depois de espaços e de invisíveis) passa por cada coluna de texto de cada
planilha (grades.csv, questions.csv, a tabela larga, a planilha do Moodle, o Canvas), vindo de
onde vem de verdade: o zip do Moodle, a lista da turma, os detalhes, os títulos e os comentários.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import unicodedata
from pathlib import Path

from autograder.core.deadlines import Lateness
from autograder.core.results import JobResult, NotebookResult, QuestionResult, Status
from autograder.core.workspace import Workspace
from autograder.readers.csvfile import CsvFormat, safe_cell
from autograder.readers.exports import write_exports
from autograder.readers.report import QuestionRow, Row, write_csvs

A = "01-pontuacoes"
STARTS = frozenset("=+-@|\t\r\n")
# toda forma que a NFKC leva a um começo de fórmula: ＝＋－＠｜, ﹦﹢﹣﹫, ⁺⁼₊₌, ⩵...
LOOKALIKES = [c for c in map(chr, range(sys.maxunicode + 1))
              if c not in STARTS and unicodedata.normalize("NFKC", c)[:1] in STARTS]
BEFORE = ["", " ", "\u00a0", "\u2003", "\u3000", "\u200b", "\ufeff", " \u200b "]
PREFIXES = sorted(STARTS) + LOOKALIKES + [b + s for b in BEFORE[1:] for s in ("=", "\uff1d", "|", "+")]


def _danger(cell: str) -> bool:
    """Uma célula que a planilha leria como fórmula: o começo que conta (depois de espaços e
    invisíveis, na NFKC) é de fórmula, e não é um número nem o traço sozinho."""
    if cell == "-" or cell.startswith("'"):
        return False
    try:
        float(cell.replace(",", "."))
        return False
    except ValueError:
        pass
    if cell[:1] in STARTS:
        return True
    rest = [ch for ch in cell if not (ch.isspace() or unicodedata.category(ch) == "Cf")]
    return bool(rest) and unicodedata.normalize("NFKC", rest[0])[:1] in STARTS


def test_every_lookalike_prefix_is_known():
    """A lista do teste sai da tabela Unicode (não de memória): as formas de largura total, as
    pequenas, as sobrescritas e subscritas estão todas nela."""
    for ch in "\uff1d\uff0b\uff0d\uff20\uff5c\ufe66\ufe62\ufe63\ufe6b\u207a\u207c\u208a\u208c\u2a75":
        assert ch in LOOKALIKES, hex(ord(ch))
    for p in PREFIXES:
        v = f"{p}HYPERLINK(\"x\";1)"
        assert safe_cell(v) == "'" + v, (hex(ord(p[0])), safe_cell(v))
        assert _danger(v) and not _danger(safe_cell(v))
    for ok in ["-3", "2,5", "-", "Ana|Souza", "a=b", "１２", "José", " José", "\u200bJosé", ""]:
        assert safe_cell(ok) == ok


def _row(student: str, evil: str) -> Row:
    q = QuestionResult("q1", "test", 10.0, 5.0, title=evil)
    res = JobResult(student, A, "k", None, [NotebookResult(A, Status.INVALID, details=[evil], questions=[q])],
                    status=Status.INVALID, collection_notes=[evil])
    return Row(res, 5.0, 5.0, 0.0, Lateness(None), None, [QuestionRow(A, q, 5.0, False, evil)], [])


def _cells(path: Path, sep: str) -> dict[str, list[str]]:
    text = path.read_text(encoding="utf-8-sig")
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=sep))
    return {col: [r[k] for r in rows[1:] if k < len(r)] for k, col in enumerate(rows[0])}


def test_no_export_column_lets_a_formula_through(tmp_path):
    """Um aluno por começo de fórmula; o texto dele chega por todo caminho que leva a uma
    planilha. Nenhuma célula fica perigosa, e cada coluna de texto recebeu ao menos um apóstrofo
    (o teste passou mesmo por ela)."""
    ws = Workspace(tmp_path / "ws")
    ws.state.mkdir(parents=True)
    ids, roster, rows = {}, io.StringIO(), []
    w = csv.writer(roster)
    w.writerow(["student_id", "email", "participant", "sis_id", "section"])
    for k, p in enumerate(PREFIXES):
        sid, evil = f"s{k:03d}", f"{p}HYPERLINK(\"evil.example\";\"nota\")"
        ids[sid] = {"name": evil, "participant": str(100 + k)}
        w.writerow([sid, evil, str(100 + k), evil, evil])
        rows.append(_row(sid, evil))
    (ws.state / "identities.json").write_text(json.dumps(ids), encoding="utf-8")
    (ws.root / "roster.csv").write_text(roster.getvalue(), encoding="utf-8")
    for sep in (",", ";"):
        fmt = CsvFormat(sep=sep, bom=sep == ";")
        files = write_exports(ws, rows, fmt) + [ws.root / "grades.csv", ws.root / "questions.csv"]
        write_csvs(ws, rows, fmt)
        own = {"grades.csv", "questions.csv", "notas_por_aluno.csv"}
        expect = {"grades.csv": ["details", "comments"], "questions.csv": ["title", "comment"],
                  "notas_por_aluno.csv": ["name", "email", "sis_id"],
                  f"{A}-planilha.csv": ["Nome completo", "Endereço de email", "Comentários de feedback"],
                  "canvas.csv": ["Student", "SIS User ID", "SIS Login ID", "Section"]}
        seen = set()
        for f in files:
            if f.suffix != ".csv":
                continue
            cols = _cells(f, sep if f.name in own else ",")
            for col, cells in cols.items():
                bad = [c for c in cells if _danger(c)]
                assert not bad, (sep, f.name, col, bad[:3])
                if any(c.startswith("'") for c in cells):
                    seen.add((f.name, col))
        missing = {(f, c) for f, cs in expect.items() for c in cs} - seen
        assert not missing, (sep, missing)
