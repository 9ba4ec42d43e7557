"""O repasse entre os dois kernels, fora deles (no processo de quem corrige).

Cada pedido do kernel do corretor chega como um `input()` no canal stdin:
`Relay._relay` o repassa ao kernel do aluno (`_autograder_student.serve`), com o
prazo que resta à célula, a saída capturada (limitada) e o tamanho máximo da
resposta; `Relay._callback` leva ao kernel do corretor um pedido do aluno a um
objeto do corretor (uma função de teste, um modelo). Mistura de `executor._Run`:
usa o estado dele (kernels, prazos, situação).
"""

from __future__ import annotations

import json
import time
from queue import Empty

from . import wire
from .kernel import STUDENT_MODULE
from .results import Status


class Relay:
    """Os dois sentidos do repasse (métodos de `executor._Run`)."""

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
            self._status(Status.CRASHED, self._death(self.student, where, "o kernel morreu"))
            if self.student.lost:
                self.relay_killed = True
                return json.dumps({"falha": f"a resposta do seu notebook foi recusada: {self.student.lost}",
                                   "saida": out})
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
