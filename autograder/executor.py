"""Executa um notebook de aluno célula a célula, com limites, num kernel da sandbox.

Usa o nbclient para falar com o kernel (mensagens -> saídas do notebook), mas
controla ele mesmo o que o nbclient não resolve:

- tempo por célula e por notebook: ao estourar, pede interrupção (mensagem no
  canal de controle) e espera `interrupt_grace` s; se o kernel não voltar (um
  laço que ignora SIGINT), mata o kernel em vez de pagar um tempo-limite por
  célula seguinte;
- kernel morto (`os._exit`, falha de segmentação): a célula recebe um erro em
  português e as seguintes também, para que nenhuma célula de teste não
  executada ganhe pontos (o nbgrader dá nota cheia a teste sem saída de erro);
- testes ocultos: a célula de teste é executada em partes (visível, oculta,
  ...), e os metadados `autograder.parts` guardam quantas saídas são de cada
  parte, para que o feedback mostre as visíveis e só "passou/falhou" das
  ocultas. Se alguma parte não compila sozinha, a célula roda inteira e o
  feedback não mostra saída nenhuma dela;
- integridade: antes de cada célula de teste e no fim roda a sonda de
  `integrity.PROBE_TEMPLATE` e compara com o estado depois das células
  travadas.

Situação devolvida: "ok", "timeout" (tempo-limite atingido) ou "crashed"
(kernel morreu ou memória esgotada).
"""

from __future__ import annotations

import ast
import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from . import integrity
from .pipes import LineReader
from .sandbox import KERNEL_NAME

BEGIN_HIDDEN = "BEGIN HIDDEN TESTS"
END_HIDDEN = "END HIDDEN TESTS"


@dataclass
class ExecSettings:
    cell_timeout: float = 30.0        # s por célula (o padrão do nbgrader)
    notebook_timeout: float = 300.0   # s por notebook, somando tudo
    interrupt_grace: float = 3.0      # s para o kernel voltar depois da interrupção
    startup_timeout: float = 60.0     # s para o kernel responder ao kernel_info
    probe: bool = True                # sonda de integridade antes dos testes


@dataclass
class ExecOutcome:
    status: str = "ok"                        # ok | timeout | crashed
    details: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    seconds: float = 0.0


class KernelStartError(RuntimeError):
    """O kernel nem começou: problema do corretor (sandbox), não do aluno."""


def split_hidden(source: str) -> list[tuple[bool, str]]:
    """Divide o código em partes (oculta?, texto), pelos marcadores do nbgrader."""
    parts: list[tuple[bool, list[str]]] = [(False, [])]
    for line in source.splitlines(keepends=True):
        if BEGIN_HIDDEN in line and not parts[-1][0]:
            parts.append((True, [line]))
        elif END_HIDDEN in line and parts[-1][0]:
            parts[-1][1].append(line)
            parts.append((False, []))
        else:
            parts[-1][1].append(line)
    out = [(h, "".join(lines)) for h, lines in parts]
    return [(h, t) for h, t in out if t.strip()]


def _compiles(src: str) -> bool:
    try:
        ast.parse(integrity._to_python(src))
        return True
    except (SyntaxError, ValueError):
        return False


def _error(ename: str, evalue: str):
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue,
                                  traceback=[f"{ename}: {evalue}"])


def _is_test(cell) -> bool:
    m = integrity.nbgrader_meta(cell)
    return bool(m.get("grade") and not m.get("solution") and cell.cell_type == "code")


def _is_instructor_code(cell) -> bool:
    return cell.cell_type == "code" and integrity._is_locked(cell)


MAX_OUTPUT = 2 * 1024 * 1024   # bytes de saída por parte de célula; o resto é descartado


