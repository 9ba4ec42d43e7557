"""Ferramentas comuns aos benchmarks da trilha FlashAttention / KV cache.

* ``write_section``: reescreve, em bench/results.md, só o trecho entre
  ``<!-- nome:start -->`` e ``<!-- nome:end -->`` (outros benchmarks dividem
  o mesmo arquivo com os seus próprios marcadores).
* ``TensorBytesMeter`` e ``best_of`` vêm de ``atencao.medir``.
* ``rss_peak_extra``: mede o pico de memória residente (VmHWM) de uma chamada
  num subprocesso novo, descontado o que já estava residente antes.
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
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
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


# Tempo e memória por tensores: em atencao.medir (o livro usa os mesmos)
from atencao.medir import TensorBytesMeter, best_of, peak_tensor_bytes as tensor_peak_bytes  # noqa: E402,F401


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
