"""Exportações para planilhas e para o AVA, a partir das linhas de report.py.

Pasta `exportacoes/` do workspace:

- `notas_por_aluno.csv`: a tabela larga, uma linha por aluno e uma coluna por
  tarefa, mais o total, com os identificadores que um AVA usa (número de
  participante do Moodle, e-mail, matrícula) quando o zip do Moodle ou a lista
  da turma (`--roster`) os dão;
- `moodle/<tarefa>-planilha.csv`: a "planilha de avaliação" (grading worksheet)
  da tarefa do Moodle, para "Carregar planilha de avaliação";
- `moodle/<tarefa>-retornos.zip`: os retornos HTML no formato de "Carregar
  múltiplos arquivos de feedback em um zip" do Moodle;
- `canvas.csv`: o CSV de importação do Gradebook do Canvas.

Os formatos das planilhas de pessoas (grades.csv, questions.csv, a tabela
larga) seguem `CsvFormat`: `--sep ';' --bom` para o Excel em português (com
vírgula decimal). Os arquivos do Moodle e do Canvas têm o formato fixo que esses
sistemas leem (vírgula, UTF-8, ponto decimal).
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from atencao.fmt import num

from ..core.results import Status
from ..core.workspace import Workspace
from ..store.identities import Identity, identities, read_roster
from .csvfile import CsvFormat, write_csv

if TYPE_CHECKING:        # só para os tipos: report.py não importa este módulo
    from .report import Row

__all__ = ["write_exports", "feedback_text", "MOODLE_STRINGS"]


# ----------------------------------------------------------------------------- exportações

@dataclass(frozen=True)
class MoodleStrings:
    """Os textos da planilha de avaliação numa língua da interface do Moodle.

    O importador (mod/assign/feedback/offline/importgradeslib.php, `init()`) acha as
    colunas comparando o cabeçalho com `get_string('grade')`, `get_string('recordid',
    'assign')` e `get_string('lastmodifiedgrade', 'assign')` na língua de quem importa,
    e a de comentários com a descrição do plugin de comentários; o número de
    participante é o que vem depois dos 12 primeiros caracteres de "Identificador"
    (`substr($idstr, strlen(get_string('hiddenuser', 'assign')))`); a planilha que o
    próprio Moodle exporta escreve `hiddenuser` + número (gradingtable.php, col_recordid).
    Conferido contra mod/assign/lang/en/assign.php (moodle/moodle) e o pacote pt_br de
    `assign` (versão 3.11): recordid, hiddenuser, lastmodifiedgrade, lastmodifiedsubmission,
    gradecanbechanged, maxgrade, status, submissionstatus_submitted e _new. "Nota",
    "Nome completo", "Endereço de email" e "Comentários de feedback" (core e
    assignfeedback_comments) vêm de planilhas reais exportadas por Moodles em pt-BR."""

    identifier: str
    hidden_user: str
    full_name: str
    email: str
    status: str
    grade: str
    max_grade: str
    can_change: str
    modified_submission: str
    modified_grade: str
    comments: str
    submitted: str
    no_submission: str
    yes: str
    date_format: str

    @property
    def columns(self) -> list[str]:
        return [self.identifier, self.full_name, self.email, self.status, self.grade, self.max_grade,
                self.can_change, self.modified_submission, self.modified_grade, self.comments]


MOODLE_STRINGS = {
    "pt-BR": MoodleStrings(
        identifier="Identificador", hidden_user="Participante", full_name="Nome completo",
        email="Endereço de email", status="Status", grade="Nota", max_grade="Nota máxima",
        can_change="Nota pode ser alterada", modified_submission="Última modificação (envio)",
        modified_grade="Última modificação (nota)", comments="Comentários de feedback",
        submitted="Enviado para avaliação", no_submission="Nenhum envio", yes="Sim",
        date_format="%d/%m/%Y %H:%M"),
    "en": MoodleStrings(
        identifier="Identifier", hidden_user="Participant ", full_name="Full name",
        email="Email address", status="Status", grade="Grade", max_grade="Maximum Grade",
        can_change="Grade can be changed", modified_submission="Last modified (submission)",
        modified_grade="Last modified (grade)", comments="Feedback comments",
        submitted="Submitted for grading", no_submission="No submission", yes="Yes",
        date_format="%A, %d %B %Y, %I:%M %p"),
}


def feedback_text(row: "Row") -> str:
    """O retorno em texto (comentários do formgrader, atraso, situação), para os AVAs."""
    parts = [f"{t}: {c}" for t, c in row.comments]
    if row.lateness.late:
        parts.append(row.lateness.text(on_time=False))
    if row.pending:
        parts.append(f"{num(row.pending, ',')} ponto(s) ainda aguardando correção manual.")
    return " ".join(parts)


WIDE_IDS = ["student_id", "name", "email", "participant", "sis_id"]


@dataclass
class _Class:
    """A turma como as exportações a veem: quem, quais tarefas, e a linha de cada par."""

    ids: dict[str, Identity]
    assignments: list[str]
    students: list[str]
    by: dict[tuple[str, str], "Row"]
    maxima: dict[str, float]

    def ident(self, s: str) -> Identity:
        return self.ids.get(s, Identity(s))

    def graded(self, s: str, a: str) -> "Row | None":
        """A linha do par, se ele entregou e foi corrigido (None: não entregou ou nunca corrigido,
        a nota fica em branco e o Moodle diz "Nenhum envio", venha o aluno do zip ou da lista)."""
        r = self.by.get((s, a))
        return None if r is None or r.status is Status.MISSING else r


def _class(ws: Workspace, rows: "list[Row]") -> _Class:
    assignments = sorted({r.assignment for r in rows})
    return _Class(identities(ws), assignments, sorted({r.student for r in rows} | _roster_ids(ws)),
                  {(r.student, r.assignment): r for r in rows},
                  {a: next(r.max_score for r in rows if r.assignment == a) for a in assignments})


def write_exports(ws: Workspace, rows: "list[Row]", fmt: CsvFormat | None = None) -> list[Path]:
    """Escreve tudo em exportacoes/; devolve os arquivos escritos."""
    fmt = fmt or CsvFormat()
    out_dir = ws.root / "exportacoes"
    c = _class(ws, rows)
    written = [_wide(out_dir, c, fmt)]
    for a in c.assignments:
        written += _moodle_sheet(out_dir, c, a, MOODLE_STRINGS[fmt.moodle_language])
        written += _moodle_zip(ws, out_dir, c, a)
    written.append(_canvas(out_dir, c))
    return written


def _wide(out_dir: Path, c: _Class, fmt: CsvFormat) -> Path:
    """Um aluno por linha, uma coluna por tarefa; tarefa nunca corrigida para o aluno: em branco."""
    recs = []
    for s in c.students:
        ident = c.ident(s)
        rec = {k: getattr(ident, k) for k in WIDE_IDS}
        graded = {a: r.score for a in c.assignments if (r := c.graded(s, a)) is not None}
        rec.update({a: num(graded.get(a), fmt.decimal) for a in c.assignments})
        rec["total"] = num(sum(graded.values()), fmt.decimal) if graded else ""
        rec["max_total"] = num(sum(c.maxima.values()), fmt.decimal)
        recs.append(rec)
    return write_csv(out_dir / "notas_por_aluno.csv", WIDE_IDS + c.assignments + ["total", "max_total"],
                     recs, fmt)


def _moodle_sheet(out_dir: Path, c: _Class, a: str, t: MoodleStrings) -> list[Path]:
    """A planilha de avaliação (grading worksheet) da tarefa, na língua `t` da interface do
    Moodle. Quem não foi corrigido nesta tarefa fica com a nota em branco: o Moodle não
    muda uma nota em branco, e um zero escrito iria para o livro de notas."""
    recs = []
    for s in c.students:
        ident = c.ident(s)
        if not ident.participant:
            continue
        r = c.graded(s, a)
        delivered = r is not None and r.status is not Status.MISSING
        recs.append({
            t.identifier: f"{t.hidden_user}{ident.participant}", t.full_name: ident.name or s,
            t.email: ident.email, t.status: t.submitted if delivered else t.no_submission,
            t.grade: num(r.score) if r is not None else "", t.max_grade: num(c.maxima[a]),
            t.can_change: t.yes,
            t.modified_submission: r.submitted_at.strftime(t.date_format) if r and r.submitted_at else "-",
            t.modified_grade: "", t.comments: feedback_text(r) if r else ""})
    if not recs:
        return []
    return [write_csv(out_dir / "moodle" / f"{a}-planilha.csv", t.columns, recs)]


def _moodle_zip(ws: Workspace, out_dir: Path, c: _Class, a: str) -> list[Path]:
    """Os retornos num zip de "Carregar múltiplos arquivos de feedback" do Moodle: o
    importador (mod/assign/feedback/file/importziplib.php) lê
    "<nome>_<participante>_<tipo>_<plugin>_/arquivo", sem depender da língua do site."""
    entries = []
    for s in c.students:
        ident = c.ident(s)
        if not ident.participant or c.graded(s, a) is None:     # não entregou: nem nota nem retorno
            continue
        folder = f"{(ident.name or s).replace('_', ' ')}_{ident.participant}_assignsubmission_file_"
        for page in sorted(ws.feedback(s, a).glob("*")):
            if page.is_file():
                entries.append((f"{folder}/{page.name}", page))
    if not entries:
        return []
    z = out_dir / "moodle" / f"{a}-retornos.zip"
    tmp = z.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as f:
        for name, page in entries:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))   # mesmo zip a cada vez
            info.compress_type = zipfile.ZIP_DEFLATED
            f.writestr(info, page.read_bytes())
    tmp.replace(z)
    return [z]


def _canvas(out_dir: Path, c: _Class) -> Path:
    """Canvas: Gradebook > Importar. Colunas Student, ID, SIS User ID, SIS Login ID, Section e
    uma por tarefa (sem "(id)" no nome, o Canvas cria a tarefa); a linha "Points Possible"
    logo depois do cabeçalho, como no CSV que o próprio Gradebook exporta. O SIS User ID é
    a matrícula da lista da turma, nunca o id do workspace (que o Canvas não conhece)."""
    cols = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] + c.assignments
    recs = []
    for s in c.students:
        ident = c.ident(s)
        rec = {"Student": ident.name or s, "ID": "", "SIS User ID": ident.sis_id,
               "SIS Login ID": ident.email, "Section": ident.section}
        rec.update({a: num(r.score) if (r := c.graded(s, a)) is not None else "" for a in c.assignments})
        recs.append(rec)
    points = ["    Points Possible", "", "", "", ""] + [num(c.maxima[a]) for a in c.assignments]
    return write_csv(out_dir / "canvas.csv", cols, recs, extra_rows=[points])


def _roster_ids(ws: Workspace) -> set[str]:
    roster = ws.root / "roster.csv"
    return set(read_roster(roster)) if roster.exists() else set()
