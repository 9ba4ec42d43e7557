"""O processo que planeja uma rodada (`python -m autograder grade`): coleta as entregas, decide
o que corrigir (o que já tem resultado fica), manda cada notebook ao Dask por worker/tasks.py,
grava os resultados e junta os gradebooks; a trava de um corretor por workspace e o progresso.
O cluster só do professor (TLS com autenticação dos dois lados, o comando `certs`) está em
tls.py; a conferência do que cada trabalhador devolve, antes de virar nota, em verify.py.
"""
