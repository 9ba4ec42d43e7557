"""Leituras da turma inteira para o professor (issue 40): semelhança entre respostas
(`similarity`), os erros da turma com nome (`mistakes`) e a sua apresentação em HTML e CSV
(`render`).

Módulos puros: recebem dados já lidos (fontes das células de resposta, vereditos dos
testes) e devolvem resultados tipados, texto HTML e linhas de CSV. Não importam nada do
resto do `autograder`, não leem nem gravam arquivos e não mudam nota nenhuma.
"""
