"""Entregas: de uma pasta ou de um zip do AVA para `submitted/<aluno>/<tarefa>/`.

Formatos aceitos (nesta ordem):

- pasta `<aluno>/<tarefa>/<notebook>.ipynb` (o `submitted/` do nbgrader), com
  `timestamp.txt` opcional na pasta da tarefa; com `--assignment`, também
  `<aluno>/<notebook>.ipynb`;
- zip com a mesma estrutura (em qualquer subpasta);
- zip do Blackboard/nbgrader ZipCollect: `<tarefa>_<aluno>_attempt_AAAA-MM-DD-HH-MM-SS[_<arquivo>].ipynb`;
- zip do Moodle: `<Nome do Aluno>_<id>_assignsubmission_file_/<arquivo>.ipynb`;
- zip plano: `<aluno>.ipynb` (com `--assignment`) ou `<aluno>_<tarefa>.ipynb`;
- `--padrao REGEX` com grupos nomeados `student` (obrigatório), `assignment`,
  `notebook`, `timestamp`, testado antes de todos.

Horários sem fuso (nomes do zip, `timestamp.txt` sem sufixo) são lidos no fuso
dos prazos (padrão America/Sao_Paulo) — o nbgrader os trataria como UTC e uma
entrega 30 min atrasada passaria como no prazo. Nada é extraído pelo nome que
vem no zip: o caminho de destino é montado com identificadores saneados.
"""

from __future__ import annotations

import re
import unicodedata
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

DEFAULT_TZ = "America/Sao_Paulo"
MAX_FILE = 50 * 1024 * 1024          # 50 MiB: um notebook maior que isso é inválido


@dataclass
class Submission:
    student: str
    assignment: str
    files: dict[str, bytes] = field(default_factory=dict)    # nome relativo -> conteúdo
    timestamp: datetime | None = None                          # com fuso
    origin: str = ""
    notes: list[str] = field(default_factory=list)


def slug(text: str) -> str:
    """Identificador seguro para pastas: sem acentos, sem barras, sem espaços."""
    t = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    t = re.sub(r"[^A-Za-z0-9._-]+", "-", t.strip()).strip("-.")
    return t[:80]


def parse_time(text: str, tz: ZoneInfo) -> datetime:
    """Lê um horário; sem fuso explícito, ele está em `tz`."""
    t = text.strip()
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})", t)
    if m:                                  # formato dos nomes do Blackboard
        y, mo, d, h, mi, s = map(int, m.groups())
        return datetime(y, mo, d, h, mi, s, tzinfo=tz)
    utc = False
    for suffix in (" UTC", "UTC", "Z"):
        if t.endswith(suffix):
            t, utc = t[: -len(suffix)].strip(), True
            break
    try:
        dt = datetime.fromisoformat(t)
    except ValueError:
        raise ValueError(f"horário inválido: {text!r} (use AAAA-MM-DD HH:MM[:SS], "
                         "opcionalmente com fuso, p.ex. -03:00 ou Z)") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc if utc else tz)
    return dt


def _nb_key(path: str) -> str:
    return Path(path).stem


