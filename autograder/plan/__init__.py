"""O processo que planeja uma rodada (`python -m autograder grade`): coleta as entregas, decide
o que corrigir (o que já tem resultado fica), manda cada notebook ao Dask por worker/tasks.py,
grava os resultados e junta os gradebooks; a trava de um corretor por workspace e o progresso.
"""
