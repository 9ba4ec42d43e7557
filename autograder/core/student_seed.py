"""Entradas ocultas por entrega: a semente que o kernel do corretor recebe em cada notebook.

O kernel do corretor de cada notebook recebe a variável de ambiente `SEED_ENV`
(AUTOGRADER_HIDDEN_SEED), um inteiro tirado de um segredo do workspace do professor, do
aluno, da tarefa e do resumo da entrega (HMAC-SHA256). `conferir._semente_oculta(rotulo)` a
mistura com um rótulo, e os testes ocultos sorteiam as suas entradas com ela:

- uma tabela de entradas ocultas vazada por um aluno (revisão H3) não serve a outro, nem no
  ano seguinte (outro workspace, outro segredo);
- nem a ele mesmo numa nova entrega (revisão M1): o resumo (`submission_digest`) é o dos
  bytes do notebook entregue e dos outros arquivos da entrega, como chegaram. Corrigir de
  novo a mesma entrega (`--force`, a mesma pasta `submitted/`) sorteia as mesmas entradas e
  dá os mesmos pontos; mudar um byte (uma tabela de respostas nova no código, num arquivo ao
  lado, nos metadados) sorteia outras. Os bytes, e não um resumo "canônico" do texto das
  células: é a regra mais simples de conferir, e uma entrega regravada sem mudança de código
  ganha só um sorteio novo (as entradas ocultas não aparecem em lugar nenhum que o aluno
  leia: worker/deferred.py).

Sem a variável (nbgrader puro), a semente é 0.

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


def submission_digest(notebook: bytes | None, files: dict[str, bytes] | None = None) -> str:
    """SHA-256 (hex) dos bytes do notebook entregue e dos outros arquivos da entrega (nome e
    bytes de cada um, em ordem de nome). `notebook=None` (não entregue) vale como vazio."""
    h = hashlib.sha256(b"notebook\0" + hashlib.sha256(notebook or b"").digest())
    for name in sorted(files or {}):
        h.update(b"\0file\0" + name.encode("utf-8", "surrogateescape") + b"\0"
                 + hashlib.sha256(files[name]).digest())
    return h.hexdigest()


def hidden_seed(secret: str, student: str, assignment: str, digest: str) -> int:
    """Inteiro de 63 bits, o mesmo para (segredo, aluno, tarefa, resumo da entrega) e outro para
    qualquer outro: `digest` é o `submission_digest` da entrega."""
    msg = f"{student}\0{assignment}\0{digest}".encode("utf-8", "surrogateescape")
    mac = hmac.new(secret.encode(), msg, hashlib.sha256).digest()
    return int.from_bytes(mac[:8], "big") >> 1
