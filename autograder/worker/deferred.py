"""As partes de uma célula de teste e a regra de onde roda a parte oculta (revisão M1).

Uma célula de teste roda em partes (`cellcode.split_hidden`): a visível no lugar dela, na
ordem do notebook, e a oculta (com tudo o que vem depois dela na mesma célula) só no FIM do
notebook, depois da última célula do aluno. Assim nenhuma célula do aluno roda depois de
uma chamada oculta: o que a função dele guardar de uma entrada oculta (numa global, num
arquivo) não tem mais como sair numa saída que o aluno lê (a página de retorno mostra as
saídas das células dele e das partes visíveis). O que a função imprime ou levanta durante a
parte oculta fica nas saídas dela, que só a cópia do professor guarda
(readers/feedback.py, `student_view`).

O que isto muda:

- a parte oculta chama as funções do aluno que o teste recebeu (as mesmas alças da parte
  visível), mas com o estado do kernel do aluno do fim do notebook (uma global que uma
  célula posterior mudou vale com o valor do fim);
- do lado do corretor, os nomes são os do teste: depois da parte visível,
  `_autograder_harness.park` guarda uma cópia do espaço de nomes, e `unpark` a devolve antes
  da parte oculta (um teste ou uma célula travada posterior que religa `p` ou `cache` não
  muda o que a parte oculta lê);
- o prazo da célula é um só: a parte oculta tem o que a visível deixou;
- se o kernel do aluno (ou o do corretor) parar antes do fim do notebook, ou o tempo do
  notebook acabar, as partes ocultas pendentes não rodam e a célula ganha um erro
  `CellNotExecuted` (nota 0 nela): sem isso, um `os._exit` na última célula pularia todos os
  testes ocultos.

Um colaborador do laço das células (`executor._Run.hidden`), como o repasse (relay.py): lê e
escreve o estado dos dois kernels no mesmo `KernelPair`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..box.kernel import HARNESS_MODULE
from ..core.results import Status, TestPart
from .kernelpair import ExecState
from .outputs import error_output, timeout_error

Chunks = list[tuple[bool | None, str]]


@dataclass
class Deferred:
    """O resto de uma célula de teste, à espera do fim do notebook."""

    index: int                  # a célula
    cell: object
    chunks: Chunks              # da primeira parte oculta em diante
    parts: list[TestPart]       # as que já rodaram (visíveis)
    spent: float                # segundos da célula já gastos na parte visível
    key: int                    # a chave de `park`


def split_deferred(chunks: Chunks) -> tuple[Chunks, Chunks]:
    """(o que roda no lugar, o que fica para o fim): o corte é na primeira parte que não é
    visível (oculta, ou a célula inteira quando uma parte não compila sozinha)."""
    first = next((k for k, (hidden, _) in enumerate(chunks) if hidden is not False), len(chunks))
    return chunks[:first], chunks[first:]


class DeferredParts:
    """Rodar partes de teste e deixar as ocultas para o fim; `k` é o `KernelPair` do notebook."""

    def __init__(self, k, relay):
        self.k = k
        self.relay = relay
        self.deferred: list[Deferred] = []      # partes ocultas à espera do fim do notebook

    async def run_chunks(self, i: int, cell, chunks: Chunks, parts: list[TestPart], started: float,
                          failed=None) -> bool:
        """Roda `chunks` em ordem no kernel do corretor, acrescentando saídas e partes; para na
        primeira que não passa. `failed`: o resultado (`kernelpair.Exec`) que a primeira parte
        recebe sem rodar (os nomes do aluno não chegaram). True se todas passaram."""
        for hidden, src in chunks:
            if failed is not None:
                ex = failed
            else:
                ex = await self.k.exec(self.k.harness, src, self.k.limit(started), on_input=self.relay.forward)
            if cell.execution_count is None:
                cell.execution_count = ex.count
            outputs = list(ex.outputs)
            if ex.state is ExecState.TIMEOUT or self.k.relay_timeout:
                outputs.append(timeout_error(self.k.s))
            elif ex.state is ExecState.DEAD:
                outputs.append(error_output("DeadKernelError", "O kernel do corretor parou durante este teste."))
            cell.outputs.extend(outputs)
            parts.append(TestPart(hidden=hidden, outputs=len(outputs),
                                  passed=ex.state is ExecState.OK and not self.k.relay_timeout, ran=True))
            if ex.state is ExecState.DEAD:
                self.k.harness_dead = True
                self.k.status(Status.CRASHED, self.k.death(self.k.harness, f"célula {i + 1}",
                                                         "o kernel do corretor parou"))
                return False
            if ex.state is ExecState.TIMEOUT or self.k.relay_timeout:
                self.k.status(Status.TIMEOUT, f"tempo-limite na célula {i + 1}")
                if ex.state is ExecState.TIMEOUT and not await self.k.stop_runaway(self.k.harness, f"célula {i + 1}"):
                    self.k.harness_dead = True
                return False
            if ex.state is ExecState.ERROR:
                return False
        return True

    async def defer(self, i: int, cell, chunks: Chunks, parts: list[TestPart], started: float) -> bool:
        """Guarda os nomes do teste no kernel do corretor e deixa `chunks` para o fim."""
        key = len(self.deferred)
        ex = await self.k.exec(self.k.harness, f"{HARNESS_MODULE}.park({key}, globals())",
                              min(10.0, self.k.deadline - time.monotonic()), client=self.k.relay_client, silent=True)
        if ex.state is not ExecState.OK:
            self.k.harness_trouble("não guardou os nomes de um teste")
            cell.outputs.append(error_output("CellNotExecuted", "A parte oculta deste teste não rodou: o "
                                             "corretor não guardou o estado deste teste."))
            parts.append(TestPart(hidden=chunks[0][0], outputs=1, passed=False, ran=False))
            return False
        self.deferred.append(Deferred(i, cell, chunks, parts, time.monotonic() - started, key))
        return True

    def why_not_now(self, d: Deferred) -> str | None:
        if self.k.student_dead or self.k.harness_dead:
            return "o kernel parou antes do fim do notebook"
        if time.monotonic() >= self.k.deadline:
            self.k.status(Status.TIMEOUT, f"limite de {self.k.s.notebook_timeout:g} s por notebook atingido "
                                         f"antes da parte oculta da célula {d.index + 1}")
            return "acabou o tempo do notebook"
        return None

    async def run_all(self) -> None:
        """No fim do notebook: cada parte oculta pendente, na ordem das células, com os nomes
        que o teste tinha (`unpark`)."""
        for d in self.deferred:
            self.k.cell_index = d.index
            before = len(d.parts)
            why = self.why_not_now(d)
            if why is None:
                self.k.relay_timeout = self.k.relay_killed = False
                un = await self.k.exec(self.k.harness, f"{HARNESS_MODULE}.unpark({d.key}, globals())",
                                      min(10.0, self.k.deadline - time.monotonic()), client=self.k.relay_client,
                                      silent=True)
                if un.state is ExecState.OK:
                    await self.run_chunks(d.index, d.cell, d.chunks, d.parts, time.monotonic() - d.spent)
                    if self.k.relay_killed:
                        await self.k.student.kill()
                else:
                    self.k.harness_trouble("não devolveu os nomes de um teste")
                    why = "o corretor não recuperou o estado deste teste"
            if why is not None:
                d.cell.outputs.append(error_output("CellNotExecuted", f"A parte oculta deste teste não rodou: {why}."))
                d.parts.append(TestPart(hidden=d.chunks[0][0], outputs=1, passed=False, ran=False))
            finish(d.cell, d.parts, d.chunks, len(d.parts) - before)


def finish(cell, parts: list[TestPart], chunks: Chunks, done: int) -> None:
    """Marca como "não rodou" as partes de `chunks` a partir de `done` e grava as partes na célula."""
    for hidden, _ in chunks[done:]:
        parts.append(TestPart(hidden=hidden, outputs=0, passed=False, ran=False))
    cell.metadata["autograder"] = TestPart.to_metadata(parts)
