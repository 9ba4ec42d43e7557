"""Executa um notebook de aluno em DOIS kernels da sandbox, célula a célula, com limites.

- Kernel do aluno: células de preparação (travadas) e as células do aluno
  (soluções e qualquer outra que ele escreveu). Células de teste nunca vão
  para ele. Na partida recebe `wire/student.py` (código do corretor, sem
  texto de teste).
- Kernel do corretor (harness): células de preparação e de teste, nunca uma
  linha do aluno. Na partida recebe `wire/harness.py`. Antes de cada célula de
  teste, os nomes que o teste usa e que o aluno definiu chegam como dados ou
  como `Remote` (proxies). Cada pedido do corretor ao aluno sai por `input()`:
  este módulo o recebe no canal stdin e o repassa ao kernel do aluno com o
  prazo que resta à célula, limite de tamanho (wire.MAX_BYTES) e saída
  capturada (limitada); a resposta volta como texto. Ver "Protocolo entre os
  dois kernels" no CONTRIBUTING.md.

O que este módulo controla:

- tempo por célula e por notebook, nos dois kernels: ao estourar, pede
  interrupção e espera `interrupt_grace` s; se o kernel não voltar (laço que
  ignora SIGINT), mata o kernel;
- kernel do aluno morto (`os._exit`, falha de segmentação): as células
  seguintes recebem um erro em português, para que nenhum teste não
  executado ganhe pontos;
- testes ocultos: a célula de teste roda em partes (visível, oculta, ...) e
  os metadados `autograder.parts` (TestPart) dizem quantas saídas são de
  cada parte; o feedback mostra as visíveis e só "passou/falhou" das ocultas;
  a parte oculta roda no fim do notebook, depois da última célula do aluno
  (deferred.py: nenhuma célula do aluno vê o que ela passou, revisão M1);
- saída: no máximo MAX_CELL_OUTPUT bytes por célula e MAX_NOTEBOOK_OUTPUT por
  notebook; o resto vira um aviso em português;
- nota: uma parte de teste passa só se o kernel do corretor respondeu `ok`
  sem saída de erro (um `execute_reply` com erro e sem saída de erro ganha
  uma saída de erro, e o nbgrader dá zero).

Situação devolvida: ok, timeout (tempo-limite) ou crashed (kernel morreu,
memória esgotada, kernel do corretor falhou); `flags` (revisão) vêm dos
relatórios de observadores malformados ou incoerentes.

Este módulo é o laço das células (`_Run`). Os vizinhos: box/kernel.py (o kernel da
sandbox e o código injetado), relay.py (o repasse entre os kernels), cellcode.py
(o que roda onde, partes ocultas, nomes e definições lidos da árvore sintática) e
outputs.py (saídas com limites).
"""

from __future__ import annotations

import asyncio
import builtins
import time
from dataclasses import dataclass, field
from queue import Empty

import nbformat
import zmq
import zmq.asyncio
from nbclient.exceptions import CellExecutionComplete

from ..box.kernel import HARNESS_MODULE, STUDENT_MODULE, SandboxKernel
from ..core.fmt import integer
from ..core.results import Status, TestPart
from ..core.settings import ExecSettings
from ..core.student_seed import SEED_ENV
from .cellcode import (CodeNames, compiles, instructor_cells, instructor_names, is_instructor_code, is_test,
                       split_hidden, student_definitions, syntax_error)
from .outputs import (MAX_CELL_OUTPUT, MAX_NOTEBOOK_OUTPUT, MAX_RELAY_OUTPUT, LimitedClient, error_output,
                      timeout_error)
from .deferred import Deferred, DeferredParts, finish, split_deferred
from .relay import Relay

_BUILTINS = frozenset(dir(builtins))


@dataclass
class ExecOutcome:
    status: Status = Status.OK                # OK | TIMEOUT | CRASHED
    details: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # o que o kernel do corretor passou neste notebook (tempo estourado, interrupção, morte):
    # vazio = ele pode ser reaproveitado, se as outras regras de job.KernelPool deixarem
    harness_trouble: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- execução

@dataclass
class _Exec:
    outputs: list
    state: str                  # ok | error | timeout | dead
    count: int | None = None
    reply: dict | None = None


