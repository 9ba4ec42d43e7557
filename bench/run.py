"""`make bench`: mede a construção do livro e a bateria de testes e roda os
benchmarks de desempenho que existirem em bench/ (cada um escreve a sua seção
de bench/results.md entre marcadores <!-- nome:start --> / <!-- nome:end -->).

Tempos de parede numa máquina de 2 núcleos; variam entre execuções (veja
TRAPS.md), por isso cada seção diz a data e a máquina.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results.md"
# O executável do venv: `python -m jupyter_book.cli.main` não tem `if __name__ == "__main__"`,
# sai com 0 sem construir nada (e a bateria de testes falhava sem _build/html).
JB = [str(Path(sys.executable).parent / "jupyter-book")]


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} núcleos, Python {platform.python_version()}"


def write_section(name: str, body: str) -> None:
    """Substitui (ou acrescenta) a seção `name` de bench/results.md."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Medições\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        _, after = rest.split(end, 1)
        text = before + block + after
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.write_text(text, encoding="utf-8")


def timed(cmd: list[str], **kw) -> float:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd[:3])} ... falhou ({p.returncode}):\n{p.stdout[-4000:]}")
    return dt


def bench_build_and_tests() -> None:
    from atencao.fmt import fixed
    build = [*JB, "build", ".", "--builder", "html", "-W", "-n", "--keep-going"]
    shutil.rmtree(ROOT / "_build", ignore_errors=True)
    clean = timed(build)
    if not (ROOT / "_build" / "html" / "index.html").exists():
        sys.exit(f"{' '.join(build)} não construiu _build/html")
    cached = timed(build)
    # os mesmos comandos do `make test` (o Makefile diz os processos e os grupos)
    check = timed(["make", "--no-print-directory", "check", "PYTEST_ARGS=-p no:cacheprovider"])
    tests = timed(["make", "--no-print-directory", "e2e", "PYTEST_ARGS=-p no:cacheprovider"])
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    write_section("build", "\n".join([
        "## Construção do livro e testes",
        "",
        f"Medido em {now}; {machine()}.",
        "",
        "| o quê | tempo de parede |",
        "|---|---|",
        f"| `jupyter-book build` limpo (executa todos os capítulos) | {fixed(clean, 1)} s |",
        f"| `jupyter-book build` com cache (nada mudou) | {fixed(cached, 1)} s |",
        f"| `make check` (a camada rápida, 2 processos) | {fixed(check, 1)} s |",
        f"| `make e2e`: as outras camadas de `make test` (livro já construído) | {fixed(tests, 1)} s |",
    ]))
    print(f"livro limpo {clean:.1f} s, com cache {cached:.1f} s, check {check:.1f} s, outras camadas {tests:.1f} s")


def main(argv: list[str] | None = None) -> int:
    """Sem argumentos, tudo; com nomes (`build`, `flash`, `grader`...), só esses."""
    only = set(sys.argv[1:] if argv is None else argv)
    if not only or "build" in only:
        bench_build_and_tests()
    for script in sorted((ROOT / "bench").glob("bench_*.py")):
        if only and script.stem.removeprefix("bench_") not in only:
            continue
        print(f"rodando {script.name}")
        subprocess.run([sys.executable, str(script)], cwd=ROOT, check=True)
    print(f"resultados em {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
