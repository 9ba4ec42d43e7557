"""Entradas ocultas por aluno: a semente que o kernel do corretor recebe em cada notebook.

O kernel do corretor de cada notebook recebe a variável de ambiente `SEED_ENV`
(AUTOGRADER_HIDDEN_SEED), um inteiro tirado do aluno, da tarefa e de um segredo do
workspace do professor (HMAC-SHA256). `conferir._semente_oculta(rotulo)` a mistura
com um rótulo, e os testes ocultos sorteiam as suas entradas com ela: uma tabela de
entradas ocultas vazada por um aluno (revisão H3) não serve a outro, nem no ano
seguinte (outro workspace, outro segredo). Sem a variável (nbgrader puro), a semente é 0.

O kernel do aluno nunca recebe a variável (ver worker/executor.py).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

SEED_ENV = "AUTOGRADER_HIDDEN_SEED"
SECRET_FILE = "hidden-secret"


def workspace_secret(state_dir: Path) -> str:
    """O segredo do workspace (criado na primeira vez, só o dono lê): `state_dir` é .autograder/."""
    state_dir = Path(state_dir)
    f = state_dir / SECRET_FILE
    try:
        return f.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        pass
    state_dir.mkdir(parents=True, exist_ok=True)
    value = secrets.token_hex(32)
    tmp = state_dir / f".{SECRET_FILE}.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(value + "\n")
    try:
        os.link(tmp, f)             # o primeiro a criar ganha; quem chega depois lê o dele
    except FileExistsError:
        pass
    finally:
        tmp.unlink()
    return f.read_text(encoding="ascii").strip()


def hidden_seed(secret: str, student: str, assignment: str) -> int:
    """Inteiro de 63 bits, o mesmo para (segredo, aluno, tarefa) e outro para qualquer outro."""
    mac = hmac.new(secret.encode(), f"{student}\0{assignment}".encode(), hashlib.sha256).digest()
    return int.from_bytes(mac[:8], "big") >> 1
