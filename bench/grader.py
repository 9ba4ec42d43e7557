"""Benchmark do corretor: `python -m autograder grade --jobs 2` contra `nbgrader autograde` em série.

    python bench/grader.py [--alunos 20] [--tarefas 01-pontuacoes,04-softmax] [--sem-serie] [--sem-gravar]
                           [--repeticoes 3]

Mesma turma para os dois: N alunos sintéticos (bench/submissoes.py: completo,
parcial, completo, em branco, ...) com todas as tarefas que existem em
solutions/ agora. Passos:

1. nbgrader puro: um curso temporário com a configuração do repositório,
   `generate_assignment` (fora do relógio) e `nbgrader autograde <tarefa>`
   para cada tarefa, uma após a outra (o que um professor roda hoje);
2. o corretor, com `--jobs 2` (`--repeticoes` rodadas; a tabela mostra a
   mediana) e `--jobs 1` (para separar o ganho do paralelismo do resto), sem
   feedback nem relatório, workspace já preparado (`generate_assignment`
   também fora do relógio);
3. antes de comparar tempos, confere que as notas automáticas de cada
   (aluno, tarefa) são iguais nos dois (se não forem, o script falha);
4. grava a tabela em bench/results.md entre <!-- grader:start --> e
   <!-- grader:end -->.

Tempos de parede numa máquina compartilhada variam muito (TRAPS.md): a
carga média do sistema antes de cada medição vai junto na tabela.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import submissoes  # noqa: E402
from atencao.fmt import fixed as fmt_num  # noqa: E402


def _run_module():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _env() -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def _machine_cpu() -> float:
    """Segundos de CPU ocupados na máquina inteira desde o boot (/proc/stat: tudo menos idle e
    iowait). Conta os kernels que a sandbox encerra e que nenhum processo nosso espera (o
    `getrusage` dos filhos não os vê); por isso a carga média vai junto na tabela."""
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    busy = sum(fields) - fields[3] - fields[4]       # idle, iowait
    return busy / os.sysconf("SC_CLK_TCK")


def _timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(tempo de parede, segundos de CPU ocupados na máquina) de um comando."""
    t0, c0 = time.perf_counter(), _machine_cpu()
    p = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True)
    dt, cpu = time.perf_counter() - t0, _machine_cpu() - c0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} ... falhou ({p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
    return dt, cpu


def load() -> str:
    return fmt_num(os.getloadavg()[0], 1)


def nbgrader_course(tmp: Path, subs: Path, assignments: list[str]) -> Path:
    course = tmp / "nbgrader"
    (course / "source").mkdir(parents=True)
    for a in assignments:
        shutil.copytree(ROOT / "solutions" / a, course / "source" / a)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa\n"
        f"load_subconfig({str(ROOT / 'nbgrader_config.py')!r})  # noqa\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        "c.CourseDirectory.source_directory = 'source'\n"
        "c.CourseDirectory.release_directory = 'release'\n", encoding="utf-8")
    shutil.copytree(subs, course / "submitted")
    for a in assignments:
        _timed([sys.executable, "-m", "nbgrader", "generate_assignment", a, "--force", "--log-level=ERROR"], course)
    return course


def nbgrader_scores(course: Path) -> dict[tuple[str, str], float]:
    from nbgrader.api import Gradebook
    out = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for a in gb.assignments:
            for sub in gb.assignment_submissions(a.name):
                out[(sub.student_id, a.name)] = round(float(sub.score), 4)
    return out


def our_scores(ws: Path) -> dict[tuple[str, str], float]:
    import csv
    with open(ws / "grades.csv", encoding="utf-8") as f:
        return {(r["student_id"], r["assignment"]): round(float(r["score"]), 4) for r in csv.DictReader(f)}


def main() -> int:
    ap = argparse.ArgumentParser(description="Corretor contra nbgrader autograde em série.")
    ap.add_argument("--alunos", type=int, default=20)
    ap.add_argument("--tarefas", default=None, metavar="A,B,...",
                    help="só estas tarefas (turma pequena; o padrão é todas as de solutions/)")
    ap.add_argument("--sem-serie", action="store_true", help="não mede o corretor com --jobs 1")
    ap.add_argument("--sem-gravar", action="store_true", help="não grava em bench/results.md (medida avulsa)")
    ap.add_argument("--repeticoes", type=int, default=3, metavar="N",
                    help="rodadas do corretor com --jobs 2 (a tabela mostra a mediana; o padrão é 3)")
    args = ap.parse_args()

    # o nbgrader chama `alembic` pelo PATH (também aqui, no Workspace.prepare deste processo)
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    from autograder.core.workspace import Workspace
    assignments = sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
    if args.tarefas:
        wanted = args.tarefas.split(",")
        unknown = sorted(set(wanted) - set(assignments))
        if unknown:
            ap.error(f"tarefa(s) desconhecida(s): {', '.join(unknown)} (existem: {', '.join(assignments)})")
        assignments = [a for a in assignments if a in wanted]
    n_nb = args.alunos * len(assignments)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-grader-") as t:
        tmp = Path(t)
        subs = tmp / "entregas"
        submissoes.write_class(ROOT / "solutions", ROOT / "exercises", subs, args.alunos)
        for d in subs.glob("*/*"):          # --tarefas: só as escolhidas na turma
            if d.name not in assignments:
                shutil.rmtree(d)
        print(f"{args.alunos} alunos x {len(assignments)} tarefas = {n_nb} notebooks", flush=True)

        course = nbgrader_course(tmp, subs, assignments)
        ld = load()
        runs = [_timed([sys.executable, "-m", "nbgrader", "autograde", a, "--force", "--log-level=ERROR"], course)
                for a in assignments]
        t_nbg, cpu_nbg = sum(r[0] for r in runs), sum(r[1] for r in runs)
        rows.append(("`nbgrader autograde` em série (uma chamada por tarefa)", t_nbg, cpu_nbg, ld))
        print(f"nbgrader em série: {t_nbg:.1f} s", flush=True)
        ref = nbgrader_scores(course)

        # só as tarefas escolhidas: uma pasta de soluções com links para elas (senão o corretor
        # prepararia e listaria as outras dentro do relógio)
        sol = tmp / "solucoes"
        sol.mkdir()
        for a in assignments:
            (sol / a).symlink_to(ROOT / "solutions" / a)
        measured = {}
        # "--no-zygote": cada kernel do aluno importa o torch de novo (o corretor de antes do molde)
        variants = [(2, []), (2, ["--no-zygote"])] + ([] if args.sem_serie else [(1, [])])
        repeats = {}
        for jobs, extra in variants:
            tag = f"{jobs}{''.join(extra)}"
            runs = []
            for r in range(args.repeticoes if tag == "2" else 1):
                ws = tmp / f"ws{tag}-{r}"
                Workspace(ws, sol).prepare(assignments)
                ld = load()
                runs.append(_timed([sys.executable, "-m", "autograder", "grade", str(subs), "--workspace", str(ws),
                                    "--solutions", str(sol), "--jobs", str(jobs), "--no-feedback",
                                    "--no-report", "--no-progress", *extra], ROOT))
                ours = our_scores(ws)
                diff = {k: (ref.get(k), v) for k, v in ours.items() if ref.get(k) != v}
                if diff or len(ours) != len(ref):
                    print(f"notas diferentes do nbgrader (jobs={jobs}): {dict(list(diff.items())[:10])}",
                          file=sys.stderr)
                    return 1
                shutil.rmtree(ws)
            # a mediana das rodadas (tempo e CPU, cada um): a máquina varia ±10 % entre rodadas
            dt, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            repeats[tag] = runs
            measured[tag] = (dt, cpu)
            rows.append((f"`python -m autograder grade --jobs {jobs}{' ' + ' '.join(extra) if extra else ''}`"
                         " (sandbox)", dt, cpu, ld))
            print(f"corretor --jobs {jobs} {' '.join(extra)}: {dt:.1f} s (notas iguais às do nbgrader)", flush=True)

    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "## Corretor: `python -m autograder` contra `nbgrader autograde`",
        "",
        f"Medido em {now}; {platform.machine()}, {os.cpu_count()} núcleos, Python "
        f"{platform.python_version()}. {args.alunos} alunos sintéticos (bench/submissoes.py) x "
        f"{len(assignments)} tarefas ({', '.join(assignments)}) = {n_nb} notebooks. Tempo de parede "
        "só da correção (a geração das tarefas fica fora nos dois). Antes de comparar, o script "
        "confere que a nota automática de cada (aluno, tarefa) é a mesma nos dois. CPU por notebook: "
        "segundos de CPU ocupados na máquina durante o comando (/proc/stat; Dask, kernels e o que mais "
        "estiver rodando: veja a carga média), divididos pelo número de notebooks.",
        "",
        "| o quê | tempo | notebooks/min | CPU por notebook | carga média antes |",
        "|---|---|---|---|---|",
    ]
    for label, dt, cpu, ld in rows:
        lines.append(f"| {label} | {fmt_num(dt, 1)} s | {fmt_num(n_nb / dt * 60, 1)} | "
                     f"{fmt_num(cpu / n_nb, 2)} núcleo·s | {ld} |")
    (t2, c2), (t_old, c_old) = measured["2"], measured["2--no-zygote"]
    lines += ["", f"Vazão do corretor com 2 processos: **{fmt_num(t_nbg / t2, 2)}x** a do nbgrader em série; "
              f"CPU por notebook {fmt_num(c2 / n_nb, 2)} núcleo·s (nbgrader: {fmt_num(cpu_nbg / n_nb, 2)}).",
              f"Sem o molde (`--no-zygote`: cada kernel do aluno importa o torch, como antes dele): "
              f"{fmt_num(t_nbg / t_old, 2)}x e {fmt_num(c_old / n_nb, 2)} núcleo·s por notebook; o molde "
              f"corta {fmt_num(100 * (1 - c2 / c_old), 0)} % da CPU por notebook."]
    if len(repeats["2"]) > 1:
        ts, cs = sorted(r[0] for r in repeats["2"]), sorted(r[1] / n_nb for r in repeats["2"])
        lines.append(f"Com `--jobs 2`, a mediana de {len(ts)} rodadas seguidas (tempo de {fmt_num(ts[0], 1)} a "
                     f"{fmt_num(ts[-1], 1)} s; CPU por notebook de {fmt_num(cs[0], 2)} a {fmt_num(cs[-1], 2)} "
                     f"núcleo·s; vazão de {fmt_num(t_nbg / ts[-1], 2)}x a {fmt_num(t_nbg / ts[0], 2)}x).")
    if "1" in measured:
        lines.append(f"Com 1 processo: {fmt_num(t_nbg / measured['1'][0], 2)}x; o segundo processo dá mais "
                     f"{fmt_num(measured['1'][0] / t2, 2)}x.")
    if not args.sem_gravar:
        _run_module().write_section("grader", "\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
