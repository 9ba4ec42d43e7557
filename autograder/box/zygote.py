"""O molde dos kernels: um processo que já importou numpy, torch e o ipykernel e nunca rodou
código de ninguém; cada kernel da sandbox é um `fork` dele, isolado como o bwrap isolaria.

Importar o torch custa ~2 s de CPU, e cada notebook ganha um kernel novo (sandbox.py): o
molde paga isso uma vez por processo de correção. Ele é iniciado pelo corretor (root, com
bubblewrap e setpriv, o modo em que o kernel troca para `nobody`) com `exec` de um Python
novo e o ambiente do kernel, então a memória dele não tem nada do corretor (nem o segredo
das entradas ocultas). O lançador de sandbox.py, já na caixa do notebook, pede um kernel
pelo socket do molde (uma pasta 0700 de root) e espera por ele; se o molde não responde,
o lançador segue pelo caminho de sempre (bwrap).

Cada pedido vira três processos:

1. **guarda** (filho do molde, root): entra na caixa do notebook (cgroup), aplica os
   rlimits, põe trabalho/ e home/ num tmpfs (`private_disk`), entrega a pasta a `nobody`,
   cria namespaces novos de PID, rede, IPC, UTS e cgroup e espera o init; se o lançador
   morre (o corretor o matou), mata o init, e com ele tudo o que está no namespace;
2. **init** (PID 1 do namespace): namespace de montagem próprio com uma raiz mínima num
   tmpfs — /usr, o Python e alguns arquivos de /etc somente leitura, /proc novo, /dev com
   null, zero, full, random, urandom e tty, /tmp em memória, a pasta do trabalho — e
   `pivot_root`: o resto do disco não existe lá dentro; recolhe os órfãos;
3. **kernel**: sessão nova, fecha todo descritor herdado, zera o conjunto limite de
   capacidades, troca para `nobody`, liga no_new_privs, confere em /proc/self/status que
   não sobrou capacidade alguma, troca o ambiente pelo do kernel, sorteia de novo as
   sementes que o fork copiaria (`random`, numpy, torch) e roda `ipykernel_launcher` como
   `python -P -m` rodaria.

Uso (só o corretor): `python -P zygote.py --config JSON --socket CAMINHO` com o fim de
leitura de um pipe como stdin: quando o corretor fecha (ou morre), o molde sai, e os
guardas (PR_SET_PDEATHSIG) levam os kernels junto."""

from __future__ import annotations

import ctypes
import gc
import json
import os
import platform
import random
import select
import signal
import socket
import sys

if __package__:
    from . import sandbox
