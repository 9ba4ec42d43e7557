"""Servidor de fork de kernels, rodando ele mesmo dentro da sandbox (bubblewrap).

Por que: iniciar um kernel custa ~0,5 s de CPU (Python + ipykernel) e
importar numpy e torch mais ~1,1 s — a maior parte do trabalho de corrigir um
notebook pequeno. Este processo importa tudo isso uma vez e, para cada
notebook, faz `fork`; o filho vira o kernel do aluno já com os módulos
carregados (cópia sob demanda da memória: o aluno não mexe no zigoto nem nos
outros filhos).

Isolamento de cada filho (o mesmo que o bwrap dá a um kernel avulso):

1. novos namespaces de usuário, montagem, PID, rede, IPC e UTS
   (`unshare`, sem privilégio: o zigoto roda como `nobody`);
2. um /tmp novo e pequeno em memória, e só a pasta deste kernel montada
   dentro dele: as pastas dos outros alunos deixam de existir;
3. um neto é o PID 1 do namespace novo e monta o seu /proc: não vê nem
   alcança os outros kernels (nem o pré-aquecido do próximo aluno);
4. capacidades zeradas, no_new_privs herdado, limites de recursos
   (memória, tamanho de arquivo, processos) e ambiente limpo;
5. PDEATHSIG em cada nível: morto o pai, morre o filho.

Protocolo (stdin/stdout do zigoto, uma linha JSON por pedido): o corretor
manda {"run_dir": ..., "connection_file": ...}; o zigoto responde {"pid": N}
(o processo do meio, que o corretor mata com SIGKILL para encerrar o kernel)
e, quando um filho termina, nada: o corretor observa o pid em /proc.
Roda como script (`python -I zygote.py CONFIG`): só usa a stdlib e o ipykernel.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
import traceback

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
MS_RDONLY, MS_REMOUNT = 1, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG = 1
MiB = 1024 * 1024

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src, target: str, fstype, flags: int, data=None) -> None:
    enc = lambda x: x.encode() if isinstance(x, str) else x  # noqa: E731
    _check(_libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def _die_with_parent() -> None:
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PDEATHSIG)")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _drop_capabilities() -> None:
    header = _CapHeader(0x20080522, 0)            # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()                        # tudo zero
    _check(_libc.capset(ctypes.byref(header), data), "capset")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _child(cfg: dict, req: dict) -> None:
    """Processo do meio: isola e cria o kernel (neto, PID 1 do namespace novo)."""
    run = req["run_dir"]
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)   # o reaper do zigoto não pode colher os filhos do aluno
    _die_with_parent()
    os.setsid()
    log = os.open(os.path.join(run, "kernel.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.closerange(3, 65536)                        # inclusive o canal de pedidos do zigoto
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET
                         | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    run_fd = os.open(run, os.O_PATH | os.O_DIRECTORY)
    keep = [(p, os.open(p, os.O_PATH | os.O_DIRECTORY)) for p in cfg.get("keep", [])]
    # /tmp novo (esconde as pastas dos outros kernels) e, dentro dele, só a deste
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={cfg['tmp_mib'] * MiB},mode=1777")
    os.makedirs(run, exist_ok=True)
    _mount(f"/proc/self/fd/{run_fd}", run, None, MS_BIND | MS_REC)
    os.close(run_fd)
    for path, fd in keep:                          # Python instalado em /tmp: de volta, só leitura
        os.makedirs(path, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        os.close(fd)
        flags = os.statvfs(path).f_flag
        if not flags & os.ST_RDONLY:
            # num namespace de usuário, remontar exige repetir as opções travadas
            keep_flags = sum(ms for st, ms in ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV),
                                               (os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, 1024),
                                               (os.ST_NODIRATIME, 2048), (os.ST_RELATIME, 1 << 21))
                             if flags & st)
            _mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | keep_flags)
    if os.path.isdir("/dev/shm"):                  # /dev/shm do zigoto é de todos os filhos
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=1777")
    _libc.sethostname(b"sandbox", 7)
    pid = os.fork()
    if pid:                                        # o meio só espera o kernel e repassa o código
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    _die_with_parent()
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    mem = cfg["memory_mib"] * MiB
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    fsz = cfg["file_mib"] * MiB
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsz, fsz))
    resource.setrlimit(resource.RLIMIT_NPROC, (cfg["nproc"], cfg["nproc"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _drop_capabilities()
    os.environ.clear()
    os.environ.update(cfg["env"])
    os.environ["HOME"] = os.path.join(run, "home")
    os.environ["MPLCONFIGDIR"] = os.path.join(run, "home", ".matplotlib")
    os.environ["IPYTHONDIR"] = os.path.join(run, "home", ".ipython")
    os.chdir(os.path.join(run, "trabalho"))
    sys.argv = [sys.argv[0]]
    from ipykernel.kernelapp import IPKernelApp
    IPKernelApp.launch_instance(argv=["-f", req["connection_file"], "--HistoryManager.hist_file=:memory:"])
    os._exit(0)


def _spawn(cfg: dict, req: dict) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            _child(cfg, req)
        except BaseException:  # noqa: BLE001 - o motivo fica no kernel.log
            try:
                traceback.print_exc()
                sys.stderr.flush()
            finally:
                os._exit(70)
    return pid


def _reap(*_):
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main() -> None:
    cfg = json.loads(sys.argv[1])
    os.environ.update(cfg["env"])                  # 1 thread de BLAS antes de importar
    for mod in ["ipykernel.kernelapp", *cfg["warm"]]:
        before = set(sys.modules)
        try:
            __import__(mod)
        except Exception:  # noqa: BLE001 - não pré-importa; e não deixa módulo pela metade
            for name in set(sys.modules) - before:
                del sys.modules[name]
    signal.signal(signal.SIGCHLD, _reap)
    out = sys.stdout
    out.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            pid = _spawn(cfg, json.loads(line))
            out.write(json.dumps({"pid": pid}) + "\n")
        except Exception as e:  # noqa: BLE001
            out.write(json.dumps({"error": f"{type(e).__name__}: {e}"}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
