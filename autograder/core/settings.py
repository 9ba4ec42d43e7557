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


MIB = 1024 * 1024


@dataclass(frozen=True)
class CollectLimits:
    """Os tetos da coleta (collect/): o quanto uma turma pode escrever no workspace.

    Só entram na conta os arquivos que a correção usa (os notebooks; o resto da entrega
    nem é extraído). Os tamanhos que o zip declara são conferidos antes de extrair, e os
    bytes de verdade são contados durante a extração, que para no teto: o zip pode mentir.
    Quem passa de um teto tem a entrega recusada, com o motivo na linha dele; o resto da
    turma é corrigido."""

    file: int = 50 * MIB           # um notebook maior que isso é inválido
    student: int = 200 * MIB       # por aluno e tarefa, somando os arquivos
    zip: int = 2048 * MIB          # por zip (o da turma e cada zip de aluno dentro dele)
    klass: int = 4096 * MIB        # pela turma inteira, somando pastas e zips
    ratio: float = 100.0           # descomprimido / comprimido, num arquivo acima de `ratio_floor`
    ratio_floor: int = 1 * MIB
