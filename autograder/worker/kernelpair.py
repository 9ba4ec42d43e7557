"""Os dois kernels de um notebook e o estado que o laço das células e o repasse partilham.

`KernelPair` é o lugar único desse estado: a situação do notebook (`ExecOutcome`), a célula
em curso, o prazo do notebook, que kernel parou e o que o repasse viu na célula (tempo
estourado, kernel do aluno encerrado). O laço das células (executor.py, `_Run`) e o
repasse (relay.py, `Relay`) recebem o mesmo `KernelPair` e leem e escrevem só nele.

Aqui também fica o que os dois usam para falar com um kernel: executar um trecho com prazo e
saídas limitadas (`exec`), interromper o que passou do tempo e, se ele não voltar, matá-lo
(`stop_runaway`), e anotar a situação (`status`, a mais grave vence).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import Enum
from queue import Empty

import nbformat
import zmq
import zmq.asyncio
from nbclient.exceptions import CellExecutionComplete

from ..box.kernel import SandboxKernel
from ..core.results import Status, worst
from ..core.settings import ExecSettings
from .outputs import LimitedClient, error_output


@dataclass
class ExecOutcome:
    status: Status = Status.OK                # OK | TIMEOUT | CRASHED
    details: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # o que o kernel do corretor passou neste notebook (tempo estourado, interrupção, morte):
    # vazio = ele pode ser reaproveitado, se as outras regras de job.KernelPool deixarem
    harness_trouble: list[str] = field(default_factory=list)


class ExecState(str, Enum):
    """Como terminou uma execução num kernel."""

    OK = "ok"               # respondeu sem erro
    ERROR = "error"         # respondeu com erro (exceção, ou status de erro sem saída de erro)
    TIMEOUT = "timeout"     # o prazo acabou antes da resposta
    DEAD = "dead"           # o kernel morreu ou a conexão foi cortada


@dataclass
class Exec:
    """O que uma execução num kernel deu: as saídas e como terminou."""

    outputs: list
    state: ExecState
    count: int | None = None
    reply: dict | None = None


class KernelPair:
    """O kernel do aluno, o do corretor e o estado do notebook que passa por eles."""

    def __init__(self, student: SandboxKernel, harness: SandboxKernel, settings: ExecSettings,
                 client: LimitedClient, relay_client: LimitedClient):
        self.student = student
        self.harness = harness
        self.s = settings
        self.client = client                  # as saídas das células do notebook
        self.relay_client = relay_client      # as do kernel do corretor durante um teste
        self.outcome = ExecOutcome()
        self.deadline = 0.0                   # o fim do prazo do notebook (time.monotonic)
        self.cell_index = 0
        self.student_dead = False
        self.harness_dead = False
        self.relay_timeout = False            # a função do aluno estourou o tempo nesta célula
        self.relay_killed = False             # ... e o kernel do aluno precisa ser encerrado

    def status(self, status: Status, detail: str | None) -> None:
        self.outcome.status = worst((self.outcome.status, status))
        if detail and detail not in self.outcome.details:
            self.outcome.details.append(detail)

    @staticmethod
    def death(kernel: SandboxKernel, where: str, default: str) -> str:
        """O detalhe de um kernel "morto": a conexão cortada (kernel.lost) ou `default`."""
        return f"{kernel.lost} ({where})" if kernel.lost else f"{default} na {where}"

    def harness_trouble(self, what: str) -> None:
        if what not in self.outcome.harness_trouble:
            self.outcome.harness_trouble.append(what)

    async def exec(self, kernel: SandboxKernel, code: str, limit: float, **kw) -> Exec:
        """Executa `code` no kernel (ver `_exec_raw`); anota o que acontece com o do corretor."""
        ex = await self._exec_raw(kernel, code, limit, **kw)
        if kernel is self.harness and ex.state in (ExecState.TIMEOUT, ExecState.DEAD):
            self.harness_trouble("tempo estourado" if ex.state is ExecState.TIMEOUT else "kernel morreu")
        if kernel is self.harness and self.relay_timeout:
            self.harness_trouble("a função do aluno estourou o tempo durante um teste")
        return ex

    async def _exec_raw(self, kernel: SandboxKernel, code: str, limit: float, *, client=None,
                        silent: bool = False, user_expressions: dict | None = None,
                        on_input=None) -> Exec:
        """Executa `code` no kernel; saídas processadas pelo `client` (limitado)."""
        client = client or self.client
        kc = kernel.kc
        # a célula só recebe as saídas; nbformat.v4.new_code_cell validaria o esquema a cada
        # execução (~60 por notebook, 0,2 ms cada)
        cell = nbformat.NotebookNode(cell_type="code", execution_count=None, metadata=nbformat.NotebookNode(),
                                     outputs=[], source=code)
        if limit <= 0.05:
            return Exec([], ExecState.TIMEOUT)
        client.clear_before_next_output = False
        msg_id = kernel.send("shell", code, silent=silent, store_history=not silent,
                             user_expressions=user_expressions or {}, allow_stdin=on_input is not None,
                             stop_on_error=False)
        if msg_id is None:
            await kernel.settle_lost()
            return Exec([], ExecState.DEAD)        # a conexão com o kernel foi cortada (kernel.lost)
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
                return Exec(cell.outputs, ExecState.TIMEOUT, cell.get("execution_count"))
            if now >= next_alive:
                next_alive = now + 0.5
                if kernel.channel_lost():
                    await kernel.settle_lost()
                if kernel.lost or kernel.exited or not await kernel.is_alive():
                    return Exec(cell.outputs, ExecState.DEAD, cell.get("execution_count"))
            events = dict(await poller.poll(timeout=int(min(end - now, 0.5) * 1000) + 1))
            for sock, channel in channels.items():
                if sock not in events:
                    continue
                try:
                    msg = await kernel.read(channel, 0)
                except Empty:
                    continue
                if msg is None:                     # fora do protocolo: kernel.lost diz por quê
                    return Exec(cell.outputs, ExecState.DEAD, cell.get("execution_count"))
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
                        return Exec(cell.outputs, ExecState.DEAD, cell.get("execution_count"))
                elif kind == "input_request":
                    started = time.monotonic()
                    value = await on_input(msg["content"].get("prompt", ""), end - started)
                    if self.relay_timeout:
                        end = max(end, time.monotonic() + self.s.interrupt_grace)
                    if kernel.send("stdin", value) is None and kernel.lost:
                        await kernel.settle_lost()
                        return Exec(cell.outputs, ExecState.DEAD, cell.get("execution_count"))
        count = reply.get("execution_count") if isinstance(reply.get("execution_count"), int) else None
        ok = reply.get("status") == "ok" and not any(o.output_type == "error" for o in cell.outputs)
        if not ok and not any(o.output_type == "error" for o in cell.outputs):
            # erro sem saída de erro (saída silenciada): ainda é erro, e o nbgrader precisa vê-lo
            cell.outputs.append(error_output(str(reply.get("ename") or "Erro"),
                                       "a célula terminou com erro (sem mensagem de erro)."))
        return Exec(cell.outputs, ExecState.OK if ok else ExecState.ERROR, count, reply)

    async def _responsive(self, kernel: SandboxKernel, timeout: float) -> bool:
        if not await kernel.is_alive():
            return False
        return await kernel.run_silent("", timeout) is not None

    async def stop_runaway(self, kernel: SandboxKernel, where: str) -> bool:
        """Interrompe; se não voltar, mata. Devolve True se o kernel continua vivo."""
        if kernel is self.harness:
            self.harness_trouble("interrompido")
        await kernel.interrupt()
        if await self._responsive(kernel, self.s.interrupt_grace):
            return True
        self.outcome.details.append(f"o kernel não atendeu à interrupção na {where} e foi encerrado")
        await kernel.kill()
        return False

    def limit(self, started: float) -> float:
        """O prazo que resta a uma célula que começou em `started` (o da célula ou o do notebook)."""
        return min(self.s.cell_timeout - (time.monotonic() - started), self.deadline - time.monotonic())
