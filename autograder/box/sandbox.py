"""Caixa de areia (sandbox) para os kernels que executam o código dos alunos.

Cada notebook roda num kernel IPython próprio, iniciado por um *kernel spec*
cujo `argv` chama este módulo como lançador (`python -m autograder.sandbox`).
O lançador, ainda com os direitos do corretor:

0. entra na caixa do notebook (`Box.enter`, um cgroup de cgroup.py com
   limite de memória e de processos do grupo inteiro; o corretor mata tudo o
   que está nela com `Box.close` quando o notebook termina) e, se é root,
   põe trabalho/ e home/ num tmpfs do tamanho do limite de disco
   (`private_disk`, num namespace de montagem só dele);
1. aplica limites de recursos herdados por tudo o que vier depois
   (RLIMIT_AS = memória por processo, RLIMIT_FSIZE = tamanho de arquivo,
   RLIMIT_CORE = 0; RLIMIT_NPROC só sem cgroup);
2. se o corretor é root, entrega a pasta do trabalho e o arquivo de conexão
   ao usuário `nobody` e troca de usuário com `setpriv` (o aluno nunca roda
   como root);
3. faz `exec` do `bwrap` (bubblewrap), que cria namespaces novos (usuário,
   PID, rede, IPC, UTS, cgroup) e monta só o necessário: /usr e o Python
   somente leitura, /proc, /dev mínimos, um /tmp em memória pequeno e a pasta
   do trabalho deste aluno. A pasta `solutions/`, o gradebook, o workspace e
   os trabalhos dos outros alunos simplesmente não existem lá dentro;
4. sem rede, o kernel fala com o corretor pelo transporte `ipc` (sockets Unix
   na pasta do trabalho, montada no mesmo caminho dentro e fora).

Interrupção: `interrupt_mode = "message"`. O `bwrap --new-session` põe o
kernel numa sessão própria, então um SIGINT para o grupo de processos do
lançador não chegaria ao kernel; o pedido de interrupção vai pelo canal de
controle e o próprio ipykernel manda SIGINT a si mesmo. Um laço que ignora
SIGINT não para: quem chama (worker/executor.py) espera um pouco e mata o kernel.
`--die-with-parent` e `--unshare-pid` garantem que nada sobrevive ao corretor:
quando o init do namespace de PID morre, o kernel do Linux mata todos lá
dentro. O ipykernel não vigia o processo pai (o vigia dele veria o init do
namespace como pai morto): o `--clearenv` tira o JPY_PARENT_PID que o ligaria.
O kernel roda com `python -P` e `ignore_cwd`: a pasta do trabalho não entra
no sys.path.

Sem bubblewrap o corretor se recusa a rodar, a menos que `--sem-sandbox` seja
pedido; nesse modo só os limites de recursos valem (e o aviso diz isso).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

if __package__:
    from . import cgroup
else:  # lançador rodado como script (`python -I sandbox.py`): carrega cgroup.py pelo caminho
    import importlib.util
    _spec = importlib.util.spec_from_file_location(
        "autograder_cgroup", os.path.join(os.path.dirname(os.path.abspath(__file__)), "cgroup.py"))
    cgroup = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = cgroup
    _spec.loader.exec_module(cgroup)

KERNEL_NAME = "autograder-sandbox"
NOBODY = 65534
MiB = 1024 * 1024


@dataclass
class Limits:
    """Limites de um notebook (o kernel e tudo o que ele iniciar)."""

    memory_mib: int = 2048        # cgroup: memória do notebook inteiro (com shm, tmpfs, memfd);
                                  # também RLIMIT_AS por processo (torch importado usa ~700 MiB)
    file_mib: int = 64            # RLIMIT_FSIZE: maior arquivo que o aluno pode escrever
    tmp_mib: int = 128            # tamanho do /tmp em memória dentro da sandbox
    nproc: int = 128              # cgroup pids.max: processos + threads do notebook (sem cgroup:
                                  # RLIMIT_NPROC, que conta por usuário)
    disk_mib: int = 256           # pastas trabalho/ e home/ num tmpfs deste tamanho (root)
    threads: int = 1              # OMP/MKL/OpenBLAS: 1 thread por kernel (nota igual em série e em paralelo)
    cpus: float = 1.0             # cgroup cpu: núcleos de cada kernel (cota), todos com o mesmo peso:
                                  # processos a mais num notebook não tiram CPU de outro (revisão C6)


@dataclass
class SandboxConfig:
    enabled: bool = True
    limits: Limits = field(default_factory=Limits)
    python: str = ""              # intérprete com ipykernel (o do corretor)
    extra_ro: list[str] = field(default_factory=list)   # pastas extras somente leitura
    zygote: str = ""              # socket do molde (zygote.py); vazio: cada kernel pelo bwrap

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "SandboxConfig":
        d = json.loads(text)
        d["limits"] = Limits(**d["limits"])
        return cls(**d)


def bwrap_path() -> str | None:
    return shutil.which("bwrap")


def bwrap_works() -> tuple[bool, str]:
    """Testa se o bwrap consegue criar os namespaces aqui (não basta existir)."""
    exe = bwrap_path()
    if exe is None:
        return False, "o programa `bwrap` (pacote bubblewrap) não foi encontrado"
    # o mesmo modo dos kernels: root monta sem namespace de usuário e troca para nobody lá dentro
    if os.geteuid() == 0 and os.path.exists("/usr/bin/setpriv"):
        ns = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        inner = ["/usr/bin/setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--", "/usr/bin/true"]
    else:
        ns, inner = ["--unshare-all", "--cap-drop", "ALL"], ["/usr/bin/true"]
    cmd = [exe, *ns, "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr",
           *_system_links(), "--proc", "/proc", "--dev", "/dev", "--", *inner]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"o bwrap não rodou: {e}"
    if r.returncode != 0:
        return False, f"o bwrap falhou (código {r.returncode}): {r.stderr.strip()[:300]}"
    return True, "ok"


def _system_links() -> list[str]:
    """/bin, /lib, /lib64, /sbin: links para /usr (Debian com /usr unificado) ou montagens."""
    args: list[str] = []
    for p in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(p):
            args += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            args += ["--ro-bind", p, p]
    return args


# Arquivos de /etc que programas comuns leem (nada secreto: sem shadow, sem chaves).
_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf",
              "passwd", "group", "hosts", "fonts", "mime.types")


def _python_roots(python: str | None = None) -> list[str]:
    """Pastas que o intérprete precisa: o venv e o Python base (caminhos reais).

    O lançador roda com o mesmo intérprete do kernel, então basta olhar sys; mas ele roda sem
    o `site` (-S, a partida fica 20 ms mais curta), e aí sys.prefix é o do Python base: o venv
    vem de `python` (a pasta com pyvenv.cfg acima de bin/)."""
    prefixes = [sys.prefix, sys.base_prefix, sys.exec_prefix]
    if python:
        venv = os.path.dirname(os.path.dirname(os.path.abspath(python)))
        if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
            prefixes.insert(0, venv)
    roots: list[str] = []
    for p in prefixes:
        for q in (p, os.path.realpath(p)):
            if q not in roots and not q.startswith("/usr/"):
                roots.append(q)
    return roots


def kernel_env(limits: Limits, home: str) -> dict[str, str]:
    """Ambiente do kernel do aluno (todo o resto é apagado)."""
    n = str(limits.threads)
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "MPLCONFIGDIR": os.path.join(home, ".matplotlib"),
        "IPYTHONDIR": os.path.join(home, ".ipython"),
        "OMP_NUM_THREADS": n,
        "MKL_NUM_THREADS": n,
        "OPENBLAS_NUM_THREADS": n,
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "MALLOC_ARENA_MAX": "2",          # menos arenas: o limite de memória mede o que se usa
        "NBGRADER_EXECUTION": "autograde",
    }


def build_command(cfg: SandboxConfig, connection_file: str, *, drop_to: int | None = None,
                  extra: list[str] | None = None) -> tuple[list[str], dict[str, str]]:
    """Comando (já sem o lançador) que inicia o kernel, e o ambiente dele.

    drop_to: uid para o qual trocar *dentro* da sandbox (corretor root). O
    bwrap roda como root para conseguir montar pastas que `nobody` nem
    atravessa (o Python em /root/.pyenv, por exemplo); lá dentro o `setpriv`
    troca de usuário, zera as capacidades e liga no_new_privs antes do kernel."""
    run_dir = os.path.dirname(os.path.abspath(connection_file))
    work_dir = os.path.join(run_dir, "trabalho")
    home = os.path.join(run_dir, "home")
    env = kernel_env(cfg.limits, home)
    # -P (safe path) e ignore_cwd: nem o Python nem o IPython põem a pasta do trabalho
    # em sys.path, então um numpy.py ou ipykernel_launcher.py entregue ali não substitui nada
    kernel = [cfg.python, "-P", "-m", "ipykernel_launcher", "-f", connection_file,
              "--HistoryManager.hist_file=:memory:", "--InteractiveShellApp.ignore_cwd=True", *(extra or [])]
    if not cfg.enabled:
        return kernel, env
    args = [bwrap_path() or "bwrap"]
    if drop_to is None:
        args += ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                 "--unshare-cgroup-try", "--cap-drop", "ALL"]
    else:  # sem namespace de usuário: nele só o uid 0 existiria e o setpriv não trocaria
        args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    args += ["--die-with-parent", "--new-session", "--hostname", "sandbox",
             "--ro-bind", "/usr", "/usr", *_system_links()]
    # /tmp em memória ANTES das outras montagens: o bwrap monta em ordem, e um
    # --tmpfs /tmp depois esconderia um Python ou repositório que mora em /tmp
    # (visto num clone em /tmp: "setpriv: failed to execute .../.venv/bin/python").
    args += ["--proc", "/proc"] + [
        "--dev", "/dev", "--size", str(cfg.limits.tmp_mib * MiB), "--tmpfs", "/tmp"]
    made: set[str] = set()

    def parents(path: str) -> list[str]:
        """Cria as pastas acima de `path` com modo 0755: sem isso o bwrap as cria
        com o modo da original (/root é 0700) e `nobody` não as atravessa."""
        out: list[str] = []
        d = os.path.dirname(path)
        chain = []
        while d not in ("/", ""):
            chain.append(d)
            d = os.path.dirname(d)
        for d in reversed(chain):
            if d not in made and d not in ("/usr", "/tmp", "/proc", "/dev"):
                made.add(d)
                out += ["--perms", "0755", "--dir", d]
        return out

    for name in _ETC_FILES:
        p = os.path.join("/etc", name)
        if os.path.exists(p):
            args += parents(p) + ["--ro-bind", p, p]
    for p in _python_roots(cfg.python) + list(cfg.extra_ro):
        args += parents(p) + ["--ro-bind", p, p]
    cpu = "/sys/devices/system/cpu"   # torch/OpenBLAS leem a topologia; sem isso avisam no stderr
    if os.path.isdir(cpu):
        args += parents(cpu) + ["--ro-bind", cpu, cpu]
    # a pasta do trabalho vem depois do /tmp: o bwrap monta em ordem
    args += parents(run_dir) + ["--bind", run_dir, run_dir, "--chdir", work_dir, "--clearenv"]
    for k, v in env.items():
        args += ["--setenv", k, v]
    args += ["--"]
    if drop_to is not None:
        args += ["/usr/bin/setpriv", f"--reuid={drop_to}", f"--regid={drop_to}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    args += kernel
    return args, env


def kernel_spec(cfg: SandboxConfig) -> dict:
    return {
        # o arquivo roda como script e só precisa da stdlib: -I (ignora PYTHONPATH e o site do
        # usuário) e -S (sem o site: nem os .pth dos pacotes instalados, ~20 ms por kernel)
        "argv": [cfg.python, "-I", "-S", os.path.abspath(__file__), "--config", cfg.to_json(),
                 "{connection_file}"],
        "display_name": "Python 3 (sandbox do autograder)",
        "language": "python",
        "interrupt_mode": "message",
        "metadata": {"debugger": False},
    }


def write_kernel_spec(cfg: SandboxConfig, kernels_dir: Path) -> Path:
    """Escreve kernels_dir/autograder-sandbox/kernel.json e devolve kernels_dir."""
    d = kernels_dir / KERNEL_NAME
    d.mkdir(parents=True, exist_ok=True)
    (d / "kernel.json").write_text(json.dumps(kernel_spec(cfg), indent=1), encoding="utf-8")
    return kernels_dir


def _chown_tree(path: str, uid: int) -> None:
    for root, dirs, files in os.walk(path):
        os.chown(root, uid, uid)
        for f in files:
            os.chown(os.path.join(root, f), uid, uid, follow_symlinks=False)


# ----------------------------------------------------------------------------- a caixa

_probe: tuple | None = None


def box_backend() -> tuple:
    """(backend de cgroup, motivo): testado uma vez por processo; backend None = sem cgroup."""
    global _probe
    if _probe is None:
        _probe = cgroup.detect()
    return _probe


def box_warning() -> str | None:
    """O aviso (uma vez, pelo corretor) quando não há cgroup; None quando há."""
    backend, why = box_backend()
    if backend is not None:
        return None
    return (f"AVISO: sem cgroup por notebook ({why}). Valem só os limites por processo (rlimits): "
            "memória compartilhada e memfd não contam no limite de memória, o limite de processos "
            "é por usuário (somando todos os kernels) e processos que o aluno soltar podem "
            "sobreviver ao notebook.")


class Box:
    """A caixa de um notebook: um cgroup com o kernel e tudo o que ele iniciar.

    O lançador (ainda root, antes de trocar de usuário e de fazer exec do bwrap)
    chama `enter()`: cria o cgroup, põe os limites e entra nele; os filhos
    herdam. O corretor, quando o notebook termina (como quer que tenha
    terminado), chama `close()`: mata todos os processos do grupo, confere que
    ficou vazio e remove o cgroup. O nome vem da pasta do kernel, que os dois
    lados conhecem (`for_run_dir`)."""

    def __init__(self, name: str, limits: Limits | None = None, backend=None):
        self.name = name
        self.limits = limits or Limits()
        self._backend = backend

    @classmethod
    def for_run_dir(cls, run_dir, limits: Limits | None = None) -> "Box":
        return cls(os.path.basename(os.path.abspath(str(run_dir))), limits)

    @property
    def backend(self):
        return self._backend if self._backend is not None else box_backend()[0]

    def enter(self, create: bool = True) -> bool:
        """Cria a caixa (`create`; senão ela já existe, com os limites) e põe este processo nela;
        False (e o motivo no stderr) se não há cgroup."""
        b = self.backend
        if b is None:
            print(box_warning(), file=sys.stderr, flush=True)
            return False
        try:
            if create:
                b.create(self.name, cgroup.CgroupLimits(memory_bytes=self.limits.memory_mib * MiB,
                                                        pids=self.limits.nproc, cpus=self.limits.cpus))
            b.add(self.name, os.getpid())
        except (OSError, cgroup.CgroupError) as e:
            print(f"AVISO: não consegui pôr o kernel no cgroup {self.name}: {e}; "
                  "valem só os limites por processo", file=sys.stderr, flush=True)
            return False
        return True

    def pids(self) -> list[int]:
        return self.backend.pids(self.name) if self.backend is not None else []

    def kill(self) -> bool:
        """Mata todos os processos da caixa; True quando ela ficou vazia (ou não existe)."""
        b = self.backend
        return True if b is None else b.kill(self.name)

    def memory_limit_mib(self) -> int | None:
        """O limite de memória gravado no cgroup, em MiB (None sem cgroup)."""
        b = self.backend
        v = None if b is None else b.memory_limit(self.name)
        return None if v is None else v // MiB

    def memory_exceeded(self) -> bool:
        """O kernel do Linux matou algum processo da caixa por falta de memória?"""
        b = self.backend
        return b is not None and b.oom_kills(self.name) > 0

    def close(self) -> None:
        """Mata o que restou e remove o cgroup. Levanta CgroupError se algo sobreviveu."""
        b = self.backend
        if b is None:
            return
        if not b.kill(self.name):
            raise cgroup.CgroupError(f"processos do cgroup {self.name} não morreram: {b.pids(self.name)}")
        b.remove(self.name)


def clean_stale_boxes(prefix: str) -> list[str]:
    """Mata e remove as caixas de uma correção interrompida (nomes que começam com `prefix`)."""
    b = box_backend()[0]
    if b is None:
        return []
    gone = []
    for name in b.names():
        if name.startswith(prefix):
            try:
                Box(name, backend=b).close()
                gone.append(name)
            except (OSError, cgroup.CgroupError):
                pass
    return gone


def private_disk(run_dir: str, size_mib: int) -> bool:  # pragma: no cover - roda no lançador
    """trabalho/ e home/ num tmpfs de `size_mib` MiB, visível só para este kernel.

    O lançador (root) entra num namespace de montagem próprio, monta o tmpfs em
    `run_dir/disco`, copia as duas pastas para lá e as monta por cima das
    originais; o bwrap herda essas montagens. Escrever além do tamanho dá
    "No space left on device" ao aluno; as páginas contam na memória da caixa.
    O tmpfs some sozinho quando o último processo do namespace termina."""
    import ctypes
    import shutil as _sh
    libc = ctypes.CDLL(None, use_errno=True)
    clone_newns, ms_rec, ms_private, ms_bind, ms_nosuid, ms_nodev = 0x20000, 0x4000, 1 << 18, 4096, 2, 4

    def mount(src, dst, fstype, flags, data):
        if libc.mount(src, dst.encode(), fstype, flags, data) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"mount {dst}: {os.strerror(e)}")

    try:
        if libc.unshare(clone_newns) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"unshare(CLONE_NEWNS): {os.strerror(e)}")
        mount(b"none", "/", None, ms_rec | ms_private, None)
        disk = os.path.join(run_dir, "disco")
        os.makedirs(disk, mode=0o755, exist_ok=True)
        mount(b"tmpfs", disk, b"tmpfs", ms_nosuid | ms_nodev, f"size={size_mib}m,mode=0755".encode())
        for sub in ("trabalho", "home"):
            src, dst = os.path.join(run_dir, sub), os.path.join(disk, sub)
            _sh.copytree(src, dst, symlinks=True)
            mount(dst.encode(), src, None, ms_bind, None)
    except OSError as e:
        print(f"AVISO: sem limite de disco para este kernel ({e}); vale só o RLIMIT_FSIZE por arquivo",
              file=sys.stderr, flush=True)
        return False
    return True


def process_limits(lim: Limits) -> None:
    """Os limites por processo, herdados por tudo o que vier depois: RLIMIT_AS (memória),
    RLIMIT_FSIZE (tamanho de arquivo) e RLIMIT_CORE = 0."""
    for res, mib in ((resource.RLIMIT_AS, lim.memory_mib), (resource.RLIMIT_FSIZE, lim.file_mib)):
        resource.setrlimit(res, (mib * MiB, mib * MiB))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def launch(cfg: SandboxConfig, connection_file: str, extra: list[str] | None = None) -> None:  # pragma: no cover - faz exec
    """Põe o lançador na caixa, aplica os limites, troca de usuário e faz exec do kernel na sandbox."""
    lim = cfg.limits
    try:   # o kernel morre junto com o processo de correção (sem sandbox não há --die-with-parent)
        import ctypes
        import signal
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - fora do Linux: segue sem
        pass
    run_dir = os.path.dirname(os.path.abspath(connection_file))
    # A caixa (cgroup) ANTES de tudo: daqui em diante, cada processo e cada página de
    # memória (inclusive o tmpfs do disco abaixo) contam no limite do notebook.
    boxed = Box.for_run_dir(run_dir, lim).enter()
    process_limits(lim)
    drop = cfg.enabled and os.geteuid() == 0 and os.path.exists("/usr/bin/setpriv")
    if drop and cfg.zygote:
        code = _via_zygote(cfg, connection_file, extra or [])
        if code is not None:
            os._exit(code)
    if drop:
        private_disk(run_dir, lim.disk_mib)
    cmd, env = build_command(cfg, connection_file, drop_to=NOBODY if drop else None, extra=extra)
    if cfg.enabled:
        if drop:
            # root: o aluno roda como nobody (a pasta do trabalho passa a ser dele)
            _chown_tree(run_dir, NOBODY)
        if not boxed:   # sem cgroup: o limite de processos é por usuário (todas as sandboxes de nobody)
            resource.setrlimit(resource.RLIMIT_NPROC, (lim.nproc, lim.nproc))
    else:
        os.chdir(os.path.join(run_dir, "trabalho"))
        env = {**env, "PATH": os.path.dirname(cfg.python) + ":" + env["PATH"]}
    os.execvpe(cmd[0], cmd, env)


def _via_zygote(cfg: SandboxConfig, connection_file: str, extra: list[str]) -> int | None:  # pragma: no cover
    """Pede o kernel ao molde (zygote.py) e espera por ele; devolve o código de saída do kernel,
    ou None (com o motivo no log) se o molde não pôde: aí o lançador segue pelo bwrap."""
    import socket
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(cfg.zygote)
        req = {"config": cfg.to_json(), "connection_file": connection_file, "extra": extra}
        socket.send_fds(s, [json.dumps(req).encode()], [1, 2])
        data = s.recv(65536)
        first = json.loads(data) if data else {"error": "o molde fechou a conexão"}
    except (OSError, ValueError) as e:
        first = {"error": f"{type(e).__name__}: {e}"}
    if "ok" not in first:
        print(f"AVISO: o molde não iniciou o kernel ({first.get('error')}); sigo pelo bwrap",
              file=sys.stderr, flush=True)
        return None
    try:
        last = s.recv(65536)
        return int(json.loads(last)["exit"]) & 0xFF if last else 1
    except (OSError, ValueError, KeyError):
        return 1


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - faz exec
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 3 or argv[0] != "--config":
        sys.exit("uso: python -m autograder.sandbox --config JSON ARQUIVO_DE_CONEXAO [ARGS DO KERNEL]")
    cfg = SandboxConfig.from_json(argv[1])
    launch(cfg, argv[2], argv[3:])


if __name__ == "__main__":
    main()
