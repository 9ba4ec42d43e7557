"""Que instruções de Hopper o passo de ida do cap. 13 usa, compilado para sm_90a SEM GPU.

O cap. 13 fecha com o que o FlashAttention-3 acrescenta no Hopper (WGMMA, TMA,
especialização de warps). Este script compila o kernel `_flash_fwd_kernel` com a
primeira configuração de autotune para Hopper, em float16, com e sem máscara, d = 64
e 128, e conta, no PTX gerado, as instruções de cada recurso:

- `wgmma.mma_async`: a multiplicação de matrizes assíncrona de um grupo de 4 warps;
- `cp.async.bulk.tensor`: cópias do TMA (a unidade que copia blocos inteiros);
- `cp.async.` sem `bulk`: as cópias assíncronas comuns, thread a thread;
- `setmaxnreg`: redistribuir registradores entre grupos de warps (o que a
  especialização de warps do FlashAttention-3 usa).

Grava bench/instrucoes-sm90.md. Não mede tempo: são propriedades do código.

    python bench/instrucoes_sm90.py
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

AQUI = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("compilar_sm90", AQUI / "compilar_sm90.py")
compilar = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compilar)  # tira TRITON_INTERPRET do ambiente: o compilador de verdade

import triton  # noqa: E402

from atencao.kernels import flash_fwd  # noqa: E402

CONTAGENS = {"wgmma": "wgmma.mma_async", "tma": "cp.async.bulk.tensor", "setmaxnreg": "setmaxnreg"}


def contar(ptx: str) -> dict[str, int]:
    linhas = [x.strip() for x in ptx.splitlines()]
    out = {k: sum(x.startswith(v) for x in linhas) for k, v in CONTAGENS.items()}
    out["cp_async"] = sum(x.startswith("cp.async.") and not x.startswith("cp.async.bulk") for x in linhas)
    return out


def main() -> None:
    c = flash_fwd._configs_hopper()[0]
    linhas = [f"# Instruções de Hopper no passo de ida do cap. 13: {time.strftime('%Y-%m-%d')}, "
              f"triton {triton.__version__}", "",
              "Gerado por `python bench/instrucoes_sm90.py`: o PTX de `_flash_fwd_kernel` compilado para "
              "sm_90a sem GPU (contagens de instruções, não tempos).", "",
              f"Configuração: BLOCK_M {c.kwargs['BLOCK_M']}, BLOCK_N {c.kwargs['BLOCK_N']}, "
              f"{c.num_warps} warps, {c.num_stages} estágios, float16.", "",
              "| d | causal | wgmma | cp_async | tma | setmaxnreg |", "|---|---|---|---|---|---|"]
    for d in (64, 128):
        for causal in (True, False):
            consts = dict(CAUSAL=causal, BLOCK_D=d, PREC="tf32", **c.kwargs)
            k = triton.compile(compilar.source(flash_fwd._flash_fwd_kernel, "fp16", consts),
                               target=compilar.TARGET, options=dict(num_warps=c.num_warps, num_stages=c.num_stages))
            n = contar(k.asm["ptx"])
            linhas.append(f"| {d} | {causal} | {n['wgmma']} | {n['cp_async']} | {n['tma']} | {n['setmaxnreg']} |")
            print(linhas[-1], flush=True)
    (AQUI / "instrucoes-sm90.md").write_text("\n".join(linhas) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
