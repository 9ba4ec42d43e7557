"""Benchmark da semelhança entre respostas (autograder/insight/similarity.py).

    python bench/bench_similarity.py [--alunos 1000] [--sem-gravar]

Uma tarefa sintética com 3 células de resposta. Cada aluno monta cada célula de passos,
cada passo escolhido entre 3 ou 4 jeitos de escrever, com nomes sorteados, comentários
sorteados e, às vezes, uma linha a mais (código morto, ou um passo intermediário que é uma
expressão sorteada: o jeito próprio do aluno); 2 % dos alunos copiam outro aluno e disfarçam
(nomes trocados, funções em outra ordem, comentários trocados, código morto). Mede o
tempo de parede e de CPU de `find_similar` para 1/4, 1/2 e a turma inteira (para ver o
crescimento quase linear) e confere quantas cópias plantadas ficam acima do limiar padrão
e quantos pares honestos também ficam. Grava a seção `similarity` de bench/results.md
(`write_section` de bench/run.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import random
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from atencao.fmt import fixed  # noqa: E402
from autograder.insight.similarity import DEFAULT_THRESHOLD, Submission, find_similar  # noqa: E402

STARTER = {
    "tarefa-escala": "def escalar(scores, d):\n    # SEU CÓDIGO AQUI\n    raise NotImplementedError()\n",
    "tarefa-softmax": "def softmax_estavel(x):\n    # SEU CÓDIGO AQUI\n    raise NotImplementedError()\n",
    "tarefa-atencao": "def atencao(Q, K, V, causal=True):\n    # SEU CÓDIGO AQUI\n    raise NotImplementedError()\n",
}

# Passos de cada célula; {a}, {b}, {c} são nomes sorteados por aluno.
STEPS = {
    "tarefa-escala": [
        ["def escalar(scores, d):"],
        ["    {a} = math.sqrt(d)", "    {a} = d ** 0.5", "    {a} = torch.tensor(float(d)).sqrt()",
         "    {a} = 1 / math.sqrt(d)"],
        ["    return scores / {a}", "    {b} = scores / {a}\n    return {b}", "    return torch.div(scores, {a})"],
    ],
    "tarefa-softmax": [
        ["def softmax_estavel(x):"],
        ["    {a} = x.max(dim=-1, keepdim=True).values", "    {a} = x.amax(-1, keepdim=True)",
         "    {a} = torch.max(x, dim=-1, keepdim=True)[0]", "    {a} = x.max(-1).values.unsqueeze(-1)"],
        ["    {b} = torch.exp(x - {a})", "    {b} = (x - {a}).exp()", "    x = x - {a}\n    {b} = x.exp()"],
        ["    {c} = {b}.sum(dim=-1, keepdim=True)", "    {c} = torch.sum({b}, -1, keepdim=True)",
         "    {c} = {b}.sum(-1).unsqueeze(-1)"],
        ["    return {b} / {c}", "    {b} = {b} / {c}\n    return {b}", "    return torch.div({b}, {c})"],
    ],
    "tarefa-atencao": [
        ["def atencao(Q, K, V, causal=True):"],
        ["    {a} = Q @ K.transpose(-2, -1)", "    {a} = torch.matmul(Q, K.transpose(-1, -2))",
         "    {a} = torch.einsum('...id,...jd->...ij', Q, K)", "    {a} = Q @ K.mT"],
        ["    {a} = escalar({a}, Q.shape[-1])", "    {a} = escalar({a}, K.size(-1))",
         "    {b} = Q.shape[-1]\n    {a} = escalar({a}, {b})"],
        ["    if causal:\n        {c} = Q.shape[-2]\n        {b} = torch.triu(torch.ones({c}, {c}, dtype=torch.bool), 1)"
         "\n        {a} = {a}.masked_fill({b}, float('-inf'))",
         "    if causal:\n        {c} = {a}.shape[-1]\n        {b} = torch.ones({c}, {c}).tril() == 0"
         "\n        {a} = {a}.masked_fill({b}, -1e9)",
         "    if causal:\n        {b} = torch.full({a}.shape[-2:], float('-inf')).triu(1)\n        {a} = {a} + {b}"],
        ["    return softmax_estavel({a}) @ V", "    {b} = softmax_estavel({a})\n    return {b} @ V",
         "    return torch.matmul(softmax_estavel({a}), V)"],
    ],
}
NAMES = ["s", "scores", "pont", "p", "w", "pesos", "m", "mx", "e", "num", "den", "soma", "t", "n", "r",
         "aux", "tmp", "z", "y", "q", "k", "val", "res", "out", "saida", "peso", "logits", "alfa"]
EXTRAS = ["    assert {a} is not None", "    {c} = None", "    # conferido na aula", "    pass",
          "    print({a}.shape)"]
COMMENTS = ["# minha solução", "# tentei de novo", "# versão final", "", "", ""]


METHODS = ["sum", "mean", "max", "amax", "exp", "sqrt", "clamp", "view", "reshape", "transpose",
           "unsqueeze", "squeeze", "float", "masked_fill", "softmax", "matmul", "abs", "log"]
OPS = ["+", "-", "*", "/", "@"]


def _expr(rng: random.Random, names: list[str], depth: int = 0) -> str:
    """Uma expressão sorteada: o jeito próprio de cada aluno escrever um passo."""
    r = rng.random()
    if depth > 2 or r < 0.25:
        return rng.choice(names) if rng.random() < 0.8 else str(rng.randint(-2, 3))
    if r < 0.55:
        args = ", ".join(_expr(rng, names, depth + 1) for _ in range(rng.randint(0, 2)))
        return f"{_expr(rng, names, depth + 1)}.{rng.choice(METHODS)}({args})"
    if r < 0.8:
        return f"({_expr(rng, names, depth + 1)} {rng.choice(OPS)} {_expr(rng, names, depth + 1)})"
    return f"torch.{rng.choice(METHODS)}({_expr(rng, names, depth + 1)}, dim={rng.randint(-2, 1)})"


def _cell(rng: random.Random, gid: str) -> str:
    a, b, c = rng.sample(NAMES, 3)
    lines = [rng.choice(COMMENTS)] if rng.random() < 0.5 else []
    for i, options in enumerate(STEPS[gid]):
        lines.append(rng.choice(options).format(a=a, b=b, c=c))
        if i and rng.random() < 0.15:
            lines.append(rng.choice(EXTRAS).format(a=a, b=b, c=c))
        if i and rng.random() < 0.4:    # um passo intermediário do jeito do aluno
            lines.append(f"    {rng.choice([a, b, c])} = {_expr(rng, [a, b, c, 'x', 'Q', 'K', 'V'])}")
    return "\n".join(lines) + "\n"


def _disguise(rng: random.Random, cells: dict[str, str]) -> dict[str, str]:
    """A cópia: nomes trocados, comentários trocados, código morto, células em outra ordem."""
    out = {}
    for gid, src in cells.items():
        for old in NAMES:
            if rng.random() < 0.7:
                src = src.replace(f" {old} ", f" {old}_v2 ").replace(f"    {old} =", f"    {old}_v2 =")
        lines = [ln for ln in src.splitlines() if not ln.lstrip().startswith("#")]
        lines.insert(1, "    # escrevi sozinho")
        lines.insert(min(len(lines), 3), "    lixo = [i * 2 for i in range(3)]")
        out[gid] = "\n".join(lines) + "\n\n\ndef _nao_usada(a):\n    return a\n"
    return dict(reversed(list(out.items())))


def make_class(n: int, seed: int = 0) -> tuple[list[Submission], set[frozenset[str]]]:
    rng = random.Random(seed)
    subs: list[Submission] = []
    planted: set[frozenset[str]] = set()
    n_copies = max(1, n // 50)
    for i in range(n - n_copies):
        subs.append(Submission(f"aluno{i:04d}", {g: _cell(rng, g) for g in STEPS}))
    for j in range(n_copies):
        src = rng.choice(subs[: n - n_copies])
        name = f"copia{j:04d}"
        subs.append(Submission(name, _disguise(rng, dict(src.cells))))
        planted.add(frozenset((src.student, name)))
    return subs, planted


def _run_module():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--alunos", type=int, default=1000)
    ap.add_argument("--sem-gravar", action="store_true")
    args = ap.parse_args()
    subs, planted = make_class(args.alunos)
    load = os.getloadavg()[0]
    rows = []
    for frac in (4, 2, 1):
        part = subs[: len(subs) // frac] if frac > 1 else subs
        t0, c0 = time.perf_counter(), time.process_time()
        pairs = find_similar(part, STARTER)
        rows.append((len(part), time.perf_counter() - t0, time.process_time() - c0, pairs))
    n, wall, cpu, pairs = rows[-1]
    found = {frozenset((p.a, p.b)) for p in pairs}
    hit = len(planted & found)
    honest = sum(1 for f in found if not any(s.startswith("copia") for s in f))
    low = min((p.score for p in pairs if frozenset((p.a, p.b)) in planted), default=0.0)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Semelhança entre respostas (`bench/bench_similarity.py`)",
        "",
        f"Medido em {now}; {platform.machine()}, {os.cpu_count()} núcleos, Python "
        f"{platform.python_version()}; carga média antes: {fixed(load, 1)} (máquina compartilhada). "
        "Uma tarefa sintética com 3 células de resposta, cada célula montada de passos com 3 ou 4 "
        "jeitos de escrever, nomes e comentários sorteados, e passos intermediários sorteados; 2 % dos alunos copiam outro e disfarçam "
        "(nomes, comentários, código morto, ordem). `find_similar` num processo, limiar padrão "
        f"{fixed(DEFAULT_THRESHOLD, 2)}. As linhas de 250 e 500 são os primeiros alunos da lista, "
        "sem as cópias (que vêm no fim); a CPU dobra com a turma, como se espera de um índice "
        "invertido (comparar todos os pares cresceria 4 vezes).",
        "",
        "| alunos | tempo de parede | CPU | pares acima do limiar |",
        "|---|---|---|---|",
    ]
    for m, w, c, ps in rows:
        lines.append(f"| {fixed(m, 0)} | {fixed(w, 2)} s | {fixed(c, 2)} s | {len(ps)} |")
    lines += ["", f"Com {fixed(n, 0)} alunos: {hit} de {len(planted)} cópias plantadas acima do limiar "
              f"(a menor com {fixed(100 * low, 0)} %); {honest} pares sem cópia plantada acima do limiar."]
    text = "\n".join(lines)
    if not args.sem_gravar:
        _run_module().write_section("similarity", text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
