"""O vocabulário do corretor: resultados e situações (results), prazos e atrasos (deadlines),
o workspace e os caminhos dele (workspace), os metadados do nbgrader (nbmeta), a semente
dos testes ocultos de cada aluno (student_seed), as configurações de uma rodada (settings)
e o formatador de números e durações (fmt). Não importa nada do resto do corretor.
"""
