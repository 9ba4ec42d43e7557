"""Executa um notebook de aluno em DOIS kernels da sandbox, célula a célula, com limites.

- Kernel do aluno: células de preparação (travadas) e as células do aluno
  (soluções e qualquer outra que ele escreveu). Células de teste nunca vão
  para ele. Na partida recebe `student_stub.py` (código do corretor, sem
  texto de teste).
- Kernel do corretor (harness): células de preparação e de teste, nunca uma
  linha do aluno. Na partida recebe `harness_side.py`. Antes de cada célula de
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
- saída: no máximo MAX_CELL_OUTPUT bytes por célula e MAX_NOTEBOOK_OUTPUT por
  notebook; o resto vira um aviso em português;
- nota: uma parte de teste passa só se o kernel do corretor respondeu `ok`
  sem saída de erro (um `execute_reply` com erro e sem saída de erro ganha
  uma saída de erro, e o nbgrader dá zero).

Situação devolvida: ok, timeout (tempo-limite) ou crashed (kernel morreu,
memória esgotada, kernel do corretor falhou); `flags` (revisão) vêm dos
relatórios de observadores malformados ou incoerentes.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from queue import Empty

import nbformat
import zmq
import zmq.asyncio
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionComplete

from . import integrity, wire
from .hidden import SEED_ENV
from .results import Status, TestPart
from .sandbox import KERNEL_NAME

BEGIN_HIDDEN = "BEGIN HIDDEN TESTS"
END_HIDDEN = "END HIDDEN TESTS"
HERE = Path(__file__).resolve().parent
STUDENT_MODULE = "_autograder_student"
HARNESS_MODULE = "_autograder_harness"
BASE_MODULE = "_autograder_base"      # estado da partida do kernel do corretor (sobrevive ao reset)


@dataclass
class ExecSettings:
    cell_timeout: float = 30.0        # s por célula (o padrão do nbgrader)
    notebook_timeout: float = 300.0   # s por notebook, somando tudo
    interrupt_grace: float = 3.0      # s para o kernel voltar depois da interrupção
    startup_timeout: float = 60.0     # s para o kernel responder ao kernel_info
    # reaproveitar o kernel do corretor entre notebooks da mesma tarefa (job.KernelPool);
    # AUTOGRADER_REUSE_HARNESS=0 desliga (comparação nos testes e no bench)
    reuse_harness: bool = field(default_factory=lambda: os.environ.get("AUTOGRADER_REUSE_HARNESS", "1") != "0")


@dataclass
class ExecOutcome:
    status: Status = Status.OK                # OK | TIMEOUT | CRASHED
    details: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    seconds: float = 0.0
    # o que o kernel do corretor passou neste notebook (tempo estourado, interrupção, morte):
    # vazio = ele pode ser reaproveitado, se as outras regras de job.KernelPool deixarem
    harness_trouble: list[str] = field(default_factory=list)


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


def _is_test(cell, instructor: dict[str, str]) -> bool:
    m = integrity.nbgrader_meta(cell)
    return bool(m.get("grade") and not m.get("solution") and _is_instructor_code(cell, instructor))


def instructor_cells(release_nb) -> dict[str, str]:
    """grade_id -> texto das células de código travadas da versão DISTRIBUÍDA (preparação e
    testes): só elas rodam no kernel do corretor. Nada do notebook entregue entra nesta
    decisão (metadados do aluno dizendo `locked` não bastam: revisão C1)."""
    out = {}
    for c in release_nb.cells:
        gid = integrity.grade_id(c)
        if gid and c.cell_type == "code" and integrity._is_locked(c):
            out[gid] = c.source
    return out


def _is_instructor_code(cell, instructor: dict[str, str]) -> bool:
    """Célula de código igual (grade_id e texto) a uma célula travada da versão distribuída."""
    if cell.cell_type != "code":
        return False
    gid = integrity.grade_id(cell)
    return gid is not None and gid in instructor and cell.source == instructor[gid]


MAX_CELL_OUTPUT = 512 * 1024          # bytes de saída guardados por célula
MAX_NOTEBOOK_OUTPUT = 1024 * 1024     # bytes de saída guardados no notebook inteiro
MAX_RELAY_OUTPUT = 256 * 1024         # saída do aluno guardada durante uma chamada do corretor
MAX_ERROR_TEXT = 8 * 1024             # texto de uma saída de erro
MAX_SOCKET_MESSAGE = wire.MAX_BYTES + 4 * 1024 * 1024   # bytes de uma mensagem de um kernel (zmq)


def _size(content) -> int:
    return len(content.get("text", "") or "") + sum(
        len(v) if isinstance(v, str) else len(json.dumps(v)) for v in (content.get("data") or {}).values())


class _LimitedClient(NotebookClient):
    """NotebookClient que guarda no máximo `cell_cap` bytes de saída por célula e
    `total_cap` no notebook: um `while True: print(...)` não enche a memória do
    corretor nem o notebook corrigido."""

    def setup_limits(self, cell_cap: int, total_cap: int):
        self._ag_cell_cap, self._ag_total_cap = cell_cap, total_cap
        self._ag_used: dict[int, int] = {}
        self._ag_cut: set[int] = set()
        self._ag_total = 0
        self.clear_before_next_output = False
        return self

    def output(self, outs, msg, display_id, cell_index):
        content = msg.get("content", {})
        if msg.get("msg_type") == "error":
            content["evalue"] = str(content.get("evalue", ""))[:MAX_ERROR_TEXT]
            tb, kept = [], 0
            for line in content.get("traceback") or []:
                kept += len(line)
                if kept > MAX_ERROR_TEXT:
                    break
                tb.append(line)
            content["traceback"] = tb
            return super().output(outs, msg, display_id, cell_index)
        size = _size(content)
        used = self._ag_used.get(id(outs), 0)
        if used + size > self._ag_cell_cap or self._ag_total + size > self._ag_total_cap:
            if id(outs) not in self._ag_cut:
                self._ag_cut.add(id(outs))
                where = "da célula" if used + size > self._ag_cell_cap else "do notebook"
                cap = self._ag_cell_cap if where == "da célula" else self._ag_total_cap
                outs.append(nbformat.v4.new_output(
                    "stream", name="stdout",
                    text=f"\n[saída cortada pelo corretor: passou do limite {where} ({cap // 1024} KiB)]\n"))
            return None
        self._ag_used[id(outs)] = used + size
        self._ag_total += size
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
        self.uses = 0                          # notebooks servidos (kernel do corretor reaproveitado)
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
            await self.run_silent(code, startup_timeout)
        if inject:
            reply = await self.run_silent(inject, startup_timeout)
            if reply is None or reply.get("status") != "ok":
                await self.shutdown()
                why = "sem resposta" if reply is None else f"{reply.get('ename')}: {reply.get('evalue')}"
                raise KernelStartError(f"o código do corretor não rodou no kernel ({why})")
        return self

    async def run_silent(self, code: str, timeout: float) -> dict | None:
        """Executa sem histórico nem saída guardada; devolve o conteúdo do execute_reply (ou None)."""
        msg_id = self.kc.execute(code, silent=True, store_history=False)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                msg = await self.kc.shell_channel.get_msg(timeout=end - time.monotonic())
            except Empty:
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
    """Código que cria o módulo `name` no kernel com wire.py + o lado do protocolo."""
    wire_src = (HERE / "wire.py").read_text(encoding="utf-8")
    side_src = (HERE / side).read_text(encoding="utf-8")
    return (f"import sys as _s, types as _t\n_m = _t.ModuleType({name!r})\n"
            f"exec(compile({wire_src!r}, {name + '.wire'!r}, 'exec'), _m.__dict__)\n"
            f"exec(compile({side_src!r}, {name!r}, 'exec'), _m.__dict__)\n"
            f"_s.modules[{name!r}] = _m\n{name} = _m\ndel _s, _t, _m\n")


def student_stub_code() -> str:
    return _module_code(STUDENT_MODULE, "student_stub.py")


def harness_code() -> str:
    return _module_code(HARNESS_MODULE, "harness_side.py")


def harness_baseline_code() -> str:
    """Guarda, num módulo à parte, o estado global do kernel do corretor logo depois da partida."""
    return (f"import sys as _s, types as _t\n_m = _t.ModuleType({BASE_MODULE!r})\n"
            f"_m.state = {HARNESS_MODULE}.snapshot()\n_s.modules[{BASE_MODULE!r}] = _m\ndel _s, _t, _m\n")


async def reset_harness(kernel: SandboxKernel, timeout: float, max_rss_fraction: float) -> str | None:
    """Prepara o kernel do corretor para o próximo notebook; None se deu certo, senão o motivo.

    No kernel: `reset_for_next` (harness_side.py) confere as regras que só ele vê e zera o
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


