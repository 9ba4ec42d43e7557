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

import csv
import io
import json
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .course import Workspace

if TYPE_CHECKING:        # report.py importa este módulo
    from .report import Row
    from .submissions import Submission


# ----------------------------------------------------------------------------- formato dos CSVs

@dataclass(frozen=True)
class CsvFormat:
    sep: str = ","
    bom: bool = False

    @property
    def decimal(self) -> str:
        """Com ';' (planilha em português), os números levam vírgula decimal."""
        return "," if self.sep == ";" else "."

    def check(self) -> None:
        if len(self.sep) != 1 or self.sep in "\"\r\n":
            raise ValueError(f"--sep espera um caractere separador (',', ';' ou tab), veio {self.sep!r}")


def csv_format(ws: Workspace, sep: str | None = None, bom: bool | None = None) -> CsvFormat:
    """O formato guardado no workspace, com o que a linha de comando mudou (e grava a mudança)."""
    f = ws.state / "planilhas.json"
    saved = json.loads(f.read_text(encoding="utf-8")) if f.exists() else {}
    fmt = CsvFormat(sep if sep is not None else saved.get("sep", ","),
                    bom if bom is not None else saved.get("bom", False))
    fmt.check()
    if (sep is not None or bom is not None) and asdict(fmt) != saved:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(asdict(fmt)), encoding="utf-8")
    return fmt


def write_csv(path: Path, columns: list[str], rows: Iterable[dict], fmt: CsvFormat | None = None,
              extra_rows: Iterable[list] = ()) -> Path:
    """Grava de forma atômica; `extra_rows` vêm logo depois do cabeçalho (p.ex. "Points Possible")."""
    fmt = fmt or CsvFormat()
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, delimiter=fmt.sep, lineterminator="\n")
    w.writeheader()
    plain = csv.writer(buf, delimiter=fmt.sep, lineterminator="\n")
    for r in extra_rows:
        plain.writerow(r)
    w.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(("\ufeff" if fmt.bom else "") + buf.getvalue(), encoding="utf-8")
    tmp.replace(path)
    return path


# ----------------------------------------------------------------------------- quem é quem

@dataclass
class Identity:
    """Como o AVA conhece um aluno (o id do workspace é o nome da pasta da entrega)."""

    student_id: str
    name: str = ""
    email: str = ""
    participant: str = ""      # número de participante do Moodle (nome da pasta no zip)
    sis_id: str = ""           # matrícula
    section: str = ""


ROSTER_COLUMNS = ["student_id", "name", "email", "participant", "sis_id", "section"]


