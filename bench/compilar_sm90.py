"""Compila, SEM GPU, cada configuração de autotune dos kernels para Hopper
(sm_90a) e mostra memória compartilhada, registradores e spills.

Não mede tempo (para isso, bench/gpu.py numa GPU); serve para pegar, numa
máquina sem GPU, erros que o interpretador não vê: configurações que não
compilam, que estouram a memória compartilhada (228 KiB por SM numa H100)
ou que derramam registradores na memória local (spills, lentos).

    python bench/compilar_sm90.py [--rapido]   # --rapido: só float16, d = 128

Usa o compilador do triton com alvo explícito (GPUTarget("cuda", 90, 32)) e
o ptxas que vem com ele (-v) para os registradores.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.pop("TRITON_INTERPRET", None)  # queremos o compilador de verdade
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

import importlib  # noqa: E402

from atencao.kernels import decode, flash_bwd, flash_fwd  # noqa: E402

softmax = importlib.import_module("atencao.kernels.softmax")  # o pacote exporta a função com o mesmo nome

PTRS = {"Q", "K", "V", "O", "DO", "DQ", "DK", "DV", "X", "Y"}
PTRS32 = {"LSE", "DELTA", "O_PART", "LSE_PART"}
PTRS_I32 = {"LENS"}
FLOATS = {"qk_scale", "sm_scale"}
TARGET = GPUTarget("cuda", 90, 32)
PTXAS = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas-blackwell"  # o que o triton usa para sm_90


def source(fn, dtype, consts):
    """O que o JIT faria com tensores contíguos de B, H, N, d múltiplos de 16:
    passos de valor 1 viram constantes, ponteiros e os demais inteiros ganham
    a dica de divisibilidade por 16 (N não: o kernel pede do_not_specialize)."""
    consts = dict(consts)
    sig, attrs = {}, {}
    for i, a in enumerate(fn.arg_names):
        if a.startswith("stride") and a.endswith("d"):
            consts[a] = 1  # último passo = 1: o JIT especializa inteiros iguais a 1
        if a in consts:
            sig[a] = "constexpr"
            continue
        if a in PTRS:
            sig[a] = "*" + dtype
        elif a in PTRS32:
            sig[a] = "*fp32"
        elif a in PTRS_I32:
            sig[a] = "*i32"
        elif a in FLOATS:
            sig[a] = "fp32"
        else:
            sig[a] = "i32"
        if a not in ("N", "H", "n_rows", "n_cols", "GROUP", "HQ", "HKV", "CHUNK", "NUM_SPLITS") and a not in FLOATS:
            attrs[(i,)] = [["tt.divisibility", 16]]
    return ASTSource(fn, sig, constexprs=consts, attrs=attrs)


def registers(ptx: str):
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "k.ptx"
        p.write_text(ptx)
        r = subprocess.run([str(PTXAS), "-arch=sm_90a", "-v", str(p), "-o", str(Path(tmp) / "k.o")],
                           capture_output=True, text=True)
    regs = re.search(r"Used (\d+) registers", r.stderr)
    spill = re.search(r"(\d+) bytes spill stores", r.stderr)
    return (int(regs.group(1)) if regs else -1), (int(spill.group(1)) if spill else -1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rapido", action="store_true")
    args = ap.parse_args()
    dtypes = ["fp16"] if args.rapido else ["fp16", "bf16"]
    ds = [128] if args.rapido else [64, 128]
    jobs = []
    for dt in dtypes:
        for d in ds:
            for causal in (True, False):
                nargs = {"Q": type("T", (), {"element_size": lambda self: 2})(), "BLOCK_D": d}
                fwd_cfgs = flash_fwd._podar(flash_fwd._configs_hopper(), nargs, BLOCK_D=d)
                for c in fwd_cfgs:
                    jobs.append(("fwd", flash_fwd._flash_fwd_kernel, dt, d, causal, c))
                for c in flash_bwd._podar_bwd("dkdv")(flash_bwd._CONFIGS_DKDV, nargs, BLOCK_D=d):
                    jobs.append(("dkdv", flash_bwd._dkdv_kernel, dt, d, causal, c))
                for c in flash_bwd._podar_bwd("dq")(flash_bwd._CONFIGS_DQ, nargs, BLOCK_D=d):
                    jobs.append(("dq", flash_bwd._dq_kernel, dt, d, causal, c))
        # decode: grupo de 6 cabeças (24 de consulta, 4 de KV) -> BLOCK_G = 16
        jobs.append(("decode", decode._decode_kernel, dt, 128, None,
                     triton.Config({"BLOCK_G": 16, "BLOCK_N": 64, "BLOCK_D": 128, "PREC": "tf32"},
                                   num_warps=4, num_stages=2)))
        # softmax: uma linha de 4096 por programa, 8 warps (como softmax() escolhe)
        jobs.append(("softmax", softmax._softmax_kernel, dt, 4096, None,
                     triton.Config({"ROWS": 1, "BLOCK_C": 4096}, num_warps=8, num_stages=1)))
    print(f"# Compilação para Hopper (sm_90a) sem GPU: {time.strftime('%Y-%m-%d')}, triton {triton.__version__}")
    print()
    print("Gerado por `python bench/compilar_sm90.py`: propriedades do código compilado (não tempos de execução).")
    print()
    print(f"{len(jobs)} compilações para sm_90a", flush=True)
    print("| kernel | dtype | d | causal | BLOCK_M | BLOCK_N | warps | estágios | smem KiB | regs | spill B | cargas assíncronas | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ruins = 0
    tempos = []
    for name, fn, dt, d, causal, c in jobs:
        if causal is None:
            consts = dict(c.kwargs)
        else:
            consts = dict(CAUSAL=causal, BLOCK_D=d, PREC="tf32", **c.kwargs)
        t = time.time()
        try:
            k = triton.compile(source(fn, dt, consts), target=TARGET,
                               options=dict(num_warps=c.num_warps, num_stages=c.num_stages))
            pipelined = "async_copy" in k.asm["ttgir"] or "async_tma" in k.asm["ttgir"]
            smem = k.metadata.shared / 1024
            regs, spill = registers(k.asm["ptx"])
            status = f"{smem:.0f} | {regs} | {spill} | {'sim' if pipelined else 'não'}"
            ruins += smem > 227 or spill > 0
        except Exception as e:  # noqa: BLE001 - relatamos e seguimos
            status = f"ERRO: {type(e).__name__} {str(e)[:60]} | | | "
            ruins += 1
        bm = c.kwargs.get("BLOCK_M", c.kwargs.get("BLOCK_G", c.kwargs.get("ROWS")))
        bn = c.kwargs.get("BLOCK_N", c.kwargs.get("BLOCK_C"))
        print(f"| {name} | {dt} | {d} | {'—' if causal is None else causal} | {bm} | {bn} | "
              f"{c.num_warps} | {c.num_stages} | {status} | {time.time() - t:.1f} |", flush=True)
        tempos.append(time.time() - t)
    print(f"tempo total de compilação: {sum(tempos):.0f} s")
    print(f"configurações com problema (erro, smem > 227 KiB ou spill): {ruins}")


if __name__ == "__main__":
    main()
