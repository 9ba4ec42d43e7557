"""Um kernel da sandbox e o código do corretor injetado nele (os dois lados do protocolo).

`SandboxKernel` inicia um kernel do Jupyter na sandbox (sandbox.py), com a sua pasta
(trabalho/, home/, sockets) e a sua caixa (cgroup), e o encerra com tudo o que ele
iniciou. O código injetado na partida é wire/codec.py e wire/protocol.py mais `wire/student.py` (kernel do aluno)
ou `wire/harness.py` (kernel do corretor), num módulo próprio de cada kernel;
`reset_harness` prepara um kernel do corretor para o próximo notebook.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from queue import Empty

import zmq
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

from ..wire import codec
from .sandbox import KERNEL_NAME

WIRE = Path(__file__).resolve().parent.parent / "wire"    # o código injetado nos kernels
STUDENT_MODULE = "_autograder_student"
HARNESS_MODULE = "_autograder_harness"
BASE_MODULE = "_autograder_base"      # estado da partida do kernel do corretor (sobrevive ao reset)
MAX_SOCKET_MESSAGE = codec.MAX_BYTES + 4 * 1024 * 1024   # bytes de uma mensagem de um kernel (zmq)
SEND_TIMEOUT_MS = 5000       # um envio a um kernel que perdeu a conexão falha em vez de travar
_WATCHED = ("shell", "iopub", "stdin")


class KernelStartError(RuntimeError):
    """O kernel nem começou: problema do corretor (sandbox), não do aluno."""


class SandboxKernel:
    """Um kernel iniciado na sandbox, com a sua pasta (trabalho/, home/, sockets).

    Pode ser iniciado antes da hora (enquanto o notebook anterior roda) e já
    com os módulos das células travadas importados (`warm`): importar o torch
    leva segundos e não depende do aluno. A importação roda num dicionário
    descartável, então nenhum nome aparece no notebook; só `sys.modules` muda."""

    def __init__(self, run_dir: Path, kernel_dirs: list[str]):
        self.run_dir = run_dir
        self.km = AsyncKernelManager(
            kernel_name=KERNEL_NAME,
            kernel_spec_manager=KernelSpecManager(kernel_dirs=kernel_dirs),
            transport="ipc", ip=str(run_dir / "k"))
        self.km.connection_file = str(run_dir / "connection.json")
        self.kc = None
        self.uses = 0                          # notebooks servidos (kernel do corretor reaproveitado)
        self.lost: str | None = None           # motivo, se uma conexão com o kernel foi cortada
        self.exited = False                    # o processo acabou (as conexões caem com ele)
        self._monitors: list = []
        from .sandbox import Box
        self.box = Box.for_run_dir(run_dir)    # [caixa] GANCHO (issue 13): o cgroup deste kernel

    async def start(self, startup_timeout: float = 60.0, warm: list[str] | None = None,
                    inject: str | None = None):
        """Inicia o kernel; `warm`: módulos a importar antes; `inject`: código do corretor a rodar."""
        log = open(self.run_dir / "kernel.log", "wb")
        try:
            await self.km.start_kernel(cwd=str(self.run_dir / "trabalho"), stdout=log, stderr=log)
            self.kc = self.km.client()
            # limite no socket: uma mensagem maior que isto derruba a conexão antes de ser lida
            # (a memória deste processo, fora das caixas, não depende do aluno: revisão H6)
            self.kc.context.setsockopt(zmq.MAXMSGSIZE, MAX_SOCKET_MESSAGE)
            # sem o canal de heartbeat: uma thread e um ping por segundo para cada kernel, e quem
            # diz se o kernel vive é o gerenciador (km.is_alive, o processo), também no wait_for_ready
            self.kc.start_channels(hb=False)
            self._watch_channels()
            await self.kc.wait_for_ready(timeout=startup_timeout)
        except Exception as e:  # noqa: BLE001
            await self.shutdown()
            tail = (self.run_dir / "kernel.log").read_text(errors="replace")[-800:]
            raise KernelStartError(f"o kernel da sandbox não iniciou: {e}\n{tail}") from e
        finally:
            log.close()
        self.kc.allow_stdin = False
        if warm:
            code = "".join(f"try:\n    exec({f'import {m}'!r}, {{}})\nexcept Exception:\n    pass\n"
                           for m in warm)
            await self.run_silent(code, startup_timeout)
        if inject:
            reply = await self.run_silent(inject, startup_timeout)
            if reply is None or reply.get("status") != "ok":
                await self.shutdown()
                why = "sem resposta" if reply is None else f"{reply.get('ename')}: {reply.get('evalue')}"
                raise KernelStartError(f"o código do corretor não rodou no kernel ({why})")
        return self

    def _watch_channels(self) -> None:
        """Observa as conexões (shell, iopub, stdin): uma mensagem acima de MAX_SOCKET_MESSAGE
        é um erro de protocolo para o zmq, que corta a conexão de vez, sem reconectar (revisão
        H6). Sem isto, o próximo envio ao kernel esperaria para sempre por um par que não
        existe mais e travaria o laço inteiro da correção."""
        sync = zmq.Context.shadow(self.kc.context.underlying)
        for name in _WATCHED:
            sock = getattr(self.kc, f"{name}_channel").socket
            sock.setsockopt(zmq.SNDTIMEO, SEND_TIMEOUT_MS)
            addr = f"inproc://ag-monitor-{id(self):x}-{name}"
            sock.monitor(addr, zmq.EVENT_DISCONNECTED)
            mon = sync.socket(zmq.PAIR)
            mon.connect(addr)
            self._monitors.append((name, mon))

    def channel_lost(self) -> str | None:
        """O motivo, se uma conexão com o kernel foi cortada (ver `_watch_channels`); senão None."""
        if self.lost is None:
            for name, mon in self._monitors:
                try:
                    if mon.poll(0):
                        self.mark_lost(name)
                except zmq.ZMQError:
                    continue
        return self.lost

    async def settle_lost(self, wait: float = 1.0) -> None:
        """Um kernel que morre (os._exit) também corta as conexões: se o processo acaba logo
        depois do corte, é uma morte comum (`lost` volta a None), não uma mensagem recusada."""
        end = time.monotonic() + wait
        while self.lost is not None and time.monotonic() < end:
            if not await self.km.is_alive():
                self.exited, self.lost = True, None
                return
            await asyncio.sleep(0.1)

    def mark_lost(self, channel: str) -> None:
        if self.lost is None and not self.exited:
            mib = MAX_SOCKET_MESSAGE // 2**20
            self.lost = (f"o kernel mandou uma mensagem maior que {mib} MiB (o limite do corretor) ou fora "
                         f"do protocolo (canal {channel}); a conexão com ele foi cortada e ele foi encerrado")

    async def refuse(self, channel: str, why: str) -> None:
        """Uma mensagem que o cliente do Jupyter não lê (JSON aninhado demais, assinatura ou
        cabeçalho forjados, conteúdo que não é objeto): o kernel saiu do protocolo, como no
        corte pelo tamanho (`lost` diz por quê), e é encerrado aqui."""
        if self.lost is None and not self.exited:
            self.lost = (f"o kernel mandou uma mensagem fora do protocolo do Jupyter (canal {channel}: "
                         f"{why}); a conexão com ele foi cortada e ele foi encerrado")
        await self.kill()

    async def read(self, channel: str, timeout: float) -> dict | None:
        """A próxima mensagem do canal ("shell", "iopub", "stdin"), ou None se ela está fora do
        protocolo (`refuse`: o kernel foi encerrado e `lost` diz por quê). Empty se nada chegou em `timeout` segundos.
        Toda mensagem de um kernel passa por aqui: o que o aluno manda é lido no processo de
        correção, e um erro ao decodificá-la é dele, não do corretor."""
        try:
            msg = await getattr(self.kc, f"{channel}_channel").get_msg(timeout=timeout)
        except Empty:
            raise
        except Exception as e:  # noqa: BLE001 - decodificar é do cliente do Jupyter: qualquer erro é da mensagem
            await self.refuse(channel, type(e).__name__)
            return None
        if not (isinstance(msg, dict) and isinstance(msg.get("msg_type"), str)
                and isinstance(msg.get("parent_header"), dict) and isinstance(msg.get("content"), dict)):
            await self.refuse(channel, "cabeçalho ou conteúdo que não são objetos")
            return None
        return msg

    def send(self, channel: str, *args, **kw):
        """`kc.execute` (channel="shell") ou `kc.input` ("stdin") sem travar: None se a conexão
        já foi cortada (ver `channel_lost`) ou se o envio não saiu em SEND_TIMEOUT_MS."""
        if self.channel_lost():
            return None
        try:
            return (self.kc.execute if channel == "shell" else self.kc.input)(*args, **kw)
        except zmq.Again:
            self.mark_lost(channel)
            return None

    async def run_silent(self, code: str, timeout: float) -> dict | None:
        """Executa sem histórico nem saída guardada; devolve o conteúdo do execute_reply (ou None)."""
        msg_id = self.send("shell", code, silent=True, store_history=False)
        if msg_id is None:
            return None
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                msg = await self.read("shell", end - time.monotonic())
            except Empty:
                return None
            if msg is None:
                return None
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg["content"]
        return None

    async def is_alive(self) -> bool:
        return await self.km.is_alive()

    async def interrupt(self) -> None:
        await self.km.interrupt_kernel()

    async def kill(self) -> None:
        try:
            await self.km.shutdown_kernel(now=True)
        except Exception:  # noqa: BLE001
            pass

    async def shutdown(self):
        for _, mon in self._monitors:
            mon.close(linger=0)
        self._monitors.clear()
        try:
            if self.kc is not None:
                self.kc.stop_channels()
            if self.km.has_kernel:
                await self.km.shutdown_kernel(now=True)
        except Exception:  # noqa: BLE001 - o kernel pode já ter morrido
            pass
        try:
            await self.km.cleanup_resources()
        except Exception:  # noqa: BLE001
            pass
        # [caixa] GANCHO (issue 13): mata tudo o que o notebook iniciou e remove o cgroup dele
        # (o lançador de sandbox.py o criou com o nome da pasta do kernel).
        from .sandbox import Box
        Box.for_run_dir(self.run_dir).close()




# ----------------------------------------------------------------------------- código injetado

def _module_code(name: str, side: str) -> str:
    """Código que cria o módulo `name` no kernel com wire/codec.py + wire/protocol.py + o lado do protocolo
    (o módulo entra em sys.modules antes: os dataclasses de wire/protocol.py o procuram lá)."""
    parts = "".join(f"exec(compile({(WIRE / f).read_text(encoding='utf-8')!r}, {name + '.' + f[:-3]!r}, "
                    f"'exec'), _m.__dict__)\n" for f in ("codec.py", "protocol.py"))
    side_src = (WIRE / side).read_text(encoding="utf-8")
    return (f"import sys as _s, types as _t\n_m = _t.ModuleType({name!r})\n_s.modules[{name!r}] = _m\n"
            f"{parts}exec(compile({side_src!r}, {name!r}, 'exec'), _m.__dict__)\n"
            f"{name} = _m\ndel _s, _t, _m\n")


def student_stub_code() -> str:
    return _module_code(STUDENT_MODULE, "student.py")


def harness_code() -> str:
    return _module_code(HARNESS_MODULE, "harness.py")


# Tipos de saída que o kernel do corretor não calcula: as figuras das células de preparação
# (a saída guardada delas é a do kernel do aluno) viravam PNG ali também, para nada (0,1 a 0,4 s
# de CPU por figura). Uma figura numa célula de teste sai no retorno como texto (nenhuma tem).
HARNESS_SKIPPED_OUTPUTS = ("image/png", "image/jpeg", "image/svg+xml", "application/pdf")


def harness_start_code() -> str:
    """O que entra no kernel do corretor novo: o módulo, os tipos de saída e o estado da partida."""
    return (harness_code()
            + f"get_ipython().display_formatter.active_types = [t for t in get_ipython().display_formatter"
              f".active_types if t not in {HARNESS_SKIPPED_OUTPUTS!r}]\n"
            + harness_baseline_code())


def harness_baseline_code() -> str:
    """Guarda, num módulo à parte, o estado global do kernel do corretor logo depois da partida."""
    return (f"import sys as _s, types as _t\n_m = _t.ModuleType({BASE_MODULE!r})\n"
            f"_m.state = {HARNESS_MODULE}.snapshot()\n_s.modules[{BASE_MODULE!r}] = _m\ndel _s, _t, _m\n")


async def reset_harness(kernel: SandboxKernel, timeout: float, max_rss_fraction: float) -> str | None:
    """Prepara o kernel do corretor para o próximo notebook; None se deu certo, senão o motivo.

    No kernel: `reset_for_next` (wire/harness.py) confere as regras que só ele vê e zera o
    IPython e o estado global; depois um `_autograder_harness` novo é injetado."""
    if not await kernel.is_alive():
        return "o kernel do corretor não está vivo"
    code = (f"__import__('sys').modules[{HARNESS_MODULE!r}].reset_for_next("
            f"__import__('sys').modules[{BASE_MODULE!r}].state, {max_rss_fraction!r})")
    for step in (code, harness_code()):
        reply = await kernel.run_silent(step, timeout)
        if reply is None:
            return "o kernel do corretor não respondeu"
        if reply.get("status") != "ok":
            return str(reply.get("evalue") or reply.get("ename") or "erro")[:500]
    return None
