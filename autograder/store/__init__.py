"""O que fica gravado no workspace: os arquivos de resultado (result_files), o gradebook do
nbgrader (gradebook) e quem é quem para o AVA (identities).
"""
