"""v1 -- softmax por linha, fundida num só kernel Triton.

O que calcula: y[r, c] = exp(x[r, c] - max_r) / sum_c' exp(x[r, c'] - max_r)
para cada linha r de x (..., n), em float32 por dentro, com o dtype de x na
saída. Uma linha toda -inf dá NaN, como torch.softmax e atencao.softmax.

Bytes (M linhas, N colunas, b bytes por elemento):
    ingênuo, cinco operações do torch (max, subtração, exp, soma, divisão),
    cada uma lendo e escrevendo a memória global:
        lê 5MN + 2M, escreve 3MN + 2M  ->  ~8MN·b
    fundido (este kernel): cada linha é lida uma vez para os registradores,
        tudo acontece lá, e ela é escrita uma vez  ->  2MN·b
    Como a softmax é limitada por memória (~5 FLOPs por elemento contra 2b
    bytes), o ganho esperado é ~4x, e só vem de não ir e voltar da memória.
FLOPs: ~5MN (máximo, subtração, exp, soma, divisão).

O que mudou em relação à v0 (naive_attention.cu): lá cada thread fazia uma
linha inteira em laços escalares; aqui um *programa* Triton cuida de um
bloco de linhas (ROWS, BLOCK_C) de uma vez, e as colunas que sobram além de
n (BLOCK_C é potência de 2) são mascaradas: carregadas como -inf, que vira
exp(-inf) = 0 na soma.

Limite: a linha inteira precisa caber num bloco (n <= 32768).

Como rodar: `from atencao.kernels import softmax; softmax(torch.randn(5, 100))`
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from ._comum import DTYPES, checar_dispositivo, next_pow2

N_MAX = 32768


@triton.jit
def _softmax_kernel(X, Y, stride_x, stride_y, n_rows, n_cols,
                    ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    # Este programa cuida das linhas [pid*ROWS, pid*ROWS + ROWS).
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)  # (ROWS,)
    cols = tl.arange(0, BLOCK_C)  # (BLOCK_C,)
    row_ok = rows < n_rows
    col_ok = cols < n_cols
    rows64 = rows.to(tl.int64)  # deslocamentos em 64 bits: M*N pode passar de 2^31
    ptrs = X + rows64[:, None] * stride_x + cols[None, :]  # (ROWS, BLOCK_C)
    x = tl.load(ptrs, mask=row_ok[:, None] & col_ok[None, :], other=0.0).to(tl.float32)
    # Colunas além de n valem -inf: somem da soma e não ganham o máximo.
    x = tl.where(col_ok[None, :], x, float("-inf"))
    z = x - tl.max(x, axis=1)[:, None]  # (ROWS, BLOCK_C), <= 0
    e = tl.exp(z)
    y = e / tl.sum(e, axis=1)[:, None]
    out = Y + rows64[:, None] * stride_y + cols[None, :]
    tl.store(out, y.to(Y.dtype.element_ty), mask=row_ok[:, None] & col_ok[None, :])


def softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax na última dimensão de x (..., n), num único kernel Triton."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x deve ser um torch.Tensor com forma (..., n), veio {type(x).__name__}")
    if x.ndim < 1:
        raise ValueError(f"x deve ter pelo menos 1 dimensão (..., n), veio {tuple(x.shape)}")
    if x.dtype not in DTYPES:
        raise TypeError(f"x deve ser float16, bfloat16 ou float32, veio {x.dtype}")
    n = x.shape[-1]
    if n == 0:
        raise ValueError(f"x não pode ter a última dimensão vazia, veio {tuple(x.shape)}")
    if n > N_MAX:
        raise ValueError(
            f"este kernel guarda a linha inteira num bloco: n deve ser <= {N_MAX}, veio {n}"
        )
    checar_dispositivo(x=x)
    x2 = x.reshape(-1, n)  # (M, n): copia só se precisar
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    m = x2.shape[0]
    y = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if m == 0:
        return y.reshape(x.shape)
    block_c = next_pow2(n)
    # Várias linhas por programa quando as linhas são curtas (até ~4096
    # elementos por bloco): menos programas, melhor na GPU e no interpretador.
    rows = min(next_pow2(m), max(1, 4096 // block_c))
    num_warps = 4 if block_c * rows <= 2048 else (8 if block_c * rows <= 8192 else 16)
    grid = (triton.cdiv(m, rows),)
    _softmax_kernel[grid](x2, y, x2.stride(0), y.stride(0), m, n,
                          ROWS=rows, BLOCK_C=block_c, num_warps=num_warps)
    return y.reshape(x.shape)