# ----------------------------------------------------------------------------- nomes e fontes (AST)

def bound_names(tree) -> set[str]:
    """Nomes que um trecho liga no escopo global (def, class, import, atribuições, for, with)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
    return out


def loaded_names(tree) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


# atributos que trocam o código (ou o comportamento) de uma função depois do `def` (revisão H1)
_ESCAPES = {"__code__", "__globals__", "__defaults__", "__kwdefaults__", "__call__", "__class__",
            "__dict__", "__wrapped__", "__closure__", "__get__", "__getattribute__"}
# chamadas que religam nomes sem dizer quais
_REBINDERS = {"exec", "eval", "compile", "globals", "vars", "locals", "setattr", "delattr", "__import__"}


def _escapes(tree) -> set[str] | None:
    """Nomes cujo código pode ter sido trocado (`f.__code__ = ...`, `setattr(f, ...)`); None se
    não dá para saber quais (alvo que não é um nome, exec, globals(), sys.modules...)."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
            if isinstance(n.value, ast.Name):
                if n.attr in _ESCAPES:
                    out.add(n.value.id)
            elif n.attr in _ESCAPES:
                return None
        elif isinstance(n, ast.Call):
            fn = n.func.id if isinstance(n.func, ast.Name) else (
                n.func.attr if isinstance(n.func, ast.Attribute) else None)
            if fn in _REBINDERS:
                if fn in ("setattr", "delattr") and n.args and isinstance(n.args[0], ast.Name):
                    out.add(n.args[0].id)
                else:
                    return None
        elif isinstance(n, ast.Attribute) and n.attr == "modules" and isinstance(n.value, ast.Name) \
                and n.value.id == "sys":
            return None
    return out


