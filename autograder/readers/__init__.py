"""Quem lê os resultados: as linhas de nota calculadas uma vez (report: `collect`), os CSVs,
o relatório HTML, as páginas de retorno dos alunos (feedback) e as exportações para o AVA
(exports); o formato das planilhas (csvfile).
"""
