"""As configurações de uma rodada de correção que atravessam as pastas.

`ExecSettings` (tempos de cada célula e de cada notebook) é escolhida pela
linha de comando, levada pelo planejador (plan/) até cada tarefa do Dask
(worker/tasks.py) e lida pelo laço das células (worker/executor.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass
class ExecSettings:
    cell_timeout: float = 30.0        # s por célula (o padrão do nbgrader)
    notebook_timeout: float = 300.0   # s por notebook, somando tudo
    interrupt_grace: float = 3.0      # s para o kernel voltar depois da interrupção
    startup_timeout: float = 60.0     # s para o kernel responder ao kernel_info
    # reaproveitar o kernel do corretor entre notebooks da mesma tarefa (job.KernelPool);
    # AUTOGRADER_REUSE_HARNESS=0 desliga (comparação nos testes e no bench)
    reuse_harness: bool = field(default_factory=lambda: os.environ.get("AUTOGRADER_REUSE_HARNESS", "1") != "0")
