"""bench/gpu.py: o --dry-run passa na CPU (mesmo caminho: conferência, medição,
tabela), e as contas de FLOPs seguem a convenção escrita no cabeçalho."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "gpu.py"


def _env():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TRITON_INTERPRET", None)
    return env


def _load_bench():
    spec = importlib.util.spec_from_file_location("bench_gpu", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # @dataclass procura o módulo em sys.modules
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.skipif(torch.cuda.is_available(), reason="o --dry-run é para máquinas sem GPU")
def test_dry_run_checks_then_measures_and_writes_the_table(tmp_path):
    out = tmp_path / "results.md"
    r = subprocess.run([sys.executable, str(BENCH), "--dry-run", "--out", str(out)],
                       capture_output=True, text=True, env=_env(), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.index("1. conferência") < r.stdout.index("2. medição")  # confere antes de medir
    assert "bfloat16 pulado no interpretador" in r.stdout and "11584" in r.stdout
    texto = out.read_text(encoding="utf-8")
    assert "tudo dentro da tolerância" in texto
    linhas = [x for x in texto.splitlines() if x.startswith("| float16")]
    # 2 d x 2 N x 2 máscaras x 2 modos x 4 implementações
    assert len(linhas) == 64
    triton_ok = [x for x in linhas if "| triton |" in x and "| — |" not in x.split("| triton |")[1][:8]]
    assert len(triton_ok) == 16, "toda linha do Triton deve ter um tempo"
    assert all("indisponível" in x for x in linhas if "sdpa-cudnn" in x)  # sem cuDNN na CPU


@pytest.mark.skipif(torch.cuda.is_available(), reason="com GPU o bench roda de verdade")
def test_without_gpu_and_without_dry_run_the_bench_refuses_clearly(tmp_path):
    r = subprocess.run([sys.executable, str(BENCH), "--out", str(tmp_path / "x.md")],
                       capture_output=True, text=True, env=_env(), timeout=120)
    assert r.returncode != 0
    assert "sem GPU CUDA: use --dry-run" in r.stderr
    assert not (tmp_path / "x.md").exists()


def test_flop_counts_follow_the_stated_convention():
    bench = _load_bench()
    B, H, N, d = 4, 32, 8192, 128
    fwd = 4 * B * H * N**2 * d  # dois produtos de matrizes, 2·N²·d cada, por cabeça
    assert bench.flops(B, H, N, d, False, "fwd") == fwd
    assert bench.flops(B, H, N, d, True, "fwd") == fwd / 2
    assert bench.flops(B, H, N, d, False, "fwd+bwd") == 3.5 * fwd  # 1 + 2,5
    assert bench.flops(B, H, N, d, True, "fwd+bwd") == 3.5 * fwd / 2
