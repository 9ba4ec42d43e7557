"""O que os testes de ponta a ponta do corretor compartilham: a linha de comando, os limites
curtos, a sandbox disponível ou não e a leitura das planilhas (a turma de cenários está em
cenarios.py; as turmas corrigidas uma vez por bateria, em tests/grader_e2e/conftest.py)."""

from __future__ import annotations

import atexit
import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

import cenarios
from autograder.box import sandbox
from autograder.core.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]

SLUG = cenarios.SLUG
# Limites curtos para a bateria ser rápida, com folga para importar o torch
# (3-4 s numa máquina de 2 núcleos ocupada): o kernel já chega com os módulos
# das células travadas importados, fora do relógio das células. Memória de 1 GiB:
# a bomba de memória chega ao limite depois de tocar ~300 MiB, não ~1,3 GiB (numa
# máquina nova, a primeira escrita em cada página é lenta e, com 2 GiB, a bomba
# chegou a passar dos 5 s na CI: `timeout` em vez de `crashed`).
LIMITS = ["--cell-timeout", "5", "--notebook-timeout", "40", "--memory", "1024"]

HAS_BWRAP, WHY_NOT = sandbox.bwrap_works()

_template = None


def template_socket() -> str:
    """O socket do molde dos kernels (box/zygote.py), iniciado uma vez por processo do pytest, como
    cada trabalhador da correção faz: um kernel sai dele por fork, com o torch já importado (sem ele,
    ~2 s de CPU por kernel). Vazio onde o molde não vale (sem root) ou com AG_TESTE_SEM_MOLDE=1, que
    roda os testes que o usam pelo bwrap, o caminho de volta da correção."""
    global _template
    from autograder.box import zygote
    if os.environ.get("AG_TESTE_SEM_MOLDE") == "1" or zygote.available() is not None:
        return ""
    if _template is None:
        _template = zygote.Zygote.start(sandbox.SandboxConfig(enabled=True, python=sys.executable), "/tmp")
        assert _template is not None, "o molde não iniciou"
        atexit.register(_template.close)
    return _template.socket


def needs_bwrap(f):
    """Corrige na sandbox (bubblewrap) e leva dezenas de segundos."""
    return pytest.mark.slow(f)   # sem a sandbox, a marca `sandbox` da pasta faz o teste falhar com o motivo


def run_cli(*args, check=True, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, env=env,
                       capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"autograder saiu com {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def read_csv(path: Path) -> dict[str, dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def clone_prepared(ws: Workspace, dest: Path) -> Path:
    """Workspace novo com a tarefa já gerada (pula o generate_assignment, ~5-10 s)."""
    import shutil
    for sub in ("source", "release"):
        shutil.copytree(ws.root / sub, dest / sub)
    shutil.copy(ws.db_path, dest / "gradebook.db")
    (dest / ".autograder").mkdir()
    shutil.copy(ws.state / "fontes.json", dest / ".autograder" / "fontes.json")
    if ws.mpl_cache.is_dir():
        shutil.copytree(ws.mpl_cache, dest / ".autograder" / ws.mpl_cache.name)
    return dest


def git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                          capture_output=True, text=True).stdout