def _as_assignment(node) -> str | None:
    """Um import como a atribuição equivalente (`from numpy import matmul as mm` -> `mm = numpy.matmul`),
    para que a regra de texto veja o nome importado."""
    if isinstance(node, ast.ImportFrom):
        mod = "." * node.level + (node.module or "")
        return "\n".join(f"{a.asname or a.name} = {mod or '_'}.{a.name}" for a in node.names if a.name != "*")
    if isinstance(node, ast.Import):
        return "\n".join(f"{a.asname or a.name.split('.')[0]} = {a.name}" for a in node.names)
    return None


def student_definitions(sources: list[str]) -> dict[str, str]:
    """nome -> texto do `def`/`class` de nível de módulo que o define, nas células do aluno,
    seguido do texto de todo comando de nível de módulo do aluno que liga um nome que ele lê
    (apelidos como `_h = np.matmul`, imports, outras funções; fechado por transitividade).

    Um nome religado depois por outra coisa (atribuição, import...) ou cujo código pode ter
    sido trocado (`f.__code__ = ...`, `setattr`) sai do mapa; exec/eval/globals()/sys.modules
    em qualquer célula esvaziam o mapa: as regras de texto não podem ler uma definição que
    não é a que roda (e, sem definição, a regra falha em vez de aprovar)."""
    defs: dict[str, str] = {}
    top: list[tuple[set[str], str, set[str]]] = []      # (nomes ligados, texto, nomes lidos)
    gone: set[str] = set()
    unknown = False
    for src in sources:
        text = integrity._to_python(src)
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        esc = _escapes(tree)
        if esc is None:
            unknown = True
        else:
            gone |= esc
        for node in tree.body:
            seg = _as_assignment(node) or ast.get_source_segment(text, node) or ""
            bound = bound_names(node) if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                ast.ClassDef)) else {node.name}
            top.append((bound, seg, loaded_names(node)))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not node.decorator_list:
                defs[node.name] = seg
                if esc is not None and node.name not in esc:
                    gone.discard(node.name)     # redefinida depois da troca, numa célula sem troca
            else:
                for name in bound:
                    defs.pop(name, None)
    if unknown:
        return {}
    out = {}
    for name, seg in defs.items():
        if name in gone:
            continue
        want, seen, extra = set(loaded_names(ast.parse(seg))) - {name}, {name}, []
        while want - seen:
            n = (want - seen).pop()
            seen.add(n)
            for bound, text, reads in top:
                if n in bound and text != seg and text not in extra:
                    extra.append(text)
                    want |= reads
        out[name] = "\n".join([seg, *extra])
    return out


