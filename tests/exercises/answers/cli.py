"""As respostas plantadas e justas pela linha de comando do corretor, numa turma só.

Cada resposta vira um aluno (`planted3-05-mistura-com-v`) que entrega o notebook distribuído
(`exercises/`) com a solução de referência nas células de resposta, menos as da resposta. Uma
correção (`python -m autograder grade`) para a turma inteira; `problems()` diz, em português, cada
resposta que não teve o veredito do contrato (plantada: 0 nas células `zero`, cheia nas outras;
justa: todos os pontos).

Para rodar à mão (da raiz do repositório; sem nomes, todos os cadernos):

    PYTHONPATH=tests/support:tests/exercises .venv/bin/python -m answers.cli 05-mistura-com-v [--keep PASTA]
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from answers import Fair, Planted, cases, load

ROOT = Path(__file__).resolve().parents[3]


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def submission(slug: str, answer) -> nbformat.NotebookNode:
    """O notebook distribuído com a solução de referência e as células da resposta."""
    sol = nbformat.read(ROOT / "solutions" / slug / f"{slug}.ipynb", as_version=4)
    nb = nbformat.read(ROOT / "exercises" / slug / f"{slug}.ipynb", as_version=4)
    code = {_meta(c)["grade_id"]: c.source for c in sol.cells if _meta(c).get("solution")}
    code.update(answer.cells)
    for c in nb.cells:
        gid = _meta(c).get("grade_id")
        if c.cell_type == "code" and _meta(c).get("solution") and gid in code:
            c.source = code[gid]
    return nb


def _marked(answer) -> set:
    """As células de testes que a resposta pode zerar (as `zero` e as `free` de uma plantada)."""
    return set(answer.zero) | set(answer.free) if isinstance(answer, Planted) else set()


def _fits(answer, pack: list) -> bool:
    """`answer` entra no pacote sem mascarar o contrato de ninguém: só plantadas com plantadas
    (ou justas com justas), células de solução diferentes e células de testes zeradas diferentes."""
    return all(type(answer) is type(b) and not set(answer.cells) & set(b.cells)
               and not _marked(answer) & _marked(b) for b in pack)


def packs(slug: str, answers: list) -> list[list]:
    """As respostas de um caderno em pacotes (primeiro que couber, na ordem dada): um aluno
    entrega um pacote, e cada resposta dele é conferida como se estivesse sozinha, menos as
    células de testes que outra plantada do pacote zera. O contrato de cada resposta continua
    conferido pelo corretor de verdade; uma turma de ~1/3 do tamanho."""
    out: list[list] = []
    for a in answers:
        for pack in out:
            if _fits(a, pack):
                pack.append(a)
                break
        else:
            out.append([a])
    return out


def build_class(dest: Path, slugs=None, pack: bool = False) -> dict:
    """Escreve a turma em `dest` e devolve {aluno: (slug, (resposta, ...))}: um aluno por
    resposta, ou, com `pack`, um aluno por pacote de respostas compatíveis (`packs`)."""
    by_slug: dict[str, list] = {}
    for slug, kind, i, answer in cases():
        if not slugs or slug in slugs:
            by_slug.setdefault(slug, []).append((kind, i, answer))
    who = {}
    for slug, items in by_slug.items():
        # um caderno pode recusar os pacotes (PACK = False no módulo de respostas, com o motivo)
        if pack and getattr(load(slug), "PACK", True):
            groups = [(f"pack{j}", g) for j, g in enumerate(packs(slug, [a for _, _, a in items]))]
        else:
            groups = [(f"{kind}{i}", [a]) for kind, i, a in items]
        for name, group in groups:
            sid = f"{name}-{slug}"
            nb = submission(slug, Fair("pacote", {g: c for a in group for g, c in a.cells.items()}))
            d = dest / sid / slug
            d.mkdir(parents=True)
            nbformat.write(nb, d / f"{slug}.ipynb")
            who[sid] = (slug, tuple(group))
    return who


def student_of(who: dict, answer) -> str:
    """O aluno da turma `who` que entregou `answer`."""
    return next(sid for sid, (_, group) in who.items() if any(a is answer for a in group))


def grade(subs: Path, ws: Path, jobs: int = 2) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "autograder", "grade", str(subs), "--workspace", str(ws),
                        "--jobs", str(jobs), "--no-report", "--no-feedback", "--no-progress"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"o corretor saiu com {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def _number(text: str) -> float:
    return float(str(text).replace(",", ".") or 0)


def scores(ws: Path) -> dict:
    """{(aluno, caderno, grade_id): (pontos, máximo)} das células de testes com nota automática."""
    out = {}
    with open(ws / "questions.csv", encoding="utf-8-sig", newline="") as f:
        for r in csv.DictReader(f):
            if r["kind"] == "test":
                out[(r["student_id"], r["assignment"], r["grade_id"])] = (_number(r["score"]), _number(r["max_score"]))
    return out


def problems(who: dict, ws: Path, only=None) -> list[str]:
    """Cada resposta cujo veredito na correção não é o do contrato, explicado (só `only`, se dada)."""
    got, out = scores(ws), []
    for sid, (slug, group) in sorted(who.items()):
        cells = {gid: v for (s, a, gid), v in got.items() if s == sid and a == slug}
        for answer in group:
            if only is not None and answer is not only:
                continue
            if not cells:
                out.append(f"{sid}: nenhuma nota de teste na correção ({answer.why})")
                continue
            # o que outra plantada do mesmo pacote zera não conta contra esta
            masked = set().union(*(_marked(b) for b in group if b is not answer))
            if isinstance(answer, Planted):
                earned = {g: v for g, v in cells.items() if g in answer.zero and v[0] > 0}
                lost = {g: v for g, v in cells.items()
                        if g not in answer.zero and g not in answer.free and g not in masked and v[0] < v[1]}
                if earned:
                    out.append(f"{sid}: a plantada ganhou pontos em {earned} ({answer.why})")
                if lost:
                    out.append(f"{sid}: a plantada custou outras tarefas {lost} ({answer.why})")
            else:
                lost = {g: v for g, v in cells.items() if v[0] < v[1]}
                if lost:
                    out.append(f"{sid}: a justa perdeu pontos em {lost} ({answer.why})")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("slugs", nargs="*", help="cadernos (sem nenhum: todos os que têm respostas)")
    ap.add_argument("--keep", type=Path, help="pasta onde deixar a turma e o workspace")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--pack", action="store_true",
                    help="respostas compatíveis no mesmo aluno (como a bateria faz; turma menor)")
    args = ap.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="respostas-"))
    who = build_class(base / "entregas", set(args.slugs), pack=args.pack)
    grade(base / "entregas", base / "ws", args.jobs)
    found = problems(who, base / "ws")
    for p in found:
        print(p)
    print(f"{sum(len(g) for _, g in who.values())} respostas corrigidas ({len(who)} alunos), "
          f"{len(found)} fora do contrato; workspace em {base / 'ws'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