else:   # rodado como script pelo corretor: sandbox.py pelo caminho (ele carrega cgroup.py)
    import importlib.util
    _spec = importlib.util.spec_from_file_location(
        "autograder_sandbox", os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox.py"))
    sandbox = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = sandbox
    _spec.loader.exec_module(sandbox)

# Nada que inicie threads. O matplotlib lê do ambiente a pasta de configuração e o backend:
# o molde recebe o backend que o ipykernel poria (INLINE_BACKEND) e o cache de fontes do
# corretor, e o kernel recalcula as pastas com o ambiente dele (`_matplotlib_dirs`).
# `ipykernel.debugger` (o pydevd do debugpy) é o que o IPKernelApp importava na partida de
# cada kernel: 0,1 s de CPU dos 0,2 s de um kernel que sai do molde. Os da segunda linha são
# os que o `IPKernelApp.initialize` ainda importava em cada kernel (o psutil, para os
# endereços locais do jupyter_client, ~20 ms).
PRELOAD = ("numpy", "torch", "ipykernel.kernelapp", "ipykernel.ipkernel", "debugpy", "IPython.core.debugger",
           "sqlite3", "matplotlib.pyplot", "ipykernel.debugger",
           "psutil", "IPython.core.completerlib", "IPython.core.oinspect", "IPython.extensions.storemagic",
           "tornado.platform.asyncio")
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"      # o que o ipykernel põe em MPLBACKEND
MAX_REQUEST = 64 * 1024
_PRELOAD_ENV: dict[str, str] = {}          # variáveis que a importação do PRELOAD definiu
_ADDED_MODULES = ("autograder_sandbox", "autograder_cgroup", "autograder_zygote")

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x20000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 0x4000, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")


class ZygoteError(OSError):
    """Um passo do isolamento falhou (o lançador volta ao bwrap)."""


def _check(ret: int, what: str) -> None:
    if ret != 0:
        e = ctypes.get_errno()
        raise ZygoteError(e, f"{what}: {os.strerror(e)}")


def _mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = (lambda s: None if s is None else s.encode())
    _check(_libc.mount(enc(src), dst.encode(), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {dst}")


def _prctl(op: int, arg: int, arg3: int = 0) -> int:
    return _libc.prctl(op, ctypes.c_ulong(arg), ctypes.c_ulong(arg3), 0, 0)


# ----------------------------------------------------------------------------- o molde

def _fast_cell_names() -> None:
    """O nome de arquivo de cada célula executada vem de um hash do texto dela (o ipykernel o usa
    para o depurador e o IPython, para o `linecache` e o "Cell In[N]" dos tracebacks). O do
    ipykernel é um murmur2 em Python puro, byte a byte: cada pedido do corretor ao aluno chega
    como uma célula com os argumentos dentro (no cap. 8, os pesos do modelo, centenas de KB), e
    esse hash era ~11 % da CPU dos kernels nos capítulos 8, 11 e 12 (py-spy, 2026-12-06). Aqui, o
    mesmo formato de nome (pasta temporária do kernel, um inteiro de 32 bits, `.py`) com o
    BLAKE2 do hashlib, em C. Nenhum depurador se conecta aos kernels da correção."""
    import hashlib

    import ipykernel.compiler as compiler

    def fast_hash(code: str, seed: int) -> int:
        digest = hashlib.blake2b(code.encode("utf-8"), digest_size=4,
                                 key=seed.to_bytes(4, "little")).digest()
        return int.from_bytes(digest, "little")

    compiler.murmur2_x86 = fast_hash


def serve(cfg, sock_path: str) -> None:
    """O laço do molde: um `fork` por pedido; sai quando o stdin (pipe do corretor) fecha."""
    gc.disable()
    before = dict(os.environ)
    for name in PRELOAD:
        __import__(name)
    # o que a importação pôs no ambiente (o debugpy: PYDEVD_USE_FRAME_EVAL) vai para cada kernel,
    # como num kernel do bwrap, que importa os mesmos módulos com o ambiente dele
    _PRELOAD_ENV.update({k: v for k, v in os.environ.items() if before.get(k) != v})
    _fast_cell_names()
    gc.freeze()
    if len(os.listdir("/proc/self/task")) != 1:
        sys.exit("molde: a importação iniciou threads; um fork delas não seria seguro")
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(sock_path)
    os.chmod(sock_path, 0o600)
    listener.listen(16)
    root = os.path.join(os.path.dirname(sock_path), "raiz")    # ponto de montagem das raízes
    print("pronto", flush=True)
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [], 5.0)
        while True:        # recolhe os guardas que já terminaram
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            return
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        try:
            msg, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 2)
        except OSError:
            conn.close()
            continue
        if os.fork() == 0:
            listener.close()
            try:
                _guard(conn, msg, fds, cfg, root)
            finally:
                os._exit(70)
        conn.close()
        for fd in fds:
            os.close(fd)


def _reply(conn: socket.socket, **kw) -> None:
    try:
        conn.send(json.dumps(kw).encode())
    except OSError:
        pass


# ----------------------------------------------------------------------------- 1. guarda

def _guard(conn: socket.socket, msg: bytes, fds: list[int], base_cfg, root: str) -> None:
    """Filho do molde, ainda root: caixa, limites, disco, namespaces; espera o init."""
    try:
        req = json.loads(msg)
        cfg = sandbox.SandboxConfig.from_json(req["config"])
        connection_file = os.path.abspath(req["connection_file"])
        extra = [str(a) for a in req.get("extra", [])]
        if cfg.limits.threads != base_cfg.limits.threads or cfg.python != base_cfg.python:
            raise ZygoteError(0, "o pedido não combina com o molde (threads ou intérprete)")
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        os.setsid()
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        for target, fd in zip((1, 2), fds):
            os.dup2(fd, target)
        run_dir = os.path.dirname(connection_file)
        lim = cfg.limits
        boxed = sandbox.Box.for_run_dir(run_dir, lim).enter(create=False)   # o lançador já a criou
        sandbox.process_limits(lim)
        sandbox.private_disk(run_dir, lim.disk_mib)
        sandbox._chown_tree(run_dir, sandbox.NOBODY)
        if not boxed:
            import resource
            resource.setrlimit(resource.RLIMIT_NPROC, (lim.nproc, lim.nproc))
        _check(_libc.unshare(CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP),
               "unshare")
        status_r, status_w = os.pipe()
        init = os.fork()
        if init == 0:
            os.close(status_r)
            conn.close()
            _init(cfg, connection_file, extra, status_w, root)
        os.close(status_w)
        answer = os.read(status_r, 4096).decode(errors="replace")
        os.close(status_r)
    except Exception as e:  # noqa: BLE001 - qualquer falha aqui: o lançador usa o bwrap
        _reply(conn, error=f"{type(e).__name__}: {e}")
        os._exit(0)
    if answer != "ok":
        _reply(conn, error=answer or "o init do namespace morreu antes de ficar pronto")
        os.kill(init, signal.SIGKILL)
        os.waitpid(init, 0)
        os._exit(0)
    _reply(conn, ok=True)
    pidfd = os.pidfd_open(init)
    while True:
        ready, _, _ = select.select([conn, pidfd], [], [])
        if pidfd in ready:
            _, status = os.waitpid(init, 0)
            _reply(conn, exit=os.waitstatus_to_exitcode(status))
            os._exit(0)
        if not conn.recv(16):        # o lançador morreu (o corretor o matou): o kernel vai junto
            os.kill(init, signal.SIGKILL)
            os.waitpid(init, 0)
            os._exit(0)


# ----------------------------------------------------------------------------- 2. init

def _init(cfg, connection_file: str, extra: list[str], status_w: int, root: str) -> None:
    """PID 1 do namespace: monta a raiz mínima, inicia o kernel e recolhe os órfãos."""
    try:
        _prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
        _check(_libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        _build_root(cfg, os.path.dirname(connection_file), root)
        name = b"sandbox"
        _check(_libc.sethostname(name, len(name)), "sethostname")
        kernel = os.fork()
        if kernel == 0:
            os.close(status_w)
            _kernel(cfg, connection_file, extra)
        os.write(status_w, b"ok")
    except BaseException as e:  # noqa: BLE001
        os.write(status_w, f"{type(e).__name__}: {e}".encode()[:4000])
        os._exit(71)
    os.close(status_w)
    for fd in range(3, 1024):
        try:
            os.close(fd)
        except OSError:
            pass
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(0)
        if pid == kernel:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _build_root(cfg, run_dir: str, root: str) -> None:
    """A raiz do kernel, na mesma ordem do bwrap de sandbox.build_command."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")

    def inside(path: str) -> str:
        return os.path.join(root, path.lstrip("/"))

    def mkdirs(path: str) -> None:
        """As pastas acima de `path` com modo 0755 (como `--perms 0755 --dir` no bwrap)."""
        cur = root
        for part in path.strip("/").split("/"):
            cur = os.path.join(cur, part)
            if not os.path.lexists(cur):
                os.mkdir(cur, 0o755)

    def bind(src: str, ro: bool = True) -> None:
        dst = inside(src)
        mkdirs(os.path.dirname(src))
        if os.path.isdir(src):
            os.makedirs(dst, 0o755, exist_ok=True)
        elif not os.path.exists(dst):
            open(dst, "w").close()
        _mount(src, dst, None, MS_BIND | MS_REC)
        if ro:
            _mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)

    bind("/usr")
    for p in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(p):
            os.symlink(os.readlink(p), inside(p))
        elif os.path.isdir(p):
            bind(p)
    mkdirs("/proc")
    _mount("proc", inside("/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    mkdirs("/dev")
    _mount("tmpfs", inside("/dev"), "tmpfs", MS_NOSUID, f"size={cfg.limits.tmp_mib}m,mode=0755")
    for dev in _DEVICES:
        if os.path.exists(f"/dev/{dev}"):
            bind(f"/dev/{dev}", ro=False)
    os.mkdir(inside("/dev/shm"), 0o1777)
    os.chmod(inside("/dev/shm"), 0o1777)
    for i, std in enumerate(("stdin", "stdout", "stderr")):
        os.symlink(f"/proc/self/fd/{i}", inside(f"/dev/{std}"))
    os.symlink("/proc/self/fd", inside("/dev/fd"))
    mkdirs("/tmp")
    _mount("tmpfs", inside("/tmp"), "tmpfs", MS_NOSUID | MS_NODEV,
           f"size={cfg.limits.tmp_mib}m,mode=1777")
    for name in sandbox._ETC_FILES:
        if os.path.exists(os.path.join("/etc", name)):
            bind(os.path.join("/etc", name))
    for p in sandbox._python_roots(cfg.python) + list(cfg.extra_ro):
        if os.path.exists(p):
            bind(p)
    if os.path.isdir("/sys/devices/system/cpu"):
        bind("/sys/devices/system/cpu")
    bind(run_dir, ro=False)
    os.chdir(root)
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise ZygoteError(0, f"pivot_root sem número de syscall conhecido para {platform.machine()}")
    _check(_libc.syscall(number, b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "umount2 da raiz antiga")
    os.chdir("/")
    _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


# ----------------------------------------------------------------------------- 3. kernel

def _matplotlib_dirs() -> None:
    """As pastas de configuração e de cache do matplotlib importado no molde são as do molde
    (memorizadas na primeira chamada): esquece-as, para valerem as do ambiente do kernel."""
    mpl = sys.modules.get("matplotlib")
    if mpl is None:
        return
    for name, fmt in (("get_configdir", "CONFIGDIR=%s"), ("get_cachedir", "CACHEDIR=%s")):
        fresh = getattr(getattr(mpl, name), "__wrapped__", None)
        if fresh is None or not hasattr(mpl, "_logged_cached"):
            raise ZygoteError(0, f"matplotlib.{name} sem __wrapped__: versão que o molde não conhece")
        setattr(mpl, name, mpl._logged_cached(fmt)(fresh))


def _kernel(cfg, connection_file: str, extra: list[str]) -> None:
    """Sessão nova, sem capacidades, como `nobody`; o ambiente do kernel; o ipykernel."""
    try:
        os.setsid()
        os.closerange(3, 65536)
        for cap in range(64):
            if _prctl(PR_CAPBSET_DROP, cap) != 0 and ctypes.get_errno() != 22:   # EINVAL: não existe
                raise ZygoteError(ctypes.get_errno(), f"PR_CAPBSET_DROP {cap}")
        _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
        os.setgroups([])
        os.setresgid(sandbox.NOBODY, sandbox.NOBODY, sandbox.NOBODY)
        os.setresuid(sandbox.NOBODY, sandbox.NOBODY, sandbox.NOBODY)
        _check(_prctl(PR_SET_NO_NEW_PRIVS, 1), "PR_SET_NO_NEW_PRIVS")
        with open("/proc/self/status") as f:
            caps = {k: v.strip() for k, v in (line.split(":", 1) for line in f) if k.startswith("Cap")}
        if any(int(v, 16) for k, v in caps.items()):
            raise ZygoteError(0, f"sobraram capacidades: {caps}")
        run_dir = os.path.dirname(connection_file)
        os.chdir(os.path.join(run_dir, "trabalho"))
        os.environ.clear()
        os.environ.update(sandbox.kernel_env(cfg.limits, os.path.join(run_dir, "home")))
        os.environ.update({k: v for k, v in _PRELOAD_ENV.items() if k not in os.environ})
        os.environ["PWD"] = os.getcwd()           # o bwrap também o põe
        _matplotlib_dirs()
        random.seed()                    # as sementes que um processo novo sortearia
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        if "torch" in sys.modules:
            sys.modules["torch"].seed()
        for name in _ADDED_MODULES:
            sys.modules.pop(name, None)
        gc.enable()          # o que o molde importou fica congelado (gc.freeze): sem cópias das páginas dele
        import runpy
        sys.argv = ["ipykernel_launcher", "-f", connection_file, "--HistoryManager.hist_file=:memory:",
                    "--InteractiveShellApp.ignore_cwd=True", *extra]
        runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
    except SystemExit as e:
        os._exit(e.code if isinstance(e.code, int) else 1)
    except BaseException as e:  # noqa: BLE001
        print(f"kernel do molde: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        os._exit(70)
    os._exit(0)


# ----------------------------------------------------------------------------- lado do corretor

def available() -> str | None:
    """Por que o molde não vale aqui (em português), ou None quando vale."""
    if os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv"):
        return "o corretor não é root (o kernel não troca de usuário; fica o bwrap)"
    if platform.machine() not in _PIVOT_ROOT:
        return f"arquitetura {platform.machine()} sem pivot_root conhecido"
    if not hasattr(os, "pidfd_open"):
        return "este Python/Linux não tem pidfd_open"
    return None


class Zygote:
    """O molde visto do corretor: `start` o inicia (None se não deu), `close` o encerra.

    O molde é um processo novo (exec), com o ambiente do kernel e nada do corretor; o fim de
    escrita do pipe do stdin dele fica aqui: fechado (ou o corretor morto), ele sai."""

    def __init__(self, proc, directory: str):
        self.proc = proc
        self.dir = directory
        self.socket = os.path.join(directory, "s")

    @classmethod
    def start(cls, cfg, base_dir: str, timeout: float = 60.0, mpl_cache: str | None = None) -> "Zygote | None":
        """mpl_cache: uma pasta com o cache de fontes do matplotlib (senão o molde o refaz, ~1 s)."""
        import shutil
        import subprocess
        import tempfile
        directory = tempfile.mkdtemp(prefix="molde-", dir=base_dir)      # 0700, de root
        os.mkdir(os.path.join(directory, "raiz"), 0o755)
        env = sandbox.kernel_env(cfg.limits, os.path.join(directory, "home"))
        env["MPLBACKEND"] = INLINE_BACKEND
        if mpl_cache and os.path.isdir(mpl_cache):
            shutil.copytree(mpl_cache, env["MPLCONFIGDIR"])
        log = open(os.path.join(directory, "molde.log"), "wb")
        proc = subprocess.Popen(
            [cfg.python, "-P", os.path.abspath(__file__), "--config", cfg.to_json(),
             "--socket", os.path.join(directory, "s")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env, cwd="/", close_fds=True)
        log.close()
        z = cls(proc, directory)
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        if ready and proc.stdout.readline().strip() == b"pronto":
            return z
        z.close()
        shutil.rmtree(directory, ignore_errors=True)
        return None

    def close(self) -> None:
        import shutil
        import subprocess
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def main(argv: list[str]) -> None:
    if len(argv) != 4 or argv[0] != "--config" or argv[2] != "--socket":
        sys.exit("uso: python -P zygote.py --config JSON --socket CAMINHO")
    serve(sandbox.SandboxConfig.from_json(argv[1]), argv[3])


if __name__ == "__main__":
    main(sys.argv[1:])
