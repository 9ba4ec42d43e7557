"""As entregas que chegam: pastas, zips, o zip do Moodle e o do Blackboard, `--pattern`;
cada uma vira uma `Submission` (aluno, tarefa, arquivos). Nada aqui corrige.
"""
