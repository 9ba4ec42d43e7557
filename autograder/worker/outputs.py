"""Saídas das células com limites: nada que o aluno imprime enche a memória de quem corrige.

`LimitedClient` é um NotebookClient que guarda no máximo MAX_CELL_OUTPUT bytes por
célula e MAX_NOTEBOOK_OUTPUT no notebook (o resto vira um aviso em português) e corta
o texto das saídas de erro; `error_output` faz uma saída de erro do corretor.
"""

from __future__ import annotations

import json

import nbformat
from nbclient import NotebookClient


def error_output(ename: str, evalue: str):
    return nbformat.v4.new_output("error", ename=ename, evalue=evalue,
                                  traceback=[f"{ename}: {evalue}"])


def timeout_error(s):
    """O erro de uma célula que passou do tempo (`s`: as ExecSettings da rodada)."""
    return error_output("CellTimeoutError", f"A célula passou do limite de tempo ({s.cell_timeout:g} s por célula, "
                                            f"{s.notebook_timeout:g} s por notebook) e foi interrompida.")


MAX_CELL_OUTPUT = 512 * 1024          # bytes de saída guardados por célula
MAX_NOTEBOOK_OUTPUT = 1024 * 1024     # bytes de saída guardados no notebook inteiro
MAX_RELAY_OUTPUT = 256 * 1024         # saída do aluno guardada durante uma chamada do corretor
MAX_ERROR_TEXT = 8 * 1024             # texto de uma saída de erro


def _size(content) -> int:
    return len(content.get("text", "") or "") + sum(
        len(v) if isinstance(v, str) else len(json.dumps(v)) for v in (content.get("data") or {}).values())


class LimitedClient(NotebookClient):
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

    def reset(self) -> None:
        """Zera as contas por célula (o total do notebook continua): uma chamada nova."""
        self._ag_used.clear()
        self._ag_cut.clear()

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
