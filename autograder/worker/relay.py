"""O repasse entre os dois kernels, fora deles (no processo de quem corrige).

Cada pedido do kernel do corretor (`protocol.Request`) chega como um `input()` no canal
stdin: `Relay.forward` o repassa ao kernel do aluno (`_autograder_student.serve`), com o
prazo que resta à célula e a saída capturada (limitada), e devolve ao corretor o texto da
resposta do aluno sem decodificá-lo (`protocol.Relayed`, com o id do pedido) ou uma
`protocol.Failure`. `Relay.callback` leva ao kernel do corretor um pedido do aluno a um
objeto do corretor (uma função de teste, um modelo) como `protocol.Callback`.

Tamanho: uma mensagem de um kernel acima de kernel.MAX_SOCKET_MESSAGE nem chega a este
processo (o zmq corta a conexão: kernel.SandboxKernel.channel_lost); abaixo disso, todo
texto é medido contra codec.MAX_BYTES antes de ser lido. O laço das células
(`executor._Run`) tem um `Relay` e lhe passa `forward` como resposta aos `input()` do
kernel do corretor; os dois leem e escrevem o mesmo estado, um `kernelpair.KernelPair`
(kernels, prazos, situação).
"""

from __future__ import annotations

import time
from queue import Empty

from ..wire import codec, protocol
from ..box.kernel import STUDENT_MODULE
from ..wire.protocol import Blame, Callback, Failure, Flag, Relayed, Reply, Request
from ..core.results import Status
from .kernelpair import ExecState, KernelPair


class Relay:
    """Os dois sentidos do repasse: `forward` (corretor -> aluno) e `callback` (aluno -> corretor)."""

    def __init__(self, k: KernelPair):
        self.k = k
        self.pending_id = ""     # o id do pedido do corretor em curso (o de um `Callback`)

    def _flag(self, msg: Flag) -> str:
        self.k.outcome.flags.append(f"{msg.reason[:500]} (célula {self.k.cell_index + 1})")
        return protocol.to_text(Reply(id=msg.id))

    async def forward(self, prompt: str, limit: float) -> str:
        text = protocol.unprompt(prompt)
        if text is None:
            return protocol.to_text(Failure(id="", reason="entrada pelo teclado não é permitida na correção"))
        try:
            req = protocol.parse(text, Request, Flag)
        except codec.BadWire as e:
            return protocol.to_text(Failure(id="", reason=f"pedido inválido do corretor ({e})", blame=Blame.GRADER))
        if isinstance(req, Flag):
            return self._flag(req)
        k = self.k
        if k.student_dead:
            return protocol.to_text(Failure(id=req.id, reason="o kernel do seu notebook parou antes deste teste"))
        self.pending_id = req.id
        k.relay_client.reset()
        ex = await k.exec(k.student, f"{STUDENT_MODULE}.serve({text!r})", limit, client=k.relay_client,
                          silent=True, user_expressions={"r": f"{STUDENT_MODULE}.reply"},
                          on_input=self.callback)
        out = "".join(o.get("text", "") for o in ex.outputs if o.output_type == "stream")
        failure = await self._failure(ex)
        if failure is None:
            answer = self._envelope(ex)
            if answer is None:
                failure = ("o kernel do seu notebook não respondeu ao corretor (o ambiente do corretor foi "
                           "alterado?)", Blame.GRADER)
            elif len(answer.text) > codec.MAX_BYTES:
                failure = (f"resposta maior que {codec.MAX_BYTES // 2**20} MiB", Blame.STUDENT)
            else:
                if answer.raised == "MemoryError":
                    k.status(Status.CRASHED, f"memória esgotada na célula {k.cell_index + 1}")
                try:
                    return protocol.to_text(Relayed(id=req.id, text=answer.text, output=out))
                except codec.NotData:
                    failure = (f"resposta maior que {codec.MAX_BYTES // 2**20} MiB", Blame.STUDENT)
        return protocol.to_text(Failure(id=req.id, reason=failure[0], blame=failure[1], output=out))

    async def _failure(self, ex) -> tuple[str, Blame] | None:
        """O motivo (e de quem é) se a chamada ao aluno não terminou: tempo ou kernel morto."""
        k = self.k
        where = f"célula {k.cell_index + 1}"
        if ex.state is ExecState.TIMEOUT:
            k.relay_timeout = True
            if not await k.stop_runaway(k.student, where):
                k.student_dead = True
                k.relay_killed = True
            return (f"a sua função passou do limite de tempo ({k.s.cell_timeout:g} s por célula, "
                    f"{k.s.notebook_timeout:g} s por notebook)", Blame.STUDENT)
        if ex.state is ExecState.DEAD:
            k.student_dead = True
            k.status(Status.CRASHED, k.death(k.student, where, "o kernel morreu"))
            if k.student.lost:
                k.relay_killed = True
                return f"a resposta do seu notebook foi recusada: {k.student.lost}", Blame.STUDENT
            return ("o kernel do seu notebook morreu durante a chamada (os._exit, falha de memória ou de "
                    "segmentação)", Blame.STUDENT)
        return None

    @staticmethod
    def _envelope(ex) -> protocol.Envelope | None:
        """O `Envelope` que o kernel do aluno deixou em user_expressions (o texto não é lido aqui)."""
        ue = ((ex.reply or {}).get("user_expressions") or {}).get("r") or {}
        data = (ue.get("data") or {}).get("application/json") if ue.get("status") == "ok" else None
        try:
            return protocol.from_dict(protocol.Envelope, data)
        except codec.BadWire:
            return None

    async def callback(self, prompt: str, limit: float) -> str:
        """O aluno usa um objeto do corretor: o pedido vai ao kernel do corretor como `Callback`
        (resposta ao `input()` em que ele espera o pedido `pending_id`), e o próximo `input()`
        dele traz o `Reply`. Um pedido aninhado do corretor nesse meio recebe uma `Failure`
        e a espera continua: o canal não se dessincroniza (L2)."""
        text = protocol.unprompt(prompt)
        if text is None:
            return protocol.to_text(Failure(id="", reason="pedido inválido"))
        harness = self.k.harness
        if harness.send("stdin", protocol.to_text(Callback(id=self.pending_id, text=text))) is None \
                and harness.lost:
            return protocol.to_text(Failure(id="", reason="o corretor não recebeu o pedido"))
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                msg = await harness.read("stdin", end - time.monotonic())
            except Empty:
                break
            if msg is None:                     # fora do protocolo (harness.lost): o corretor para
                break
            if msg["msg_type"] != "input_request":
                continue
            body = protocol.unprompt(msg["content"].get("prompt"))
            try:
                got = protocol.parse(body, Reply, Failure, Request, Flag) if body is not None else None
            except codec.BadWire:
                got = None
            if isinstance(got, (Reply, Failure)):
                return body                       # o id é o do pedido do aluno: ele confere
            if isinstance(got, (Request, Flag)):
                answer = self._flag(got) if isinstance(got, Flag) else protocol.to_text(Failure(
                    id=got.id, reason="o corretor não chama o seu notebook dentro de um pedido dele"))
                harness.send("stdin", answer)
                continue
            self.k.harness_trouble("respondeu fora do protocolo a um pedido do aluno")
            return protocol.to_text(Failure(id="", reason="o corretor não respondeu ao pedido"))
        self.k.harness_trouble("não respondeu a um pedido do aluno a tempo")
        return protocol.to_text(Failure(id="", reason="o corretor não respondeu a tempo"))
