"""Um corretor por workspace, e a limpeza do que uma correção interrompida deixou.

`hold(workspace)` pega uma trava exclusiva (`flock`) em
`<workspace>/.autograder/trava`: um segundo `grade` no mesmo workspace recebe
um erro claro em vez de corromper o gradebook e os resultados. A trava é do
sistema operacional: um corretor morto (Ctrl-C, kill -9, queda de energia) a
solta sozinho, sem arquivo velho para apagar à mão.

Com a trava na mão, `clean_leftovers` apaga as pastas temporárias dos
kernels (`<TMPDIR>/ag-<marca>-*`, a marca identifica o workspace) e mata e
remove as caixas (cgroups) com o mesmo nome que uma correção interrompida
deixou para trás, e as pastas da coleta (`.autograder/coleta-*`, os bytes das
entregas durante a correção). Pastas de outros workspaces não são tocadas.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

from ..core.workspace import run_prefix, temp_base


class WorkspaceBusy(RuntimeError):
    """Outro corretor está usando o workspace (mensagem em português)."""


@contextmanager
def hold(root: Path):
    """Trava exclusiva do workspace enquanto durar o bloco; WorkspaceBusy se outro a tem."""
    state = Path(root) / ".autograder"
    state.mkdir(parents=True, exist_ok=True)
    path = state / "lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            raise WorkspaceBusy(
                f"outro corretor (processo {other}) já está corrigindo no workspace {root}; "
                "espere ele terminar ou interrompa-o (Ctrl-C) antes de rodar de novo") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)        # solta a trava


def clean_leftovers(root: Path) -> list[str]:
    """Apaga pastas de kernel e caixas deixadas por uma correção interrompida deste workspace.

    Só com a trava na mão (nenhum outro corretor deste workspace está rodando)."""
    from ..box.sandbox import clean_stale_boxes
    prefix = run_prefix(root)
    gone = clean_stale_boxes(prefix)
    base = Path(temp_base())
    spools = sorted((Path(root) / ".autograder").glob("coleta-*"))    # os bytes da coleta (runner.py)
    for p in sorted(base.glob(prefix + "*")) + spools:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
            gone.append(str(p))
    return gone
