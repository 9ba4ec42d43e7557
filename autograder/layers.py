"""Quem pode importar quem no corretor: a tabela que tests/grader/test_layers.py lê.

Cada pasta de `autograder/` tem um papel (o mapa está em `autograder/__init__.py`).
Um módulo importa à vontade os da própria pasta; de fora dela, só o que a linha
da sua pasta diz: uma pasta inteira (`"core"`) ou um módulo só dela
(`"worker.tasks"`). Os módulos soltos na raiz do pacote (`cli`, `__main__`,
`release`) têm linha própria; `fontes` (as fontes dos exercícios) conta como
parte de `authoring`. Imports dentro de `if TYPE_CHECKING:` não contam (não rodam).

Os andares que a tabela desenha: `core` e `wire` embaixo (não importam nada do
corretor); `box`, `store`, `collect` e `authoring` sobre `core`; `worker` e
`readers` lado a lado; `plan` em cima, e só entra no `worker` por `worker.tasks`
(a porta das tarefas do Dask); `cli` no topo.
"""

from __future__ import annotations

ALLOWED: dict[str, tuple[str, ...]] = {
    # o vocabulário: resultados, prazos, workspace, metadados do nbgrader
    "core": (),
    # texto injetado nos kernels: só a biblioteca padrão (e o IPython, dentro do kernel)
    "wire": (),
    # o processo do kernel na sandbox; lê os arquivos de wire/ para injetá-los
    "box": ("core", "wire"),
    # o que fica gravado no workspace
    "store": ("core",),
    # as entregas que chegam: pastas, zips, nomes do Moodle
    "collect": ("core",),
    # fontes dos exercícios -> solutions/ -> exercises/
    "authoring": ("core",),
    # uma tarefa do Dask = um notebook; grava só a semente do gradebook da tarefa
    "worker": ("core", "box", "wire", "store.gradebook"),
    # as linhas de nota calculadas uma vez -> CSVs, relatório, retornos, exportações; as
    # leituras da turma (insight/) entram no relatório e nos retornos por aqui
    "readers": ("core", "store", "insight"),
    # a turma vista de cima: respostas parecidas, os erros da turma (funções puras, sem o resto)
    "insight": (),
    # o processo que planeja: o que corrigir, o Dask, os resultados; confere e limpa a sandbox
    "plan": ("core", "collect", "store", "worker.tasks", "box.sandbox"),
    # a linha de comando (da sandbox, só os limites padrão e o aviso de máquina sem cgroup)
    "cli": ("core", "plan", "readers", "store", "authoring", "box.sandbox"),
    "__main__": ("cli",),
    "release": ("authoring",),
    "layers": (),
}

# pastas (pacotes) que contam como outra: `autograder/fontes/` é parte da autoria
ALIASES = {"fontes": "authoring"}
