"""Corrige uma turma: coleta, agenda entre processos, retoma, junta no gradebook.

- Cada entrega (aluno, tarefa) tem uma chave: hash dos bytes entregues, do
  horário de entrega, da fonte da tarefa, dos limites e da versão do
  corretor. Se `.autograder/resultados/<tarefa>/<aluno>.json` já tem a mesma
  chave, a entrega não é corrigida de novo: uma correção interrompida
  (Ctrl-C, queda de energia) continua de onde parou, e corrigir duas vezes dá
  o mesmo CSV.
- `--jobs N` abre N processos `autograder.worker`, cada um com seu shard do
  gradebook; no fim o pai (um só escritor) junta os resultados no
  `gradebook.db` com a API do nbgrader, sem apagar notas manuais.
- O pai vigia cada entrega com um relógio externo (limite do notebook + folga):
  se um processo travar, ele é morto (os kernels morrem junto: bwrap
  --die-with-parent) e a entrega fica como `timeout`.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import sandbox
from .course import REPO, Workspace
from .executor import ExecSettings
from .deadlines import update_deadlines
from .gradebook import merge_results
from .pipes import LineReader
from .progress import Progress
from .results import VERSION, JobResult, NotebookResult, QuestionResult, Status
from .submissions import collect
from .store import read_result, write_result


class GradeError(Exception):
    """Erro para o professor (mensagem em português, sem traceback)."""


@dataclass
class GradeOptions:
    submissions: Path
    assignments: list[str] = field(default_factory=list)   # vazio: as com prazo, ou as entregues
    jobs: int = 1
    settings: ExecSettings = field(default_factory=ExecSettings)
    limits: sandbox.Limits = field(default_factory=sandbox.Limits)
    use_sandbox: bool = True
    pattern: str | None = None
    tz: str | None = None
    deadlines: list[str] = field(default_factory=list)
    redo: bool = False
    tty: bool | None = None


@dataclass
class RunSummary:
    students: int = 0
    jobs: int = 0
    graded: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def job_key(files: dict[str, bytes], timestamp: str | None, source_hash: str, fingerprint: str) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    h.update(f"\0{timestamp}\0{source_hash}\0{fingerprint}\0{VERSION}".encode())
    return h.hexdigest()


def _mirror(dest: Path, files: dict[str, bytes], timestamp_utc: str | None) -> None:
    """Faz submitted/<aluno>/<tarefa>/ igual à entrega (só reescreve se mudou)."""
    want = dict(files)
    if timestamp_utc:
        want["timestamp.txt"] = timestamp_utc.encode()
    have = {}
    if dest.is_dir():
        have = {str(p.relative_to(dest)): p.read_bytes() for p in dest.rglob("*") if p.is_file()}
    if have == want:
        return
    shutil.rmtree(dest, ignore_errors=True)
    if not want:
        return
    for rel, data in want.items():
        p = dest / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def prebuild_matplotlib_cache(ws: Workspace) -> None:
    """Cache de fontes do matplotlib, feito uma vez e copiado para cada kernel
    (sem ele cada kernel que importa pyplot gasta ~1 s varrendo fontes)."""
    d = ws.state / "mplcache"
    if d.is_dir():
        return
    tmp = ws.state / "mplcache.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    env = {**os.environ, "MPLCONFIGDIR": str(tmp), "MPLBACKEND": "Agg"}
    r = subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env,
                       capture_output=True, timeout=120)
    if r.returncode == 0:
        os.replace(tmp, d)
    else:
        shutil.rmtree(tmp, ignore_errors=True)


class _Worker:
    def __init__(self, k: int, args: dict, log: Path):
        self.k = k
        self.args = args
        self.log_path = log
        self.proc: subprocess.Popen | None = None

    def start(self):
        self.log = open(self.log_path, "ab")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.worker", json.dumps(self.args)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, env=env,
            start_new_session=True)
        self.reader = LineReader(self.proc.stdout.fileno())

    def send(self, job: dict):
        self.proc.stdin.write((json.dumps(job) + "\n").encode())
        self.proc.stdin.flush()

    def recv(self, timeout: float) -> dict | None:
        """Resposta, ou None se o tempo acabou; levanta EOFError se o processo morreu."""
        line = self.reader.readline(timeout)
        if line is None:
            return None
        if not line:
            raise EOFError
        return json.loads(line)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        if self.proc:
            for f in (self.proc.stdin, self.proc.stdout):
                try:
                    f.close()
                except Exception:  # noqa: BLE001
                    pass
        try:
            self.log.close()
        except Exception:  # noqa: BLE001
            pass

    def stop(self):
        if self.proc and self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except Exception:  # noqa: BLE001
                self.kill()
        self.kill()


def _watchdog_result(job: dict, info_cells: dict, limit: float) -> JobResult:
    """Entrega cujo processo travou: `timeout`, nota zero, com o motivo no primeiro notebook."""
    msg = f"a correção passou de {limit:.0f} s e o processo foi encerrado pelo corretor"
    nbs = [NotebookResult(n, Status.TIMEOUT, details=[msg] if i == 0 else [],
                          questions=[QuestionResult.zero(c) for c in cells], seconds=limit)
           for i, (n, cells) in enumerate(info_cells.items())]
    return JobResult(job["student"], job["assignment"], job["key"], job.get("timestamp"), nbs,
                     participant=job.get("participant"),
                     collection_notes=list(job.get("notes", []))).finish()


def notebook_names(ws: Workspace, assignment: str) -> list[str]:
    """Os notebooks de uma tarefa, lidos da fonte (sem gerar a versão do aluno)."""
    return sorted(p.stem for p in (ws.solutions / assignment).glob("*.ipynb"))


def assigned_set(given: list[str], due: dict, available: list[str]) -> list[str] | None:
    """As tarefas dadas: as de --assignment; sem elas, as que têm prazo no workspace;
    None se não há nenhuma das duas (decide-se pelas entregas)."""
    if given:
        return sorted(set(given))
    if due:
        unknown = sorted(a for a in due if a not in available)
        if unknown:
            raise GradeError(f"prazo para tarefa(s) que não existem: {', '.join(unknown)} "
                             f"(corrija com `python -m autograder deadlines --workspace ... --remover TAREFA`)")
        return sorted(due)
    return None


def _failed_result(job: dict, info_cells: dict, error: str) -> JobResult:
    """Linha `crashed` (nota 0, com o motivo) para uma entrega que o corretor não conseguiu corrigir;
    a chave fica vazia, então a próxima correção tenta de novo."""
    lines = [x for x in error.strip().splitlines() if x.strip()]
    first = (lines[-1] if lines[0].startswith("Traceback") else lines[0]) if lines else "erro do corretor"
    why = f"não foi possível corrigir: {first[:300]}"
    r = _watchdog_result(job, info_cells, 0.0)
    r.key = ""
    for i, nb in enumerate(r.notebooks):
        nb.status = Status.CRASHED
        nb.details = [why] if i == 0 else []
    return r.finish()


def run_grade(ws: Workspace, opts: GradeOptions) -> RunSummary:
    t0 = time.monotonic()
    summary = RunSummary()
    ws.check_outside_repo()
    available = ws.available_assignments()
    if not available:
        raise GradeError(f"nenhuma tarefa em {ws.solutions} (esperava <tarefa>/<tarefa>.ipynb)")
    unknown = [a for a in opts.assignments if a not in available]
    if unknown:
        raise GradeError(f"tarefa(s) que não existem: {', '.join(unknown)}; as tarefas são: {', '.join(available)}")
    if not Path(opts.submissions).exists():
        raise GradeError(f"entregas não encontradas: {opts.submissions}")

    if opts.use_sandbox:
        ok, why = sandbox.bwrap_works()
        if not ok:
            raise GradeError(
                f"a sandbox não está disponível: {why}.\n"
                "Instale com `sudo apt-get install -y bubblewrap` (ou `make sandbox-deps`). "
                "Para corrigir mesmo assim, sem isolamento, use --sem-sandbox "
                "(o código dos alunos rodará com os seus direitos).")
    else:
        say("AVISO: corrigindo SEM sandbox (--sem-sandbox): o código dos alunos roda com os seus "
            "direitos, pode ler solutions/ e o gradebook e acessar a rede. Só os limites de "
            "tempo e memória valem.")
    try:
        deadlines = update_deadlines(ws.root, opts.deadlines, opts.tz)
    except ValueError as e:
        raise GradeError(str(e)) from None
    assignments = assigned_set(opts.assignments, deadlines.due, available)

    try:
        only = assignments[0] if assignments and len(assignments) == 1 else None
        subs, warns = collect(Path(opts.submissions), {a: notebook_names(ws, a) for a in available},
                              deadlines.tz, only=only, pattern=opts.pattern)
    except (ValueError, OSError) as e:
        raise GradeError(str(e)) from None
    if assignments is None:      # nem --assignment nem prazo: as tarefas que alguém entregou
        assignments = sorted({s.assignment for s in subs if s.files})
        if assignments:
            say(f"sem --assignment nem prazos no workspace: corrigindo as tarefas entregues "
                f"({', '.join(assignments)})")
    subs = [s for s in subs if s.assignment in assignments]
    summary.warnings += warns
    for w in warns:
        say(f"aviso: {w}")
    if not any(s.files for s in subs):
        raise GradeError(f"nenhuma entrega encontrada em {opts.submissions} para "
                         f"{', '.join(assignments) or 'nenhuma tarefa'}")
    from .exports import record_identities
    record_identities(ws, subs)

    say(f"preparando {len(assignments)} tarefa(s) no workspace {ws.root} ...")
    infos = ws.prepare(assignments)
    prebuild_matplotlib_cache(ws)
    cfg = sandbox.SandboxConfig(enabled=opts.use_sandbox, limits=opts.limits, python=sys.executable)
    sandbox.write_kernel_spec(cfg, ws.kernels_dir)
    by_key = {(s.student, s.assignment): s for s in subs}
    students = sorted({s.student for s in subs})
    if not students:
        raise GradeError(f"nenhuma entrega encontrada em {opts.submissions}")

    fingerprint = json.dumps({"settings": asdict(opts.settings), "limits": asdict(opts.limits),
                              "sandbox": opts.use_sandbox}, sort_keys=True)
    jobs, todo = [], []
    for s in students:
        for a in assignments:
            sub = by_key.get((s, a))
            files = sub.files if sub else {}
            ts = sub.timestamp.isoformat() if sub and sub.timestamp else None
            ts_utc = (sub.timestamp.astimezone(__import__("datetime").timezone.utc)
                      .strftime("%Y-%m-%d %H:%M:%S.%f UTC") if sub and sub.timestamp else None)
            _mirror(ws.submitted(s, a), files, ts_utc)
            job = {"student": s, "assignment": a, "timestamp": ts,
                   "key": job_key(files, ts, infos[a].source_hash, fingerprint),
                   # [coleta] issue 13: o que a coleta tem a dizer vai para a linha do aluno
                   "notes": list(sub.notes) if sub else [], "participant": sub.participant if sub else None}
            jobs.append(job)
            old = None if opts.redo else read_result(ws.result_path(s, a))
            if old is None or old.key != job["key"]:
                todo.append(job)
    summary.students, summary.jobs = len(students), len(jobs)
    summary.skipped = len(jobs) - len(todo)
    if summary.skipped:
        say(f"{summary.skipped} de {len(jobs)} entregas já corrigidas (mesmos arquivos e limites): "
            "não serão corrigidas de novo")

    if todo:
        _run_workers(ws, opts, infos, todo, students, summary, cfg)
    merge_results(ws, [r for j in jobs
                       if (r := read_result(ws.result_path(j["student"], j["assignment"]))) is not None])
    summary.seconds = time.monotonic() - t0
    return summary


def _run_workers(ws, opts, infos, todo, students, summary, cfg):
    pending_per_student: dict[str, int] = {}
    for j in todo:
        pending_per_student[j["student"]] = pending_per_student.get(j["student"], 0) + 1
    n = max(1, min(opts.jobs, len(todo)))
    shards = ws.state / "shards"
    shutil.rmtree(shards, ignore_errors=True)
    shards.mkdir(parents=True)
    logs = ws.state / "logs"
    logs.mkdir(exist_ok=True)
    base_args = {"workspace": str(ws.root), "solutions": str(ws.solutions),
                 "sources": {a: i.source_hash for a, i in infos.items()},
                 "settings": asdict(opts.settings),
                 "sandbox": cfg.to_json() if opts.use_sandbox else None}
    jobs_q: queue.Queue = queue.Queue()
    for j in todo:
        jobs_q.put(j)
    done_q: queue.Queue = queue.Queue()
    stop = threading.Event()
    workers: list[_Worker] = []

    attempts: dict[tuple, int] = {}

    def serve(k: int):
        """Um processo de correção: até 2 entregas enviadas (a 2ª é pré-aquecida)."""
        shard = shards / f"shard-{k}.db"
        shutil.copy(ws.db_path, shard)
        w = _Worker(k, {**base_args, "shard": str(shard)}, logs / f"worker-{k}.log")
        workers.append(w)
        w.start()
        inflight: list[dict] = []

        def refill():
            while len(inflight) < 2 and not stop.is_set():
                try:
                    job = jobs_q.get_nowait()
                except queue.Empty:
                    return
                w.send(job)
                inflight.append(job)

        def failed(job, error):
            key = (job["student"], job["assignment"])
            attempts[key] = attempts.get(key, 0) + 1
            if attempts[key] < 2:
                jobs_q.put(job)                 # mais uma chance, num processo novo
            else:
                # [coleta] issue 13: um kernel que não inicia nunca tira o aluno do grades.csv
                write_result(ws.result_path(job["student"], job["assignment"]),
                             _failed_result(job, infos[job["assignment"]].cells, error))
                done_q.put({"ok": False, "student": job["student"], "assignment": job["assignment"],
                            "error": error})

        def restart(requeue):
            w.kill()
            for j in requeue:
                jobs_q.put(j)
            inflight.clear()
            if not stop.is_set():
                w.start()

        try:
            refill()
            while inflight and not stop.is_set():
                job = inflight[0]
                info = infos[job["assignment"]]
                limit = (opts.settings.notebook_timeout + 2 * opts.settings.startup_timeout + 60) \
                    * max(1, len(info.notebooks))
                try:
                    reply = w.recv(limit)
                except (EOFError, OSError, ValueError):
                    if stop.is_set():
                        return
                    restart(inflight[1:])
                    failed(job, f"o processo de correção {k} morreu (veja {w.log_path})")
                    refill()
                    continue
                if reply is None:            # relógio externo: processo travado
                    if stop.is_set():
                        return
                    write_result(ws.result_path(job["student"], job["assignment"]),
                                 _watchdog_result(job, info.cells, limit))
                    restart(inflight[1:])
                    done_q.put({"ok": True, "student": job["student"], "assignment": job["assignment"],
                                "status": str(Status.TIMEOUT)})
                    refill()
                    continue
                inflight.pop(0)
                if reply.get("ok") or reply.get("infra"):
                    if not reply.get("ok"):     # [coleta] issue 13: kernel não iniciou -> linha crashed
                        write_result(ws.result_path(job["student"], job["assignment"]),
                                     _failed_result(job, info.cells, reply.get("error", "")))
                    done_q.put(reply)
                else:
                    failed(job, reply.get("error", ""))
                refill()
        except (BrokenPipeError, OSError):
            if not stop.is_set():
                raise
        finally:
            w.stop()

    threads = [threading.Thread(target=serve, args=(k,), daemon=True) for k in range(n)]
    already = len(students) - len(pending_per_student)
    bar = Progress(len(students), len(todo), already=already, tty=opts.tty)
    say(f"corrigindo {len(todo)} notebook(s) de {len(pending_per_student)} aluno(s) "
        f"com {n} processo(s) em paralelo{'' if opts.use_sandbox else ' (sem sandbox)'}")
    bar.render(force=True)
    for t in threads:
        t.start()
    finished = 0
    try:
        while finished < len(todo):
            try:
                reply = done_q.get(timeout=0.5)
            except queue.Empty:
                if not any(t.is_alive() for t in threads) and done_q.empty():
                    break
                continue
            finished += 1
            st = reply["student"]
            pending_per_student[st] -= 1
            if reply.get("ok"):
                summary.graded += 1
            else:
                err = reply.get("error", "").strip().splitlines()
                summary.failures.append(f"{st}/{reply['assignment']}: {err[-1] if err else 'erro'}")
                (ws.state / "logs" / "falhas.log").open("a", encoding="utf-8").write(
                    f"--- {st}/{reply['assignment']}\n{reply.get('error', '')}\n")
            bar.update(1, 1 if pending_per_student[st] == 0 else 0)
    except KeyboardInterrupt:
        stop.set()
        for w in list(workers):
            w.kill()
        bar.close()
        raise
    bar.close()
    for t in threads:
        t.join()
