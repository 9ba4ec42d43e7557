"""O texto injetado nos dois kernels: o codec dos dados (codec), as mensagens do protocolo
(protocol), o lado do aluno (student) e o do corretor (harness). Só a biblioteca padrão:
cada arquivo é lido como texto por box/kernel.py e executado dentro do kernel.
"""
