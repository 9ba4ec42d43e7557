"""Uma tarefa do Dask = um notebook: lê a entrega, restaura as células travadas, roda as
células nos dois kernels (executor: o laço das células; relay: o revezamento entre eles) e
dá os pontos e a situação de cada questão. A única porta de plan/ para cá é tasks.py.
"""
