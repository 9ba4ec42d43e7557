"""Ambientes virtuais novos para os testes do caminho do aluno, do Binder e das páginas.

Um ambiente por conteúdo de requisitos, em .cache/venvs/<hash>, com o hash das
linhas de requisitos (sem comentários) e da versão do Python: quem pede os
mesmos requisitos (o teste do aluno e o dos cadernos das páginas) usa o mesmo
ambiente; a primeira execução instala (alguns minutos), as outras reutilizam.
Nada do repositório vaza para dentro dele: sem PYTHONPATH, sem o .venv do livro
no PATH, sem o site do usuário.

Um índice extra (`--extra-index-url`, o de CPU do PyTorch) que não responde
sai da lista antes de instalar: o pip gastaria ~10 s de novas tentativas por
pacote. Sem ele, a roda `+cpu` tem de vir de uma pasta de rodas desta máquina
(PIP_FIND_LINKS); o Makefile faz o mesmo (alvo `deps`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


@cache
def index_answers(url: str) -> bool:
    """O índice de pacotes `url` responde daqui (a página do torch nele)?"""
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/torch/", timeout=15) as r:
            return r.status == 200
    except (OSError, urllib.error.URLError):
        return False


def requirement_lines(path: Path) -> list[str]:
    """As linhas de um arquivo de requisitos, sem comentários nem linhas vazias."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split(" #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if line:
            out.append(line)
    return out


def installable_lines(path: Path) -> list[str]:
    """As linhas para instalar daqui: sem os índices extras que não respondem."""
    return [ln for ln in requirement_lines(path)
            if not (ln.startswith("--extra-index-url") and not index_answers(ln.split()[1]))]


def cached_venv(requirements: Path) -> Path:
    """O ambiente de `requirements`, compartilhado por quem pede os mesmos requisitos."""
    text = "\n".join(installable_lines(requirements)) + "\n"
    key = hashlib.sha256(text.encode() + sys.version.encode()).hexdigest()[:16]
    venvs = CACHE / "venvs"
    venv = venvs / key
    ready = venv / ".pronto"
    if ready.exists():
        return venv
    venvs.mkdir(parents=True, exist_ok=True)
    # Os processos do pytest-xdist que pedem o mesmo ambiente esperam quem o está criando
    # (um trava o arquivo; o outro acorda com o ambiente pronto).
    with open(venvs / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if ready.exists():
            return venv
        shutil.rmtree(venv, ignore_errors=True)   # uma instalação interrompida
        base = getattr(sys, "_base_executable", sys.executable)
        run([base, "-m", "venv", venv], timeout=300)
        req = venv / "requisitos.txt"
        req.write_text(text, encoding="utf-8")
        # Com os .pyc compilados na instalação: sem eles (`--no-compile`, metade da CPU do pip), cada
        # kernel compilaria o torch de novo onde PYTHONDONTWRITEBYTECODE=1 (como nas máquinas da CI):
        # os cadernos das páginas ficaram 136 s mais lentos numa rodada de 2026-12-05.
        run([bin_path(venv, "python"), "-m", "pip", "install", "--quiet", "-r", req], timeout=1500)
        ready.write_text(text, encoding="utf-8")
    return venv


def fresh_venv_over(base_venv: Path, dest: Path) -> Path:
    """Um ambiente novo (segundos) que enxerga os pacotes de `base_venv` (um .pth), sem rede.

    É o ambiente "de quem abre o caderno": os pacotes do arquivo de requisitos
    já estão lá, e o que o caderno instala (o pacote do curso) vai só para ele.
    """
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", "--without-pip", dest], timeout=300)
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    base_site = run([bin_path(base_venv, "python"), "-c", code], timeout=60).stdout.strip()
    site = run([bin_path(dest, "python"), "-c", code], timeout=60).stdout.strip()
    # addsitedir: também os .pth do ambiente de base (pacotes editáveis, setuptools).
    Path(site, "ambiente-base.pth").write_text(f"import site; site.addsitedir({base_site!r})\n",
                                               encoding="utf-8")
    return dest


# O começo dos programas que rodam um caderno com o nbclient de um ambiente novo (`python -c`):
# o nbformat importa o jsonschema, que monta as gramáticas do rfc3987_syntax (~1 s de CPU por
# processo, só para validar IRIs, o que nenhum caderno usa); o corretor faz o mesmo
# (autograder/__init__.py). O kernel, um processo à parte, não é tocado.
#
# O kernel fala com o nbclient pelo transporte `ipc` (sockets Unix numa pasta só dele), não por TCP:
# com TCP o jupyter_client escolhe portas livres, solta-as e o kernel as pega ~1 s depois; com os
# testes em paralelo (clusters do Dask, Chromium, pip), outro processo pegou uma delas nesse meio
# tempo ("Address already in use", "Kernel died before replying to kernel_info"), uma falha da
# bancada e não do caderno. O transporte não muda nada do que o caderno faz. No Windows, TCP.
NBCLIENT_PRELUDE = (
    "import sys\nsys.modules.setdefault('rfc3987_syntax', None)\n"
    "def notebook_client(nb, **kw):\n"
    "    import atexit, os, shutil, tempfile\n"
    "    from nbclient import NotebookClient\n"
    "    from traitlets.config import Config\n"
    "    c = Config()\n"
    "    if os.name == 'posix':\n"
    "        folder = tempfile.mkdtemp(prefix='k')\n"
    "        atexit.register(shutil.rmtree, folder, True)\n"
    "        c.KernelManager.transport = 'ipc'\n"
    "        c.KernelManager.ip = os.path.join(folder, 'k')\n"
    "    return NotebookClient(nb, kernel_name='python3', config=c, **kw)\n"
)


def keep_going_code(timeout: int) -> str:
    """O programa (`python -c`, argv[1] = o caderno) que roda o caderno com o nbclient do ambiente e
    o grava no mesmo arquivo, com as saídas, também quando uma célula falha (quem chama lê o erro)."""
    return NBCLIENT_PRELUDE + (
        "import sys, nbformat\n"
        "from nbclient.exceptions import CellExecutionError\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "try:\n"
        f"    notebook_client(nb, timeout={int(timeout)}).execute()\n"
        "except CellExecutionError:\n"
        "    pass\n"
        "nbformat.write(nb, sys.argv[1])\n")


def execute(venv: Path, notebook: Path, cwd: Path, timeout: int = 600) -> "nbformat.NotebookNode":
    """Roda o caderno com o nbclient do ambiente (o que vem com o jupyterlab) e o kernel dele."""
    out = notebook.with_name(notebook.stem + "-executado.ipynb")
    code = NBCLIENT_PRELUDE + (
        "import sys, nbformat\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "notebook_client(nb, timeout=300, resources={'metadata': {'path': sys.argv[3]}}).execute()\n"
        "nbformat.write(nb, sys.argv[2])\n"
    )
    import nbformat   # aqui, não no topo: `python venv_util.py` roda sem nada além da biblioteca padrão

    run([bin_path(venv, "python"), "-c", code, notebook, out, cwd], timeout=timeout, cwd=cwd)
    return nbformat.read(out, as_version=4)


def errors(nb) -> list[str]:
    """Erros das células, fora as `raises-exception` (o erro é o assunto delas)."""
    return [f"{o.ename}: {o.evalue}" for c in nb.cells if c.cell_type == "code"
            and "raises-exception" not in c.metadata.get("tags", [])
            for o in c.get("outputs", []) if o.output_type == "error"]


def read_when_written(folder: Path, pattern: str, proc: subprocess.Popen, timeout: float) -> dict:
    """O JSON que o servidor `proc` escreve em `folder` ao subir (o primeiro que casa com `pattern`
    e já se lê inteiro). É assim que um servidor que escolheu a própria porta diz qual é: uma porta
    livre escolhida antes e passada depois pode ser tomada no meio por outro teste em paralelo."""
    import json
    import time

    deadline = time.monotonic() + timeout
    while True:
        for path in folder.glob(pattern):
            try:
                return json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                pass                                     # escrito pela metade: a próxima volta lê
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} saiu com {proc.returncode} antes de escrever {folder / pattern}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{proc.args[0]} não escreveu {folder / pattern} em {timeout:.0f} s")
        time.sleep(0.2)


