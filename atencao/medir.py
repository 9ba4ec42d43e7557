"""Medidas honestas de tempo e de memória na CPU (capítulos 9-12 e bench/).

* ``best_of(fns, rounds)``: melhor tempo de cada função em rodadas
  intercaladas (A, B, A, B, ...), para que todas vejam o mesmo ruído da
  máquina; o mínimo descarta as rodadas em que outro processo roubou a CPU.
* ``TensorBytesMeter`` / ``peak_tensor_bytes``: pico de bytes de tensores
  vivos criados por um trecho de código, contados operação a operação por um
  ``TorchDispatchMode``. Não enxerga buffers internos que um operador nunca
  expõe como tensor (o espaço de trabalho do SDPA, por exemplo); o benchmark
  em bench/ mede também o pico de RSS num subprocesso.
"""

from __future__ import annotations

import gc
import time
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from .fmt import sci as fmt_sci  # notação científica do texto (o formatador é um só: atencao/fmt.py)

__all__ = ["best_of", "TensorBytesMeter", "peak_tensor_bytes", "fmt_sci"]


def best_of(fns: dict, rounds: int) -> dict:
    """{nome: melhor tempo em segundos} de cada função sem argumentos."""
    if not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds deve ser um inteiro >= 1, veio {rounds!r}")
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: min(ts) for name, ts in times.items()}


class TensorBytesMeter(TorchDispatchMode):
    """Pico de bytes de tensores vivos criados dentro do bloco ``with``.

    Cada operação aten que passa pelo despacho do torch é interceptada; cada
    armazenamento (storage) novo que ela devolve conta enquanto algum tensor
    Python o referencia. Os armazenamentos de ``exclude`` (as entradas) não
    contam. Operações no lugar (``add_``) e visões (fatias) não alocam nada.
    """

    @classmethod
    def _should_skip_dynamo(cls):
        # Sem o embrulho do torch.compile no __torch_dispatch__ (nada aqui é compilado): com ele, o
        # primeiro uso importaria o torch._dynamo e o sympy, ~3,7 s de CPU em cada kernel novo.
        return False

    def __init__(self, exclude=()):
        super().__init__()
        self.exclude = {t.untyped_storage().data_ptr() for t in exclude}
        self.live: dict[int, list] = {}  # data_ptr -> [bytes, referências vivas]
        self.current = 0
        self.peak = 0

    def _release(self, key):
        entry = self.live.get(key)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            self.current -= entry[0]
            del self.live[key]

    def _track(self, t):
        st = t.untyped_storage()
        key, nbytes = st.data_ptr(), st.nbytes()
        if nbytes == 0 or key in self.exclude:
            return
        if key not in self.live:
            self.live[key] = [nbytes, 0]
            self.current += nbytes
            self.peak = max(self.peak, self.current)
        self.live[key][1] += 1
        weakref.finalize(t, self._release, key)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self._track(t)
        return out


def peak_tensor_bytes(fn, inputs=()) -> int:
    """Pico de bytes de tensores criados por ``fn()`` (sem gradiente), sem contar ``inputs``."""
    gc.collect()
    with torch.no_grad(), TensorBytesMeter(exclude=inputs) as meter:
        result = fn()
        del result
    return meter.peak
