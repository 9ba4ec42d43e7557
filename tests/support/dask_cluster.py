"""Um cluster Dask de verdade nesta máquina, iniciado com os comandos do README.

Os comandos não são copiados aqui: saem de `autograder.plan.tls.cluster_commands`,
a mesma função que escreve o bloco do README ("Corrigir num cluster"; conferido
por tests/grader/plan/test_tls.py) e a saída de `python -m autograder certs`.
Os certificados saem do próprio comando `certs`. A única troca é o executável:
`.venv/bin/dask scheduler` é `python -m distributed.cli.dask_scheduler` (o que
o script do `.venv` roda), sem PYTHONPATH e de outra pasta, como num clone
instalado com `make deps`.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.plan import tls
from grading import ROOT, run_cli
from venv_util import read_when_written


def readme_env() -> dict:
    """O ambiente dos comandos do README: sem PYTHONPATH, porque o `make deps` instala o
    `autograder` junto com o curso. Numa cópia de trabalho cujo ambiente instalou OUTRO clone
    (ambiente dividido entre cópias), o PYTHONPATH volta, senão o Dask correria o código de lá."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    found = subprocess.run([sys.executable, "-c", "import autograder; print(autograder.__file__)"],
                           cwd="/", env=env, capture_output=True, text=True).stdout.strip()
    if Path(found or "/").resolve().parent != (ROOT / "autograder").resolve():
        env["PYTHONPATH"] = str(ROOT)
    return env


def argv_of(command: str) -> tuple[dict, list[str]]:
    """(variáveis de ambiente, argv) de uma linha de comando do README, com o `.venv/bin/...`
    trocado pelo Python desta bateria."""
    words = shlex.split(command)
    env = {}
    while "=" in words[0] and not words[0].startswith((".", "/")):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    exe = words.pop(0)
    if exe == ".venv/bin/dask":
        return env, [sys.executable, "-m", f"distributed.cli.dask_{words.pop(0)}", *words]
    if exe == ".venv/bin/python":
        return env, [sys.executable, *words]
    raise ValueError(f"comando inesperado no README: {command}")


class DaskCluster:
    """Um `dask scheduler` com TLS e N processos `dask worker` (cada um com `--nworkers 1`),
    pelos comandos de `cluster_commands`; o agendador também escreve `--scheduler-file`."""

    def __init__(self, n_workers: int = 2, nanny: bool = True, worker_env: dict | None = None):
        self.dir = Path(tempfile.mkdtemp(prefix="dask-"))
        self.tls_dir = self.dir / "tls"
        run_cli("certs", "--out", self.tls_dir, "--host", "127.0.0.1")
        self.env = readme_env()
        self.procs: list[subprocess.Popen] = []
        self.scheduler_file = self.dir / "agendador.json"
        # `--port 0`: o agendador escolhe a porta e a escreve no --scheduler-file (read_when_written)
        sched = tls.cluster_commands(self.tls_dir, "127.0.0.1", 0, nworkers=1)[0][1]
        extra, argv = argv_of(sched)
        self.scheduler = self._start({**self.env, **extra}, [*argv, "--scheduler-file", str(self.scheduler_file)])
        self.address = read_when_written(self.dir, self.scheduler_file.name, self.scheduler, 90)["address"]
        self.port = int(self.address.rsplit(":", 1)[1])
        _, worker, grade = (c for _, c in tls.cluster_commands(self.tls_dir, "127.0.0.1", self.port,
                                                                   nworkers=1))
        extra, argv = argv_of(worker)
        for _ in range(n_workers):
            self._start({**self.env, **extra, **(worker_env or {})}, [*argv, *([] if nanny else ["--no-nanny"])])
        words = shlex.split(grade)
        self.grade_args = words[words.index("--scheduler"):]        # --scheduler tls://... --tls PASTA
        self.wait_for_workers(n_workers)

    def _start(self, env: dict, argv: list[str]) -> subprocess.Popen:
        p = subprocess.Popen(argv, env=env, cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        self.procs.append(p)
        return p

    def scheduler_args(self) -> list[str]:
        """`grade` pelo arquivo do agendador (o jeito do Slurm), com os mesmos certificados."""
        return ["--scheduler", str(self.scheduler_file), *self.grade_args[2:]]

    def security(self):
        return tls.client_security(self.tls_dir)

    def client(self):
        from distributed import Client
        return Client(self.address, timeout="30s", set_as_default=False, security=self.security())

    def wait_for_workers(self, n: int) -> None:
        end = time.monotonic() + 90
        while True:
            try:
                with self.client() as c:
                    c.wait_for_workers(n, timeout=max(1, end - time.monotonic()))
                return
            except OSError:
                if time.monotonic() > end:
                    raise
                time.sleep(0.5)

    def close(self) -> None:
        import shutil
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
