"""Grupos de controle (cgroups) do Linux: a contabilidade do próprio kernel por notebook.

Um cgroup conta tudo o que os processos dentro dele usam, inclusive memória
compartilhada, tmpfs e `memfd` (o RLIMIT_AS, por processo, não vê nada disso),
limita o número de processos e threads do grupo inteiro (o RLIMIT_NPROC conta
por usuário, somando todas as sandboxes do usuário `nobody`) e permite matar
todos os processos do grupo, faça o aluno o que fizer com sinais, sessão ou
parentesco. É o que juízes de competição como o `isolate` usam.

Dois formatos, escolhidos em tempo de execução (`detect`):

- cgroup v2 (hierarquia única, o padrão das distribuições atuais):
  `memory.max`, `memory.swap.max`, `pids.max`, `cgroup.kill` (ou
  `cgroup.freeze` + SIGKILL em kernels antigos). As caixas ficam em
  `<montagem>/autograder/`, com os controladores `memory` e `pids`
  habilitados em `cgroup.subtree_control`;
- cgroup v1 (uma hierarquia por controlador, como nas máquinas deste projeto):
  `memory.limit_in_bytes`, `memory.memsw.limit_in_bytes` (quando existe),
  `pids.max`, e para matar o `freezer` (congela, mata, descongela) ou, sem
  ele, SIGKILL repetido em `cgroup.procs` até esvaziar. As caixas ficam
  dentro do cgroup do próprio corretor, em cada controlador.

Este arquivo só usa a biblioteca padrão: o lançador da sandbox (sandbox.py,
rodado como script com `python -I`) o carrega pelo caminho.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

MOUNTS = "/proc/self/mounts"
OWN = "/proc/self/cgroup"


class CgroupError(RuntimeError):
    """Não foi possível criar ou controlar um cgroup (mensagem em português)."""


@dataclass(frozen=True)
class CgroupLimits:
    memory_bytes: int
    pids: int
    # núcleos de CPU da caixa (cota do CFS); None: sem cota. Toda caixa tem o mesmo peso, então
    # numa máquina cheia cada uma recebe a sua parte, tenha quantos processos tiver (revisão C6)
    cpus: float | None = None


CPU_PERIOD_US = 100_000


def _quota(cpus: float) -> int:
    return max(1000, int(cpus * CPU_PERIOD_US))


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read(path: Path) -> str:
    with open(path) as f:
        return f.read()


def _oom_kills(path: Path) -> int:
    """O contador `oom_kill` de um arquivo "chave valor" do cgroup (memory.events na v2,
    memory.oom_control na v1); 0 se não há arquivo ou contador."""
    try:
        for line in _read(path).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _pids_in(procs: Path) -> list[int]:
    try:
        return [int(x) for x in _read(procs).split()]
    except (FileNotFoundError, ProcessLookupError):
        return []


def _sigkill(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _rmdir(path: Path, timeout: float = 2.0) -> None:
    """rmdir de um cgroup; o kernel leva um instante para soltar um grupo recém-esvaziado."""
    end = time.monotonic() + timeout
    while True:
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if e.errno != errno.EBUSY or time.monotonic() > end:
                raise CgroupError(f"não consegui remover o cgroup {path}: {e}") from None
            time.sleep(0.01)


class CgroupV2:
    """Caixas num cgroup v2: `base/<nome>/`."""

    version = 2

    def __init__(self, base: Path):
        self.base = Path(base)

    def where(self) -> str:
        return str(self.base)

    def path(self, name: str) -> Path:
        return self.base / name

    def create(self, name: str, limits: CgroupLimits) -> None:
        d = self.path(name)
        d.mkdir(exist_ok=True)
        values = [("memory.max", limits.memory_bytes), ("memory.swap.max", 0), ("pids.max", limits.pids),
                  ("cpu.weight", 100)]
        if limits.cpus:
            values.append(("cpu.max", f"{_quota(limits.cpus)} {CPU_PERIOD_US}"))
        for fname, value in values:
            if (d / fname).exists():           # sem o controlador (hierarquia de teste), sem o arquivo
                _write(d / fname, str(value))

    def cpu_usage(self, name: str) -> float | None:
        """Segundos de CPU usados pela caixa (todos os processos), ou None sem o controlador."""
        try:
            for line in _read(self.path(name) / "cpu.stat").splitlines():
                k, _, v = line.partition(" ")
                if k == "usage_usec":
                    return int(v) / 1e6
        except (OSError, ValueError):
            return None
        return None

    def add(self, name: str, pid: int) -> None:
        _write(self.path(name) / "cgroup.procs", str(pid))

    def pids(self, name: str) -> list[int]:
        return _pids_in(self.path(name) / "cgroup.procs")

    def kill(self, name: str, timeout: float = 5.0) -> bool:
        """Mata todos os processos da caixa; True quando ela ficou vazia."""
        d = self.path(name)
        if not d.is_dir():
            return True
        end = time.monotonic() + timeout
        if (d / "cgroup.kill").exists():
            _write(d / "cgroup.kill", "1")
        elif (d / "cgroup.freeze").exists():   # kernel < 5.14: congela para ninguém fazer fork
            _write(d / "cgroup.freeze", "1")
        while True:
            left = self.pids(name)
            if not left:
                break
            if time.monotonic() > end:
                return False
            _sigkill(left)
            time.sleep(0.005)
        if (d / "cgroup.freeze").exists():
            _write(d / "cgroup.freeze", "0")
        return True

    def memory_limit(self, name: str) -> int | None:
        try:
            return int(_read(self.path(name) / "memory.max"))
        except (OSError, ValueError):
            return None

    def oom_kills(self, name: str) -> int:
        return _oom_kills(self.path(name) / "memory.events")

    def remove(self, name: str) -> None:
        _rmdir(self.path(name))

    def names(self) -> list[str]:
        try:
            return sorted(p.name for p in self.base.iterdir() if p.is_dir())
        except FileNotFoundError:
            return []


class CgroupV1:
    """Caixas num cgroup v1: `<controlador>/<nome>/` em memory, pids e (se houver) freezer."""

    version = 1

    def __init__(self, bases: dict[str, Path]):
        if "memory" not in bases or "pids" not in bases:
            raise CgroupError("cgroup v1 sem os controladores memory e pids")
        self.bases = {k: Path(v) for k, v in bases.items()}

    def where(self) -> str:
        return ", ".join(str(p) for p in self.bases.values())

    def path(self, name: str, controller: str = "memory") -> Path:
        return self.bases[controller] / name

    def create(self, name: str, limits: CgroupLimits) -> None:
        for c in self.bases:
            self.path(name, c).mkdir(exist_ok=True)
        mem = self.path(name, "memory")
        _write(mem / "memory.limit_in_bytes", str(limits.memory_bytes))
        if (mem / "memory.memsw.limit_in_bytes").exists():   # memória + swap: nada vai para o swap
            _write(mem / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        _write(self.path(name, "pids") / "pids.max", str(limits.pids))
        if "cpu" in self.bases:
            cpu = self.path(name, "cpu")
            _write(cpu / "cpu.shares", "1024")
            _write(cpu / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(cpu / "cpu.cfs_quota_us", str(_quota(limits.cpus) if limits.cpus else -1))

    def cpu_usage(self, name: str) -> float | None:
        """Segundos de CPU usados pela caixa (cpuacct), ou None sem o controlador."""
        for c in ("cpuacct", "cpu"):
            if c in self.bases:
                try:
                    return int(_read(self.path(name, c) / "cpuacct.usage")) / 1e9
                except (OSError, ValueError):
                    continue
        return None

    def add(self, name: str, pid: int) -> None:
        # pids primeiro: a partir dele, um fork a mais já é contado
        for c in ("pids", "memory", *(k for k in self.bases if k not in ("pids", "memory"))):
            _write(self.path(name, c) / "cgroup.procs", str(pid))

    def pids(self, name: str) -> list[int]:
        seen: list[int] = []
        for c in self.bases:
            for pid in _pids_in(self.path(name, c) / "cgroup.procs"):
                if pid not in seen:
                    seen.append(pid)
        return seen

    def kill(self, name: str, timeout: float = 5.0) -> bool:
        end = time.monotonic() + timeout
        frz = self.path(name, "freezer") if "freezer" in self.bases else None
        if frz is not None and frz.is_dir():
            _write(frz / "freezer.state", "FROZEN")     # ninguém mais faz fork enquanto matamos
        try:
            while True:
                left = self.pids(name)
                if not left:
                    return True
                if time.monotonic() > end:
                    return False
                _sigkill(left)
                if frz is not None and frz.is_dir():
                    # o SIGKILL só é entregue a um processo descongelado
                    _write(frz / "freezer.state", "THAWED")
                    time.sleep(0.005)
                    _write(frz / "freezer.state", "FROZEN")
                else:
                    time.sleep(0.005)
        finally:
            if frz is not None and frz.is_dir():
                try:
                    _write(frz / "freezer.state", "THAWED")
                except OSError:
                    pass

    def memory_limit(self, name: str) -> int | None:
        try:
            return int(_read(self.path(name, "memory") / "memory.limit_in_bytes"))
        except (OSError, ValueError):
            return None

    def oom_kills(self, name: str) -> int:
        return _oom_kills(self.path(name, "memory") / "memory.oom_control")

    def remove(self, name: str) -> None:
        for c in self.bases:
            _rmdir(self.path(name, c))

    def names(self) -> list[str]:
        try:
            return sorted(p.name for p in self.bases["memory"].iterdir() if p.is_dir())
        except FileNotFoundError:
            return []


Backend = CgroupV1 | CgroupV2


def _mounts(mounts_file: str) -> list[tuple[str, str, set[str]]]:
    """(ponto de montagem, tipo, opções) das montagens de cgroup."""
    out = []
    for line in _read(Path(mounts_file)).splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            mnt = parts[1].replace("\\040", " ")
            out.append((mnt, parts[2], set(parts[3].split(","))))
    return out


def _own_paths(own_file: str) -> dict[str, str]:
    """Controlador -> caminho do cgroup deste processo ('' = a hierarquia v2)."""
    own: dict[str, str] = {}
    for line in _read(Path(own_file)).splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in (ctrls.split(",") if ctrls else [""]):
            own[c] = path
    return own


def _inside(mount: str, path: str) -> Path:
    """O cgroup `path` dentro da montagem; num namespace de cgroup o caminho já é relativo."""
    p = Path(mount) / path.lstrip("/")
    return p if p.is_dir() else Path(mount)


V2_DIR = "autograder"


def detect(mounts_file: str = MOUNTS, own_file: str = OWN) -> tuple[Backend | None, str]:
    """O formato de cgroup deste host e onde criar as caixas, ou (None, motivo em português).

    Prefere v1 quando os controladores memory e pids estão montados em v1 (host
    híbrido: a hierarquia v2 existe, mas vazia); senão v2 com memory e pids."""
    try:
        mounts = _mounts(mounts_file)
        own = _own_paths(own_file)
    except OSError as e:
        return None, f"não consegui ler {mounts_file} ou {own_file}: {e}"
    v1 = {}
    for mnt, kind, opts in mounts:
        if kind == "cgroup":
            for c in ("memory", "pids", "freezer", "cpu", "cpuacct"):
                if c in opts and c not in v1:
                    v1[c] = _inside(mnt, own.get(c, "/"))
    if "memory" in v1 and "pids" in v1:
        return _usable(CgroupV1(v1))
    for mnt, kind, _ in mounts:
        if kind != "cgroup2":
            continue
        try:
            controllers = _read(Path(mnt) / "cgroup.controllers").split()
        except OSError:
            continue
        if "memory" in controllers and "pids" in controllers:
            base = Path(mnt) / V2_DIR
            try:
                _enable_v2(Path(mnt), base)
            except OSError as e:
                return None, (f"não consegui preparar o cgroup v2 em {base} ({e.strerror or e}); "
                              "é preciso ser root num host com cgroup v2 gravável")
            return _usable(CgroupV2(base))
    return None, "este host não tem cgroups com os controladores memory e pids"


def _enable_v2(root: Path, base: Path) -> None:
    want = {"memory", "pids"} | ({"cpu"} & set(_read(root / "cgroup.controllers").split()))
    enabled = set(_read(root / "cgroup.subtree_control").split())
    if not want <= enabled:
        _write(root / "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(want - enabled)))
    base.mkdir(exist_ok=True)
    enabled = set(_read(base / "cgroup.subtree_control").split())
    if not want <= enabled:
        _write(base / "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(want - enabled)))


def _usable(backend: Backend) -> tuple[Backend | None, str]:
    """Cria e remove uma caixa de teste: só assim se sabe se o cgroupfs aceita escrita."""
    name = f"teste-{os.getpid()}"
    try:
        backend.create(name, CgroupLimits(memory_bytes=64 << 20, pids=8))
        backend.remove(name)
    except (OSError, CgroupError) as e:
        try:
            backend.remove(name)
        except (OSError, CgroupError):
            pass
        reason = getattr(e, "strerror", None) or str(e)
        return None, (f"não consegui criar um cgroup v{backend.version} em {backend.where()} "
                      f"({reason}); é preciso ser root com o cgroupfs gravável")
    return backend, f"cgroup v{backend.version}"
