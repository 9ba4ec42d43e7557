"""Leitura de linhas de um pipe com prazo, sem perder linhas já lidas.

`select` sobre o descritor seguido de `readline()` num arquivo com buffer
perde respostas: se duas linhas chegam juntas, a primeira `readline()` traz as
duas para o buffer do Python, o descritor fica vazio e o próximo `select`
espera até o prazo por uma linha que já chegou. No corretor isso aparecia como
um `timeout` falso numa entrega rápida (um notebook ausente, cuja resposta vem
logo atrás da anterior). Aqui o buffer é nosso e olhado antes do `select`.
"""

from __future__ import annotations

import os
import select
import time


class LineReader:
    def __init__(self, fd: int):
        self.fd = fd
        self.buf = bytearray()
        self.eof = False

    def readline(self, timeout: float) -> bytes | None:
        """A próxima linha (com o "\\n"); None se o prazo acabou; b"" no fim do arquivo."""
        end = time.monotonic() + timeout
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = bytes(self.buf[:i + 1])
                del self.buf[:i + 1]
                return line
            if self.eof:
                line, self.buf = bytes(self.buf), bytearray()
                return line
            left = end - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.fd], [], [], min(left, 1.0))
            if r:
                chunk = os.read(self.fd, 65536)
                if chunk:
                    self.buf += chunk
                else:
                    self.eof = True