def start_lab(jupyter: Path, root: Path, env: dict[str, str], token: str, runtime: Path,
              timeout: float = 300) -> tuple[subprocess.Popen, str]:
    """Sobe `jupyter lab` em `root` e espera /api/status responder; devolve (processo, endereço).
    A porta é a que o servidor escolhe (`--port=0`) e escreve no jpserver-*.json da pasta de
    execução `runtime`, só dele (`read_when_written`)."""
    import time

    runtime.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen(
        [str(jupyter), "lab", "--no-browser", "--port=0", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={root}", *(["--allow-root"] if os.geteuid() == 0 else [])],
        env={**env, "JUPYTER_RUNTIME_DIR": str(runtime)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    try:
        base = f"http://127.0.0.1:{read_when_written(runtime, 'jpserver-*.json', server, timeout)['port']}"
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=10) as r:
                    if r.status == 200:
                        return server, base
            except OSError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, \
                f"o JupyterLab não subiu (saída {server.poll()}, endereço {base})"
            time.sleep(0.5)
    except BaseException:
        stop(server)
        raise


def stop(server) -> None:
    """Encerra um servidor Jupyter iniciado por um teste (ele fecha os kernels antes de sair)."""
    server.terminate()
    try:
        server.wait(timeout=60)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=60)


if __name__ == "__main__":
    # `make test` constrói aqui, ao lado do .venv, os ambientes que a camada env vai pedir
    # (requirements-aluno.txt, binder/requirements.txt): o pip do .venv ocupa um núcleo só, e o
    # outro estava parado. Roda com o Python da máquina (só a biblioteca padrão); a trava de
    # `cached_venv` faz o teste que chega antes do fim esperar, e o que acha `.pronto` só usa.
    for arg in sys.argv[1:]:
        print(f"{arg}: {cached_venv(ROOT / arg)}", flush=True)
