"""Barra de progresso no stderr: alunos concluídos, ritmo e tempo restante.

Num terminal, uma linha redesenhada com `\\r`; fora dele (CI, arquivo de log),
uma linha de texto a cada 10 % ou a cada 30 s, para não inundar o log.
"""

from __future__ import annotations

import sys
import time

from atencao.fmt import elapsed, fixed


class Progress:
    def __init__(self, students: int, jobs: int, stream=None, width: int = 24,
                 already: int = 0, tty: bool | None = None):
        self.students = students
        self.jobs = jobs
        self.stream = stream or sys.stderr
        self.width = width
        self.tty = self.stream.isatty() if tty is None else tty
        self.done_jobs = 0
        self.done_students = already
        self.start = time.monotonic()
        self._last_plain = -1.0
        self._last_pct = -1
        self._last_line = ""

    def line(self) -> str:
        el = time.monotonic() - self.start
        frac = self.done_jobs / self.jobs if self.jobs else 1.0
        filled = int(round(frac * self.width))
        bar = "█" * filled + "·" * (self.width - filled)
        rate = self.done_jobs / el * 60 if el > 0 and self.done_jobs else 0.0
        if self.done_jobs and self.done_jobs < self.jobs:
            left = f"faltam ~{elapsed(el / self.done_jobs * (self.jobs - self.done_jobs))}"
        elif self.done_jobs >= self.jobs:
            left = f"total {elapsed(el)}"
        else:
            left = "estimando..."
        return (f"[{bar}] {self.done_students}/{self.students} alunos · "
                f"{self.done_jobs}/{self.jobs} notebooks · {fixed(rate, 1)} notebooks/min · {left}")

    def update(self, jobs_done: int = 1, students_done: int = 0, force: bool = False) -> None:
        self.done_jobs += jobs_done
        self.done_students += students_done
        self.render(force)

    def render(self, force: bool = False) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + self.line())
            self.stream.flush()
            return
        pct = int(100 * self.done_jobs / self.jobs) // 10 if self.jobs else 10
        now = time.monotonic()
        if force or pct != self._last_pct or now - self._last_plain > 30:
            line = self.line()
            if line == self._last_line:
                return
            self._last_pct, self._last_plain, self._last_line = pct, now, line
            self.stream.write(line + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K" + self.line() + "\n")
            self.stream.flush()
        else:
            self.render(force=True)