def syntax_error(src: str) -> str | None:
    """Mensagem em português se a célula não compila; None se compila."""
    try:
        ast.parse(integrity._to_python(src))
    except SyntaxError as e:
        return f"(linha {e.lineno}): {e.msg}"
    except ValueError as e:
        return str(e)[:200]
    return None


# ----------------------------------------------------------------------------- execução

@dataclass
class _Exec:
    outputs: list
    state: str                  # ok | error | timeout | dead
    count: int | None = None
    reply: dict | None = None


class _Run:
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
        self.client = _LimitedClient(scratch, allow_errors=True, record_timing=False)
        self.client.setup_limits(MAX_CELL_OUTPUT, MAX_NOTEBOOK_OUTPUT)
        self.relay_client = _LimitedClient(nbformat.v4.new_notebook(), allow_errors=True, record_timing=False)
        self.relay_client.setup_limits(MAX_RELAY_OUTPUT, 1 << 62)
        self.deadline = 0.0
        self.student_dead = False
        self.harness_dead = False
        self.cell_index = 0
        self.relay_timeout = False         # a função do aluno estourou o tempo nesta célula
        self.relay_killed = False

    # -- baixo nível -----------------------------------------------------------
    def _status(self, status: Status, detail: str | None):
        rank = {Status.OK: 0, Status.TIMEOUT: 1, Status.CRASHED: 2}
        if rank[status] > rank[self.outcome.status]:
            self.outcome.status = status
        if detail and detail not in self.outcome.details:
            self.outcome.details.append(detail)

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
        cell = nbformat.v4.new_code_cell(code)
        if limit <= 0.05:
            return _Exec([], "timeout")
        client.clear_before_next_output = False
        msg_id = kc.execute(code, silent=silent, store_history=not silent,
                            user_expressions=user_expressions or {}, allow_stdin=on_input is not None,
                            stop_on_error=False)
        poller = zmq.asyncio.Poller()
        channels = {kc.iopub_channel.socket: kc.iopub_channel, kc.shell_channel.socket: kc.shell_channel}
        if on_input is not None:
            channels[kc.stdin_channel.socket] = kc.stdin_channel
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
                if not await kernel.is_alive():
                    return _Exec(cell.outputs, "dead", cell.get("execution_count"))
            events = dict(await poller.poll(timeout=int(min(end - now, 0.5) * 1000) + 1))
            for sock, channel in channels.items():
                if sock not in events:
                    continue
                try:
                    msg = await channel.get_msg(timeout=0)
                except Empty:
                    continue
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind = msg["msg_type"]
                if channel is kc.shell_channel:
                    reply = msg["content"]
                elif channel is kc.iopub_channel:
                    try:
                        client.process_message(msg, cell, 0)
                    except CellExecutionComplete:
                        idle = True
                elif kind == "input_request":
                    started = time.monotonic()
                    value = await on_input(msg["content"].get("prompt", ""), end - started)
                    if self.relay_timeout:
                        end = max(end, time.monotonic() + self.s.interrupt_grace)
                    kc.input(value)
        count = reply.get("execution_count") if isinstance(reply.get("execution_count"), int) else None
        ok = reply.get("status") == "ok" and not any(o.output_type == "error" for o in cell.outputs)
        if not ok and not any(o.output_type == "error" for o in cell.outputs):
            # erro sem saída de erro (saída silenciada): ainda é erro, e o nbgrader precisa vê-lo
            cell.outputs.append(_error(str(reply.get("ename") or "Erro"),
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

    # -- o repasse (kernel do corretor -> kernel do aluno) ----------------------
    async def _relay(self, prompt: str, limit: float) -> str:
        if not prompt.startswith("\x00autograder:"):
            return json.dumps({"falha": "entrada pelo teclado não é permitida na correção"})
        text = prompt[len("\x00autograder:"):]
        try:
            req = json.loads(text)
        except ValueError:
            return json.dumps({"falha": "pedido inválido do corretor"})
        if req.get("op") == "bandeira":
            reason = str(req.get("motivo", ""))[:500]
            self.outcome.flags.append(f"{reason} (célula {self.cell_index + 1})")
            return json.dumps({"r": "{}"})
        if self.student_dead:
            return json.dumps({"falha": "o kernel do seu notebook parou antes deste teste"})
        self.relay_client._ag_used.clear()
        self.relay_client._ag_cut.clear()
        ex = await self._exec(self.student, f"{STUDENT_MODULE}.serve({text!r})", limit, client=self.relay_client,
                              silent=True, user_expressions={"r": f"{STUDENT_MODULE}.reply"},
                              on_input=self._callback)
        out = "".join(o.get("text", "") for o in ex.outputs if o.output_type == "stream")
        where = f"célula {self.cell_index + 1}"
        if ex.state == "timeout":
            self.relay_timeout = True
            if not await self._stop_runaway(self.student, where):
                self.student_dead = True
                self.relay_killed = True
            return json.dumps({"falha": f"a sua função passou do limite de tempo ({self.s.cell_timeout:g} s por "
                                        f"célula, {self.s.notebook_timeout:g} s por notebook)", "saida": out})
        if ex.state == "dead":
            self.student_dead = True
            self._status(Status.CRASHED, f"o kernel morreu na {where}")
            return json.dumps({"falha": "o kernel do seu notebook morreu durante a chamada (os._exit, falha "
                                        "de memória ou de segmentação)", "saida": out})
        ue = ((ex.reply or {}).get("user_expressions") or {}).get("r") or {}
        data = (ue.get("data") or {}).get("application/json") if ue.get("status") == "ok" else None
        if not isinstance(data, dict) or not isinstance(data.get("r"), str):
            return json.dumps({"falha": "o kernel do seu notebook não respondeu ao corretor (o ambiente "
                                        "do corretor foi alterado?)", "saida": out})
        if data.get("erro") == "MemoryError":
            self._status(Status.CRASHED, f"memória esgotada na {where}")
        if len(data["r"]) > wire.MAX_BYTES:
            return json.dumps({"falha": f"resposta maior que {wire.MAX_BYTES // 2**20} MiB", "saida": out})
        return json.dumps({"r": data["r"], "saida": out})

    async def _callback(self, prompt: str, limit: float) -> str:
        """O aluno usa um objeto do corretor: o pedido vai ao kernel do corretor como resposta
        ao `input()` em que ele espera, e o próximo `input()` dele traz o resultado."""
        if not prompt.startswith("\x00autograder:") or len(prompt) > wire.MAX_BYTES:
            return json.dumps({"falha": "pedido inválido"})
        kc = self.harness.kc
        kc.input(json.dumps({"callback": prompt[len("\x00autograder:"):]}))
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                msg = await kc.stdin_channel.get_msg(timeout=end - time.monotonic())
            except Empty:
                break
            if msg["msg_type"] != "input_request":
                continue
            try:
                req = json.loads(msg["content"]["prompt"][len("\x00autograder:"):])
            except ValueError:
                req = {}
            if req.get("op") == "retorno" and isinstance(req.get("r"), str):
                return json.dumps({"r": req["r"]})
            return json.dumps({"falha": "o corretor não respondeu ao pedido"})
        self._harness_trouble("não respondeu a um pedido do aluno a tempo")
        return json.dumps({"falha": "o corretor não respondeu a tempo"})

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
        tree = integrity._parse(cell.source)
        names = sorted(bound_names(tree)) if tree is not None else []
        wanted = self._wanted(tree, locked_bound)
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
            self._status(Status.CRASHED, f"o kernel do corretor parou na célula {i + 1}")
        elif h.state == "dead":
            self.harness_dead = True
            self._status(Status.CRASHED, f"o kernel do corretor parou na célula {i + 1}")

    def _wanted(self, tree, locked_bound: set[str]) -> list[str]:
        """Nomes que o trecho lê e que só o aluno pode ter definido."""
        if tree is None:
            return []
        return sorted(loaded_names(tree) - locked_bound - set(dir(builtins)))

    async def _after_student(self, i: int, ex: _Exec) -> None:
        if any(o.output_type == "error" and o.get("ename") == "MemoryError" for o in ex.outputs):
            self._status(Status.CRASHED, f"memória esgotada na célula {i + 1}")
        if ex.state == "dead":
            self._status(Status.CRASHED, f"o kernel morreu na célula {i + 1}")
            ex.outputs.append(_error("DeadKernelError", "O kernel morreu durante esta célula (o processo "
                                                        "terminou de repente: os._exit, falha de memória ou de segmentação)."))
            self.student_dead = True
        elif ex.state == "timeout":
            self._status(Status.TIMEOUT, f"tempo-limite na célula {i + 1}")
            ex.outputs.append(_timeout_error(self.s))
            if time.monotonic() >= self.deadline or not await self._stop_runaway(self.student, f"célula {i + 1}"):
                await self.student.kill()
                self.student_dead = True

    async def _student_cell(self, i: int, cell) -> None:
        err = syntax_error(cell.source)
        if err:
            self.outcome.details.append(f"erro de sintaxe na célula {i + 1} {err}")
        ex = await self._exec(self.student, cell.source, self._limit(time.monotonic()))
        await self._after_student(i, ex)
        cell.outputs, cell.execution_count = list(ex.outputs), ex.count

    async def _test_cell(self, i: int, cell, locked_bound: set[str]) -> None:
        started = time.monotonic()
        wanted = sorted(set(self._wanted(integrity._parse(cell.source), locked_bound)) | self.locked_reads)
        chunks = split_hidden(cell.source)
        if len(chunks) > 1 and not all(_compiles(t) for _, t in chunks):
            chunks = [(None, cell.source)]          # parte não compila sozinha: roda inteira
        parts: list[TestPart] = []
        self.relay_timeout = self.relay_killed = False
        bind = await self._exec(self.harness, f"{HARNESS_MODULE}.bind(globals(), {wanted!r})", self._limit(started),
                                client=self.relay_client, silent=True, on_input=self._relay)
        for hidden, src in chunks:
            if bind.state != "ok":      # os nomes do aluno não chegaram: a primeira parte falha com o motivo
                ex = _Exec(list(bind.outputs), bind.state if bind.state in ("timeout", "dead") else "error")
                if not any(o.output_type == "error" for o in ex.outputs):
                    ex.outputs.append(_error("StudentKernelFailure", "não foi possível ler os nomes do seu notebook."))
            else:
                ex = await self._exec(self.harness, src, self._limit(started), on_input=self._relay)
            if cell.execution_count is None:
                cell.execution_count = ex.count
            outputs = list(ex.outputs)
            if ex.state == "timeout" or self.relay_timeout:
                outputs.append(_timeout_error(self.s))
            elif ex.state == "dead":
                outputs.append(_error("DeadKernelError", "O kernel do corretor parou durante este teste."))
            cell.outputs.extend(outputs)
            parts.append(TestPart(hidden=hidden, outputs=len(outputs),
                                  passed=ex.state == "ok" and not self.relay_timeout, ran=True))
            if ex.state == "dead":
                self.harness_dead = True
                self._status(Status.CRASHED, f"o kernel do corretor parou na célula {i + 1}")
                break
            if ex.state == "timeout" or self.relay_timeout:
                self._status(Status.TIMEOUT, f"tempo-limite na célula {i + 1}")
                if ex.state == "timeout" and not await self._stop_runaway(self.harness, f"célula {i + 1}"):
                    self.harness_dead = True
                break
            if ex.state == "error":
                break
        for hidden, _ in chunks[len(parts):]:
            parts.append(TestPart(hidden=hidden, outputs=0, passed=False, ran=False))
        cell.metadata["autograder"] = {"parts": [asdict(p) for p in parts]}
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
                    mib = f"{box.memory_limit_mib() or 0:,}".replace(",", ".")
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
        instr = lambda c: _is_instructor_code(c, self.instructor)  # noqa: E731
        for cell in cells:
            if instr(cell):
                tree = integrity._parse(cell.source)
                if tree is not None:
                    locked_bound |= bound_names(tree)
        # uma função travada (p.ex. o lançador de um kernel Triton) pode ler um nome que só o
        # aluno define, e que o teste não cita: ele também atravessa em cada célula de teste
        for cell in cells:
            if instr(cell) and not _is_test(cell, self.instructor):
                self.locked_reads |= set(self._wanted(integrity._parse(cell.source), locked_bound))
        defs = student_definitions([c.source for c in cells if c.cell_type == "code" and not instr(c)])
        if self.hidden_seed is not None:
            # o reset do kernel reaproveitado devolve o ambiente da partida: a semente é deste notebook
            await self._exec(self.harness, f"__import__('os').environ[{SEED_ENV!r}] = {str(int(self.hidden_seed))!r}",
                             10.0, silent=True)
        await self._exec(self.harness, f"{HARNESS_MODULE}.sources = {defs!r}", 10.0, silent=True)
        for i, cell in enumerate(cells):
            if cell.cell_type != "code":
                continue
            self.cell_index = i
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("autograder", None)
            test = _is_test(cell, self.instructor)
            stopped = self.student_dead or self.harness_dead
            if not stopped and time.monotonic() >= self.deadline:
                self._status(Status.TIMEOUT, f"limite de {self.s.notebook_timeout:g} s por notebook "
                                             f"atingido antes da célula {i + 1}")
                self._harness_trouble("morto no fim do tempo do notebook")
                await asyncio.gather(self.student.kill(), self.harness.kill())
                self.student_dead = self.harness_dead = True
                cell.outputs = [_error("CellNotExecuted", "Esta célula não foi executada: acabou o tempo do notebook.")]
                continue
            if stopped and (test or not instr(cell) or self.student_dead):
                if cell.source.strip():
                    cell.outputs = [_error("CellNotExecuted",
                                           "Esta célula não foi executada: o kernel parou antes dela.")]
                if test:
                    cell.metadata["autograder"] = {"parts": [asdict(TestPart(hidden=h, ran=False))
                                                             for h, _ in split_hidden(cell.source)]}
                continue
            if not cell.source.strip():
                continue
            if test:
                await self._test_cell(i, cell, locked_bound)
            elif instr(cell):
                await self._setup(i, cell, locked_bound)
            else:
                await self._student_cell(i, cell)


def _timeout_error(s: ExecSettings):
    return _error("CellTimeoutError", f"A célula passou do limite de tempo ({s.cell_timeout:g} s por célula, "
                                      f"{s.notebook_timeout:g} s por notebook) e foi interrompida.")


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
