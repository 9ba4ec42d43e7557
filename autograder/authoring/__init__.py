"""A autoria dos exercícios: as fontes em texto (autograder/fontes/) viram solutions/
(nbbuild) e o nbgrader gera exercises/ (release). conferir.py, scoreboard.py e rules.py
são o código que vai inteiro na célula de preparação de cada notebook (português: o aluno lê).
"""