class _Run(Relay, DeferredParts):
    def __init__(self, nb, student: SandboxKernel, harness: SandboxKernel, settings: ExecSettings,
                 keep_harness: bool = False, instructor: dict[str, str] | None = None):
        self.nb = nb
        self.instructor = instructor if instructor is not None else {}
        self.locked_reads: set[str] = set()   # nomes do aluno que as células travadas leem
        self.hidden_seed: int | None = None
        self.keep_harness = keep_harness
        self.student = student
        self.harness = harness
        self.s = settings
        self.outcome = ExecOutcome()
        # o nbclient só processa as mensagens (saídas): cada célula roda num rascunho
        scratch = nbformat.v4.new_notebook()
        scratch.cells = [None] * len(nb.cells)
        self.client = LimitedClient(scratch, allow_errors=True, record_timing=False)
        self.client.setup_limits(MAX_CELL_OUTPUT, MAX_NOTEBOOK_OUTPUT)
        self.relay_client = LimitedClient(nbformat.v4.new_notebook(), allow_errors=True, record_timing=False)
        self.relay_client.setup_limits(MAX_RELAY_OUTPUT, 1 << 62)
        self.deadline = 0.0
        self.student_dead = False
        self.harness_dead = False
        self.cell_index = 0
        self.relay_timeout = False         # a função do aluno estourou o tempo nesta célula
        self.relay_killed = False
        self.deferred: list[Deferred] = []  # partes ocultas à espera do fim do notebook

    # -- baixo nível -----------------------------------------------------------
    def _status(self, status: Status, detail: str | None):
        rank = {Status.OK: 0, Status.TIMEOUT: 1, Status.CRASHED: 2}
        if rank[status] > rank[self.outcome.status]:
            self.outcome.status = status
        if detail and detail not in self.outcome.details:
            self.outcome.details.append(detail)

    @staticmethod
    def _death(kernel: SandboxKernel, where: str, default: str) -> str:
        """O detalhe de um kernel "morto": a conexão cortada (kernel.lost) ou `default`."""
        return f"{kernel.lost} ({where})" if kernel.lost else f"{default} na {where}"

    def _harness_trouble(self, what: str) -> None:
        if what not in self.outcome.harness_trouble:
            self.outcome.harness_trouble.append(what)

    async def _exec(self, kernel: SandboxKernel, code: str, limit: float, **kw) -> _Exec:
        """Executa `code` no kernel (ver `_exec_raw`); anota o que acontece com o do corretor."""
        ex = await self._exec_raw(kernel, code, limit, **kw)
        if kernel is self.harness and ex.state in ("timeout", "dead"):
            self._harness_trouble("tempo estourado" if ex.state == "timeout" else "kernel morreu")
        if kernel is self.harness and self.relay_timeout:
            self._harness_trouble("a função do aluno estourou o tempo durante um teste")
        return ex

    async def _exec_raw(self, kernel: SandboxKernel, code: str, limit: float, *, client=None,
                        silent: bool = False, user_expressions: dict | None = None,
                        on_input=None) -> _Exec:
        """Executa `code` no kernel; saídas processadas pelo `client` (limitado)."""
        client = client or self.client
        kc = kernel.kc
        # a célula só recebe as saídas; nbformat.v4.new_code_cell validaria o esquema a cada
        # execução (~60 por notebook, 0,2 ms cada)
        cell = nbformat.NotebookNode(cell_type="code", execution_count=None, metadata=nbformat.NotebookNode(),
                                     outputs=[], source=code)
        if limit <= 0.05:
            return _Exec([], "timeout")
        client.clear_before_next_output = False
        msg_id = kernel.send("shell", code, silent=silent, store_history=not silent,
                             user_expressions=user_expressions or {}, allow_stdin=on_input is not None,
                             stop_on_error=False)
        if msg_id is None:
            await kernel.settle_lost()
            return _Exec([], "dead")        # a conexão com o kernel foi cortada (kernel.lost)
        poller = zmq.asyncio.Poller()
        channels = {kc.iopub_channel.socket: "iopub", kc.shell_channel.socket: "shell"}
        if on_input is not None:
            channels[kc.stdin_channel.socket] = "stdin"
        for sock in channels:
            poller.register(sock, zmq.POLLIN)
        end = time.monotonic() + limit
        reply, idle, next_alive = None, False, time.monotonic() + 0.5
        while not (reply is not None and idle):
            now = time.monotonic()
            if now >= end:
                return _Exec(cell.outputs, "timeout", cell.get("execution_count"))
            if now >= next_alive:
                next_alive = now + 0.5
                if kernel.channel_lost():
                    await kernel.settle_lost()
                if kernel.lost or kernel.exited or not await kernel.is_alive():
                    return _Exec(cell.outputs, "dead", cell.get("execution_count"))
            events = dict(await poller.poll(timeout=int(min(end - now, 0.5) * 1000) + 1))
            for sock, channel in channels.items():
                if sock not in events:
                    continue
                try:
                    msg = await kernel.read(channel, 0)
                except Empty:
                    continue
                if msg is None:                     # fora do protocolo: kernel.lost diz por quê
                    return _Exec(cell.outputs, "dead", cell.get("execution_count"))
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind = msg["msg_type"]
                if channel == "shell":
                    reply = msg["content"]
                elif channel == "iopub":
                    try:
                        client.process_message(msg, cell, 0)
                    except CellExecutionComplete:
                        idle = True
                    except Exception as e:  # noqa: BLE001 - conteúdo que o nbclient não entende
                        await kernel.refuse(channel, f"{msg['msg_type']} ilegível ({type(e).__name__})")
                        return _Exec(cell.outputs, "dead", cell.get("execution_count"))
                elif kind == "input_request":
                    started = time.monotonic()
                    value = await on_input(msg["content"].get("prompt", ""), end - started)
                    if self.relay_timeout:
                        end = max(end, time.monotonic() + self.s.interrupt_grace)
                    if kernel.send("stdin", value) is None and kernel.lost:
                        await kernel.settle_lost()
                        return _Exec(cell.outputs, "dead", cell.get("execution_count"))
        count = reply.get("execution_count") if isinstance(reply.get("execution_count"), int) else None
        ok = reply.get("status") == "ok" and not any(o.output_type == "error" for o in cell.outputs)
        if not ok and not any(o.output_type == "error" for o in cell.outputs):
            # erro sem saída de erro (saída silenciada): ainda é erro, e o nbgrader precisa vê-lo
            cell.outputs.append(error_output(str(reply.get("ename") or "Erro"),
                                       "a célula terminou com erro (sem mensagem de erro)."))
        return _Exec(cell.outputs, "ok" if ok else "error", count, reply)

    async def _responsive(self, kernel: SandboxKernel, timeout: float) -> bool:
        if not await kernel.is_alive():
            return False
        return await kernel.run_silent("", timeout) is not None

    async def _stop_runaway(self, kernel: SandboxKernel, where: str) -> bool:
        """Interrompe; se não voltar, mata. Devolve True se o kernel continua vivo."""
        if kernel is self.harness:
            self._harness_trouble("interrompido")
        await kernel.interrupt()
        if await self._responsive(kernel, self.s.interrupt_grace):
            return True
        self.outcome.details.append(f"o kernel não atendeu à interrupção na {where} e foi encerrado")
        await kernel.kill()
        return False

    def _limit(self, started: float) -> float:
        return min(self.s.cell_timeout - (time.monotonic() - started), self.deadline - time.monotonic())

    # -- células ------------------------------------------------------------------
    async def _setup(self, i: int, cell, locked_bound: set[str]) -> None:
        """Célula travada de preparação: nos dois kernels; a saída guardada é a do aluno.

        Se ela não usa nada do aluno, roda nos dois ao mesmo tempo. Se usa (uma
        demonstração que chama a função do aluno), roda primeiro no kernel do aluno e
        depois no do corretor, com os nomes do aluno trazidos como nas células de teste.
        Uma falha dela no kernel do corretor não muda a situação (a resposta do aluno pode
        estar errada); os testes que dependem dela falham sozinhos."""
        started = time.monotonic()
        # código do professor: o prazo é o de partida de um kernel (imports pesados em dois
        # kernels ao mesmo tempo numa máquina ocupada), não o de uma célula do aluno
        limit = lambda: min(max(self.s.cell_timeout, self.s.startup_timeout) - (time.monotonic() - started),  # noqa: E731
                            self.deadline - time.monotonic())
        code = instructor_names(cell.source)
        names = sorted(code.bound) if code is not None else []
        wanted = self._wanted(code, locked_bound)
        self.relay_client._ag_used.clear()
        if not wanted or self.student_dead:
            jobs = [self._exec(self.harness, cell.source, limit(), client=self.relay_client)]
            if not self.student_dead:
                jobs.append(self._exec(self.student, cell.source, limit()))
            results = await asyncio.gather(*jobs)
            h, st = results[0], (results[1] if len(results) > 1 else None)
        else:
            st = await self._exec(self.student, cell.source, limit())
            h = None
        if st is not None:
            cell.outputs, cell.execution_count = list(st.outputs), st.count
            await self._after_student(i, st)
            if not self.student_dead:
                await self._exec(self.student, f"{STUDENT_MODULE}.mark_base({names!r})", 10.0, silent=True)
        if h is None:
            self.relay_timeout = self.relay_killed = False
            bind = await self._exec(self.harness, f"{HARNESS_MODULE}.bind(globals(), {wanted!r})",
                                    limit(), client=self.relay_client, silent=True,
                                    on_input=self._relay)
            h = bind if bind.state != "ok" else await self._exec(
                self.harness, cell.source, limit(), client=self.relay_client, on_input=self._relay)
            if self.relay_killed:
                await self.student.kill()
        if h.state == "timeout" and not await self._stop_runaway(self.harness, f"célula {i + 1}"):
            self.harness_dead = True
            self._status(Status.CRASHED, self._death(self.harness, f"célula {i + 1}", "o kernel do corretor parou"))
        elif h.state == "dead":
            self.harness_dead = True
            self._status(Status.CRASHED, self._death(self.harness, f"célula {i + 1}", "o kernel do corretor parou"))

    @staticmethod
    def _wanted(code: CodeNames | None, locked_bound: set[str]) -> list[str]:
        """Nomes que o trecho (do professor) lê e que só o aluno pode ter definido."""
        if code is None:
            return []
        return sorted(code.loaded - locked_bound - _BUILTINS)

    async def _after_student(self, i: int, ex: _Exec, compiled: bool = True) -> None:
        """`compiled=False`: a célula nem compila, e o MemoryError vem do analisador do Python
        (aninhamento fundo demais), não de memória esgotada: é o erro de sintaxe já anotado."""
        if compiled and any(o.output_type == "error" and o.get("ename") == "MemoryError" for o in ex.outputs):
            self._status(Status.CRASHED, f"memória esgotada na célula {i + 1}")
        if ex.state == "dead":
            self._status(Status.CRASHED, self._death(self.student, f"célula {i + 1}", "o kernel morreu"))
            why = (f"{self.student.lost[:1].upper()}{self.student.lost[1:]}." if self.student.lost else
                   "O kernel morreu durante esta célula (o processo terminou de repente: os._exit, falha de "
                   "memória ou de segmentação).")
            ex.outputs.append(error_output("DeadKernelError", why))
            self.student_dead = True
        elif ex.state == "timeout":
            self._status(Status.TIMEOUT, f"tempo-limite na célula {i + 1}")
            ex.outputs.append(timeout_error(self.s))
            if time.monotonic() >= self.deadline or not await self._stop_runaway(self.student, f"célula {i + 1}"):
                await self.student.kill()
                self.student_dead = True

    async def _student_cell(self, i: int, cell) -> None:
        err = syntax_error(cell.source)
        if err:
            self.outcome.details.append(f"erro de sintaxe na célula {i + 1} {err}")
        ex = await self._exec(self.student, cell.source, self._limit(time.monotonic()))
        await self._after_student(i, ex, compiled=err is None)
        cell.outputs, cell.execution_count = list(ex.outputs), ex.count

    async def _test_cell(self, i: int, cell, locked_bound: set[str]) -> None:
        started = time.monotonic()
        wanted = sorted(set(self._wanted(instructor_names(cell.source), locked_bound)) | self.locked_reads)
        chunks = split_hidden(cell.source)
        if len(chunks) > 1 and not all(compiles(t) for _, t in chunks):
            chunks = [(None, cell.source)]          # parte não compila sozinha: roda inteira
        parts: list[TestPart] = []
        self.relay_timeout = self.relay_killed = False
        bind = _Exec([], "ok") if not wanted else await self._exec(
            self.harness, f"{HARNESS_MODULE}.bind(globals(), {wanted!r})", self._limit(started),
            client=self.relay_client, silent=True, on_input=self._relay)
        # a parte oculta roda no fim do notebook (deferred.py); sem os nomes do aluno, a primeira
        # parte falha com o motivo e nada fica para depois
        failed = None
        if bind.state != "ok":
            failed = _Exec(list(bind.outputs), bind.state if bind.state in ("timeout", "dead") else "error")
            if not any(o.output_type == "error" for o in failed.outputs):
                failed.outputs.append(error_output("StudentKernelFailure", "não foi possível ler os nomes do seu notebook."))
        now, later = split_deferred(chunks) if failed is None else (chunks, [])
        passed = await self._run_chunks(i, cell, now, parts, started, failed=failed)
        if not (later and passed and await self._defer(i, cell, later, parts, started)):
            finish(cell, parts, chunks, len(parts))
        if self.relay_killed:
            await self.student.kill()

    async def execute(self) -> ExecOutcome:
        t0 = time.monotonic()
        self.deadline = t0 + self.s.notebook_timeout
        try:
            await self._execute_cells()
        finally:
            # o cgroup do notebook (issue 13) matou algo por falta de memória?
            for k in (self.student, self.harness):
                box = getattr(k, "box", None)
                if box is not None and box.memory_exceeded():
                    if k is self.harness:
                        self._harness_trouble("o sistema encerrou processos por falta de memória")
                    mib = integer(box.memory_limit_mib() or 0)
                    self._status(Status.CRASHED, f"o notebook passou do limite de memória ({mib} MiB, "
                                                 "contando todos os processos que ele iniciou) e o sistema "
                                                 "encerrou processos dele")
            if self.harness_dead:
                self._harness_trouble("kernel parado")
            keep = self.keep_harness and not self.outcome.harness_trouble
            await asyncio.gather(self.student.shutdown(), *(() if keep else (self.harness.shutdown(),)))
        self.outcome.seconds = time.monotonic() - t0
        self.outcome.flags = list(dict.fromkeys(self.outcome.flags))
        return self.outcome

    async def _execute_cells(self):
        cells = self.nb.cells
        locked_bound: set[str] = set()
        instr = [is_instructor_code(c, self.instructor) for c in cells]
        tests = [ins and is_test(c, self.instructor) for c, ins in zip(cells, instr)]
        for cell, ins in zip(cells, instr):
            code = instructor_names(cell.source) if ins else None
            if code is not None:
                locked_bound |= code.bound
        # uma função travada (p.ex. o lançador de um kernel Triton) pode ler um nome que só o
        # aluno define, e que o teste não cita: ele também atravessa em cada célula de teste
        for cell, ins, test in zip(cells, instr, tests):
            if ins and not test:
                self.locked_reads |= set(self._wanted(instructor_names(cell.source), locked_bound))
        defs = student_definitions([c.source for c, ins in zip(cells, instr) if c.cell_type == "code" and not ins])
        first = [f"{HARNESS_MODULE}.sources = {defs!r}"]
        if self.hidden_seed is not None:
            # o reset do kernel reaproveitado devolve o ambiente da partida: a semente é deste notebook
            first.append(f"__import__('os').environ[{SEED_ENV!r}] = {str(int(self.hidden_seed))!r}")
        await self._exec(self.harness, "\n".join(first), 10.0, silent=True)
        for i, cell in enumerate(cells):
            if cell.cell_type != "code":
                continue
            self.cell_index = i
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("autograder", None)
            test = tests[i]
            stopped = self.student_dead or self.harness_dead
            if not stopped and time.monotonic() >= self.deadline:
                self._status(Status.TIMEOUT, f"limite de {self.s.notebook_timeout:g} s por notebook "
                                             f"atingido antes da célula {i + 1}")
                self._harness_trouble("morto no fim do tempo do notebook")
                await asyncio.gather(self.student.kill(), self.harness.kill())
                self.student_dead = self.harness_dead = True
                cell.outputs = [error_output("CellNotExecuted", "Esta célula não foi executada: acabou o tempo do notebook.")]
                continue
            if stopped and (test or not instr[i] or self.student_dead):
                if cell.source.strip():
                    cell.outputs = [error_output("CellNotExecuted",
                                           "Esta célula não foi executada: o kernel parou antes dela.")]
                if test:
                    cell.metadata["autograder"] = TestPart.to_metadata(
                        [TestPart(hidden=h, ran=False) for h, _ in split_hidden(cell.source)])
                continue
            if not cell.source.strip():
                continue
            if test:
                await self._test_cell(i, cell, locked_bound)
            elif instr[i]:
                await self._setup(i, cell, locked_bound)
            else:
                await self._student_cell(i, cell)
        await self._run_deferred()              # as partes ocultas, depois da última célula do aluno


async def execute_notebook(nb, student: SandboxKernel, harness: SandboxKernel,
                           settings: ExecSettings, keep_harness: bool = False,
                           release=None, hidden_seed: int | None = None) -> ExecOutcome:
    """Executa `nb` (alterando suas saídas) nos dois kernels já iniciados, encerrados no fim.

    keep_harness=True: o kernel do corretor fica vivo se nada aconteceu com ele
    (`outcome.harness_trouble` vazio), para quem chama decidir se o reaproveita.
    `release`: a versão distribuída (decide o que roda no kernel do corretor; sem ela, o
    próprio `nb`, só para testes do executor). `hidden_seed`: vai para o ambiente do kernel
    do corretor antes da primeira célula (hidden.SEED_ENV), nunca para o do aluno."""
    instructor = instructor_cells(release if release is not None else nb)
    run = _Run(nb, student, harness, settings, keep_harness, instructor)
    run.hidden_seed = hidden_seed
    return await run.execute()
