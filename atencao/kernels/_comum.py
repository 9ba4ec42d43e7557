"""Verificações de entrada e utilidades comuns aos kernels do capítulo 13.

Toda entrada ruim vira um TypeError ou ValueError em português que diz o que
se esperava e o que veio, ANTES de qualquer kernel ser lançado: um erro
dentro do kernel (ou um acesso fora da memória na GPU) seria bem mais
difícil de entender.
"""

from __future__ import annotations

import os

import torch

# Tipos aceitos pelos kernels. float64 fica de fora: tl.dot não o aceita na GPU.
DTYPES = (torch.float16, torch.bfloat16, torch.float32)

# Maior d (dimensão de cada cabeça) aceito: o maior para o qual as configurações
# de bloco foram compiladas para sm_90a (bench/compilacao-sm90.md) e conferidas.
# Com d = 256 e BLOCK_M = 128, só o acumulador float32 ocupa 128 KiB (128
# registradores por thread com 8 warps): seriam precisos blocos menores, que
# ninguém compilou nem conferiu. O capítulo 13 explica.
D_MAX = 128


def interpretado() -> bool:
    """True quando os kernels rodam no interpretador do Triton (na CPU)."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def next_pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def bloco_d(d: int) -> int:
    """Largura do bloco na dimensão d: potência de 2 (tl.arange exige) e >= 16
    (tl.dot exige). As colunas a mais são carregadas como zero e não mudam
    nenhum produto escalar."""
    return max(16, next_pow2(d))


def checar_tensor(x, nome: str, ndim: int, forma: str) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{nome} deve ser um torch.Tensor com forma {forma}, veio {type(x).__name__}")
    if x.ndim != ndim:
        raise ValueError(f"{nome} deve ter forma {forma} ({ndim} dimensões), veio {tuple(x.shape)}")
    if x.dtype not in DTYPES:
        raise TypeError(
            f"{nome} deve ser float16, bfloat16 ou float32, veio {x.dtype}"
        )
    if any(s == 0 for s in x.shape):
        raise ValueError(f"{nome} não pode ter dimensão vazia, veio {tuple(x.shape)}")


def checar_mesmo_dtype(**tensores) -> torch.dtype:
    dtypes = {n: t.dtype for n, t in tensores.items()}
    if len(set(dtypes.values())) > 1:
        desc = ", ".join(f"{n}={str(d).replace('torch.', '')}" for n, d in dtypes.items())
        raise TypeError(f"todos os tensores devem ter o mesmo dtype, vieram {desc}")
    return next(iter(dtypes.values()))


def checar_dispositivo(**tensores) -> None:
    """Mesmo dispositivo para todos; CPU no interpretador, CUDA fora dele."""
    devs = {n: t.device for n, t in tensores.items()}
    if len(set(devs.values())) > 1:
        desc = ", ".join(f"{n} em {d}" for n, d in devs.items())
        raise ValueError(f"todos os tensores devem estar no mesmo dispositivo, vieram {desc}")
    dev = next(iter(devs.values()))
    if interpretado():
        if dev.type != "cpu":
            raise ValueError(
                "no modo interpretador (TRITON_INTERPRET=1) os kernels rodam na CPU: "
                f"os tensores devem estar na CPU, vieram em {dev}"
            )
    elif not torch.cuda.is_available():
        raise RuntimeError(
            "não há GPU e o interpretador do Triton não está ativo (o triton foi "
            "importado antes de atencao.kernels, sem TRITON_INTERPRET=1): reinicie o "
            "Python e importe atencao.kernels antes do triton"
        )
    elif dev.type != "cuda":
        raise ValueError(
            "os kernels Triton compilados rodam na GPU: mova os tensores com .cuda() "
            f"(vieram em {dev}), ou rode no interpretador com TRITON_INTERPRET=1"
        )


def checar_bf16_com_dot(dtype: torch.dtype) -> None:
    """No interpretador do Triton 3.x, tl.dot em bfloat16 dá resultados errados
    (triton-lang/triton#11584): recusamos em vez de devolver lixo em silêncio."""
    if interpretado() and dtype == torch.bfloat16:
        raise TypeError(
            "bfloat16 não é aceito no interpretador do Triton: nele tl.dot em bfloat16 "
            "dá resultados errados (triton-lang/triton#11584). Na CPU use float16 ou "
            "float32; numa GPU, bfloat16 funciona"
        )


def precisao(dtype: torch.dtype) -> str:
    """Precisão de tl.dot: em float32 pedimos 'ieee' (sem isso a GPU usa TF32,
    ~10 bits de mantissa); em 16 bits o argumento não muda nada."""
    return "ieee" if dtype == torch.float32 else "tf32"