def record_identities(ws: Workspace, subs: "Iterable[Submission]") -> None:
    """Guarda o nome e o número de participante que o zip do Moodle deu a cada aluno
    (`Submission.participant` e `Submission.name`, lidos pela coleta)."""
    f = ws.state / "identidades.json"
    known = json.loads(f.read_text(encoding="utf-8")) if f.exists() else {}
    changed = False
    for s in subs:
        new = {"name": s.name.strip(), "participant": s.participant or ""}
        if not new["participant"] and not new["name"]:
            continue
        if known.get(s.student) != new:
            known[s.student] = new
            changed = True
    if changed:
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(known, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")


def read_roster(path: Path) -> dict[str, Identity]:
    """Lista da turma: CSV com `student_id` (o nome da pasta/arquivo da entrega) e, se
    houver, name, email, participant, sis_id, section; separador ',' ou ';'."""
    text = Path(path).read_text(encoding="utf-8-sig")
    first = text.splitlines()[0] if text.strip() else ""
    sep = ";" if first.count(";") > first.count(",") else ","
    rows = list(csv.DictReader(io.StringIO(text), delimiter=sep))
    cols = [c.strip() for c in (rows[0].keys() if rows else first.split(sep))]
    if "student_id" not in cols:
        raise ValueError(f"{path}: a lista da turma precisa da coluna student_id (o nome da pasta ou "
                         f"do arquivo de cada aluno); colunas aceitas: {', '.join(ROSTER_COLUMNS)}; "
                         f"vieram: {', '.join(cols) or 'nenhuma'}")
    out = {}
    for i, r in enumerate(rows, start=2):
        r = {(k or "").strip(): (v or "").strip() for k, v in r.items()}
        if not r.get("student_id"):
            raise ValueError(f"{path}, linha {i}: student_id vazio")
        out[r["student_id"]] = Identity(**{k: r.get(k, "") for k in ROSTER_COLUMNS})
    return out


def identities(ws: Workspace) -> dict[str, Identity]:
    """Zip do Moodle e, por cima, a lista da turma do workspace (roster.csv)."""
    out: dict[str, Identity] = {}
    f = ws.state / "identidades.json"
    if f.exists():
        for sid, d in json.loads(f.read_text(encoding="utf-8")).items():
            out[sid] = Identity(sid, name=d.get("name", ""), participant=d.get("participant", ""))
    roster = ws.root / "roster.csv"
    if roster.exists():
        for sid, ident in read_roster(roster).items():
            base = out.get(sid, Identity(sid))
            out[sid] = Identity(sid, **{k: getattr(ident, k) or getattr(base, k)
                                        for k in ROSTER_COLUMNS if k != "student_id"})
    return out


def install_roster(ws: Workspace, path: Path) -> None:
    """Valida a lista da turma e a guarda no workspace (roster.csv), para todo comando seguinte."""
    read_roster(path)
    ws.root.mkdir(parents=True, exist_ok=True)
    (ws.root / "roster.csv").write_bytes(Path(path).read_bytes())


# ----------------------------------------------------------------------------- exportações

def _num(x: float, decimal: str = ".") -> str:
    x = round(float(x), 4)
    return (str(int(x)) if x == int(x) else f"{x:g}").replace(".", decimal)


def feedback_text(row: "Row") -> str:
    """O retorno em texto (comentários do formgrader, atraso, situação), para os AVAs."""
    parts = [f"{t}: {c}" for t, c in row.comments]
    if row.lateness.late:
        parts.append(f"Entregue com atraso de {row.lateness.minutes} min"
                     + (f" (multa de {_num(row.lateness.penalty, ',')} ponto(s))" if row.lateness.penalty else "")
                     + ".")
    if row.pending:
        parts.append(f"{_num(row.pending, ',')} ponto(s) ainda aguardando correção manual.")
    return " ".join(parts)


WIDE_IDS = ["student_id", "name", "email", "participant", "sis_id"]


def write_exports(ws: Workspace, rows: "list[Row]", fmt: CsvFormat | None = None) -> list[Path]:
    """Escreve tudo em exportacoes/; devolve os arquivos escritos."""
    fmt = fmt or CsvFormat()
    out_dir = ws.root / "exportacoes"
    ids = identities(ws)
    assignments = sorted({r.assignment for r in rows})
    graded = {r.student for r in rows}
    students = sorted(graded | _roster_ids(ws))
    by = {(r.student, r.assignment): r for r in rows}
    maxima = {a: next(r.max_score for r in rows if r.assignment == a) for a in assignments}
    written = []

    # tabela larga
    cols = WIDE_IDS + assignments + ["total", "max_total"]
    wide = []
    for s in students:
        ident = ids.get(s, Identity(s))
        rec = {k: getattr(ident, k) for k in WIDE_IDS}
        scores = [by[(s, a)].score if (s, a) in by else 0.0 for a in assignments]
        rec.update({a: _num(v, fmt.decimal) for a, v in zip(assignments, scores)})
        rec["total"] = _num(sum(scores), fmt.decimal)
        rec["max_total"] = _num(sum(maxima.values()), fmt.decimal)
        wide.append(rec)
    written.append(write_csv(out_dir / "notas_por_aluno.csv", cols, wide, fmt))

    # Moodle: planilha de avaliação (grading worksheet) de cada tarefa. O importador
    # (mod/assign/feedback/offline/importgradeslib.php) acha as colunas pelo nome
    # "Identifier" ("Participant <n>"), "Grade" e "Last modified (grade)", e as de
    # feedback pelo nome do plugin ("Feedback comments"):
    # https://docs.huihoo.com/phpdoc/moodle/2.8/xref/mod/assign/feedback/offline/importgradeslib.php.html
    moodle_cols = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                   "Grade can be changed", "Last modified (submission)", "Last modified (grade)",
                   "Feedback comments"]
    for a in assignments:
        recs = []
        for s in students:
            ident = ids.get(s, Identity(s))
            if not ident.participant:
                continue
            r = by.get((s, a))
            recs.append({"Identifier": f"Participant {ident.participant}", "Full name": ident.name or s,
                         "Email address": ident.email,
                         "Status": "Submitted for grading" if r and r.submitted_at else "No submission",
                         "Grade": _num(r.score if r else 0.0), "Maximum Grade": _num(maxima[a]),
                         "Grade can be changed": "Yes",
                         "Last modified (submission)": r.submitted_at.strftime("%A, %d %B %Y, %I:%M %p")
                         if r and r.submitted_at else "-",
                         "Last modified (grade)": "", "Feedback comments": feedback_text(r) if r else ""})
        if recs:
            written.append(write_csv(out_dir / "moodle" / f"{a}-planilha.csv", moodle_cols, recs))

    # Moodle: retornos num zip de "Carregar múltiplos arquivos de feedback". O importador
    # (mod/assign/feedback/file/importziplib.php) lê "<nome>_<participante>_<tipo>_<plugin>_/arquivo":
    # https://docs.huihoo.com/phpdoc/moodle/2.8/xref/mod/assign/feedback/file/importziplib.php.source.txt
    for a in assignments:
        entries = []
        for s in students:
            ident = ids.get(s, Identity(s))
            if not ident.participant:
                continue
            for page in sorted(ws.feedback(s, a).glob("*.html")):
                folder = f"{(ident.name or s).replace('_', ' ')}_{ident.participant}_assignsubmission_file_"
                entries.append((f"{folder}/{page.name}", page))
        if entries:
            z = out_dir / "moodle" / f"{a}-retornos.zip"
            tmp = z.with_suffix(".zip.tmp")
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as f:
                for name, page in entries:
                    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))   # mesmo zip a cada vez
                    info.compress_type = zipfile.ZIP_DEFLATED
                    f.writestr(info, page.read_bytes())
            tmp.replace(z)
            written.append(z)

    # Canvas: Gradebook > Importar. Colunas Student, ID, SIS User ID, SIS Login ID, Section e
    # uma por tarefa (sem "(id)" no nome, o Canvas cria a tarefa); a linha "Points Possible"
    # logo depois do cabeçalho, como no CSV que o próprio Gradebook exporta:
    # https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades
    # https://ts.vcu.edu/askit/teaching-and-learning/canvas/faculty/grading-faculty/gradebook-action-menu-faculty/
    canvas_cols = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] + assignments
    recs = []
    for s in students:
        ident = ids.get(s, Identity(s))
        rec = {"Student": ident.name or s, "ID": "", "SIS User ID": ident.sis_id or s,
               "SIS Login ID": ident.email, "Section": ident.section}
        rec.update({a: _num(by[(s, a)].score) if (s, a) in by else "0" for a in assignments})
        recs.append(rec)
    points = ["    Points Possible", "", "", "", ""] + [_num(maxima[a]) for a in assignments]
    written.append(write_csv(out_dir / "canvas.csv", canvas_cols, recs, extra_rows=[points]))
    return written


def _roster_ids(ws: Workspace) -> set[str]:
    roster = ws.root / "roster.csv"
    return set(read_roster(roster)) if roster.exists() else set()
