"""As entregas de uma pasta: `<aluno>/<tarefa>/...` (o `submitted/` do nbgrader), com
`timestamp.txt` opcional na pasta da tarefa; com `--assignment`, também `<aluno>/<notebook>.ipynb`.
Links simbólicos nunca são seguidos (o aluno fica com a nota); só os arquivos que a correção
usa são lidos (`needed`, em submissions.py), com os tetos da coleta, e vão ao `Collector`, que
junta por (aluno, tarefa)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.deadlines import parse_time
from .spool import OverCap
from .submissions import READ_ERRORS, Collector


def read_folder(c: Collector, root: Path) -> None:
    """<aluno>/<tarefa>/... ; links simbólicos nunca são seguidos (o aluno fica com a nota)."""
    for sdir in sorted(root.iterdir()):
        if sdir.name.startswith("."):
            continue
        try:
            st = os.lstat(sdir)
        except OSError as e:
            c.warnings.append(f"ignorado ({e.strerror}): {sdir}")
            continue
        if stat.S_ISLNK(st.st_mode):
            for a in c.wanted():
                c.note(c.submission(sdir.name, a, str(sdir)),
                          f"a pasta {sdir.name} é um link simbólico e não foi lida "
                          "(links em entregas nunca são seguidos)")
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        try:
            _student_folder(c, sdir)
        except READ_ERRORS as e:       # um aluno com problema não para a coleta
            for a in c.wanted():
                c.note(c.submission(sdir.name, a, str(sdir)),
                          f"erro ao ler a entrega: {type(e).__name__}: {e}")

def _student_folder(c: Collector, sdir: Path) -> None:
    found = False
    for a in sorted(c.assignments):
        adir = sdir / a
        if os.path.islink(adir):
            if a in c.wanted():
                c.note(c.submission(sdir.name, a, str(adir)),
                          f"a pasta {a} é um link simbólico e não foi lida "
                          "(links em entregas nunca são seguidos)")
            found = True
        elif adir.is_dir():
            found = True
            _assignment_folder(c, sdir.name, a, adir)
    if not found and c.only:
        direct = [p for p in sdir.iterdir() if not p.is_dir() or p.is_symlink()]
        if direct:
            _assignment_folder(c, sdir.name, c.only, sdir)
            found = True
    if not found:
        # aluno sem nenhuma tarefa: aparece como `missing` em todas
        for a in c.wanted():
            c.submission(sdir.name, a, str(sdir))

def _assignment_folder(c: Collector, student: str, a: str, adir: Path) -> None:
    ts = None
    sub = c.submission(student, a, str(adir))
    if sub is None:
        return
    tsf = adir / "timestamp.txt"
    if tsf.is_file() and not tsf.is_symlink():
        try:
            ts = parse_time(tsf.read_text(encoding="utf-8", errors="replace")[:200], c.tz)
        except ValueError as e:
            c.warnings.append(f"{student}/{a}: timestamp.txt ignorado ({e})")
    for dirpath, dirs, files in os.walk(adir, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            f = Path(dirpath) / name
            rel = str(f.relative_to(adir))
            if name.startswith(".") or rel == "timestamp.txt":
                continue
            try:
                st = os.lstat(f)
                if stat.S_ISLNK(st.st_mode):
                    c.note(sub, f"{rel} é um link simbólico e foi ignorado "
                                   "(links em entregas nunca são seguidos)")
                    continue
                if not stat.S_ISREG(st.st_mode):
                    c.note(sub, f"{rel} não é um arquivo comum e foi ignorado")
                    continue
                got = c.admit(student, a, rel, str(f), size=st.st_size)
                if got is None:             # arquivo que a correção não usa: nem é lido
                    continue
                sub, rel = got
                caps = [(n, f"{rel}: {why}") for n, why in c.caps(sub)]
                cap = min(n for n, _why in caps)
                if st.st_size > cap:
                    c.refuse(sub, next(w for n, w in caps if n == cap))
                    continue
                # O_NOFOLLOW: se virou link entre o lstat e a abertura, falha em vez de seguir
                fd = os.open(f, os.O_RDONLY | os.O_NOFOLLOW)
                with os.fdopen(fd, "rb") as fh:
                    path, n = c.spool.put_stream(fh, max(cap, 0))   # o arquivo pode crescer
            except OverCap:
                c.refuse(sub, next(w for n, w in caps if n == cap))
                continue
            except READ_ERRORS as e:
                c.note(sub, f"{rel} não pôde ser lido ({type(e).__name__}: {e})")
                continue
            c.store(sub, rel, path, n, ts, str(f))
