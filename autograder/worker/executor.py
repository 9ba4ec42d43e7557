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
- saída: no máximo MAX_CELL_OUTPUT bytes por célula e MAX_NOTEBOOK_OUTPUT por
  notebook; o resto vira um aviso em português;
- nota: uma parte de teste passa só se o kernel do corretor respondeu `ok`
  sem saída de erro (um `execute_reply` com erro e sem saída de erro ganha
  uma saída de erro, e o nbgrader dá zero).

Situação devolvida: ok, timeout (tempo-limite) ou crashed (kernel morreu,
memória esgotada, kernel do corretor falhou); `flags` (revisão) vêm dos
relatórios de observadores malformados ou incoerentes.

Este módulo é o laço das células (`_Run`). Os vizinhos: box/kernel.py (o kernel da
sandbox e o código injetado), kernelpair.py (os dois kernels, executar com prazo e o
estado que o laço e o repasse partilham), relay.py (o repasse entre os kernels), cellcode.py
(o que roda onde, partes ocultas, nomes e definições lidos da árvore sintática) e
outputs.py (saídas com limites).
"""

from __future__ import annotations

import asyncio
import builtins
import time

import nbformat
from atencao.fmt import integer

from ..box.kernel import HARNESS_MODULE, STUDENT_MODULE, SandboxKernel
from ..core.results import Status, TestPart
from ..core.settings import ExecSettings
from ..core.student_seed import SEED_ENV
from .cellcode import (CodeNames, compiles, instructor_cells, instructor_names, is_instructor_code, is_test,
                       split_hidden, student_definitions, syntax_error)
from .kernelpair import Exec, ExecOutcome, ExecState, KernelPair
from .outputs import (MAX_CELL_OUTPUT, MAX_NOTEBOOK_OUTPUT, MAX_RELAY_OUTPUT, LimitedClient, error_output,
                      timeout_error)
from .deferred import DeferredParts, finish, split_deferred
from .relay import Relay

_BUILTINS = frozenset(dir(builtins))


class GraderSetupError(RuntimeError):
    """Uma célula travada falhou no kernel do corretor antes de qualquer coisa do aluno chegar a
    ele (nenhum repasse ainda): a falha é do ambiente da correção (memória curta demais para os
    imports, um pacote faltando), não do aluno. Os testes não valeriam nada; a tarefa falha, e o
    planejador deixa a linha `crashed`, sem chave, com o motivo (a próxima correção tenta de novo)."""


class _Run:
    """O laço das células de um notebook; o estado dele e o dos kernels ficam em `self.k`
    (um `KernelPair`, o mesmo que o repasse `self.relay` lê e escreve)."""

    def __init__(self, nb, student: SandboxKernel, harness: SandboxKernel, settings: ExecSettings,
                 keep_harness: bool = False, instructor: dict[str, str] | None = None):
        self.nb = nb
        self.instructor = instructor if instructor is not None else {}
        self.locked_reads: set[str] = set()   # nomes do aluno que as células travadas leem
        self.hidden_seed: int | None = None
        self.keep_harness = keep_harness
        self.relayed = False                  # algo do aluno já chegou ao kernel do corretor
        # o nbclient só processa as mensagens (saídas): cada célula roda num rascunho
        scratch = nbformat.v4.new_notebook()
        scratch.cells = [None] * len(nb.cells)
        client = LimitedClient(scratch, allow_errors=True, record_timing=False)
        client.setup_limits(MAX_CELL_OUTPUT, MAX_NOTEBOOK_OUTPUT)
        relay_client = LimitedClient(nbformat.v4.new_notebook(), allow_errors=True, record_timing=False)
        relay_client.setup_limits(MAX_RELAY_OUTPUT, 1 << 62)
        self.k = KernelPair(student, harness, settings, client, relay_client)
        self.relay = Relay(self.k)
        self.hidden = DeferredParts(self.k, self.relay)   # as partes ocultas, no fim do notebook

    # -- células ------------------------------------------------------------------
    async def _setup(self, i: int, cell, locked_bound: set[str]) -> None:
        """Célula travada de preparação: nos dois kernels; a saída guardada é a do aluno.

        Se ela não usa nada do aluno, roda nos dois ao mesmo tempo. Se usa (uma
        demonstração que chama a função do aluno), roda primeiro no kernel do aluno e
        depois no do corretor, com os nomes do aluno trazidos como nas células de teste.
        Uma falha dela no kernel do corretor depois que algo do aluno chegou a ele não muda a
        situação (a resposta do aluno pode estar errada); os testes que dependem dela falham
        sozinhos. Antes disso (a preparação), a falha é do ambiente: `GraderSetupError`."""
        started = time.monotonic()
        # código do professor: o prazo é o de partida de um kernel (imports pesados em dois
        # kernels ao mesmo tempo numa máquina ocupada), não o de uma célula do aluno
        s = self.k.s
        limit = lambda: min(max(s.cell_timeout, s.startup_timeout) - (time.monotonic() - started),  # noqa: E731
                            self.k.deadline - time.monotonic())
        code = instructor_names(cell.source)
        names = sorted(code.bound) if code is not None else []
        wanted = self._wanted(code, locked_bound)
        self.k.relay_client.reset()
        if not wanted or self.k.student_dead:
            jobs = [self.k.exec(self.k.harness, cell.source, limit(), client=self.k.relay_client)]
            if not self.k.student_dead:
                jobs.append(self.k.exec(self.k.student, cell.source, limit()))
            results = await asyncio.gather(*jobs)
            h, st = results[0], (results[1] if len(results) > 1 else None)
        else:
            st = await self.k.exec(self.k.student, cell.source, limit())
            h = None
        if st is not None:
            cell.outputs, cell.execution_count = list(st.outputs), st.count
            await self._after_student(i, st)
            if not self.k.student_dead:
                await self.k.exec(self.k.student, f"{STUDENT_MODULE}.mark_base({names!r})", 10.0, silent=True)
        if h is None:
            self.relayed = True
            self.k.relay_timeout = self.k.relay_killed = False
            bind = await self.k.exec(self.k.harness, f"{HARNESS_MODULE}.bind(globals(), {wanted!r})",
                                     limit(), client=self.k.relay_client, silent=True,
                                     on_input=self.relay.forward)
            h = bind if bind.state is not ExecState.OK else await self.k.exec(
                self.k.harness, cell.source, limit(), client=self.k.relay_client, on_input=self.relay.forward)
            if self.k.relay_killed:
                await self.k.student.kill()
        stopped = "o kernel do corretor parou"
        if h.state is ExecState.TIMEOUT and not await self.k.stop_runaway(self.k.harness, f"célula {i + 1}"):
            self.k.harness_dead = True
            self.k.status(Status.CRASHED, self.k.death(self.k.harness, f"célula {i + 1}", stopped))
        elif h.state is ExecState.DEAD:
            self.k.harness_dead = True
            self.k.status(Status.CRASHED, self.k.death(self.k.harness, f"célula {i + 1}", stopped))
        elif h.state is ExecState.ERROR and not self.relayed:
            self.k.harness_trouble("célula travada com erro")
            err = next((o for o in h.outputs if o.output_type == "error"), {})
            what = f"{err.get('ename', 'erro')}: {str(err.get('evalue', ''))[:200]}".rstrip(": ")
            raise GraderSetupError(f"a célula {i + 1}, que não depende do aluno, falhou no kernel do corretor "
                                   f"({what}); sem ela os testes não valem. Confira os limites da correção "
                                   "(--memory) e o ambiente, e rode de novo")

    @staticmethod
    def _wanted(code: CodeNames | None, locked_bound: set[str]) -> list[str]:
        """Nomes que o trecho (do professor) lê e que só o aluno pode ter definido."""
        if code is None:
            return []
        return sorted(code.loaded - locked_bound - _BUILTINS)

    async def _after_student(self, i: int, ex: Exec, compiled: bool = True) -> None:
        """`compiled=False`: a célula nem compila, e o MemoryError vem do analisador do Python
        (aninhamento fundo demais), não de memória esgotada: é o erro de sintaxe já anotado."""
        if compiled and any(o.output_type == "error" and o.get("ename") == "MemoryError" for o in ex.outputs):
            self.k.status(Status.CRASHED, f"memória esgotada na célula {i + 1}")
        if ex.state is ExecState.DEAD:
            self.k.status(Status.CRASHED, self.k.death(self.k.student, f"célula {i + 1}", "o kernel morreu"))
            why = (f"{self.k.student.lost[:1].upper()}{self.k.student.lost[1:]}." if self.k.student.lost else
                   "O kernel morreu durante esta célula (o processo terminou de repente: os._exit, falha de "
                   "memória ou de segmentação).")
            ex.outputs.append(error_output("DeadKernelError", why))
            self.k.student_dead = True
        elif ex.state is ExecState.TIMEOUT:
            self.k.status(Status.TIMEOUT, f"tempo-limite na célula {i + 1}")
            ex.outputs.append(timeout_error(self.k.s))
            if time.monotonic() >= self.k.deadline or not await self.k.stop_runaway(self.k.student, f"célula {i + 1}"):
                await self.k.student.kill()
                self.k.student_dead = True

    async def _student_cell(self, i: int, cell) -> None:
        err = syntax_error(cell.source)
        if err:
            self.k.outcome.details.append(f"erro de sintaxe na célula {i + 1} {err}")
        ex = await self.k.exec(self.k.student, cell.source, self.k.limit(time.monotonic()))
        await self._after_student(i, ex, compiled=err is None)
        cell.outputs, cell.execution_count = list(ex.outputs), ex.count

    async def _test_cell(self, i: int, cell, locked_bound: set[str]) -> None:
        started = time.monotonic()
        self.relayed = True
        wanted = sorted(set(self._wanted(instructor_names(cell.source), locked_bound)) | self.locked_reads)
        chunks = split_hidden(cell.source)
        if len(chunks) > 1 and not all(compiles(t) for _, t in chunks):
            chunks = [(None, cell.source)]          # parte não compila sozinha: roda inteira
        parts: list[TestPart] = []
        self.k.relay_timeout = self.k.relay_killed = False
        bind = Exec([], ExecState.OK) if not wanted else await self.k.exec(
            self.k.harness, f"{HARNESS_MODULE}.bind(globals(), {wanted!r})", self.k.limit(started),
            client=self.k.relay_client, silent=True, on_input=self.relay.forward)
        # a parte oculta roda no fim do notebook (deferred.py); sem os nomes do aluno, a primeira
        # parte falha com o motivo e nada fica para depois
        failed = None
        if bind.state is not ExecState.OK:
            failed = Exec(list(bind.outputs),
                          bind.state if bind.state in (ExecState.TIMEOUT, ExecState.DEAD) else ExecState.ERROR)
            if not any(o.output_type == "error" for o in failed.outputs):
                failed.outputs.append(error_output("StudentKernelFailure", "não foi possível ler os nomes do seu notebook."))
        now, later = split_deferred(chunks) if failed is None else (chunks, [])
        passed = await self.hidden.run_chunks(i, cell, now, parts, started, failed=failed)
        if not (later and passed and await self.hidden.defer(i, cell, later, parts, started)):
            finish(cell, parts, chunks, len(parts))
        if self.k.relay_killed:
            await self.k.student.kill()

    async def execute(self) -> ExecOutcome:
        t0 = time.monotonic()
        self.k.deadline = t0 + self.k.s.notebook_timeout
        try:
            await self._execute_cells()
        finally:
            # o cgroup do notebook (issue 13) matou algo por falta de memória?
            for kernel in (self.k.student, self.k.harness):
                box = getattr(kernel, "box", None)
                if box is not None and box.memory_exceeded():
                    if kernel is self.k.harness:
                        self.k.harness_trouble("o sistema encerrou processos por falta de memória")
                    mib = integer(box.memory_limit_mib() or 0)
                    self.k.status(Status.CRASHED, f"o notebook passou do limite de memória ({mib} MiB, "
                                                  "contando todos os processos que ele iniciou) e o sistema "
                                                  "encerrou processos dele")
            if self.k.harness_dead:
                self.k.harness_trouble("kernel parado")
            keep = self.keep_harness and not self.k.outcome.harness_trouble
            await asyncio.gather(self.k.student.shutdown(), *(() if keep else (self.k.harness.shutdown(),)))
        self.k.outcome.seconds = time.monotonic() - t0
        self.k.outcome.flags = list(dict.fromkeys(self.k.outcome.flags))
        return self.k.outcome

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
        await self.k.exec(self.k.harness, "\n".join(first), 10.0, silent=True)
        for i, cell in enumerate(cells):
            if cell.cell_type != "code":
                continue
            self.k.cell_index = i
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("autograder", None)
            test = tests[i]
            stopped = self.k.student_dead or self.k.harness_dead
            if not stopped and time.monotonic() >= self.k.deadline:
                self.k.status(Status.TIMEOUT, f"limite de {self.k.s.notebook_timeout:g} s por notebook "
                                              f"atingido antes da célula {i + 1}")
                self.k.harness_trouble("morto no fim do tempo do notebook")
                await asyncio.gather(self.k.student.kill(), self.k.harness.kill())
                self.k.student_dead = self.k.harness_dead = True
                cell.outputs = [error_output("CellNotExecuted", "Esta célula não foi executada: acabou o tempo do notebook.")]
                continue
            if stopped and (test or not instr[i] or self.k.student_dead):
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
        await self.hidden.run_all()             # as partes ocultas, depois da última célula do aluno


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
