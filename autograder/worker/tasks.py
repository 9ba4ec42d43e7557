"""A correção de um notebook como uma tarefa do Dask: bytes entram, um resultado tipado sai.

O processo que planeja (plan/runner.py) e o que corrige (um trabalhador do Dask,
nesta máquina ou em outra) não dividem nenhum arquivo. Tudo o que a correção
precisa viaja como dados:

- `Course`: o que todas as correções de uma rodada precisam, numa tarefa do Dask
  (`course_value`) de que as correções dependem: cada trabalhador a recebe uma vez
  e, se todos os que a tinham morrem, o agendador a refaz a partir da própria
  tarefa (dados espalhados com `scatter` se perderiam com eles); a versão
  distribuída de cada tarefa (release/<tarefa>/, bytes), a semente do
  gradebook (as células e os testes ocultos, sem nenhum aluno; ver
  gradebook.seed_bytes), os limites de tempo e da sandbox;
- `GradeTask`: uma entrega de um notebook: aluno, tarefa, notebook, os bytes
  do notebook entregue (ou None) e os outros arquivos da entrega;
- `TaskOutput`: o `NotebookResult` (core/results.py) e o notebook corrigido (bytes).

`grade(course, task)` é a função que o Dask roda. No trabalhador, o primeiro
`grade` de uma rodada monta uma pasta local (release/, um gradebook só dele, o
kernel spec da sandbox com o Python deste trabalhador, o cache de fontes do
matplotlib) e um laço asyncio numa thread própria, onde vive o `KernelPool`
(kernels pré-aquecidos). As correções seguintes da mesma rodada reusam tudo.
`release(digest)`, chamado pelo planejador no fim (`Client.run`), e um relógio
de ociosidade encerram os kernels e apagam a pasta: nada sobrevive à rodada.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..core.workspace import Workspace, temp_base
from ..core.settings import ExecSettings
from ..core.student_seed import hidden_seed, submission_digest
from ..core.results import GradeCell, NotebookResult, QuestionResult, Status
from ..box.sandbox import Limits

# sem correção por este tempo, o trabalhador solta os kernels pré-aquecidos e a pasta
IDLE_RELEASE_S = 120.0


@dataclass(frozen=True)
class LocalTemplate:
    """Um molde dos kernels (box/zygote.py) já rodando na máquina dos trabalhadores, com o cache de
    fontes do matplotlib pronto: os trabalhadores do LocalCluster pedem kernels a ele em vez de cada
    um importar o torch num molde próprio (~1,5 s de CPU por trabalhador a cada `grade`)."""

    socket: str           # o socket do molde (numa pasta 0700 de root)
    mpl_cache: str        # a pasta do cache de fontes, copiada para cada kernel


@dataclass(frozen=True)
class Course:
    """O que todas as correções de uma rodada precisam (igual para todas as tarefas)."""

    prefix: str                                  # prefixo das pastas e caixas (course.run_prefix)
    release: dict[str, dict[str, bytes]]         # tarefa -> caminho relativo -> bytes
    source_hashes: dict[str, str]                # tarefa -> hash da fonte (o mesmo do planejador)
    seed_db: bytes                               # gradebook com as tarefas e nenhum aluno
    settings: ExecSettings = field(default_factory=ExecSettings)
    limits: Limits = field(default_factory=Limits)
    use_sandbox: bool = True
    use_zygote: bool = True       # kernels por fork do molde (box/zygote.py), quando ele vale aqui
    # segredo do workspace para as entradas ocultas por entrega (core/student_seed.py); vazio: só aluno,
    # tarefa e entrega
    hidden_secret: str = ""
    # o molde que o planejador iniciou nesta máquina para os trabalhadores do LocalCluster (None: cada
    # trabalhador inicia o seu, como num cluster de várias máquinas)
    local_template: LocalTemplate | None = None

    @property
    def digest(self) -> str:
        h = hashlib.sha256(self.prefix.encode())
        for a in sorted(self.release):
            for rel in sorted(self.release[a]):
                h.update(f"\0{a}/{rel}\0".encode() + hashlib.sha256(self.release[a][rel]).digest())
        h.update(hashlib.sha256(self.seed_db).digest())
        h.update(repr((self.settings, self.limits, self.use_sandbox, self.use_zygote)).encode())
        h.update(hashlib.sha256(self.hidden_secret.encode()).digest())
        return h.hexdigest()[:16]


@dataclass(frozen=True)
class GradeTask:
    """Um notebook de uma entrega."""

    student: str
    assignment: str
    notebook: str
    raw: bytes | None                            # o .ipynb entregue; None: não entregue
    files: dict[str, bytes]                      # os outros arquivos da entrega (vão para trabalho/)
    timestamp: str | None = None                 # ISO 8601, com fuso
    note: str | None = None                      # p.ex. "notebook com outro nome (...) usado como ..."
    # False: não vale aquecer kernels para um próximo notebook igual (a fila dele acabou)
    warm_next: bool = True
    run_id: str = ""                             # a rodada de `grade` que mandou (volta no TaskOutput)
    # (grade_id, textos de versões anteriores de release/) (store/release_history.py): a célula
    # travada com um deles é atualizada sem virar "alterada"
    earlier_locked: tuple = ()


@dataclass
class TaskOutput:
    student: str
    assignment: str
    notebook: str
    result: NotebookResult
    autograded: bytes | None = None              # o notebook executado, com as notas do nbgrader
    run_id: str = ""                             # o da GradeTask (o planejador confere: plan/verify.py)


def task_limit(settings: ExecSettings) -> float:
    """Prazo externo de uma tarefa: o do notebook, duas partidas de kernel e uma folga."""
    return settings.notebook_timeout + 2 * settings.startup_timeout + 60


def crashed_output(task: GradeTask, cells: list[GradeCell], reason: str) -> TaskOutput:
    """Notebook que o corretor não conseguiu corrigir: `crashed`, nota 0, com o motivo."""
    nb = NotebookResult(task.notebook, Status.CRASHED, details=[reason],
                        questions=[QuestionResult.zero(c) for c in cells])
    return TaskOutput(task.student, task.assignment, task.notebook, nb, run_id=task.run_id)


def timeout_output(task: GradeTask, cells: list[GradeCell], limit: float) -> TaskOutput:
    """Notebook cuja correção passou do prazo externo (`task_limit`): `timeout`, nota 0."""
    out = crashed_output(task, cells, f"a correção passou de {limit:.0f} s e foi encerrada pelo corretor")
    out.result.status = Status.TIMEOUT
    out.result.seconds = limit
    return out


# ----------------------------------------------------------------------------- lado do trabalhador

def prebuild_matplotlib_cache(d: Path) -> None:
    """Cache de fontes do matplotlib na pasta `d`, feito uma vez por trabalhador (ou pelo planejador,
    para os trabalhadores locais) e copiado para cada kernel (sem ele cada kernel que importa pyplot
    gasta ~1 s varrendo fontes)."""
    import subprocess
    if d.is_dir():
        return
    tmp = d.with_name(d.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    env = {**os.environ, "MPLCONFIGDIR": str(tmp), "MPLBACKEND": "Agg"}
    r = subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env,
                       capture_output=True, timeout=120)
    if r.returncode == 0:
        os.replace(tmp, d)
    else:
        shutil.rmtree(tmp, ignore_errors=True)


def check_worker(use_sandbox: bool) -> str | None:
    """O que falta neste trabalhador para corrigir (em português), ou None.

    O planejador pergunta a todos antes de mandar tarefas: um trabalhador sem bubblewrap
    deixaria a turma inteira `crashed`, um por um."""
    import importlib.util
    for mod in ("nbgrader", "ipykernel", "torch"):
        if importlib.util.find_spec(mod) is None:
            return f"o pacote {mod} não está instalado no Python deste trabalhador ({sys.executable})"
    if use_sandbox:
        from ..box.sandbox import bwrap_works
        ok, why = bwrap_works()
        if not ok:
            return f"a sandbox não funciona: {why} (instale bubblewrap: `make sandbox-deps`)"
    return None


def _start_zygote(course: Course, cfg, base: str, mpl_cache: Path):
    """O molde dos kernels deste processo (box/zygote.py), ou None: aí cada kernel pelo bwrap."""
    from ..box import zygote
    if not (course.use_sandbox and course.use_zygote) or zygote.available() is not None:
        return None
    z = zygote.Zygote.start(cfg, base, mpl_cache=str(mpl_cache))
    if z is None:
        print("AVISO: o molde dos kernels não iniciou; cada kernel importa o torch de novo",
              file=sys.stderr, flush=True)
    return z


@contextmanager
def local_template(prefix: str, limits: Limits, wanted: bool = True):
    """O molde dos kernels para os trabalhadores do LocalCluster (`LocalTemplate`), iniciado pelo
    planejador, um por `grade` em vez de um por trabalhador; None se não é `wanted` (um cluster de
    fora, cujas máquinas iniciam o seu; sem sandbox; `--no-zygote`), onde o molde não vale (sem root)
    ou se ele não iniciou: aí cada trabalhador tenta o seu. A pasta tem o prefixo do workspace: a de
    uma correção interrompida sai com as outras sobras (plan/lock.py). Encerrado na saída."""
    from ..box import zygote
    from ..box.sandbox import SandboxConfig
    if not wanted or zygote.available() is not None:
        yield None
        return
    base = Path(tempfile.mkdtemp(prefix=f"{prefix}m", dir=temp_base()))
    z = None
    try:
        cache = base / "mplcache"
        prebuild_matplotlib_cache(cache)
        z = zygote.Zygote.start(SandboxConfig(enabled=True, limits=limits, python=sys.executable), str(base),
                                mpl_cache=str(cache))
        yield LocalTemplate(z.socket, str(cache)) if z is not None and cache.is_dir() else None
    finally:
        if z is not None:
            z.close()
        shutil.rmtree(base, ignore_errors=True)


class _Grader:
    """O estado de uma rodada num processo trabalhador: pasta local, laço asyncio, kernels."""

    def __init__(self, course: Course):
        from ..box.sandbox import SandboxConfig, write_kernel_spec

        self.digest = course.digest
        self.course = course
        root = Path(tempfile.mkdtemp(prefix=f"{course.prefix}w", dir=temp_base()))
        self.ws = Workspace(root, prefix=course.prefix)
        try:
            for a, files in course.release.items():
                for rel, data in files.items():
                    p = self.ws.release(a) / rel
                    p.parent.mkdir(parents=True, exist_ok=True)
                    p.write_bytes(data)
            self.ws.state.mkdir(parents=True, exist_ok=True)
            cfg = SandboxConfig(enabled=course.use_sandbox, limits=course.limits, python=sys.executable)
            shared = course.local_template
            self.zygote = None
            if shared is not None and os.path.exists(shared.socket) and os.path.isdir(shared.mpl_cache):
                shutil.copytree(shared.mpl_cache, self.ws.mpl_cache)
                cfg.zygote = shared.socket            # o molde do planejador (que o encerra no fim)
            else:
                prebuild_matplotlib_cache(self.ws.mpl_cache)
                self.zygote = _start_zygote(course, cfg, str(root), self.ws.mpl_cache)
                if self.zygote is not None:
                    cfg.zygote = self.zygote.socket
            write_kernel_spec(cfg, self.ws.kernels_dir)
            self.infos = {a: self.ws.info(a, h) for a, h in course.source_hashes.items()}
        except BaseException:
            if getattr(self, "zygote", None) is not None:
                self.zygote.close()
            shutil.rmtree(root, ignore_errors=True)
            raise
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="autograder-kernels", daemon=True)
        self.thread.start()
        self.pool = None
        self.last_used = time.monotonic()
        self.busy = False

    async def _grade(self, task: GradeTask) -> TaskOutput:
        from .notebook import KernelPool, grade_notebook
        if self.pool is None:
            self.pool = KernelPool(self.ws, self.course.settings)
        from ..store.gradebook import write_seed
        info = self.infos[task.assignment]
        limit = task_limit(self.course.settings)
        # um gradebook novo por tarefa, da semente: nada de um aluno fica para o próximo
        shard_url = write_seed(self.course.seed_db, self.ws.state / "gradebook.db")
        try:
            result, nb = await asyncio.wait_for(
                grade_notebook(self.ws, info, task, shard_url, self.course.settings, self.pool,
                               hidden_seed=hidden_seed(self.course.hidden_secret, task.student,
                                                       task.assignment,
                                                       submission_digest(task.raw, task.files))), limit)
        except asyncio.TimeoutError:
            return timeout_output(task, info.cells[task.notebook], limit)
        return TaskOutput(task.student, task.assignment, task.notebook, result,
                          nbformat.writes(nb).encode() if nb is not None else None, run_id=task.run_id)

    def grade(self, task: GradeTask) -> TaskOutput:
        self.busy = True
        try:
            fut = asyncio.run_coroutine_threadsafe(self._grade(task), self.loop)
            # o prazo de dentro (wait_for) vale primeiro; este só pega um laço travado
            return fut.result(timeout=task_limit(self.course.settings) + 60)
        finally:
            self.last_used = time.monotonic()
            self.busy = False

    def close(self) -> None:
        async def stop():
            if self.pool is not None:
                await self.pool.close()
        try:
            asyncio.run_coroutine_threadsafe(stop(), self.loop).result(timeout=60)
        except Exception:  # noqa: BLE001 - encerrando: os kernels morrem com o processo de qualquer jeito
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if self.zygote is not None:
            self.zygote.close()
        shutil.rmtree(self.ws.root, ignore_errors=True)


_lock = threading.Lock()
_current: _Grader | None = None
_idle_timer: threading.Timer | None = None


def _idle_check() -> None:
    global _current, _idle_timer
    with _lock:
        g = _current
        if g is None:
            _idle_timer = None
            return
        if not g.busy and time.monotonic() - g.last_used >= IDLE_RELEASE_S:
            _current, _idle_timer = None, None
        else:
            g = None
            _arm_idle_timer()
    if g is not None:
        g.close()


def _arm_idle_timer() -> None:
    global _idle_timer
    _idle_timer = threading.Timer(IDLE_RELEASE_S / 4, _idle_check)
    _idle_timer.daemon = True
    _idle_timer.start()


def course_value(course: Course) -> Course:
    """A tarefa que guarda o `Course` no grafo do Dask (o agendador a refaz se ela se perde)."""
    return course


def grade(course: Course, task: GradeTask) -> TaskOutput:
    """A tarefa do Dask: corrige um notebook neste processo (uma correção por vez)."""
    global _current
    with _lock:
        old = None
        if _current is not None and _current.digest != course.digest:
            old, _current = _current, None           # outra rodada (ou outro curso): recomeça
        if old is not None:
            old.close()
        if _current is None:
            _current = _Grader(course)
            if _idle_timer is None:
                _arm_idle_timer()
        g = _current
    return g.grade(task)


def release(digest: str | None = None) -> bool:
    """Solta os kernels e a pasta da rodada `digest` (todas, se None); o planejador chama no fim."""
    global _current
    with _lock:
        g = _current
        if g is None or (digest is not None and g.digest != digest):
            return False
        _current = None
    g.close()
    return True
