"""As entregas de um zip: a mesma estrutura de pastas, o zip do Moodle (com ou sem pastas),
o do Blackboard/nbgrader ZipCollect, o zip plano e `--pattern` (a ordem está em
submissions.py); um zip dentro da entrega de um aluno (o Moodle guarda o zip que ele
enviou) é aberto no lugar dele, um nível só.

Tetos (core/settings.py, `CollectLimits`): antes de extrair, o diretório central diz o
tamanho de cada arquivo que a correção usa; quem passa da razão de compressão, do teto por
aluno, ou faz o zip passar do teto por zip ou pela turma (os maiores primeiro) tem a entrega
recusada. O tamanho declarado pode mentir: a extração conta os bytes e para no teto.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from ..core.deadlines import parse_time
from atencao.fmt import integer, num
from .spool import OverCap
from .submissions import (MOODLE_FLAT, MOODLE_FOLDER, READ_ERRORS, Collector, Submission, is_link,
                          mib)


@dataclass
class _Entry:
    """Um arquivo do zip a extrair: o de um aluno (`sub`) ou um zip dentro da entrega (`nested`)."""

    info: zipfile.ZipInfo
    sub: Submission | None
    rel: str
    ts: datetime | None
    origin: str
    nested: tuple | None = None         # (aluno, tarefa, participante) de um zip de aluno


def read_zip(c: Collector, path: Path) -> None:
    with zipfile.ZipFile(path) as z:
        infos = _listing(z)
        stamps = {}
        for i in infos:
            if Path(i.filename).name == "timestamp.txt" and i.file_size < 1024:
                try:
                    stamps[str(Path(i.filename).parent)] = parse_time(
                        z.read(i).decode("utf-8", "replace"), c.tz)
                except READ_ERRORS as e:
                    c.warnings.append(f"{i.filename}: ignorado ({e})")
        entries = []
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
            if is_link(i):
                a = c.assignment_for(assignment, origin)
                if a is not None:
                    c.note(c.submission(student, a, origin, participant),
                           f"{rel} é um link simbólico e foi ignorado (links em entregas nunca são seguidos)")
                continue
            if rel.lower().endswith(".zip"):
                entries.append(_Entry(i, None, rel, ts, origin, (student, assignment, participant)))
                continue
            got = c.admit(student, assignment, rel, origin, participant, i.file_size)
            if got is not None:
                entries.append(_Entry(i, got[0], got[1], ts, origin))
        _extract(c, z, entries, path.name)


def _listing(z: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    return [i for i in z.infolist() if not i.is_dir()
            and not i.filename.startswith("__MACOSX/")
            and not PurePosixPath(i.filename).name.startswith(".")]


def _owners(c: Collector, e: _Entry) -> list[Submission]:
    """As entregas que um arquivo pode pôr a perder: a dele, ou as do dono de um zip interno."""
    if e.sub is not None:
        return [e.sub]
    student, assignment, participant = e.nested
    wanted = [assignment] if assignment in c.assignments else c.wanted()
    return [s for a in wanted if (s := c.submission(student, a, e.origin, participant)) is not None]


def _refuse(c: Collector, e: _Entry, why: str) -> None:
    for sub in _owners(c, e):
        c.refuse(sub, why)


def _ratio_cap(c: Collector, info: zipfile.ZipInfo) -> int:
    """O máximo que um arquivo comprimido em `compress_size` bytes pode descomprimir."""
    return max(c.limits.ratio_floor, int(c.limits.ratio * max(info.compress_size, 1)))


def _ratio_why(c: Collector, e: _Entry, size: int) -> str:
    ratio = integer(round(size / max(e.info.compress_size, 1)))
    return (f"{e.rel} descomprime {ratio} vezes o tamanho comprimido (teto: {num(c.limits.ratio, ',')} "
            "vezes acima de " + mib(c.limits.ratio_floor) + "; mude com --max-ratio)")


def _zip_why(c: Collector, label: str) -> str:
    return (f"o zip {label} passaria de {mib(c.limits.zip)} descomprimidos (teto por zip; mude "
            "com --max-zip-mib)")


def _precheck(c: Collector, entries: list[_Entry], label: str) -> None:
    """Os tetos conferidos no diretório central, antes de extrair: razão de compressão, teto por
    aluno, e o zip inteiro dentro do teto por zip e do que resta da turma (quem declara mais é
    recusado primeiro; os outros seguem)."""
    per: dict[int, tuple[_Entry, int]] = {}
    for e in entries:
        if e.info.file_size > _ratio_cap(c, e.info):
            _refuse(c, e, _ratio_why(c, e, e.info.file_size))
            continue
        first, n = per.get(id(e.sub) if e.sub else id(e), (e, 0))
        per[id(e.sub) if e.sub else id(e)] = (first, n + e.info.file_size)
    for first, n in per.values():
        if first.sub is not None and n > c.limits.student:
            c.refuse(first.sub, f"o zip declara {mib(n)} em notebooks (teto por aluno e tarefa: "
                                f"{mib(c.limits.student)})")
    # quem declara mais sai primeiro; no empate, quem vem depois no zip (a ordem não depende da memória)
    alive = sorted(((n, first.origin, k) for k, (first, n) in per.items()
                    if not any(s.refused for s in _owners(c, first))), reverse=True)
    total = sum(n for n, _o, _k in alive)
    room = min(c.limits.zip, c.limits.klass - c.class_bytes)
    for n, _origin, k in alive:
        if total <= room:
            break
        first = per[k][0]
        why = _zip_why(c, label) if room == c.limits.zip else (
            f"a turma passaria de {mib(c.limits.klass)} (teto por turma; mude com --max-class-mib)")
        _refuse(c, first, f"{why}; esta entrega declara {mib(n)}")
        total -= n


def _extract(c: Collector, z: zipfile.ZipFile, entries: list[_Entry], label: str) -> None:
    """Extrai para o spool, contando os bytes de verdade contra todos os tetos."""
    _precheck(c, entries, label)
    used = 0
    for e in entries:
        owners = _owners(c, e)
        if not owners or all(s.refused for s in owners):
            continue
        caps = [(c.limits.zip - used, _zip_why(c, label)),
                (_ratio_cap(c, e.info), None)]
        if e.sub is not None:
            caps += [(n, f"{e.rel}: {why}") for n, why in c.caps(e.sub)]
        cap = min(n for n, _why in caps)
        try:
            with z.open(e.info) as fh:                  # o tamanho declarado pode mentir
                path, n = c.spool.put_stream(fh, max(cap, 0))
        except OverCap as over:
            why = next(w for n, w in caps if n == cap)
            _refuse(c, e, why if why is not None else _ratio_why(c, e, over.read))
            continue
        except READ_ERRORS as err:
            for sub in owners:
                c.note(sub, f"{e.rel} não pôde ser lido do zip ({type(err).__name__}: {err})")
            continue
        used += n
        if e.sub is not None:
            c.store(e.sub, e.rel, path, n, e.ts, e.origin)
            continue
        try:
            with zipfile.ZipFile(path) as inner:
                _read_inner(c, inner, e)
        except READ_ERRORS as err:
            for sub in owners:
                c.note(sub, f"{e.rel} não pôde ser aberto ({type(err).__name__}: {err})")
        finally:
            path.unlink(missing_ok=True)


def _read_inner(c: Collector, z: zipfile.ZipFile, outer: _Entry) -> None:
    """Um zip na entrega de um aluno: os arquivos são dele (um nível só; uma pasta única no
    topo e a pasta da tarefa saem do caminho), com os mesmos tetos, o do zip contado à parte."""
    student, assignment, participant = outer.nested
    infos = _listing(z)
    names = [i.filename.split("/") for i in infos]
    drop = 1 if names and all(len(n) > 1 and n[0] == names[0][0] for n in names) else 0
    entries = []
    for i, parts in zip(infos, names):
        parts = parts[drop:]
        a = assignment
        if len(parts) > 1 and parts[0] in c.assignments and a in (None, parts[0]):
            a, parts = parts[0], parts[1:]
        rel = "/".join(parts)
        a = a or _by_name(c, parts[-1])
        origin = f"{outer.origin}:{i.filename}"
        got = c.admit(student, a, rel, origin, participant, i.file_size)
        if got is None:
            continue
        if is_link(i):
            c.note(got[0], f"{rel} é um link simbólico e foi ignorado (links em entregas nunca são seguidos)")
            continue
        entries.append(_Entry(i, got[0], got[1], outer.ts, origin))
    _extract(c, z, entries, outer.rel)

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
