"""O corretor do curso (`python -m autograder`), construído sobre o nbgrader. Este é o mapa.

Uma pasta por papel; cada uma muda por um motivo só. Quem pode importar quem é uma
tabela só, em `layers.py`, conferida por tests/grader/test_layers.py; os testes rápidos
de cada pasta estão em tests/grader/<pasta>/ e os de ponta a ponta (na sandbox) em
tests/grader_e2e/.

    core/       o vocabulário: resultados e situações, prazos, o workspace e os caminhos
                dele, os metadados do nbgrader, as configurações, o placar da correção
                (gradeboard.py); não importa nada do corretor (números e durações saem de
                atencao/fmt.py, o formatador do repositório inteiro, que não carrega o torch)
    collect/    as entregas que chegam: pastas, zips, Moodle, Blackboard, `--pattern`; os
                horários da planilha de avaliação do Moodle (moodle_sheet.py)
    plan/       o processo que planeja (`grade`): o que corrigir, o Dask (só com TLS),
                os resultados (conferidos antes de virar nota)
    worker/     uma tarefa do Dask = um notebook: entrada, laço das células, pontos
    box/        o processo do kernel na sandbox: lançador, bubblewrap, cgroups, molde
    wire/       o texto injetado nos dois kernels: codec, mensagens, os dois lados
    store/      o que fica no workspace: arquivos de resultado, gradebook, identidades,
                as versões anteriores de release/ (um teste corrigido depois da entrega)
    readers/    as linhas de nota calculadas uma vez -> CSVs, relatório, retornos, AVA; o que
                falta nelas, dito às claras (gaps.py: quem não entregou, atraso sem horário);
                class_insight.py leva insight/ ao relatório e aos retornos; regrade.py,
                o que uma recorreção mudou e o código curto de cada página de retorno
    insight/    a turma vista de cima: respostas parecidas, os erros da turma (funções
                puras; readers/class_insight.py as alimenta)
    authoring/  fontes dos exercícios (fontes/) -> solutions/ -> exercises/
    cli.py      a linha de comando (`python -m autograder`); release.py, a porta de
                `python -m autograder.release`

Onde se decide uma nota
-----------------------
1. Cada parte de um teste (visível ou oculta) passa ou falha em
   `worker/executor.py` (`_Run._test_cell`): passou se a célula rodou sem erro no
   kernel do corretor e o revezamento com o kernel do aluno não estourou o tempo.
2. Os pontos e a situação de cada questão e do notebook saem de
   `worker/notebook.py` (`score`): o `SaveAutoGrades` do nbgrader dá os pontos a
   partir das saídas; a situação é a mais grave de tudo o que aconteceu
   (`core/results.py`, `worst`).
3. A nota final (notas manuais do formgrader, multa de atraso, piso em zero) é
   calculada uma vez em `readers/report.py` (`collect`); CSVs, relatório, retornos
   e exportações só a copiam.

Onde roda o notebook do aluno
-----------------------------
1. `worker/executor.py`: o laço das células, célula por célula, nos dois kernels
   (o do aluno roda as células dele; o do corretor, os testes); `worker/relay.py` repassa
   os pedidos de um kernel ao outro, e `worker/kernelpair.py` é o estado dos dois que o
   laço e o repasse partilham;
2. `box/kernel.py`: o processo de cada kernel (`SandboxKernel`);
3. `box/sandbox.py`, `box/cgroup.py` e `box/zygote.py`: o isolamento (bubblewrap,
   limites, caixas de cgroup, o molde que já importou o torch);
4. `wire/`: o que pode atravessar entre os dois kernels (dados, nunca código).

O caminho inteiro, de `grade` a uma linha de grades.csv: cli.py -> plan/runner.py
(coleta com collect/, Dask) -> worker/tasks.py -> worker/notebook.py -> worker/executor.py
-> box/kernel.py -> de volta: worker/tasks.py -> plan/runner.py (plan/verify.py, store/result_files.py,
store/gradebook.py) -> readers/report.py -> readers/csvfile.py.
"""

import sys as _sys

# O jsonschema (importado pelo nbformat) monta, ao ser importado, as gramáticas
# do pacote rfc3987_syntax: 1 a 10 s por processo, só para validar IRIs, o que
# nenhum notebook usa. Sem ele, o jsonschema apenas pula esse formato.
_sys.modules.setdefault("rfc3987_syntax", None)
