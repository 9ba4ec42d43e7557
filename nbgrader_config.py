"""Configuração do nbgrader do curso (fonte em solutions/, versão do aluno em exercises/).

O autograder (`python -m autograder`) usa esta mesma configuração num espaço
de trabalho fora do repositório; aqui ela serve a `make release`.
"""

c = get_config()  # noqa: F821 - injetado pelo nbgrader

c.CourseDirectory.course_id = "atencao-causal"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
c.CourseDirectory.notebook_id = "*"
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "*.db"]

# Textos no lugar das soluções, em português. Um só texto para toda linguagem
# (TRAPS.md: o dicionário substitui o padrão de todas). Uma tarefa intocada
# levanta NotImplementedError com uma frase que diz que ela ainda não foi feita;
# os testes (tests/support/nb_harness.py) leem o stub daqui.
c.ClearSolutions.code_stub = {
    "python": "# SEU CÓDIGO AQUI (apague a linha abaixo)\n"
              "raise NotImplementedError(\"Tarefa ainda não feita: escreva o seu código no lugar deste raise.\")",
}
c.ClearSolutions.text_stub = "SUA RESPOSTA AQUI"
c.ClearSolutions.begin_solution_delimeter = "BEGIN SOLUTION"
c.ClearSolutions.end_solution_delimeter = "END SOLUTION"
c.ClearHiddenTests.begin_test_delimeter = "BEGIN HIDDEN TESTS"
c.ClearHiddenTests.end_test_delimeter = "END HIDDEN TESTS"

# A versão do aluno sai sem saídas e sem metadados voláteis.
c.ClearOutput.enabled = True
c.GenerateAssignment.create_assignment = True

# Tempo por célula na correção (o autograder ainda limita o caderno inteiro).
c.Execute.timeout = 60
c.Execute.interrupt_on_timeout = True
