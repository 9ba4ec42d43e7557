"""Bench do capítulo 13: o kernel Triton contra o SDPA do torch, numa GPU.

Primeiro confere (a saída e os gradientes contra o SDPA em float32, o decode
contra a fórmula direta, a softmax contra torch.softmax); só se tudo estiver
certo é que mede. Depois cronometra, para cada dtype (float16, bfloat16),
d (128, 64), causal ou não, e N (8192, 16384, 4096, 2048, 1024), com
B = 4 e H = 32:

    triton       atencao.kernels.flash_attention
    sdpa-flash   SDPA com o backend fixado em FLASH_ATTENTION
    sdpa-cudnn   SDPA com o backend fixado em CUDNN_ATTENTION (se houver)
    ingênuo      softmax(máscara(Q K^T / sqrt(d))) V com a matriz N x N
                 materializada (pulado quando não caberia na memória)

no passo de ida (fwd) e no passo de ida somado ao de volta (fwd+bwd).

FLOPs (convenção do FlashAttention-2, a mesma do tutorial de Triton):
    fwd      4·B·H·N²·d, metade com a máscara causal;
    fwd+bwd  3,5 x fwd: o passo de volta conta 2,5 x o de ida
             (5 produtos de matrizes contra 2), somado ao de ida.
TFLOP/s = FLOPs / tempo mediano (triton.testing.do_bench, eventos CUDA).
Pico de memória: torch.cuda.max_memory_allocated numa chamada, menos o que
já estava alocado (as entradas).

Orçamento: o bench inteiro deve caber em ~6 min numa H200 (compilação e
autotune incluídos). A ordem das medições põe primeiro o caso-alvo
(float16, d = 128, causal, N = 8192: alvo >= 0,8x o SDPA-flash); se o
tempo (--orcamento-s) acabar, o que faltou fica marcado na tabela.

    python bench/gpu.py             # numa GPU: escreve bench/results-gpu.md
    python bench/gpu.py --dry-run   # sem GPU: tamanhos minúsculos, interpretador

O --dry-run exercita o mesmo caminho (conferência, medição, tabela) na CPU,
no interpretador do Triton, em float16 (bfloat16 é pulado: no interpretador
tl.dot em bfloat16 dá resultados errados, triton-lang/triton#11584). Os
tempos do --dry-run não dizem nada sobre a GPU.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import platform
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # o aviso de modo do interpretador; o bench diz o modo na tabela
    import atencao.kernels as K  # noqa: E402  (escolhe o modo antes de importar o triton)

import triton  # noqa: E402
import triton.testing  # noqa: E402

from atencao.fmt import fixed  # noqa: E402


@dataclass
class Grade:
    B: int
    H: int
    dtypes: list
    ds: list
    Ns: list
    causais: list = field(default_factory=lambda: [True, False])


GPU = Grade(B=4, H=32, dtypes=[torch.float16, torch.bfloat16], ds=[128, 64], Ns=[8192, 16384, 4096, 2048, 1024])
SECO = Grade(B=1, H=2, dtypes=[torch.float16, torch.bfloat16], ds=[32, 16], Ns=[64, 40])

IMPLS = ["triton", "sdpa-flash", "sdpa-cudnn", "ingênuo"]
MODOS = ["fwd", "fwd+bwd"]


# --------------------------------------------------------------------------
# As implementações medidas
# --------------------------------------------------------------------------

_MASKS: dict = {}


def naive_attention(q, k, v, causal):
    """A fórmula do capítulo 5 com a matriz N x N na memória (a máscara é
    criada uma vez por N e reaproveitada, para não medir sua construção)."""
    n = q.shape[-2]
    s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))  # (B, H, N, N)
    if causal:
        key = (n, q.device)
        if key not in _MASKS:
            _MASKS[key] = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(_MASKS[key], float("-inf"))
    return torch.softmax(s, dim=-1) @ v  # (B, H, N, d)


def sdpa_with(backend):
    def run(q, k, v, causal):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return run


def triton_attention(q, k, v, causal):
    return K.flash_attention(q, k, v, causal=causal)[0]


FUNCS = {
    "triton": triton_attention,
    "sdpa-flash": sdpa_with(SDPBackend.FLASH_ATTENTION),
    "sdpa-cudnn": sdpa_with(SDPBackend.CUDNN_ATTENTION),
    "ingênuo": naive_attention,
}


# --------------------------------------------------------------------------
# 0. Pré-compilação em paralelo (só na GPU)
# --------------------------------------------------------------------------

def precompilar(dtypes, ds, log):
    """Compila, em paralelo (uma thread por núcleo), cada configuração que o
    autotune vai experimentar; sem isso o autotune compila uma a uma, em
    série (~1-3 s cada, ~80 compilações). Usa tensores com a mesma
    especialização das chamadas de verdade (contíguos, passos múltiplos de
    16; N e H não são especializados). Se algo der errado aqui, seguimos: o
    autotune compila o que faltar."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from triton.runtime._async_compile import AsyncCompileMode

    from atencao.kernels import flash_bwd as fb
    from atencao.kernels import flash_fwd as ff
    from atencao.kernels._comum import bloco_d, precisao

    t = time.time()
    n = 0
    try:
        with ThreadPoolExecutor(os.cpu_count()) as ex, AsyncCompileMode(ex):
            for dtype in dtypes:
                for d in ds:
                    q = torch.empty(1, 32, 128, d, device="cuda", dtype=dtype)  # (B, H, N, d)
                    lse = torch.empty(1, 32, 128, device="cuda", dtype=torch.float32)
                    for causal in (True, False):
                        meta = dict(CAUSAL=causal, BLOCK_D=bloco_d(d), PREC=precisao(dtype))
                        fwd_args = (q, q, q, q, lse, *q.stride() * 4, 32, 128, d, 0.125)
                        bwd_args = (q, q, q, q, q, q, lse, lse, *q.stride(), 32, 128, d, 0.125)
                        trabalhos = [
                            (ff._flash_fwd_kernel, fwd_args,
                             ff._podar(ff._configs_hopper(), {"Q": q}, BLOCK_D=meta["BLOCK_D"])),
                            (fb._dkdv_kernel, bwd_args,
                             fb._podar_bwd("dkdv")(fb._CONFIGS_DKDV, {}, BLOCK_D=meta["BLOCK_D"])),
                            (fb._dq_kernel, bwd_args[:4] + bwd_args[5:],
                             fb._podar_bwd("dq")(fb._CONFIGS_DQ, {}, BLOCK_D=meta["BLOCK_D"])),
                        ]
                        for kernel, args, configs in trabalhos:
                            for c in configs:
                                kernel.warmup(*args, grid=(1,), **meta, **c.all_kwargs())
                                n += 1
        log(f"  {n} variantes compiladas em {time.time() - t:.0f} s")
    except Exception as e:  # noqa: BLE001 - a pré-compilação é só uma otimização
        log(f"  pré-compilação falhou ({type(e).__name__}: {e}); o autotune compila em série")


