"""Corrige uma turma: coleta, planeja, manda as tarefas ao Dask, grava o que volta.

- Cada entrega (aluno, tarefa) tem uma chave: hash dos bytes entregues, do
  horário de entrega, da fonte da tarefa, dos limites e da versão do
  corretor. Se `.autograder/results/<tarefa>/<aluno>.json` já tem a mesma
  chave, a entrega não é corrigida de novo: uma correção interrompida
  (Ctrl-C, queda de energia, um cluster que sumiu) continua de onde parou, e
  corrigir duas vezes dá o mesmo CSV.
- Cada notebook de uma entrega é uma tarefa do Dask (worker/tasks.py): os bytes vão,
  um `NotebookResult` e o notebook executado voltam; quem corrige não vê
  nenhum arquivo deste workspace. Por padrão, um `LocalCluster` de `--jobs`
  processos de uma thread nesta máquina, aberto e fechado pelo comando; com
  `--scheduler ENDEREÇO`, um cluster Dask que já existe.
- Este processo é o único que escreve: grava cada resultado e o notebook
  corrigido assim que chegam, e leva as notas ao `gradebook.db` com a API do
  nbgrader a cada lote e no fim, sem apagar notas manuais.
- Falhas: um trabalhador que morre faz o Dask repetir a tarefa em outro (no
  máximo `MAX_TRIES` tentativas); depois disso, e para um erro do próprio
  corretor, a linha fica `crashed` com o motivo (e sem chave: a próxima
  correção tenta de novo). O limite de tempo de cada notebook vale dentro da
  tarefa (worker/executor.py e tasks.task_limit).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import shutil
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..box import sandbox
from ..core import student_seed
from ..core.workspace import Workspace
from ..core.deadlines import update_deadlines
from ..core.settings import CollectLimits, ExecSettings
from ..store.gradebook import merge_results, seed_bytes, set_due_dates
from ..collect.spool import Spool
from ..collect.submissions import pick_notebook_name
from .progress import Progress
from . import tls
from ..core.results import VERSION, JobResult, NotebookResult, QuestionResult, Status
from ..store.result_files import read_result, write_result
from ..store import release_history
from ..collect import gather
from ..worker.tasks import Course, GradeTask, TaskOutput, crashed_output

# tentativas de uma tarefa cujo trabalhador morre (o Dask a repete em outro trabalhador)
MAX_TRIES = 2
# de quanto em quanto tempo as notas que chegaram vão para o gradebook.db
MERGE_EVERY_S = 20.0


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
    use_zygote: bool = True             # kernels por fork de um molde que já importou o torch (box/zygote.py)
    pattern: str | None = None
    tz: str | None = None
    deadlines: list[str] = field(default_factory=list)
    redo: bool = False
    tty: bool | None = None
    scheduler: str | None = None        # endereço ou arquivo de um agendador Dask; None: LocalCluster
    tls: Path | None = None             # pasta de `certs` (AC e certificado do professor) para --scheduler tls://
    insecure_cluster: bool = False      # aceita um --scheduler sem TLS (plan/tls.py, scheduler_security)
    client: object | None = None        # um distributed.Client já aberto (API em Python; não é fechado)
    collect: CollectLimits = field(default_factory=CollectLimits)   # tetos da coleta (issue 42, M2)
    worksheets: list[str] = field(default_factory=list)   # [TAREFA=]planilha de avaliação do Moodle (horários)
    students: list[str] = field(default_factory=list)       # vazio: todos (`regrade` escolhe alguns)
    # `regrade`: as entregas vêm do próprio submitted/ do workspace; horário, nº do Moodle e notas
    # da coleta ficam os do resultado gravado (a coleta original não está mais aqui)
    regrade: bool = False


@dataclass
class RunSummary:
    """O que a linha de comando mostra no fim de `grade`: as entregas que o corretor não pôde corrigir."""
    failures: list[str] = field(default_factory=list)


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def job_key(files: dict[str, bytes], timestamp: str | None, source_hash: str, fingerprint: str) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    h.update(f"\0{timestamp}\0{source_hash}\0{fingerprint}\0{VERSION}".encode())
    return h.hexdigest()


def keyed_files(files, refused: list[str]):
    """O que entra na chave de uma entrega: os arquivos, ou o motivo da recusa (um teto maior na
    próxima correção muda a chave, e a entrega é corrigida)."""
    return {"\0recusada": "\n".join(refused).encode()} if refused else files


def _mirror(dest: Path, files, timestamp_utc: str | None) -> None:
    """Faz submitted/<aluno>/<tarefa>/ igual à entrega (só reescreve se mudou). A entrega só tem
    os arquivos que a correção usa (collect/, `needed`); um arquivo de cada vez na memória."""
    def content(rel: str) -> bytes:
        return timestamp_utc.encode() if rel == "timestamp.txt" and timestamp_utc else files[rel]

    want = set(files) | ({"timestamp.txt"} if timestamp_utc else set())
    have = {str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()} if dest.is_dir() else set()
    if have == want and all((dest / rel).read_bytes() == content(rel) for rel in sorted(want)):
        return
    shutil.rmtree(dest, ignore_errors=True)
    for rel in sorted(want):
        p = dest / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content(rel))


def notebook_names(ws: Workspace, assignment: str) -> list[str]:
    """Os notebooks de uma tarefa, lidos da fonte (sem gerar a versão do aluno)."""
    return sorted(p.stem for p in (ws.solutions / assignment).glob("*.ipynb"))


def assigned_set(given: list[str], due: dict, available: list[str]) -> list[str] | None:
    """As tarefas que podem ser corrigidas: as de --assignment; sem elas, as que têm prazo no
    workspace (das quais só as entregues são corrigidas, em `_collect`); None se não há nenhuma
    das duas (decide-se pelas entregas)."""
    if given:
        return sorted(set(given))
    if due:
        unknown = sorted(a for a in due if a not in available)
        if unknown:
            raise GradeError(f"prazo para tarefa(s) que não existem: {', '.join(unknown)} "
                             f"(corrija com `python -m autograder deadlines --workspace ... --remove TAREFA`)")
        return sorted(due)
    return None


def _collect(ws: Workspace, opts: GradeOptions, tz, assignments: list[str] | None, available: list[str],
             summary: RunSummary, spool: Spool | None = None):
    """A coleta: (tarefas a corrigir, entregas). Para antes de corrigir se um arquivo de aluno
    não diz de que tarefa é (nunca o descarta em silêncio) ou se não há entrega nenhuma.
    Os bytes ficam em `spool` (no disco), não na memória."""
    try:
        only = assignments[0] if assignments and len(assignments) == 1 else None
        got = gather(Path(opts.submissions), {a: notebook_names(ws, a) for a in available},
                     tz, only=only, pattern=opts.pattern, limits=opts.collect, spool=spool)
    except (ValueError, OSError) as e:
        raise GradeError(str(e)) from None
    subs, warns = got.submissions, got.warnings
    if got.undecided:            # nunca descartar em silêncio a entrega de alguém
        shown = "\n  ".join(got.undecided[:10]) + ("\n  ..." if len(got.undecided) > 10 else "")
        raise GradeError(
            f"{len(got.undecided)} arquivo(s) de entrega sem tarefa conhecida (o nome do notebook não "
            f"diz a tarefa):\n  {shown}\nDiga qual é a tarefa com --assignment TAREFA "
            f"(tarefas: {', '.join(available)}). Nada foi corrigido.")
    handed_in = {s.assignment for s in subs if s.files or s.refused}
    if assignments is None:      # nem --assignment nem prazo: as tarefas que alguém entregou
        assignments = sorted(handed_in)
        if assignments:
            say(f"sem --assignment nem prazos no workspace: corrigindo as tarefas entregues "
                f"({', '.join(assignments)})")
    elif not opts.assignments:   # as tarefas com prazo, mas só as que alguém entregou (issue 41)
        empty = [a for a in assignments if a not in handed_in]
        assignments = [a for a in assignments if a in handed_in]
        if empty and assignments:
            say(f"sem entregas de {', '.join(empty)} em {Path(opts.submissions).name}: "
                f"corrigindo só {', '.join(assignments)} (nenhuma linha nem planilha para as outras)")
    subs = [s for s in subs if s.assignment in assignments]
    for w in warns:
        say(f"aviso: {w}")
    if not any(s.files or s.refused for s in subs):
        raise GradeError(f"nenhuma entrega encontrada em {opts.submissions} para "
                         f"{', '.join(assignments) or 'nenhuma tarefa'}")
    from ..store.identities import record_identities
    record_identities(ws, subs)

    return assignments, subs


def _moodle_times(opts: GradeOptions, assignments: list[str], available: list[str], subs, tz) -> None:
    """Os horários de entrega das planilhas de avaliação do Moodle (`--moodle-worksheet
    [TAREFA=]ARQUIVO`), nas entregas do zip, pelo número de participante (collect/moodle_sheet.py)."""
    from ..collect.moodle_sheet import apply_times, read_worksheet
    for spec in opts.worksheets:
        a, sep, path = spec.partition("=")
        if not sep or a not in available:
            a, path = None, spec
        if a is None:
            if len(assignments) != 1:
                raise GradeError(f"--moodle-worksheet {spec}: de qual tarefa é a planilha? Com mais de uma "
                                 f"tarefa ({', '.join(assignments)}), use --moodle-worksheet TAREFA=ARQUIVO")
            a = assignments[0]
        if a not in assignments:
            say(f"aviso: --moodle-worksheet {spec}: a tarefa {a} não está sendo corrigida; planilha ignorada")
            continue
        try:
            sheet = read_worksheet(Path(path), tz)
        except ValueError as e:
            raise GradeError(str(e)) from None
        for w in apply_times(sheet, subs, a):
            say(f"aviso: {w}")


def run_grade(ws: Workspace, opts: GradeOptions) -> RunSummary:
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
    if opts.scheduler and opts.client is None:      # um cluster sem TLS é recusado antes de tudo
        try:
            tls.scheduler_security(opts.scheduler, opts.tls, opts.insecure_cluster)
        except ValueError as e:
            raise GradeError(str(e)) from None

    if opts.use_sandbox:
        ok, why = sandbox.bwrap_works()
        if not ok:
            raise GradeError(
                f"a sandbox não está disponível: {why}.\n"
                "Instale com `sudo apt-get install -y bubblewrap` (ou `make sandbox-deps`). "
                "Para corrigir mesmo assim, sem isolamento, use --no-sandbox "
                "(o código dos alunos rodará com os seus direitos).")
    else:
        say("AVISO: corrigindo SEM sandbox (--no-sandbox): o código dos alunos roda com os seus "
            "direitos, pode ler solutions/ e o gradebook e acessar a rede. Só os limites de "
            "tempo e memória valem.")
    try:
        deadlines = update_deadlines(ws.root, opts.deadlines, opts.tz)
    except ValueError as e:
        raise GradeError(str(e)) from None
    assignments = assigned_set(opts.assignments, deadlines.due, available)

    spool = Spool(ws.state)           # os bytes da turma, no disco, só durante esta correção
    try:
        assignments, subs = _collect(ws, opts, deadlines.tz, assignments, available, summary, spool)
        _moodle_times(opts, assignments, available, subs, deadlines.tz)
        _plan(ws, opts, assignments, subs, summary)
    finally:
        spool.close()
    set_due_dates(ws, deadlines.due)
    return summary


def _plan(ws: Workspace, opts: GradeOptions, assignments: list[str], subs, summary: RunSummary) -> RunSummary:
    """Espelha as entregas no workspace, decide o que corrigir (chaves) e corrige."""
    say(f"preparando {len(assignments)} tarefa(s) no workspace {ws.root} ...")
    release_history.remember(ws, assignments)       # a versão de antes de um teste corrigido
    infos = ws.prepare(assignments)
    release_history.remember(ws, assignments)
    by_key = {(s.student, s.assignment): s for s in subs}
    students = sorted({s.student for s in subs})
    if opts.students:                    # `regrade`: só os alunos pedidos
        students = [s for s in students if s in set(opts.students)]
    if not students:
        raise GradeError(f"nenhuma entrega encontrada em {opts.submissions}")

    fingerprint = json.dumps({"settings": asdict(opts.settings), "limits": asdict(opts.limits),
                              "sandbox": opts.use_sandbox}, sort_keys=True)
    jobs: list[Job] = []
    todo: list[Job] = []
    for s in students:
        for a in assignments:
            job, again = _plan_job(ws, opts, infos[a].source_hash, fingerprint, s, a, by_key.get((s, a)))
            jobs.append(job)
            if again:
                todo.append(job)
    skipped = len(jobs) - len(todo)
    if skipped:
        say(f"{skipped} de {len(jobs)} entregas já corrigidas (mesmos arquivos e limites): "
            "não serão corrigidas de novo")

    todo = _write_refused(ws, infos, todo)
    if todo:
        _grade_on_dask(ws, opts, infos, todo, students, summary)
    merge_results(ws, [r for j in jobs if (r := read_result(ws.result_path(j.student, j.assignment))) is not None])
    return summary


def _plan_job(ws: Workspace, opts: GradeOptions, source_hash: str, fingerprint: str, s: str, a: str,
              sub) -> tuple["Job", bool]:
    """A entrega (aluno, tarefa) como tarefa do planejador e se ela precisa ser corrigida.

    Só o horário mudou (a planilha de avaliação do Moodle chegou depois, ou foi baixada de
    novo): o resultado gravado fica, com o horário novo, sem corrigir de novo. Uma correção
    sem horário (a planilha não veio desta vez) não apaga o horário que já se sabia."""
    files = sub.files if sub else {}
    refused = list(sub.refused) if sub else []
    if opts.regrade:        # as entregas vêm de submitted/: horário, nº do Moodle e notas, os gravados
        kept = read_result(ws.result_path(s, a))
        if kept is not None:
            return Job(s, a, job_key(keyed_files(files, refused), kept.timestamp, source_hash, fingerprint),
                       kept.timestamp, files, notes=list(kept.collection_notes), participant=kept.participant,
                       refused=refused), True
    old = None if opts.redo else read_result(ws.result_path(s, a))

    def same_files(stamp: str | None) -> bool:
        return old is not None and old.key == job_key(keyed_files(files, refused), stamp, source_hash, fingerprint)

    ts = sub.timestamp.isoformat() if sub and sub.timestamp else None
    if ts is None and old is not None and old.timestamp and same_files(old.timestamp):
        ts = old.timestamp
    ts_utc = (datetime.fromisoformat(ts).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
              if ts else None)
    _mirror(ws.submitted(s, a), files, ts_utc)
    job = Job(s, a, job_key(keyed_files(files, refused), ts, source_hash, fingerprint), ts, files,
              # [coleta] issue 13: o que a coleta tem a dizer vai para a linha do aluno
              notes=list(sub.notes) if sub else [], participant=sub.participant if sub else None,
              refused=refused)
    if old is not None and old.key != job.key and same_files(old.timestamp):
        old.timestamp, old.key = ts, job.key
        write_result(ws.result_path(s, a), old)
        return job, False
    return job, old is None or old.key != job.key


@dataclass
class Job:
    """Uma entrega (aluno, tarefa) a corrigir, como o planejador a vê."""

    student: str
    assignment: str
    key: str
    timestamp: str | None
    files: dict[str, bytes]
    notes: list[str] = field(default_factory=list)
    participant: str | None = None
    refused: list[str] = field(default_factory=list)     # entrega recusada pela coleta (tetos): o motivo


def refused_result(job: Job, info) -> JobResult:
    """A linha de uma entrega que a coleta recusou (zip-bomba, tetos): `invalid-notebook` em cada
    notebook, nota 0, com o motivo; nada vai ao Dask."""
    nbs = [NotebookResult(n, Status.INVALID, details=list(job.refused),
                          questions=[QuestionResult.zero(c) for c in info.cells[n]]) for n in info.notebooks]
    return JobResult(job.student, job.assignment, job.key, job.timestamp, nbs, participant=job.participant,
                     collection_notes=list(job.notes)).finish()


def _write_refused(ws: Workspace, infos, todo: list[Job]) -> list[Job]:
    """Grava as linhas das entregas recusadas; devolve as que vão ao Dask."""
    for job in todo:
        if job.refused:
            write_result(ws.result_path(job.student, job.assignment), refused_result(job, infos[job.assignment]))
    return [j for j in todo if not j.refused]


def _release_files(ws: Workspace, a: str) -> dict[str, bytes]:
    root = ws.release(a)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".ipynb_checkpoints" not in p.parts}


def build_tasks(infos, todo: list[Job], earlier: dict | None = None, run_id: str = "") -> list[GradeTask]:
    """Uma tarefa por notebook esperado de cada entrega, em ordem de (tarefa, notebook, aluno):
    um trabalhador pega notebooks iguais em seguida e reaproveita os kernels pré-aquecidos.
    As tarefas vêm sem os bytes: `TaskLoader` lê os de cada uma na hora de mandá-la ao Dask
    (a turma nunca fica inteira na memória, issue 42). `earlier`: (tarefa, notebook) -> textos
    anteriores das células travadas (release_history). `run_id`: o desta rodada, que cada
    resultado tem de trazer de volta (plan/verify.py)."""
    out = []
    for job in todo:
        info = infos[job.assignment]
        for name in info.notebooks:
            _rel, note = pick_notebook_name(job.files, name, info.notebooks)
            out.append(GradeTask(job.student, job.assignment, name, None, {}, job.timestamp, note, run_id=run_id,
                                 earlier_locked=tuple(sorted((earlier or {}).get((job.assignment, name), {}).items()))))
    return sorted(out, key=lambda t: (t.assignment, t.notebook, t.student))


class TaskLoader:
    """Uma tarefa de `build_tasks` com os bytes da entrega, lidos do disco na hora."""

    def __init__(self, infos, todo: list[Job]):
        self.infos = infos
        self.jobs = {(j.student, j.assignment): j for j in todo}

    def __call__(self, t: GradeTask) -> GradeTask:
        files = self.jobs[(t.student, t.assignment)].files
        rel, _note = pick_notebook_name(files, t.notebook, self.infos[t.assignment].notebooks)
        extra = {k: files[k] for k in files if not k.endswith(".ipynb")}
        return dataclasses.replace(t, raw=files[rel] if rel is not None else None, files=extra)


@contextmanager
def dask_client(opts: GradeOptions):
    """Um `distributed.Client`: do cluster em `opts.scheduler` ou de um LocalCluster de
    `opts.jobs` processos de uma thread, fechado (com os kernels) na saída."""
    import multiprocessing

    import dask
    from distributed import Client, LocalCluster

    # o Dask escreve no stderr (reconexões, avisos de trabalhadores): o professor vê as mensagens daqui
    for name in ["distributed", "tornado", "bokeh", *logging.root.manager.loggerDict]:
        if name.split(".")[0] in ("distributed", "tornado", "bokeh"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    config = {
        # o trabalhador que morre leva a tarefa junto; depois de MAX_TRIES mortes, KilledWorker
        "distributed.scheduler.allowed-failures": MAX_TRIES - 1,
        # os limites de memória são os da caixa de cada kernel (box/sandbox.py), não os do Dask
        "distributed.worker.memory.target": False, "distributed.worker.memory.spill": False,
        "distributed.worker.memory.pause": False, "distributed.worker.memory.terminate": False,
        "distributed.admin.tick.limit": "1h",
        # o relógio que mede o laço travado (o aviso só sairia depois de 1 h, acima) e o monitor do
        # sistema (memória e rede para o painel, que não há): a cada 20 ms e 500 ms em cada processo,
        # 8 % de um núcleo com o cluster parado; a 1 s e 5 s, 1,4 % (medido com 2 trabalhadores)
        "distributed.admin.tick.interval": "1s", "distributed.admin.system-monitor.interval": "5s",
        # o perfilador estatístico do Dask amostra as threads a cada 10 ms: ~0,4 s de CPU por
        # notebook no trabalhador, medido (bench/grader.py); a correção não precisa dele
        "distributed.worker.profile.enabled": False,
        "distributed.scheduler.work-stealing": True,
        # a porta HTTP do agendador sem páginas: elas listariam as tarefas, com os nomes dos alunos (plan/tls.py)
        "distributed.scheduler.http.routes": [],
    }
    if "forkserver" in multiprocessing.get_all_start_methods():
        # os trabalhadores do LocalCluster (e os que o nanny refaz) nascem de um forkserver, que
        # importa o Dask uma vez por correção, em vez de um processo novo (`spawn`) que importa
        # tudo de novo a cada trabalhador: ~1,3 núcleo·s a menos num `grade --jobs 2` (medido em
        # 2026-12-06). Ele termina com este processo. Sem forkserver (Windows), o spawn de sempre.
        config["distributed.worker.multiprocessing-method"] = "forkserver"
    with dask.config.set(config):
        if opts.client is not None:
            yield opts.client
            return
        if opts.scheduler:
            target = ({"scheduler_file": opts.scheduler} if Path(opts.scheduler).is_file()
                      else {"address": opts.scheduler})
            try:
                security, warning = tls.scheduler_security(opts.scheduler, opts.tls, opts.insecure_cluster)
            except ValueError as e:
                raise GradeError(str(e)) from None
            if warning:
                say(warning)
            try:
                client = Client(**target, timeout="20s", set_as_default=False, security=security)
            except (OSError, TimeoutError) as e:
                raise GradeError(f"não foi possível conectar ao agendador Dask em {opts.scheduler}: {e}. "
                                 "Confira o endereço (tls://máquina:8786, ou o arquivo de "
                                 "--scheduler-file), se o `dask scheduler` está rodando e se os "
                                 "certificados de --tls são da mesma AC que os dele") from None
            try:
                client.wait_for_workers(1, timeout=120)
            except (OSError, TimeoutError):
                client.close()
                raise GradeError(f"o cluster Dask em {opts.scheduler} não tem nenhum trabalhador "
                                 "(esperei 2 min); inicie `dask worker` nas máquinas que corrigem") from None
            try:
                yield client
            finally:
                client.close()
            return
        cluster = LocalCluster(n_workers=opts.jobs, threads_per_worker=1, processes=True,
                               memory_limit=0, dashboard_address=None, host="127.0.0.1",
                               silence_logs=logging.CRITICAL, **_local_security())
        try:
            with Client(cluster, set_as_default=False) as client:
                yield client
        finally:
            cluster.close()


def _local_security() -> dict:
    """O LocalCluster escuta em portas TCP de 127.0.0.1, que qualquer usuário desta máquina
    alcança: com TLS de uso único (plan/tls.py), só este processo e os trabalhadores dele entram."""
    security = tls.temporary_security()
    if security is None:
        say("AVISO: sem o comando `openssl`, o cluster local desta correção não tem TLS: outro "
            "usuário desta máquina poderia rodar código nos trabalhadores dela. Instale o openssl.")
        return {}
    return {"security": security}


_deferring = False


@contextmanager
def _interrupt_after():
    """Um Ctrl-C no meio de uma gravação (notebook, resultado, gradebook) espera ela terminar e
    vale logo depois. No meio do SQLAlchemy, um KeyboardInterrupt deixava o mapeamento do
    gradebook pela metade, e o `flush` do fim falhava com AttributeError em vez de dizer "rode o
    mesmo comando para continuar" e sair com 130 (visto numa rodada da bateria). Só na thread
    principal (onde o Python entrega o sinal); aninhado, o de fora decide."""
    global _deferring
    old = signal.getsignal(signal.SIGINT)
    if _deferring or threading.current_thread() is not threading.main_thread() or old in (signal.SIG_IGN, None):
        yield
        return
    got: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    _deferring = True
    try:
        yield
    finally:
        _deferring = False
        signal.signal(signal.SIGINT, old)
    if got:
        if callable(old):
            old(signal.SIGINT, None)
        else:
            signal.raise_signal(signal.SIGINT)


class _Recorder:
    """O que volta do cluster vira arquivo: o notebook corrigido assim que chega e, quando a
    entrega (aluno, tarefa) está completa, o `JobResult`, a barra e, a cada MERGE_EVERY_S, o
    gradebook. Único dono do estado da gravação (nada é dividido com o despacho)."""

    def __init__(self, ws: Workspace, infos, todo: list[Job], students, summary: RunSummary, tty):
        self.ws, self.infos, self.summary = ws, infos, summary
        self.by_job = {(j.student, j.assignment): j for j in todo}
        self.waiting: dict[tuple, dict[str, TaskOutput]] = {k: {} for k in self.by_job}
        self.failed: dict[tuple, list[str]] = {}
        self.pending = Counter(j.student for j in todo)          # entregas que faltam por aluno
        self.logs = ws.state / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.unmerged: list[JobResult] = []
        self.last_merge = time.monotonic()
        self.bar = Progress(len(students), len(todo), already=len(students) - len(self.pending), tty=tty)

    def _save_notebook(self, out: TaskOutput) -> None:
        nb_path = self.ws.autograded(out.student, out.assignment) / f"{out.notebook}.ipynb"
        if out.autograded is None:
            nb_path.unlink(missing_ok=True)
            return
        nb_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = nb_path.with_suffix(".tmp")
        tmp.write_bytes(out.autograded)
        tmp.replace(nb_path)

    def record(self, out: TaskOutput, failure: str | None = None) -> None:
        with _interrupt_after():
            key = (out.student, out.assignment)
            self._save_notebook(out)
            got = self.waiting[key]
            got[out.notebook] = out
            if failure:
                self.failed.setdefault(key, []).append(failure)
            if all(n in got for n in self.infos[out.assignment].notebooks):
                self._finish(self.by_job[key], got)

    def _finish(self, job: Job, got: dict[str, TaskOutput]) -> None:
        key = (job.student, job.assignment)
        failures = self.failed.pop(key, [])
        result = JobResult(job.student, job.assignment, "" if failures else job.key, job.timestamp,
                           [got[n].result for n in self.infos[job.assignment].notebooks],
                           participant=job.participant, collection_notes=list(job.notes)).finish()
        write_result(self.ws.result_path(job.student, job.assignment), result)
        del self.waiting[key]
        self.unmerged.append(result)
        if failures:
            self.summary.failures.append(f"{job.student}/{job.assignment}: {failures[0]}")
            with (self.logs / "failures.log").open("a", encoding="utf-8") as f:
                f.write(f"--- {job.student}/{job.assignment}\n" + "\n".join(failures) + "\n")
        self.pending[job.student] -= 1
        self.bar.update(1, 1 if self.pending[job.student] == 0 else 0)
        if time.monotonic() - self.last_merge > MERGE_EVERY_S:
            self.flush()

    def flush(self) -> None:
        with _interrupt_after():
            if self.unmerged:
                merge_results(self.ws, self.unmerged)
                self.unmerged.clear()
            self.last_merge = time.monotonic()


class _Dispatcher:
    """Mantém o cluster ocupado sem encher a fila dele: no máximo 3 tarefas em voo por thread,
    e os últimos notebooks iguais da fila sem pré-aquecer o próximo kernel."""

    def __init__(self, client, course_f, task_list: list[GradeTask], load=None):
        from distributed import as_completed
        from ..worker import tasks as worker_side
        self.client, self.course_f, self.grade = client, course_f, worker_side.grade
        self.load = load or (lambda t: t)        # os bytes de cada tarefa, lidos só ao mandá-la
        self.queue = list(reversed(task_list))
        self.left = Counter((t.assignment, t.notebook) for t in task_list)
        self.futures: dict = {}
        self.ac = as_completed(loop=client.loop)

    def _threads(self) -> int:
        # um agendador que sumiu responde sem "workers": a próxima tarefa diz que a conexão caiu
        workers = (self.client.scheduler_info() or {}).get("workers", {}).values()
        return max(1, sum(w.get("nthreads", 1) for w in workers))

    def top_up(self) -> None:
        n = self._threads()
        room = max(4, 3 * n) - len(self.futures)
        while self.queue and room > 0:
            t = self.queue.pop()
            self.left[(t.assignment, t.notebook)] -= 1
            if self.left[(t.assignment, t.notebook)] < n:     # cada processo pega no máximo mais um
                t = dataclasses.replace(t, warm_next=False)
            f = self.client.submit(self.grade, self.course_f, self.load(t), pure=False, retries=MAX_TRIES - 1,
                                   key=f"grade-{t.assignment}-{t.notebook}-{t.student}-{uuid.uuid4().hex[:8]}")
            self.futures[f] = t
            self.ac.add(f)
            room -= 1

    def __iter__(self):
        """(tarefa, future terminado), completando a fila a cada resultado."""
        self.top_up()
        for fut in self.ac:
            yield self.futures.pop(fut), fut
            self.top_up()


def _outcome(fut, t: GradeTask, cells) -> tuple[TaskOutput, str | None]:
    """O que uma tarefa terminada deu: a saída e, se o corretor falhou, o motivo."""
    from distributed.scheduler import KilledWorker
    try:
        return fut.result(), None
    except KilledWorker:
        why = f"o processo de correção morreu {MAX_TRIES} vezes com este notebook (memória da máquina esgotada?)"
    except Exception as e:  # noqa: BLE001 - erro do corretor: linha crashed, sem chave
        from distributed.client import FutureCancelledError
        if isinstance(e, (FutureCancelledError, OSError)):
            raise
        why = f"{type(e).__name__}: {e}".strip()
    return crashed_output(t, cells, f"não foi possível corrigir: {why[:300]}"), why


def _checked(client, fut, t: GradeTask, cells) -> tuple[TaskOutput, str | None]:
    """`_outcome`, e o resultado só vale se conferir com a tarefa e com o notebook que voltou
    (plan/verify.py); senão, a linha fica `crashed` com o motivo e o trabalhador."""
    out, failure = _outcome(fut, t, cells)
    if failure is None:
        from . import verify
        if verify.problems(out, t, cells):
            try:
                worker = ", ".join(sorted(client.who_has([fut]).get(fut.key, ()))) or "?"
            except Exception:  # noqa: BLE001 - o endereço só enfeita a mensagem
                worker = "?"
            failure = verify.rejection(out, t, cells, worker)
            out = crashed_output(t, cells, failure)
    return out, failure


def _check_workers(client, opts: GradeOptions) -> str:
    """Recusa um cluster cujos trabalhadores não têm a sandbox; devolve onde se corrige."""
    from ..worker import tasks as worker_side
    problems = {w: why for w, why in client.run(worker_side.check_worker, opts.use_sandbox).items() if why}
    if problems:
        raise GradeError("trabalhador(es) do Dask sem o que a correção precisa:\n" + "\n".join(
            f"  {w}: {why}" for w, why in sorted(problems.items())))
    if opts.scheduler is None and opts.client is None:
        return f"{opts.jobs} processo(s) nesta máquina"
    info = client.scheduler_info()
    return f"{info.get('address', '?')}, {len(info.get('workers', {}))} trabalhador(es)"


def _grade_on_dask(ws: Workspace, opts: GradeOptions, infos, todo: list[Job], students, summary) -> None:
    """Planejar → despachar → gravar: as tarefas vão ao Dask (_Dispatcher) e o que volta é
    gravado por um só dono (_Recorder)."""
    from distributed.client import FutureCancelledError

    from ..worker import tasks as worker_side

    earlier = {(a, n): release_history.earlier_locked(ws, a, n, info.release[n])
               for a, info in infos.items() for n in info.notebooks}
    task_list = build_tasks(infos, todo, earlier, run_id=uuid.uuid4().hex)
    rec = _Recorder(ws, infos, todo, students, summary, opts.tty)
    done = 0
    try:
        # com o LocalCluster, um molde dos kernels só, deste processo, para todos os trabalhadores
        local = opts.client is None and not opts.scheduler and opts.use_sandbox and opts.use_zygote
        with worker_side.local_template(ws.prefix, opts.limits, local) as template, dask_client(opts) as client:
            course = Course(prefix=ws.prefix, release={a: _release_files(ws, a) for a in infos},
                            source_hashes={a: i.source_hash for a, i in infos.items()}, seed_db=seed_bytes(ws),
                            settings=opts.settings, limits=opts.limits, use_sandbox=opts.use_sandbox,
                            use_zygote=opts.use_zygote, hidden_secret=student_seed.workspace_secret(ws.state),
                            local_template=template)
            where = _check_workers(client, opts)
            say(f"corrigindo {len(task_list)} notebook(s) de {len(rec.pending)} aluno(s) "
                f"com o Dask ({where}){'' if opts.use_sandbox else ' (sem sandbox)'}")
            # o curso é uma tarefa, não dados espalhados: se os trabalhadores que o tinham morrem,
            # o agendador o refaz (com `scatter`, as correções seguintes seriam canceladas)
            course_f = client.submit(worker_side.course_value, course, key=f"course-{course.digest}", pure=False)
            dispatch = _Dispatcher(client, course_f, task_list, TaskLoader(infos, todo))
            rec.bar.render(force=True)
            try:
                for t, fut in dispatch:
                    try:
                        rec.record(*_checked(client, fut, t, infos[t.assignment].cells[t.notebook]))
                    except (FutureCancelledError, OSError) as e:
                        raise GradeError(_lost_message(opts, done, len(task_list), str(e))) from None
                    done += 1
            finally:
                try:
                    client.run(worker_side.release, course.digest, wait=True)
                except Exception:  # noqa: BLE001 - cluster fechando ou perdido: o relógio de ociosidade solta
                    pass
    except (OSError, TimeoutError) as e:
        if opts.scheduler:
            raise GradeError(_lost_message(opts, done, len(task_list), str(e))) from None
        raise
    except KeyboardInterrupt:
        rec.bar.close()
        raise
    finally:
        rec.flush()
    rec.bar.close()


def _lost_message(opts: GradeOptions, done: int, total: int, why: str) -> str:
    return (f"a conexão com o cluster Dask ({opts.scheduler or 'local'}) caiu depois de {done} de {total} "
            f"notebook(s) corrigidos ({why[:200]}). O que terminou está gravado no workspace: "
            "rode o mesmo comando de novo para continuar de onde parou.")
