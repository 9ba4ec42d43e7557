"""`python -m autograder`: o corretor do professor, construído sobre o nbgrader 0.9.6.

O mapa das pastas está em autograder/__init__.py.

Comandos
--------
    release                      fontes -> solutions/ -> exercises/ (nbgrader generate_assignment)
    grade ENTREGAS --workspace W [--assignment A ...] [--deadline A=DATA ...] [--jobs N | --scheduler END]
    feedback --workspace W       HTML por aluno (retornos/), sem os testes ocultos
    report --workspace W         grades.csv, questions.csv, exportacoes/ e relatorio/index.html
    export --workspace W         tabela larga, planilha e zip do Moodle, CSV do Canvas
    deadlines --workspace W      mostra ou muda prazos e política de atraso (prazos.toml)

Projeto (por que cada peça existe)
----------------------------------
O nbgrader puro deixa o professor sem progresso, corrige em série, transforma
queda de kernel e adulteração em zeros que parecem honestos, mostra os testes
ocultos no feedback e roda o código do aluno com os direitos do professor.
Este pacote mantém o nbgrader no que ele faz bem e troca o resto:

* nbgrader fica com: `generate_assignment` (versão do aluno, células e
  checksums no gradebook), os pré-processadores de restauração (ClearOutput,
  DeduplicateIds, OverwriteKernelspec, OverwriteCells — que devolve os testes
  ocultos —, CheckCellMetadata) e de nota (LimitOutput, SaveAutoGrades, GetGrades),
  e o gradebook (o workspace é um curso nbgrader válido: o formgrader serve
  para a correção manual das respostas escritas).
* Execução própria (worker/executor.py) com nbclient, num kernel por notebook
  iniciado por um kernel spec cujo argv passa pelo lançador de box/sandbox.py:
  rlimits (memória, arquivo, processos), bubblewrap (sem rede, só /usr, o
  Python e a pasta do trabalho montados; solutions/, gradebook e os outros
  alunos não existem lá dentro), `nobody` quando o corretor é root, transporte
  ipc. Tempo por célula e por notebook; interrupção por mensagem e, se o
  kernel ignorar SIGINT, morte do kernel; kernel morto ou memória esgotada
  viram `crashed`, e toda célula não executada ganha um erro (o nbgrader
  daria nota cheia a um teste sem saída).
* Dois kernels por notebook (worker/executor.py): o do aluno roda as células dele
  e as de preparação; o do corretor roda as de preparação e os testes, e
  nunca uma linha do aluno. Os nomes do aluno chegam ao corretor como dados
  (tensores, arrays, números, textos) ou como proxies cujas chamadas levam e
  trazem dados (wire/codec.py, sem pickle, 64 MiB no máximo por mensagem). Assim
  nada que o aluno faça no próprio kernel (trocar `np.allclose`, redefinir
  `conferir`, ganchos do IPython, subclasses de tensor que mentem) muda o
  veredito, e o texto dos testes ocultos nunca entra no kernel do aluno.
* Testes ocultos executados em partes separadas das visíveis: o feedback
  mostra a saída das visíveis e só "passou/falhou" das ocultas.
* Observadores (regras como "sem torch.softmax", "sem matriz T×T"): rodam no
  kernel do aluno durante a chamada e mandam um relatório; relatório
  ausente, malformado ou incoerente deixa a linha `flagged`. Regras de texto
  (sem laços) leem a AST da célula do aluno no notebook.
* Velocidade: enquanto um notebook roda, os kernels do próximo já sobem
  e importam numpy e torch (só módulos importados pelas células travadas
  antes de qualquer mudança de ambiente, como TRITON_INTERPRET). Saída acima
  de 512 KiB por célula ou 1 MiB por notebook é cortada.
* Integridade (worker/integrity.py): células travadas apagadas/editadas são
  restauradas a partir da versão distribuída e a linha fica `tampered`.
* Paralelismo (plan/runner.py, worker/tasks.py): cada notebook é uma tarefa do Dask
  (bytes entram, um `NotebookResult` e o notebook executado saem), num
  LocalCluster de `--jobs` processos ou, com `--scheduler`, num cluster que
  já existe. Cada trabalhador tem um gradebook só dele, feito da semente
  (store/gradebook.py, seed_bytes); o planejador é o único que escreve no workspace e
  no gradebook.db. A nota de uma entrega não depende de onde nem com quantos
  processos ela rodou (1 thread de BLAS por kernel).
* Retomada e idempotência: cada entrega tem uma chave (bytes entregues,
  horário, fonte da tarefa, limites, versão); `.autograder/results/`
  guarda o resultado com a chave, gravado de forma atômica. Interromper e
  rodar de novo só corrige o que faltava; rodar duas vezes dá o mesmo CSV.
* Atraso: prazos em `prazos.toml` do workspace (escritos por --deadline e
  `deadlines`, lidos por todo comando) com fuso explícito (padrão
  America/Sao_Paulo) e política de atraso (tolerância, multa por dia, zero
  depois de N dias); horários sem fuso (nomes de zip, timestamp.txt) são lidos
  nesse fuso, não em UTC como faria o nbgrader.
* Contrato de resultados (core/results.py): a correção devolve um `JobResult`;
  store/result_files.py o grava e lê; store/gradebook.py é o único que lê e escreve o
  gradebook (notas automáticas, notas manuais e comentários do formgrader);
  readers/ (report, feedback, exports) só leem, sem importar a correção.
* Nada é escrito no repositório: o workspace tem de ficar fora dele.

Situações de uma linha de grades.csv, da mais grave para a menos grave:
flagged, tampered, crashed, timeout, invalid-notebook, missing, ok.
"""

import sys

from .cli import main

sys.exit(main())
