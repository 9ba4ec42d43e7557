"""Ambientes virtuais novos para os testes do caminho do aluno e do Binder.

Um ambiente por arquivo de requisitos, em .cache/venv-<nome>-<hash>, com o
hash do arquivo e da versão do Python: a primeira execução instala (alguns
minutos), as outras reutilizam. Nada do repositório vaza para dentro dele:
sem PYTHONPATH, sem o .venv do livro no PATH, sem o site do usuário.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"


def bin_path(venv: Path, name: str) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin") / name


def clean_env() -> dict[str, str]:
    """Ambiente sem nada do repositório: nem PYTHONPATH nem o .venv do livro."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "VIRTUAL_ENV", "TRITON_INTERPRET", "JUPYTER_PATH"}}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(ROOT)) and "/.venv/" not in p + "/")
    env["PYTHONNOUSERSITE"] = "1"
    env["MPLBACKEND"] = "Agg"
    return env


def run(cmd, timeout: int, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=clean_env(),
                       timeout=timeout, cwd=cwd)
    if check:
        assert r.returncode == 0, (f"{' '.join(map(str, cmd))} falhou ({r.returncode}):\n"
                                   f"{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r


def cached_venv(name: str, requirements: Path, drop_prefixes: tuple[str, ...] = ()) -> Path:
    """O ambiente de `requirements` (sem as linhas que começam com `drop_prefixes`)."""
    lines = [ln for ln in requirements.read_text(encoding="utf-8").splitlines()
             if not ln.strip().startswith(drop_prefixes)] if drop_prefixes else \
        requirements.read_text(encoding="utf-8").splitlines()
    text = "\n".join(lines) + "\n"
    key = hashlib.sha256(text.encode() + sys.version.encode()).hexdigest()[:12]
    venv = CACHE / f"venv-{name}-{key}"
    ready = venv / ".pronto"
    if ready.exists():
        return venv
    for old in CACHE.glob(f"venv-{name}-*"):
        shutil.rmtree(old, ignore_errors=True)   # este ou ambientes de requisitos antigos
    CACHE.mkdir(exist_ok=True)
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", venv], timeout=300)
    req = venv / "requisitos.txt"
    req.write_text(text, encoding="utf-8")
    run([bin_path(venv, "python"), "-m", "pip", "install", "--quiet", "-r", req], timeout=1500)
    ready.write_text(text, encoding="utf-8")
    return venv


def execute(venv: Path, notebook: Path, cwd: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Roda o caderno com o nbclient do ambiente (o que vem com o jupyterlab) e o kernel dele."""
    out = notebook.with_name(notebook.stem + "-executado.ipynb")
    code = (
        "import sys, nbformat\n"
        "from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=300, kernel_name='python3',\n"
        "               resources={'metadata': {'path': sys.argv[3]}}).execute()\n"
        "nbformat.write(nb, sys.argv[2])\n"
    )
    run([bin_path(venv, "python"), "-c", code, notebook, out, cwd], timeout=timeout, cwd=cwd)
    return nbformat.read(out, as_version=4)


def errors(nb) -> list[str]:
    """Erros das células, fora as `raises-exception` (o erro é o assunto delas)."""
    return [f"{o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code"
            and "raises-exception" not in c.metadata.get("tags", [])
            for o in c.get("outputs", []) if o.output_type == "error"]


def stop(server) -> None:
    """Encerra um servidor Jupyter iniciado por um teste (ele fecha os kernels antes de sair)."""
    server.terminate()
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=60)