class _LimitedClient(NotebookClient):
    """NotebookClient que para de guardar saída depois de MAX_OUTPUT bytes por célula:
    um `while True: print(...)` não enche a memória do processo de correção."""

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        if msg.get("msg_type") != "error":
            size = len(content.get("text", "") or "") + sum(
                len(v) if isinstance(v, str) else len(json.dumps(v))
                for v in (content.get("data") or {}).values())
            used = self._ag_used.get(id(outs), 0)
            if used + size > MAX_OUTPUT:
                if id(outs) not in self._ag_cut:
                    self._ag_cut.add(id(outs))
                    outs.append(nbformat.v4.new_output(
                        "stream", name="stdout",
                        text=f"\n[saída cortada pelo corretor: passou de {MAX_OUTPUT // 1024 // 1024} MiB]\n"))
                return None
            self._ag_used[id(outs)] = used + size
        return super().output(outs, msg, display_id, cell_index)


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
        self.km.connection_file = str(run_dir / "conexao.json")
        self.kc = None
        from .sandbox import Box
        self.box = Box.for_run_dir(run_dir)    # [caixa] GANCHO (issue 13): o cgroup deste kernel

    async def start(self, startup_timeout: float = 60.0, warm: list[str] | None = None):
        log = open(self.run_dir / "kernel.log", "wb")
        try:
            await self.km.start_kernel(cwd=str(self.run_dir / "trabalho"), stdout=log, stderr=log)
            self.kc = self.km.client()
            self.kc.start_channels()
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
            msg_id = self.kc.execute(code, silent=True, store_history=False)
            end = time.monotonic() + startup_timeout
            while time.monotonic() < end:
                try:
                    msg = await self.kc.shell_channel.get_msg(timeout=end - time.monotonic())
                except Empty:
                    break
                if msg["parent_header"].get("msg_id") == msg_id:
                    break
        return self

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


class Zygote:
    """O servidor de fork (zygote.py) de um processo de correção, na sandbox."""

    def __init__(self, cfg, warm: list[str], log_path: Path):
        import shutil
        import subprocess
        import tempfile

        from . import sandbox
        self.root = Path(tempfile.mkdtemp(prefix="ag-z", dir="/tmp"))   # /tmp: o filho monta um /tmp novo
        self.root.chmod(0o755)
        shutil.copy(Path(__file__).parent / "zygote.py", self.root / "zygote.py")
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(sandbox.zygote_command(cfg, str(self.root), warm),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        self.reader = LineReader(self.proc.stdout.fileno())
        line = self._readline(120)
        hello = json.loads(line) if line else {}
        if not hello.get("ready"):
            self.close()
            raise KernelStartError(f"o zigoto não iniciou (veja {log_path})")
        self.pid = hello["pid"]          # no namespace de PID do corretor

    def _readline(self, timeout: float) -> bytes:
        return self.reader.readline(timeout) or b""

    def spawn(self, run_dir: Path, connection_file: Path) -> int:
        if self.proc.poll() is not None:
            raise KernelStartError("o zigoto terminou")
        req = {"run_dir": str(run_dir), "connection_file": str(connection_file)}
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        reply = json.loads(self._readline(30) or b'{"error": "sem resposta"}')
        if "pid" not in reply:
            raise KernelStartError(f"o zigoto não criou o kernel: {reply.get('error')}")
        return reply["pid"]

    def new_run_dir(self) -> Path:
        import tempfile
        return Path(tempfile.mkdtemp(prefix="k", dir=self.root))

    def close(self):
        import shutil
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.root, ignore_errors=True)


class ZygoteKernel:
    """Kernel criado por fork do zigoto: mesma interface de SandboxKernel."""

    def __init__(self, run_dir: Path, zygote: Zygote):
        self.run_dir = run_dir
        self.zygote = zygote
        self.pid: int | None = None
        self.kc = None

    async def start(self, startup_timeout: float = 60.0, warm: list[str] | None = None):
        import os

        from jupyter_client.asynchronous import AsyncKernelClient
        from jupyter_client.connect import write_connection_file
        conn = self.run_dir / "conexao.json"
        write_connection_file(str(conn), transport="ipc", ip=str(self.run_dir / "k"))
        if os.geteuid() == 0:                       # o kernel roda como nobody
            from .sandbox import NOBODY, _chown_tree
            _chown_tree(str(self.run_dir), NOBODY)
        self.pid = self.zygote.spawn(self.run_dir, conn)
        self.kc = AsyncKernelClient()
        self.kc.load_connection_file(str(conn))
        self.kc.start_channels()
        end = time.monotonic() + startup_timeout
        while True:
            try:
                await self.kc.wait_for_ready(timeout=1.0)
                break
            except RuntimeError:
                if not await self.is_alive() or time.monotonic() > end:
                    tail = (self.run_dir / "kernel.log").read_text(errors="replace")[-800:] \
                        if (self.run_dir / "kernel.log").exists() else ""
                    await self.shutdown()
                    raise KernelStartError(f"o kernel do zigoto não iniciou\n{tail}") from None
        self.kc.allow_stdin = False
        return self

    def _ours(self) -> tuple[bool, bool]:
        """(o pid ainda é um filho do zigoto?, está vivo?) — nunca sinalizar um pid reaproveitado."""
        if self.pid is None:
            return False, False
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            return False, False
        ours = int(fields[1]) == self.zygote.pid
        return ours, ours and fields[0] not in ("Z", "X")

    async def is_alive(self) -> bool:
        return self._ours()[1]

    async def interrupt(self) -> None:
        msg = self.kc.session.msg("interrupt_request", content={})
        self.kc.control_channel.send(msg)

    async def kill(self) -> None:
        import os
        import signal
        if self._ours()[0]:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    async def shutdown(self):
        try:
            if self.kc is not None:
                self.kc.stop_channels()
        except Exception:  # noqa: BLE001
            pass
        await self.kill()


