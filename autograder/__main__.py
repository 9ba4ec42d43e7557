"""`python -m autograder`: o corretor do professor, construído sobre o nbgrader 0.9.6.

Comandos
--------
    release                      fontes -> solutions/ -> exercises/ (nbgrader generate_assignment)
    grade ENTREGAS --workspace W [--assignment A ...] [--prazo A=DATA ...] [--jobs N]
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
* Execução própria (executor.py) com nbclient, num kernel por notebook
  iniciado por um kernel spec cujo argv passa pelo lançador de sandbox.py:
  rlimits (memória, arquivo, processos), bubblewrap (sem rede, só /usr, o
  Python e a pasta do trabalho montados; solutions/, gradebook e os outros
  alunos não existem lá dentro), `nobody` quando o corretor é root, transporte
  ipc. Tempo por célula e por notebook; interrupção por mensagem e, se o
  kernel ignorar SIGINT, morte do kernel; kernel morto ou memória esgotada
  viram `crashed`, e toda célula não executada ganha um erro (o nbgrader
  daria nota cheia a um teste sem saída).
* Testes ocultos executados em partes separadas das visíveis: o feedback
  mostra a saída das visíveis e só "passou/falhou" das ocultas.
* Velocidade: cada processo de correção tem um zigoto (zygote.py) — um
  processo na sandbox que já importou ipykernel, numpy e torch — e cada
  kernel nasce de um `fork` dele, isolado de novo (namespaces de usuário,
  montagem, PID, rede; /tmp e /proc próprios; sem capacidades; limites).
  Isso tira ~1,5 s de CPU por notebook. Enquanto um notebook roda, o kernel
  do próximo já é criado. Só módulos importados pelas células travadas antes
  de qualquer mudança de ambiente (como TRITON_INTERPRET) são pré-importados.
  Sem zigoto (`--sem-zigoto`, ou se o sistema não deixar montar um /proc
  novo), cada kernel é um processo novo no bubblewrap; a nota é a mesma.
  Saída acima de 2 MiB por célula é cortada.
* Integridade (integrity.py): células travadas apagadas/editadas são
  restauradas a partir da versão distribuída e a linha fica `tampered`;
  redefinir `np.allclose`, `conferir` ou builtins usados pelos testes deixa
  a linha `flagged` (análise da AST + sonda no kernel antes de cada teste).
* Paralelismo (runner.py): N processos `autograder.worker`, cada um com seu
  shard do gradebook (o sqlite não aguenta vários nbgrader escrevendo); o pai
  junta tudo no gradebook.db no fim, sozinho. A nota de uma entrega não
  depende de quantos processos rodaram (1 thread de BLAS por kernel).
* Retomada e idempotência: cada entrega tem uma chave (bytes entregues,
  horário, fonte da tarefa, limites, versão); `.autograder/resultados/`
  guarda o resultado com a chave, gravado de forma atômica. Interromper e
  rodar de novo só corrige o que faltava; rodar duas vezes dá o mesmo CSV.
* Atraso: prazos em `prazos.toml` do workspace (escritos por --prazo e
  `deadlines`, lidos por todo comando) com fuso explícito (padrão
  America/Sao_Paulo) e política de atraso (tolerância, multa por dia, zero
  depois de N dias); horários sem fuso (nomes de zip, timestamp.txt) são lidos
  nesse fuso, não em UTC como faria o nbgrader.
* Contrato de resultados (results.py): a correção devolve um `JobResult`;
  store.py o grava e lê; gradebook.py é o único que lê e escreve o
  gradebook (notas automáticas, notas manuais e comentários do formgrader);
  report, feedback e exports só leem, sem importar a correção.
* Nada é escrito no repositório: o workspace tem de ficar fora dele.

Situações de uma linha de grades.csv, da mais grave para a menos grave:
flagged, tampered, crashed, timeout, invalid-notebook, missing, ok.
"""

import sys

from .cli import main

sys.exit(main())