# --------------------------------------------------------------------------
# 1. Conferência (antes de medir qualquer coisa)
# --------------------------------------------------------------------------

def conferir(device, dtypes, ds, log):
    """Saída e gradientes de flash_attention contra o SDPA (matemática, em
    float32), decode contra a fórmula, softmax contra torch.softmax. Formas
    incômodas: N = 1000 não é múltiplo de nenhum bloco."""
    B, H, N = (2, 4, 1000) if device == "cuda" else (1, 2, 70)
    g = torch.Generator(device="cpu").manual_seed(0)
    falhas = []
    # Tolerâncias relativas à escala do resultado: arredondamento de 16 bits
    # (float16 ~1e-3, bfloat16 ~8e-3) acumulado em somas de N termos.
    tol = {torch.float16: 1e-2, torch.bfloat16: 4e-2, torch.float32: 1e-4}
    for dtype in dtypes:
        for d in ds:
            for causal in (True, False):
                q, k, v, do = (torch.randn(B, H, N, d, generator=g).to(device, dtype) for _ in range(4))
                for x in (q, k, v):
                    x.requires_grad_()
                o, _ = K.flash_attention(q, k, v, causal=causal)
                o.backward(do)
                ref = [x.detach().float().requires_grad_() for x in (q, k, v)]
                with sdpa_kernel(SDPBackend.MATH):
                    o_ref = F.scaled_dot_product_attention(*ref, is_causal=causal)
                o_ref.backward(do.float())
                pares = [("saída", o, o_ref)] + [(f"d{n}", x.grad, r.grad) for n, x, r in zip("qkv", (q, k, v), ref)]
                for nome, got, want in pares:
                    err = (got.float() - want).abs().max().item()
                    escala = max(want.abs().max().item(), 1.0)
                    if not err <= tol[dtype] * escala:
                        falhas.append(f"{nome} {dtype} d={d} causal={causal}: erro {err:.3g} (escala {escala:.3g})")
                log(f"  conferido: {str(dtype)[6:]} d={d} causal={causal}")
        # decode com GQA (32 cabeças de consulta, 8 de K/V) e comprimentos diferentes
        d = ds[0]
        S = 1000 if device == "cuda" else 70
        qd = torch.randn(B, 32 if device == "cuda" else 4, d, generator=g).to(device, dtype)
        kc, vc = (torch.randn(B, qd.shape[1] // 4, S, d, generator=g).to(device, dtype) for _ in range(2))
        lens = torch.tensor([S, S // 3 + 1][:B], device=device)
        o = K.decode_attention(qd, kc, vc, lens)
        for b in range(B):
            L = int(lens[b])
            want = F.scaled_dot_product_attention(
                qd[b, :, None].float(), kc[b, :, :L].float(), vc[b, :, :L].float(), enable_gqa=True)[:, 0]
            err = (o[b].float() - want).abs().max().item()
            if not err <= tol[dtype]:
                falhas.append(f"decode {dtype} b={b}: erro {err:.3g}")
        x = torch.randn(37, 781, generator=g).to(device, dtype)
        err = (K.softmax(x).float() - torch.softmax(x.float(), -1)).abs().max().item()
        if not err <= tol[dtype]:
            falhas.append(f"softmax {dtype}: erro {err:.3g}")
    return falhas


# --------------------------------------------------------------------------
# 2. Medição
# --------------------------------------------------------------------------

def flops(B, H, N, d, causal, modo):
    f = 4 * B * H * N * N * d * (0.5 if causal else 1.0)
    return f * (3.5 if modo == "fwd+bwd" else 1.0)


def naive_cabe(B, H, N, dtype, modo, device):
    """A versão ingênua guarda matrizes N x N: ~3 no fwd (pontuações, máscara
    aplicada, probabilidades) e ~6 no fwd+bwd (o autograd guarda algumas e o
    backward cria outras). Pulamos se passar de 70% da memória livre."""
    if device != "cuda":
        return True
    matriz = B * H * N * N * torch.tensor([], dtype=dtype).element_size()
    livre, _ = torch.cuda.mem_get_info()
    return (3 if modo == "fwd" else 6) * matriz < 0.7 * livre


def cronometrar(fn, device, grads):
    if device == "cuda":
        return triton.testing.do_bench(fn, warmup=10, rep=40, grad_to_none=grads, return_mode="median")
    fn()  # aquecimento (compila/reescreve o kernel)
    best = math.inf
    for _ in range(2):
        for x in grads or []:
            x.grad = None
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def pico_mib(fn, device):
    if device != "cuda":
        return None
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return (torch.cuda.max_memory_allocated() - base) / 2**20


def medir_um(impl, q, k, v, do, causal, modo, device):
    f = FUNCS[impl]
    if modo == "fwd":
        def fn():
            with torch.no_grad():
                f(q, k, v, causal)
        grads = None
    else:
        def fn():
            f(q, k, v, causal).backward(do)
        grads = [q, k, v]
    ms = cronometrar(fn, device, grads)
    for x in (q, k, v):
        x.grad = None
    mib = pico_mib(fn, device)
    for x in (q, k, v):
        x.grad = None
    return ms, mib


def medir(grade, device, orcamento_s, t0, log):
    linhas = []  # dicts
    cortado = False
    for dtype in grade.dtypes:
        if device == "cpu" and dtype == torch.bfloat16:
            log("  bfloat16 pulado no interpretador (tl.dot em bfloat16 dá resultados errados, triton#11584)")
            continue
        for d in grade.ds:
            for N in grade.Ns:
                # Entradas geradas uma vez por (dtype, d, N), já no dispositivo
                # (gerar 4 x 268 M números na CPU levaria segundos).
                g = torch.Generator(device=device).manual_seed(N + d)
                base = [torch.randn(grade.B, grade.H, N, d, generator=g, device=device, dtype=dtype)
                        for _ in range(4)]  # q, k, v, dO: (B, H, N, d)
                for causal in grade.causais:
                    for modo in MODOS:
                        for impl in IMPLS:
                            linha = dict(dtype=str(dtype)[6:], d=d, causal=causal, N=N, modo=modo, impl=impl,
                                         ms=None, tflops=None, mib=None, nota="")
                            linhas.append(linha)
                            if time.time() - t0 > orcamento_s:
                                linha["nota"] = "sem tempo"
                                cortado = True
                                continue
                            if impl == "ingênuo" and not naive_cabe(grade.B, grade.H, N, dtype, modo, device):
                                linha["nota"] = "não cabe na memória"
                                continue
                            q, k, v = (x.detach().requires_grad_(modo == "fwd+bwd") for x in base[:3])
                            try:
                                with warnings.catch_warnings():
                                    warnings.simplefilter("ignore")  # avisos do SDPA sobre backends
                                    ms, mib = medir_um(impl, q, k, v, base[3], causal, modo, device)
                            except (RuntimeError, torch.OutOfMemoryError) as e:
                                msg = str(e).splitlines()[0] if str(e) else type(e).__name__
                                indisp = "No available kernel" in msg or "No viable backend" in msg
                                linha["nota"] = "indisponível" if indisp else msg[:60]
                                if device == "cuda":
                                    torch.cuda.empty_cache()
                                continue
                            finally:
                                del q, k, v
                            linha["ms"] = ms
                            linha["mib"] = mib
                            linha["tflops"] = flops(grade.B, grade.H, N, d, causal, modo) / (ms * 1e-3) / 1e12
                        ok = [x for x in linhas[-4:] if x["ms"] is not None]
                        log(f"  {linha['dtype']} d={d} causal={causal} N={N} {modo}: "
                            + ", ".join(f"{x['impl']} {x['ms']:.3g} ms" for x in ok)
                            + f"  [{time.time() - t0:.0f} s]")
                del base
                if device == "cuda":
                    torch.cuda.empty_cache()
    return linhas, cortado


# --------------------------------------------------------------------------
# 3. Tabela
# --------------------------------------------------------------------------

def _fmt(x, nd=1):
    return "—" if x is None else fixed(x, nd)


def tabela(linhas, grade, device, info, falhas, cortado, total_s):
    out = [f"# Bench do capítulo 13: FlashAttention em Triton x SDPA ({info['modo']})", ""]
    out += [f"- GPU: {info['gpu']}", f"- data: {info['data']}",
            f"- versões: torch {torch.__version__}, triton {triton.__version__}, CUDA {torch.version.cuda}, "
            f"Python {platform.python_version()}",
            f"- forma: B = {grade.B}, H = {grade.H}; d, N, dtype e máscara nas linhas",
            "- FLOPs: fwd = 4·B·H·N²·d (metade com máscara causal); fwd+bwd = 3,5 x fwd "
            "(convenção do FlashAttention-2: o backward conta 2,5 x o forward)",
            "- tempo: mediana de triton.testing.do_bench (eventos CUDA)" if device == "cuda"
            else "- tempo: melhor de 2 chamadas (perf_counter), no interpretador: sem significado para a GPU",
            "- pico: memória alocada a mais durante uma chamada (torch.cuda.max_memory_allocated)",
            f"- duração total do bench: {_fmt(total_s, 0)} s" + (" (orçamento esgotado: linhas 'sem tempo')" if cortado else ""),
            ""]
    if falhas:
        out += ["## Conferência FALHOU: nada foi medido", ""] + [f"- {f}" for f in falhas]
        return "\n".join(out) + "\n"
    out += ["Conferência antes de medir: saída e gradientes contra o SDPA (float32), decode com GQA e "
            "softmax: tudo dentro da tolerância.", ""]
    # Razão triton / sdpa-flash (velocidade: tempo do SDPA / tempo do Triton)
    por_chave = {}
    for x in linhas:
        por_chave.setdefault((x["dtype"], x["d"], x["causal"], x["N"], x["modo"]), {})[x["impl"]] = x
    alvo = por_chave.get(("float16", 128, True, 8192, "fwd"), {})
    if device == "cuda" and alvo.get("triton", {}).get("ms") and alvo.get("sdpa-flash", {}).get("ms"):
        r = alvo["sdpa-flash"]["ms"] / alvo["triton"]["ms"]
        out += [f"**Alvo** (float16, d = 128, causal, N = 8192, fwd): Triton a {_fmt(r, 2)}x a velocidade do "
                f"SDPA-flash ({'atingido' if r >= 0.8 else 'NÃO atingido'}: alvo >= 0,8x).", ""]
    out += ["| dtype | d | causal | N | modo | implementação | ms | TFLOP/s | x SDPA-flash | pico MiB | nota |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    ordem = sorted(por_chave, key=lambda c: (c[0], -c[1], not c[2], c[4], c[3]))
    for chave in ordem:
        grupo = por_chave[chave]
        ref = grupo.get("sdpa-flash", {}).get("ms")
        for impl in IMPLS:
            x = grupo.get(impl)
            if x is None:
                continue
            razao = ref / x["ms"] if (ref and x["ms"]) else None
            out.append(f"| {x['dtype']} | {x['d']} | {'sim' if x['causal'] else 'não'} | {x['N']} | {x['modo']} | "
                       f"{impl} | {_fmt(x['ms'], 3)} | {_fmt(x['tflops'], 1 if device == 'cuda' else 4)} | {_fmt(razao, 2)} | "
                       f"{_fmt(x['mib'], 0)} | {x['nota']} |")
    out += ["", "x SDPA-flash = tempo do SDPA-flash / tempo da linha (acima de 1: mais rápido que o SDPA-flash)."]
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="sem GPU: tamanhos minúsculos, no interpretador")
    ap.add_argument("--out", type=Path, default=None, help="arquivo da tabela (padrão: bench/results-gpu.md)")
    ap.add_argument("--orcamento-s", type=float, default=330.0, help="para de medir depois de tantos segundos")
    args = ap.parse_args(argv)
    t0 = time.time()

    def log(msg):
        print(msg, flush=True)

    if args.dry_run:
        if not K.INTERPRETADO:
            sys.exit("--dry-run é para rodar sem GPU, no interpretador: rode com TRITON_INTERPRET=1 "
                     "ou numa máquina sem GPU")
        device, grade = "cpu", SECO
        out = args.out or Path("/tmp/results-gpu-dry-run.md")
        info = dict(gpu="nenhuma (dry-run no interpretador do Triton, CPU)", modo="dry-run, CPU")
    else:
        if K.INTERPRETADO or not torch.cuda.is_available():
            sys.exit("sem GPU CUDA: use --dry-run (ou rode numa máquina com GPU NVIDIA)")
        device, grade = "cuda", GPU
        out = args.out or ROOT / "bench" / "results-gpu.md"
        info = dict(gpu=torch.cuda.get_device_name(), modo="GPU")
    info["data"] = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    log(f"bench do cap. 13 ({info['modo']}): {info['gpu']}")

    if device == "cuda":
        log("0. pré-compilação")
        precompilar(grade.dtypes, grade.ds, log)
    log("1. conferência")
    dtypes_conf = [x for x in grade.dtypes if not (device == "cpu" and x == torch.bfloat16)]
    falhas = conferir(device, dtypes_conf, grade.ds, log)
    linhas, cortado = [], False
    if falhas:
        log("CONFERÊNCIA FALHOU:\n  " + "\n  ".join(falhas))
    else:
        log("2. medição")
        linhas, cortado = medir(grade, device, args.orcamento_s, t0, log)
    texto = tabela(linhas, grade, device, info, falhas, cortado, time.time() - t0)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(texto, encoding="utf-8")
    log(f"tabela escrita em {out} ({time.time() - t0:.0f} s)")
    return 1 if falhas else 0


if __name__ == "__main__":
    sys.exit(main())
