"""Linha de comando do corretor (`python -m autograder`), em português."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Mensagens do próprio argparse em português (ele usa gettext sem catálogo pt-BR).
_PT = {
    "usage: ": "uso: ",
    "positional arguments": "argumentos posicionais",
    "options": "opções",
    "optional arguments": "opções",
    "show this help message and exit": "mostra esta ajuda e sai",
    "%(prog)s: error: %(message)s\n": "%(prog)s: erro: %(message)s\n",
    "the following arguments are required: %s": "faltam os argumentos obrigatórios: %s",
    "unrecognized arguments: %s": "argumentos desconhecidos: %s",
    "invalid choice: %(value)r (choose from %(choices)s)": "opção inválida: %(value)r (escolha entre %(choices)s)",
    "expected one argument": "esperava um valor",
    "invalid %(type)s value: %(value)r": "valor inválido (%(type)s): %(value)r",
    "argument %(argument_name)s: %(message)s": "argumento %(argument_name)s: %(message)s",
    "not allowed with argument %s": "não pode ser usado junto com %s",
    "ambiguous option: %(option)s could match %(matches)s": "opção ambígua: %(option)s pode ser %(matches)s",
}


def _pt(msg: str) -> str:
    return _PT.get(msg, msg)


argparse._ = _pt  # type: ignore[attr-defined]


def _positive(kind):
    def conv(text):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"esperava um número, veio {text!r}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"esperava um número positivo, veio {text!r}")
        return v
    conv.__name__ = "número"
    return conv


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m autograder",
        description="Corretor automático do curso: gera os exercícios, corrige a turma "
                    "inteira numa sandbox, produz feedback e relatório.")
    sub = p.add_subparsers(dest="command", metavar="COMANDO", required=True)

    r = sub.add_parser("release", help="regenera solutions/ e exercises/ (nbgrader generate_assignment)",
                       description="Reescreve solutions/ a partir de autograder/fontes e gera exercises/ "
                                   "com o nbgrader (gradebook temporário).")
    r.add_argument("--verificar", action="store_true",
                   help="não escreve nada: só confere se exercises/ é o que o nbgrader gera")

    def workspace_args(q, solucoes=True):
        q.add_argument("--workspace", required=True, type=Path, metavar="PASTA",
                       help="pasta de trabalho do professor (fora do repositório): gradebook, "
                            "notebooks corrigidos, feedback, grades.csv")
        if solucoes:
            q.add_argument("--solucoes", type=Path, default=None, metavar="PASTA",
                           help="fontes nbgrader das tarefas (padrão: solutions/ do repositório)")

    def deadline_args(q):
        q.add_argument("--prazo", action="append", default=[], metavar="TAREFA=DATA",
                       help="prazo de uma tarefa, p.ex. 01-pontuacoes='2025-03-10 23:59' "
                            "(repetível; soma-se a prazos.toml do workspace)")
        q.add_argument("--fuso", default=None, metavar="FUSO",
                       help="fuso dos prazos e dos horários sem fuso (padrão: America/Sao_Paulo)")

    g = sub.add_parser("grade", help="corrige as entregas de uma turma",
                       description="Corrige as entregas (pasta <aluno>/<tarefa>/<notebook>.ipynb ou "
                                   "zip do AVA) numa sandbox, em paralelo, retomando o que já foi feito.")
    g.add_argument("entregas", type=Path, metavar="ENTREGAS",
                   help="pasta <aluno>/<tarefa>/<notebook>.ipynb ou zip com notebooks por aluno")
    workspace_args(g)
    g.add_argument("--assignment", default=None, metavar="TAREFA",
                   help="corrige só esta tarefa (obrigatório para um zip de uma tarefa sem o nome dela)")
    g.add_argument("--jobs", "-j", type=_positive(int), default=1, metavar="N",
                   help="alunos corrigidos ao mesmo tempo (padrão: 1)")
    g.add_argument("--tempo-celula", type=_positive(float), default=None, metavar="S",
                   help="limite por célula, em segundos (padrão: c.Execute.timeout do "
                        "nbgrader_config.py do repositório, ou 30)")
    g.add_argument("--tempo-notebook", type=_positive(float), default=300.0, metavar="S",
                   help="limite por notebook, em segundos (padrão: 300)")
    g.add_argument("--memoria", type=_positive(int), default=2048, metavar="MIB",
                   help="memória máxima de cada kernel, em MiB (padrão: 2048)")
    g.add_argument("--sem-sandbox", "--no-sandbox", dest="sem_sandbox", action="store_true",
                   help="corrige sem bubblewrap (PERIGOSO: o código dos alunos roda com os seus direitos)")
    deadline_args(g)
    g.add_argument("--padrao", default=None, metavar="REGEX",
                   help="regex para os nomes dentro do zip, com grupos (?P<student>...), "
                        "(?P<assignment>...), (?P<notebook>...), (?P<timestamp>...)")
    g.add_argument("--refazer", action="store_true",
                   help="corrige de novo mesmo o que já estava corrigido")
    g.add_argument("--sem-feedback", action="store_true", help="não gera o feedback HTML")
    g.add_argument("--sem-relatorio", action="store_true", help="não gera o relatório com gráficos")
    g.add_argument("--sem-barra", action="store_true",
                   help="progresso em linhas de texto mesmo num terminal")
    f = sub.add_parser("feedback", help="gera o feedback HTML de cada aluno (sem os testes ocultos)",
                       description="Escreve feedback/<aluno>/<tarefa>/<notebook>.html no workspace, "
                                   "com as notas do gradebook (inclusive as manuais).")
    workspace_args(f, solucoes=False)
    deadline_args(f)
    f.add_argument("--refazer", action="store_true", help="refaz todos, mesmo os que não mudaram")

    rp = sub.add_parser("report", help="grades.csv, questions.csv e o relatório com gráficos",
                        description="Reescreve grades.csv e questions.csv (com as notas manuais do "
                                    "gradebook) e relatorio/index.html.")
    workspace_args(rp, solucoes=False)
    deadline_args(rp)
    return p


def _workspace_ready(args):
    from .course import Workspace
    from .submissions import load_deadlines
    ws = Workspace(args.workspace)
    if not ws.db_path.exists() or not (ws.state / "resultados").is_dir():
        raise ValueError(f"{ws.root} não tem correções; rode `python -m autograder grade` antes")
    return ws, load_deadlines(ws.root, args.prazo, args.fuso)


def cmd_feedback(args) -> int:
    from .feedback import generate_feedback
    try:
        ws, deadlines = _workspace_ready(args)
    except ValueError as e:
        print(f"erro: {e}", file=sys.stderr)
        return 2
    written, fresh = generate_feedback(ws, deadlines, force=args.refazer)
    print(f"feedback em {ws.root / 'feedback'}: {written} escrito(s), {fresh} já em dia", file=sys.stderr)
    return 0


def cmd_report(args) -> int:
    from .report import write_report
    try:
        ws, deadlines = _workspace_ready(args)
    except ValueError as e:
        print(f"erro: {e}", file=sys.stderr)
        return 2
    out = write_report(ws, deadlines)
    print(f"relatório em {out}; notas em {ws.root / 'grades.csv'}", file=sys.stderr)
    return 0


def cmd_grade(args) -> int:
    from .course import Workspace
    from .executor import ExecSettings
    from .report import write_csvs
    from .runner import GradeError, GradeOptions, run_grade, say
    from .sandbox import Limits
    from .submissions import load_deadlines

    ws = Workspace(args.workspace, args.solucoes)
    if args.tempo_celula is None:
        from .course import repo_config
        args.tempo_celula = float(repo_config().Execute.get("timeout", 30) or 30)
    opts = GradeOptions(
        submissions=args.entregas, assignment=args.assignment, jobs=args.jobs,
        settings=ExecSettings(cell_timeout=args.tempo_celula, notebook_timeout=args.tempo_notebook),
        limits=Limits(memory_mib=args.memoria), use_sandbox=not args.sem_sandbox,
        pattern=args.padrao, tz=args.fuso, deadlines=args.prazo, redo=args.refazer,
        tty=False if args.sem_barra else None)
    try:
        summary = run_grade(ws, opts)
        deadlines = load_deadlines(ws.root, args.prazo, args.fuso)
    except (GradeError, ValueError) as e:
        print(f"erro: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        say("\ninterrompido: o que já terminou está salvo; rode o mesmo comando para continuar.")
        return 130
    grades, _ = write_csvs(ws, deadlines)
    if not args.sem_feedback:
        from .feedback import generate_feedback
        written, fresh = generate_feedback(ws, deadlines)
        say(f"feedback em {ws.root / 'feedback'} ({written} escrito(s), {fresh} já em dia)")
    if not args.sem_relatorio:
        from .report import write_report
        say(f"relatório em {write_report(ws, deadlines)}")
    counts: dict[str, int] = {}
    for row in grades:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    say(f"notas em {ws.root / 'grades.csv'} ({len(grades)} linhas: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + ")")
    if summary.failures:
        say(f"{len(summary.failures)} entrega(s) não puderam ser corrigidas (erro do corretor, "
            f"veja {ws.state / 'logs' / 'falhas.log'}); rode de novo para tentar outra vez:")
        for f in summary.failures:
            say(f"  {f}")
        return 1
    return 0


def cmd_release(args) -> int:
    """`make release` (autograder/release.py), ou só a comparação com --verificar."""
    from . import release
    if not args.verificar:
        return release.main([])
    import tempfile
    slugs = release.assignments()
    with tempfile.TemporaryDirectory(prefix="autograder-verifica-") as tmp:
        fresh = release.generate(slugs, out_root=Path(tmp))
        bad = [p.relative_to(tmp) for p in fresh
               if not (release.ROOT / p.relative_to(tmp)).exists()
               or (release.ROOT / p.relative_to(tmp)).read_bytes() != p.read_bytes()]
    if bad:
        print("exercises/ difere de uma geração nova (rode `make release`): "
              + ", ".join(map(str, bad)), file=sys.stderr)
        return 1
    print(f"exercises/ confere com solutions/ ({len(slugs)} tarefa(s))")
    return 0


def main(argv: list[str] | None = None) -> int:
    import os
    # o nbgrader chama `alembic` pelo PATH ao criar um gradebook
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    args = build_parser().parse_args(argv)
    return {"grade": cmd_grade, "release": cmd_release, "feedback": cmd_feedback,
            "report": cmd_report}[args.command](args)