class _Run:
    def __init__(self, nb, kernel: SandboxKernel, settings: ExecSettings,
                 watch_names: list[str], used_builtins: set[str]):
        self.nb = nb
        self.kernel = kernel
        self.s = settings
        self.used_builtins = used_builtins
        self.probe_src = integrity.probe_code(watch_names)
        self.outcome = ExecOutcome()
        self.kc = kernel.kc
        # o nbclient grava a célula executada em nb.cells[i]; damos a ele um
        # notebook de rascunho para que as partes não substituam a célula real
        scratch = nbformat.v4.new_notebook()
        scratch.cells = [None] * len(nb.cells)
        self.client = _LimitedClient(scratch, km=getattr(kernel, "km", None), allow_errors=True, record_timing=False,
                                     timeout=int(settings.cell_timeout))
        self.client._ag_used, self.client._ag_cut = {}, set()
        self.client.kc = self.kc
        self.client.reset_execution_trackers()
        self.deadline = 0.0
        self.dead = False
        self.baseline: dict | None = None
        self._flagged: set[str] = set()

    async def _wait_reply(self, msg_id: str, timeout: float):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            try:
                msg = await self.kc.shell_channel.get_msg(timeout=left)
            except Empty:
                return None
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    async def _responsive(self, timeout: float) -> bool:
        if not await self.kernel.is_alive():
            return False
        msg_id = self.kc.execute("", silent=True, store_history=False)
        return await self._wait_reply(msg_id, timeout) is not None

    async def _kill(self):
        self.dead = True
        await self.kernel.kill()

    # -- sonda de integridade ---------------------------------------------------
    async def probe(self) -> dict | None:
        if not self.s.probe or self.dead:
            return None
        msg_id = self.kc.execute(self.probe_src, silent=True, store_history=False,
                                 user_expressions={"r": integrity.PROBE_VAR})
        reply = await self._wait_reply(msg_id, max(5.0, self.s.interrupt_grace))
        if reply is None:
            self.outcome.flags.append("a verificação de integridade não respondeu")
            return None
        try:
            res = reply["content"]["user_expressions"]["r"]
            return json.loads(ast.literal_eval(res["data"]["text/plain"]))
        except Exception:  # noqa: BLE001 - sonda quebrada pelo notebook
            self.outcome.flags.append("a verificação de integridade falhou (o notebook alterou o ambiente)")
            return None

    async def check(self, where: str):
        now = await self.probe()
        if now is None:
            return
        for msg in integrity.compare_probe(self.baseline, now, self.used_builtins):
            name = msg.split("`")[1] if "`" in msg else msg
            if name not in self._flagged:      # um aviso por nome, no primeiro lugar visto
                self._flagged.add(name)
                self.outcome.flags.append(f"{msg} ({where})")

    # -- execução ---------------------------------------------------------------
    def _set_status(self, status: str, detail: str):
        rank = {"ok": 0, "timeout": 1, "crashed": 2}
        if rank[status] > rank[self.outcome.status]:
            self.outcome.status = status
        self.outcome.details.append(detail)

    async def run_chunk(self, src: str, index: int, cell_started: float):
        """Executa um trecho; devolve (saídas, terminou_bem?)."""
        left_cell = self.s.cell_timeout - (time.monotonic() - cell_started)
        left_nb = self.deadline - time.monotonic()
        limit = min(left_cell, left_nb)
        tmp = nbformat.v4.new_code_cell(src)
        if limit <= 0.05:
            return [], "timeout", None
        self.client.timeout = max(1, int(limit + 0.999))
        self.client._ag_used.clear()
        self.client._ag_cut.clear()
        try:
            await self.client.async_execute_cell(tmp, index)
        except CellTimeoutError:
            return tmp.outputs, "timeout", None
        except DeadKernelError:
            return tmp.outputs, "dead", None
        except Exception as e:  # noqa: BLE001 - falha de comunicação: tratamos como kernel morto
            tmp.outputs.append(_error(type(e).__name__, str(e)))
            return tmp.outputs, "dead", None
        if not await self.kernel.is_alive():
            return tmp.outputs, "dead", None
        ok = not any(o.output_type == "error" for o in tmp.outputs)
        return tmp.outputs, ("ok" if ok else "error"), tmp.execution_count

    async def execute(self) -> ExecOutcome:
        t0 = time.monotonic()
        self.deadline = t0 + self.s.notebook_timeout
        try:
            await self._execute_cells()
            if not self.dead:
                await self.check("fim do notebook")
        finally:
            # [caixa] GANCHO (issue 13): o cgroup do notebook matou algo por falta de memória?
            box = getattr(self.kernel, "box", None)
            if box is not None and box.memory_exceeded():
                mib = f"{box.memory_limit_mib() or 0:,}".replace(",", ".")
                self._set_status("crashed", f"o notebook passou do limite de memória ({mib} MiB, contando "
                                            "todos os processos que ele iniciou) e o sistema encerrou "
                                            "processos dele")
            await self.kernel.shutdown()
        self.outcome.seconds = time.monotonic() - t0
        self.outcome.flags = list(dict.fromkeys(self.outcome.flags))
        return self.outcome

    async def _execute_cells(self):
        cells = self.nb.cells
        for i, cell in enumerate(cells):
            if cell.cell_type != "code":
                continue
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("autograder", None)
            if self.dead:
                cell.outputs = [_error("CellNotExecuted",
                                       "Esta célula não foi executada: o kernel parou antes dela.")]
                continue
            if not cell.source.strip():
                continue
            if time.monotonic() >= self.deadline:
                self._set_status("timeout", f"limite de {self.s.notebook_timeout:g} s por notebook "
                                            f"atingido antes da célula {i + 1}")
                await self._kill()
                cell.outputs = [_error("CellNotExecuted",
                                       "Esta célula não foi executada: acabou o tempo do notebook.")]
                continue
            test = _is_test(cell)
            if _is_instructor_code(cell):   # testes e preparação: o ambiente está limpo?
                await self.check(f"antes da célula {i + 1}")
            chunks = split_hidden(cell.source) if test else [(False, cell.source)]
            if len(chunks) > 1 and not all(_compiles(t) for _, t in chunks):
                chunks = [(None, cell.source)]      # parte não compila sozinha: roda inteira
            parts = []
            started = time.monotonic()
            for hidden, src in chunks:
                outputs, state, count = await self.run_chunk(src, i, started)
                if cell.execution_count is None:
                    cell.execution_count = count
                if state == "timeout":
                    outputs = list(outputs) + [_error(
                        "CellTimeoutError",
                        f"A célula passou do limite de tempo ({self.s.cell_timeout:g} s por célula, "
                        f"{self.s.notebook_timeout:g} s por notebook) e foi interrompida.")]
                elif state == "dead":
                    outputs = list(outputs) + [_error(
                        "DeadKernelError", "O kernel morreu durante esta célula (o processo terminou "
                                           "de repente: os._exit, falha de memória ou de segmentação).")]
                cell.outputs.extend(outputs)
                parts.append({"hidden": hidden, "outputs": len(outputs),
                              "passed": state == "ok", "ran": True})
                if any(o.output_type == "error" and o.get("ename") == "MemoryError" for o in outputs):
                    self._set_status("crashed", f"memória esgotada na célula {i + 1}")
                if state == "dead":
                    self._set_status("crashed", f"o kernel morreu na célula {i + 1}")
                    self.dead = True
                    break
                if state == "timeout":
                    self._set_status("timeout", f"tempo-limite na célula {i + 1}")
                    if time.monotonic() >= self.deadline:
                        await self._kill()
                        break
                    await self.kernel.interrupt()
                    if not await self._responsive(self.s.interrupt_grace):
                        self.outcome.details.append(
                            f"o kernel não atendeu à interrupção na célula {i + 1} e foi encerrado")
                        await self._kill()
                    break
                if state == "error":
                    break
            for hidden, _ in chunks[len(parts):]:
                parts.append({"hidden": hidden, "outputs": 0, "passed": False, "ran": False})
            if test:
                cell.metadata["autograder"] = {"parts": parts}
            if _is_instructor_code(cell) and not self.dead:
                snap = await self.probe()
                if snap is not None:
                    self.baseline = snap


async def execute_notebook(nb, kernel: SandboxKernel, settings: ExecSettings,
                           watch_names: list[str] | None = None,
                           used_builtins: set[str] | None = None) -> ExecOutcome:
    """Executa `nb` (alterando suas saídas) no kernel já iniciado, que é encerrado no fim."""
    run = _Run(nb, kernel, settings, watch_names or [], used_builtins or set())
    return await run.execute()