class Collector:
    def __init__(self, assignments: dict[str, list[str]], tz: ZoneInfo,
                 only: str | None = None, pattern: str | None = None):
        """assignments: tarefa -> notebooks esperados; only: a tarefa de --assignment."""
        self.assignments = assignments
        self.tz = tz
        self.only = only
        self.pattern = re.compile(pattern) if pattern else None
        self.subs: dict[tuple[str, str], Submission] = {}
        self.warnings: list[str] = []

    # -- registro ---------------------------------------------------------------
    def _add(self, student_raw: str, assignment: str | None, rel: str, data: bytes,
             timestamp: datetime | None, origin: str):
        student = slug(student_raw)
        if not student:
            self.warnings.append(f"ignorado (aluno sem nome válido): {origin}")
            return
        assignment = assignment or self.only
        if assignment is None:
            if len(self.assignments) == 1:
                assignment = next(iter(self.assignments))
            else:
                self.warnings.append(f"ignorado (não sei de qual tarefa é; use --assignment): {origin}")
                return
        if assignment not in self.assignments:
            self.warnings.append(f"ignorado (tarefa '{assignment}' desconhecida): {origin}")
            return
        if self.only and assignment != self.only:
            return
        key = (student, assignment)
        sub = self.subs.setdefault(key, Submission(student, assignment, origin=origin))
        rel = "/".join(slug(p) or "_" for p in Path(rel).parts)
        if rel in sub.files:
            if timestamp is not None and sub.timestamp is not None and timestamp <= sub.timestamp:
                self.warnings.append(f"{student}/{assignment}: entrega repetida de {rel}; "
                                     f"fica a mais recente ({origin} ignorado)")
                return
            self.warnings.append(f"{student}/{assignment}: entrega repetida de {rel}; "
                                 f"fica {origin}")
        sub.files[rel] = data
        if timestamp is not None and (sub.timestamp is None or timestamp > sub.timestamp):
            sub.timestamp = timestamp

    # -- pasta ------------------------------------------------------------------
    def from_folder(self, root: Path):
        for sdir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            found = False
            for a in sorted(self.assignments):
                adir = sdir / a
                if adir.is_dir():
                    found = True
                    self._folder_assignment(sdir.name, a, adir)
            if not found and self.only:
                direct = [p for p in sdir.iterdir() if p.is_file()]
                if direct:
                    self._folder_assignment(sdir.name, self.only, sdir)
                    found = True
            if not found:
                # aluno sem nenhuma tarefa: aparece como `missing` em todas
                for a in self.assignments:
                    if not self.only or a == self.only:
                        self.subs.setdefault((slug(sdir.name), a),
                                             Submission(slug(sdir.name), a, origin=str(sdir)))

    def _folder_assignment(self, student: str, a: str, adir: Path):
        ts = None
        tsf = adir / "timestamp.txt"
        if tsf.is_file():
            try:
                ts = parse_time(tsf.read_text(encoding="utf-8", errors="replace"), self.tz)
            except ValueError as e:
                self.warnings.append(f"{student}/{a}: timestamp.txt ignorado ({e})")
        key = (slug(student), a)
        self.subs.setdefault(key, Submission(slug(student), a, origin=str(adir)))
        for f in sorted(adir.rglob("*")):
            if not f.is_file() or f.name == "timestamp.txt" or any(
                    part.startswith(".") for part in f.relative_to(adir).parts):
                continue
            if f.stat().st_size > MAX_FILE and f.suffix != ".ipynb":
                self.warnings.append(f"ignorado (arquivo grande demais): {f}")
                continue
            self._add(student, a, str(f.relative_to(adir)), f.read_bytes()[:MAX_FILE + 1], ts, str(f))

    # -- zip -------------------------------------------------------------------
    def from_zip(self, path: Path):
        with zipfile.ZipFile(path) as z:
            infos = [i for i in z.infolist() if not i.is_dir()
                     and not i.filename.startswith("__MACOSX/")
                     and not Path(i.filename).name.startswith(".")]
            stamps = {}
            for i in infos:
                if Path(i.filename).name == "timestamp.txt":
                    try:
                        stamps[str(Path(i.filename).parent)] = parse_time(
                            z.read(i).decode("utf-8", "replace"), self.tz)
                    except ValueError as e:
                        self.warnings.append(f"{i.filename}: ignorado ({e})")
            for i in sorted(infos, key=lambda i: i.filename):
                if Path(i.filename).name == "timestamp.txt":
                    continue
                if i.file_size > MAX_FILE:
                    self.warnings.append(f"ignorado (arquivo grande demais): {i.filename}")
                    continue
                m = self._match(i.filename, stamps)
                if m is None:
                    self.warnings.append(f"ignorado (nome fora dos formatos conhecidos): {i.filename}")
                    continue
                student, assignment, rel, ts = m
                self._add(student, assignment, rel, z.read(i), ts, f"{path.name}:{i.filename}")

    def _match(self, name: str, stamps: dict):
        parts = name.split("/")
        fname = parts[-1]
        if self.pattern is not None:
            m = self.pattern.search(name)
            if m:
                g = m.groupdict()
                ts = parse_time(g["timestamp"], self.tz) if g.get("timestamp") else None
                rel = (g.get("notebook") or Path(fname).stem) + Path(fname).suffix
                return g["student"], g.get("assignment"), rel, ts
        # <aluno>/<tarefa>/<arquivo> em qualquer profundidade
        for k in range(len(parts) - 2, 0, -1):
            if parts[k] in self.assignments:
                return parts[k - 1], parts[k], "/".join(parts[k + 1:]), stamps.get("/".join(parts[:k + 1]))
        # Blackboard / nbgrader ZipCollect
        m = re.fullmatch(r"(?P<assignment>.+?)_(?P<student>[^_]+)_attempt_"
                         r"(?P<ts>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file>.+))?", fname)
        if m:
            a = m["assignment"] if m["assignment"] in self.assignments else None
            rel = m["file"] or (fname.split("_attempt_")[0] + ".ipynb")
            return m["student"], a, rel, parse_time(m["ts"], self.tz)
        # Moodle: "Nome do Aluno_123456_assignsubmission_file_/arquivo.ipynb"
        if len(parts) >= 2:
            m = re.fullmatch(r"(?P<name>.+?)_(?P<id>\d+)_assignsubmission_\w+_?", parts[-2])
            if m:
                return m["name"], None, fname, None
        # plano: aluno.ipynb, aluno_tarefa.ipynb ou tarefa_aluno.ipynb
        stem, suffix = Path(fname).stem, Path(fname).suffix
        for a in self.assignments:
            for pat in (rf"(?P<s>.+?)[_-]{re.escape(a)}", rf"{re.escape(a)}[_-](?P<s>.+)"):
                m = re.fullmatch(pat, stem)
                if m:
                    return m["s"], a, a + suffix, None
        if suffix == ".ipynb" and (self.only or len(self.assignments) == 1):
            a = self.only or next(iter(self.assignments))
            nbs = self.assignments[a]
            return stem, a, (nbs[0] if len(nbs) == 1 else stem) + suffix, None
        return None

    def result(self) -> list[Submission]:
        return [self.subs[k] for k in sorted(self.subs)]


def collect(path: Path, assignments: dict[str, list[str]], tz: ZoneInfo,
            only: str | None = None, pattern: str | None = None) -> tuple[list[Submission], list[str]]:
    path = Path(path)
    c = Collector(assignments, tz, only=only, pattern=pattern)
    if path.is_dir():
        c.from_folder(path)
    elif zipfile.is_zipfile(path):
        c.from_zip(path)
    else:
        raise ValueError(f"{path}: esperava uma pasta <aluno>/<tarefa>/<notebook>.ipynb ou um .zip")
    return c.result(), c.warnings


# Prazos e política de atraso: deadlines.py (Deadlines, load_deadlines).
