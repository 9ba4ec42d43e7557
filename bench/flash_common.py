"""Ferramentas comuns aos benchmarks da trilha FlashAttention / KV cache.

* ``write_section``: reescreve, em bench/results.md, só o trecho entre
  ``<!-- nome:start -->`` e ``<!-- nome:end -->`` (outros benchmarks dividem
  o mesmo arquivo com os seus próprios marcadores).
* ``TensorBytesMeter``: conta os bytes de tensores que o torch cria durante um
  trecho de código e guarda o pico dos que estão vivos ao mesmo tempo.
* ``rss_peak_extra``: mede o pico de memória residente (VmHWM) de uma chamada
  num subprocesso novo, descontado o que já estava residente antes.
* ``best_of``: melhor tempo de várias rodadas intercaladas.
"""

from __future__ import annotations

import ctypes
import datetime
import gc
import json
import os
import platform
import subprocess
import sys
import time
import weakref
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results.md"


# --------------------------------------------------------------------------
# results.md com seções delimitadas
# --------------------------------------------------------------------------

def _markers(name):
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def write_section(name: str, body: str, parent: str | None = None, path: Path = RESULTS) -> None:
    """Troca o conteúdo entre os marcadores de `name` por `body`.

    Se os marcadores não existem, eles são criados no fim de `parent` (outra
    seção) ou no fim do arquivo. O resto do arquivo fica intacto.
    """
    text = path.read_text(encoding="utf-8") if path.exists() else "# Resultados dos benchmarks\n"
    start, end = _markers(name)
    if start not in text:
        block = f"{start}\n{end}\n"
        if parent is not None:
            pstart, pend = _markers(parent)
            if pstart not in text:
                text = text.rstrip("\n") + f"\n\n{pstart}\n{pend}\n"
            text = text.replace(pend, block + pend, 1)
        else:
            text = text.rstrip("\n") + "\n\n" + block
    a = text.index(start) + len(start)
    b = text.index(end)
    text = text[:a] + "\n" + body.strip("\n") + "\n" + text[b:]
    path.write_text(text, encoding="utf-8")


def machine_line() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}; {os.cpu_count()} núcleos visíveis, torch.set_num_threads({torch.get_num_threads()}); "
        f"torch {torch.__version__}; Python {platform.python_version()}; "
        f"{datetime.date.today().isoformat()}"
    )


# --------------------------------------------------------------------------
# Tempo
# --------------------------------------------------------------------------

def best_of(fns: dict, rounds: int) -> dict:
    """Melhor tempo (s) de cada função em `rounds` rodadas intercaladas.

    Intercalar (A, B, A, B, ...) faz as duas funções verem o mesmo ruído da
    máquina; o mínimo descarta as rodadas em que outro processo roubou a CPU.
    """
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: min(ts) for name, ts in times.items()}


# --------------------------------------------------------------------------
# Memória, método 1: contabilidade dos tensores criados (TorchDispatchMode)
# --------------------------------------------------------------------------

class TensorBytesMeter(TorchDispatchMode):
    """Pico de bytes de tensores vivos criados dentro do bloco `with`.

    Cada operação aten que passa pelo despacho do torch é interceptada; cada
    armazenamento (storage) novo que ela devolve é somado enquanto algum
    tensor Python o referencia. Armazenamentos das entradas (``exclude``) não
    contam. Não enxerga buffers internos de um operador que nunca viram
    tensor (por exemplo, o espaço de trabalho do SDPA do torch): por isso a
    medida de RSS abaixo acompanha esta.
    """

    def __init__(self, exclude=()):
        super().__init__()
        self.exclude = {t.untyped_storage().data_ptr() for t in exclude}
        self.live: dict[int, list] = {}  # data_ptr -> [bytes, referências]
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


def tensor_peak_bytes(fn, inputs) -> int:
    gc.collect()
    with torch.no_grad(), TensorBytesMeter(exclude=inputs) as meter:
        result = fn()
        del result
    return meter.peak


# --------------------------------------------------------------------------
# Memória, método 2: pico de RSS num subprocesso novo
# --------------------------------------------------------------------------

def _proc_status():
    d = {}
    with open("/proc/self/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith(("VmRSS", "VmHWM")):
                k, v = line.split(":")
                d[k] = int(v.split()[0]) * 1024  # kB -> bytes
    return d


def rss_child(setup: str, call: str) -> dict:
    """Executado dentro do subprocesso: prepara, zera o pico de RSS, chama.

    1. `setup` cria as entradas e aquece a função em tamanho pequeno;
    2. gc + malloc_trim devolvem ao sistema a memória livre do heap, para que
       a chamada medida não reaproveite páginas já contadas na base;
    3. escrever "5" em /proc/self/clear_refs zera o VmHWM (Linux >= 4.0);
    4. pico extra = VmHWM depois da chamada - VmRSS antes dela.
    """
    ns: dict = {}
    exec(setup, ns)
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    base = _proc_status()["VmRSS"]
    exec(call, ns)
    peak = _proc_status()["VmHWM"]
    return {"base": base, "peak": peak, "extra": peak - base}


def rss_peak_extra(setup: str, call: str) -> dict:
    code = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(ROOT / 'bench')!r})\n"
        "from flash_common import rss_child\n"
        f"print(json.dumps(rss_child({setup!r}, {call!r})))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"o subprocesso de medida falhou:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.1f}".replace(",", " ")
