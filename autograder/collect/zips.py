"""As entregas de um zip: a mesma estrutura de pastas, o zip do Moodle (com ou sem pastas),
o do Blackboard/nbgrader ZipCollect, o zip plano e `--pattern` (a ordem está em
submissions.py). O tamanho declarado no zip pode mentir: nada passa de MAX_FILE lido."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from ..core.deadlines import parse_time
from .submissions import MAX_FILE, MOODLE_FLAT, MOODLE_FOLDER, READ_ERRORS, Collector, is_link


def read_zip(c: Collector, path: Path) -> None:
    with zipfile.ZipFile(path) as z:
        infos = [i for i in z.infolist() if not i.is_dir()
                 and not i.filename.startswith("__MACOSX/")
                 and not Path(i.filename).name.startswith(".")]
        stamps = {}
        for i in infos:
            if Path(i.filename).name == "timestamp.txt" and i.file_size < 1024:
                try:
                    stamps[str(Path(i.filename).parent)] = parse_time(
                        z.read(i).decode("utf-8", "replace"), c.tz)
                except READ_ERRORS as e:
                    c.warnings.append(f"{i.filename}: ignorado ({e})")
        for i in sorted(infos, key=lambda i: i.filename):
            if Path(i.filename).name == "timestamp.txt":
                continue
            try:
                m = _match(c, i.filename, stamps)
            except ValueError as e:     # horário ilegível no nome (--pattern)
                c.warnings.append(f"ignorado ({e}): {i.filename}")
                continue
            if m is None:
                c.warnings.append(f"ignorado (nome fora dos formatos conhecidos): {i.filename}")
                continue
            student, assignment, rel, ts, participant = m
            origin = f"{path.name}:{i.filename}"
            problem = None
            if is_link(i):
                problem = f"{rel} é um link simbólico e foi ignorado (links em entregas nunca são seguidos)"
            elif i.file_size > MAX_FILE:
                problem = (f"{rel} ignorado: arquivo grande demais "
                           f"({i.file_size // 1024 // 1024} MiB declarados no zip)")
            if problem is None:
                try:
                    with z.open(i) as fh:             # o tamanho declarado pode mentir
                        data = fh.read(MAX_FILE + 1)
                except READ_ERRORS as e:
                    problem = f"{rel} não pôde ser lido do zip ({type(e).__name__}: {e})"
                else:
                    if len(data) > MAX_FILE:
                        problem = (f"{rel} ignorado: descomprimido passa de "
                                   f"{MAX_FILE // 1024 // 1024} MiB (o zip declarava {i.file_size} bytes)")
            if problem is not None:
                a = c.assignment_for(assignment, origin)
                if a is not None:
                    c.note(c.submission(student, a, origin, participant), problem)
                continue
            c.add(student, assignment, rel, data, ts, origin, participant)

def _by_name(c: Collector, fname: str) -> str | None:
    """A tarefa que o nome do notebook diz (`10-softmax-online.ipynb`), se diz uma só."""
    if not fname.endswith(".ipynb"):
        return None
    stem = Path(fname).stem
    if stem in c.assignments:
        return stem
    owners = [a for a, nbs in c.assignments.items() if stem in nbs]
    return owners[0] if len(owners) == 1 else None

def _match(c: Collector, name: str, stamps: dict):
    """(aluno, tarefa, nome relativo, horário, participante) ou None."""
    parts = name.split("/")
    fname = parts[-1]
    if c.pattern is not None:
        m = c.pattern.search(name)
        if m:
            g = m.groupdict()
            ts = parse_time(g["timestamp"], c.tz) if g.get("timestamp") else None
            rel = (g.get("notebook") or Path(fname).stem) + Path(fname).suffix
            return g["student"], g.get("assignment"), rel, ts, None
    # Moodle: a pasta mais externa no formato do Moodle é o aluno, e nada dentro dela
    # (pastas que o aluno criou ou um zip que ele desempacotou) fala por outro aluno
    for k, part in enumerate(parts[:-1]):
        m = MOODLE_FOLDER.fullmatch(part)
        if m:
            inner = parts[k + 1:]
            a = c.only or (inner[0] if len(inner) > 1 and inner[0] in c.assignments else None) \
                or _by_name(c, fname)
            if len(inner) > 1 and inner[0] == a:
                inner = inner[1:]
            return m["name"], a, "/".join(inner), None, m["id"]
    # Moodle sem pastas: "Nome_123_assignsubmission_file_arquivo.ipynb"
    m = MOODLE_FLAT.fullmatch(fname)
    if m:
        return m["name"], c.only or _by_name(c, m["file"]), m["file"], None, m["id"]
    # <aluno>/<tarefa>/<arquivo> em qualquer subpasta: a pasta de tarefa mais externa decide
    # (uma pasta `<outro>/<tarefa>/` dentro da entrega continua sendo do aluno de fora)
    for k in range(1, len(parts) - 1):
        if parts[k] in c.assignments:
            return (parts[k - 1], parts[k], "/".join(parts[k + 1:]),
                    stamps.get("/".join(parts[:k + 1])), None)
    # Blackboard / nbgrader ZipCollect
    m = re.fullmatch(r"(?P<assignment>.+?)_(?P<student>[^_]+)_attempt_"
                     r"(?P<ts>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file>.+))?", fname)
    if m:
        a = m["assignment"] if m["assignment"] in c.assignments else None
        rel = m["file"] or (fname.split("_attempt_")[0] + ".ipynb")
        return m["student"], a, rel, parse_time(m["ts"], c.tz), None
    # plano: aluno.ipynb, aluno_tarefa.ipynb ou tarefa_aluno.ipynb
    stem, suffix = Path(fname).stem, Path(fname).suffix
    for a in c.assignments:
        for pat in (rf"(?P<s>.+?)[_-]{re.escape(a)}", rf"{re.escape(a)}[_-](?P<s>.+)"):
            m = re.fullmatch(pat, stem)
            if m:
                return m["s"], a, a + suffix, None, None
    if suffix == ".ipynb" and (c.only or len(c.assignments) == 1):
        a = c.only or next(iter(c.assignments))
        nbs = c.assignments[a]
        return stem, a, (nbs[0] if len(nbs) == 1 else stem) + suffix, None, None
    return None
