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


def _nonnegative(kind):
    def conv(text):
        try:
            v = kind(text.replace(",", "."))
        except ValueError:
            raise argparse.ArgumentTypeError(f"esperava um número, veio {text!r}") from None
        if v < 0:
            raise argparse.ArgumentTypeError(f"esperava um número maior ou igual a zero, veio {text!r}")
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
    from .sandbox import Limits

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
                            "(repetível; fica guardado em prazos.toml do workspace e vale para "
                            "todo comando seguinte)")
        q.add_argument("--fuso", default=None, metavar="FUSO",
                       help="fuso dos prazos e dos horários sem fuso (padrão: America/Sao_Paulo; "
                            "fica guardado no workspace)")

    def assignment_args(q, what):
        q.add_argument("--assignment", action="append", default=[], metavar="TAREFA",
                       help=f"{what} só esta tarefa (repetível; padrão: as tarefas com prazo no "
                            "workspace, ou as que foram entregues)")

    def csv_args(q):
        q.add_argument("--sep", default=None, metavar="C",
                       help="separador das planilhas (grades.csv, questions.csv, tabela larga); "
                            "';' também troca o ponto decimal por vírgula (Excel em português). "
                            "Fica guardado no workspace")
        q.add_argument("--bom", action=argparse.BooleanOptionalAction, default=None,
                       help="começa as planilhas com a marca BOM do UTF-8 (o Excel reconhece os acentos)")
        q.add_argument("--roster", type=Path, default=None, metavar="CSV",
                       help="lista da turma (colunas student_id e, se houver, name, email, "
                            "participant, sis_id, section): copiada para roster.csv do workspace")

    g = sub.add_parser("grade", help="corrige as entregas de uma turma",
                       description="Corrige as entregas (pasta <aluno>/<tarefa>/<notebook>.ipynb ou "
                                   "zip do AVA) numa sandbox, em paralelo, retomando o que já foi feito.")
    g.add_argument("entregas", type=Path, metavar="ENTREGAS",
                   help="pasta <aluno>/<tarefa>/<notebook>.ipynb ou zip com notebooks por aluno")
    workspace_args(g)
    assignment_args(g, "corrige")
    g.add_argument("--jobs", "-j", type=_positive(int), default=1, metavar="N",
                   help="notebooks corrigidos ao mesmo tempo nesta máquina: processos do Dask, "
                        "de uma thread cada (padrão: 1)")
    g.add_argument("--scheduler", default=None, metavar="ENDEREÇO",
                   help="corrige num cluster Dask que já existe, pelo endereço do agendador "
                        "(p.ex. tcp://10.0.0.5:8786) ou pelo arquivo de `dask scheduler --scheduler-file`, "
                        "em vez de nesta máquina; --jobs deixa de valer (o cluster decide). Ver README, "
                        "\"Corrigir num cluster\"")
    g.add_argument("--tempo-celula", type=_positive(float), default=None, metavar="S",
                   help="limite por célula, em segundos (padrão: c.Execute.timeout do "
                        "nbgrader_config.py do repositório, ou 30)")
    g.add_argument("--tempo-notebook", type=_positive(float), default=300.0, metavar="S",
                   help="limite por notebook, em segundos (padrão: 300)")
    g.add_argument("--memoria", type=_positive(int), default=Limits.memory_mib, metavar="MIB",
                   help="memória de cada notebook, somando todos os processos que ele iniciar, com "
                        f"memória compartilhada e tmpfs, em MiB (padrão: {Limits.memory_mib})")
    g.add_argument("--processos", type=_positive(int), default=Limits.nproc, metavar="N",
                   help="processos e threads de cada notebook, somando todos "
                        f"(padrão: {Limits.nproc})")
    g.add_argument("--disco", type=_positive(int), default=Limits.disk_mib, metavar="MIB",
                   help="espaço para escrever na pasta do notebook e no HOME do kernel, em MiB "
                        f"(padrão: {Limits.disk_mib})")
    g.add_argument("--sem-sandbox", "--no-sandbox", dest="sem_sandbox", action="store_true",
                   help="corrige sem bubblewrap (PERIGOSO: o código dos alunos roda com os seus direitos)")
    deadline_args(g)
    csv_args(g)
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
                       description="Escreve retornos/<aluno>/<tarefa>/<notebook>.html no workspace, "
                                   "com as notas e os comentários do gradebook (inclusive os manuais). "
                                   "Uma página que mostraria um teste oculto não é gravada.")
    workspace_args(f, solucoes=False)
    deadline_args(f)
    assignment_args(f, "gera o feedback de")
    f.add_argument("--refazer", action="store_true", help="refaz todos, mesmo os que não mudaram")

    rp = sub.add_parser("report", help="grades.csv, questions.csv, exportações e o relatório com gráficos",
                        description="Reescreve grades.csv e questions.csv (com as notas manuais e os "
                                    "comentários do gradebook), exportacoes/ e relatorio/index.html.")
    workspace_args(rp, solucoes=False)
    deadline_args(rp)
    assignment_args(rp, "relata")
    csv_args(rp)

    ex = sub.add_parser("export", help="exportações para o AVA (Moodle, Canvas) e a tabela larga",
                        description="Escreve exportacoes/: notas_por_aluno.csv (um aluno por linha, uma "
                                    "coluna por tarefa), a planilha de avaliação e o zip de retornos do "
                                    "Moodle de cada tarefa e o CSV de importação do Canvas.")
    workspace_args(ex, solucoes=False)
    assignment_args(ex, "exporta")
    csv_args(ex)

    pz = sub.add_parser("deadlines", help="mostra ou muda os prazos e a política de atraso do workspace",
                        description="Prazos, fuso e política de atraso ficam em prazos.toml do "
                                    "workspace e valem para todo comando. Sem opções, só mostra.")
    workspace_args(pz, solucoes=False)
    pz.add_argument("prazos", nargs="*", metavar="TAREFA=DATA", help="prazo de uma tarefa")
    pz.add_argument("--fuso", default=None, metavar="FUSO", help="fuso dos prazos")
    pz.add_argument("--remover", action="append", default=[], metavar="TAREFA",
                    help="tira o prazo de uma tarefa")
    pz.add_argument("--tolerancia", type=_nonnegative(int), default=None, metavar="MIN",
                    help="minutos depois do prazo que ainda contam como no prazo")
    pz.add_argument("--multa-por-dia", type=_nonnegative(float), default=None, metavar="PCT",
                    help="porcentagem da nota máxima descontada por dia (ou fração) de atraso")
    pz.add_argument("--zero-apos", type=_nonnegative(int), default=None, metavar="DIAS",
                    help="com mais dias de atraso que isto, a nota é zero")
    pz.add_argument("--sem-zero", action="store_true", help="tira o limite de --zero-apos")
    return p


def _workspace_ready(args):
    from .course import Workspace
    from .deadlines import update_deadlines
    ws = Workspace(args.workspace)
    if not ws.db_path.exists() or not (ws.state / "resultados").is_dir():
        raise ValueError(f"{ws.root} não tem correções; rode `python -m autograder grade` antes")
    return ws, update_deadlines(ws.root, getattr(args, "prazo", []), getattr(args, "fuso", None))


def _csv_ready(ws, args):
    from .exports import csv_format, install_roster
    if getattr(args, "roster", None) is not None:
        install_roster(ws, args.roster)
    return csv_format(ws, args.sep, args.bom)


def _err(e: Exception) -> int:
    print(f"erro: {e}", file=sys.stderr)
    return 2


def _publish_feedback(ws, deadlines, force: bool, assignments) -> int:
    """Gera os retornos e avisa do que não pode ir para os alunos; 1 se alguma página foi recusada."""
    from .feedback import check_nbgrader_feedback, generate_feedback
    written, fresh, refused = generate_feedback(ws, deadlines, force=force, assignments=assignments)
    print(f"feedback em {ws.root / 'retornos'} ({written} escrito(s), {fresh} já em dia)", file=sys.stderr)
    for r in refused:
        print(f"RECUSADO: {r}", file=sys.stderr)
    bad = check_nbgrader_feedback(ws)
    if bad:
        print(f"AVISO: {len(bad)} página(s) em {ws.root / 'feedback'} (do \"Generate Feedback\" do "
              "formgrader) mostram testes ocultos; não as publique. Os retornos do curso estão em "
              f"{ws.root / 'retornos'}.", file=sys.stderr)
    return 1 if refused else 0


def _report_and_exports(ws, deadlines, fmt, assignments) -> list:
    from .exports import write_exports
    from .report import collect, write_report
    out = write_report(ws, deadlines, fmt, assignments)
    files = write_exports(ws, collect(ws, deadlines, assignments), fmt)
    print(f"relatório em {out}; notas em {ws.root / 'grades.csv'}; "
          f"{len(files)} exportação(ões) em {ws.root / 'exportacoes'}", file=sys.stderr)
    return files


def cmd_feedback(args) -> int:
    try:
        ws, deadlines = _workspace_ready(args)
    except ValueError as e:
        return _err(e)
    from .exports import csv_format, write_exports
    from .report import collect
    rc = _publish_feedback(ws, deadlines, args.refazer, args.assignment or None)
    write_exports(ws, collect(ws, deadlines, args.assignment or None), csv_format(ws))   # zip de retornos
    return rc


def cmd_report(args) -> int:
    try:
        ws, deadlines = _workspace_ready(args)
        fmt = _csv_ready(ws, args)
    except (ValueError, OSError) as e:
        return _err(e)
    _report_and_exports(ws, deadlines, fmt, args.assignment or None)
    return 0


def cmd_export(args) -> int:
    from .exports import write_exports
    from .report import collect
    try:
        ws, deadlines = _workspace_ready(args)
        fmt = _csv_ready(ws, args)
    except (ValueError, OSError) as e:
        return _err(e)
    files = write_exports(ws, collect(ws, deadlines, args.assignment or None), fmt)
    for f in files:
        print(f)
    return 0


def cmd_deadlines(args) -> int:
    from .course import Workspace
    from .deadlines import update_deadlines
    ws = Workspace(args.workspace)
    try:
        ws.check_outside_repo()
        d = update_deadlines(ws.root, args.prazos, args.fuso, grace=args.tolerancia,
                             per_day=args.multa_por_dia, zero_after=args.zero_apos,
                             no_zero=args.sem_zero, remove=args.remover)
    except ValueError as e:
        return _err(e)
    print(f"fuso: {d.tz}")
    for a in sorted(d.due):
        print(f"{a}: {d.due[a].astimezone(d.tz).strftime('%d/%m/%Y %H:%M')}")
    if not d.due:
        print("nenhuma tarefa com prazo")
    print(f"atraso: {d.describe_policy()}")
    return 0


def cmd_grade(args) -> int:
    """Um corretor por workspace (lock.py); antes de corrigir, limpa o que uma correção
    interrompida deixou (pastas de kernel, cgroups) e avisa uma vez se não há cgroup."""
    from .course import Workspace
    from .lock import WorkspaceBusy, clean_leftovers, hold
    from .sandbox import box_warning
    ws = Workspace(args.workspace, args.solucoes)
    root = ws.root
    try:
        ws.check_outside_repo()          # antes da trava: ela cria .autograder/ no workspace
    except ValueError as e:
        print(f"erro: {e}", file=sys.stderr)
        return 2
    try:
        with hold(root):
            clean_leftovers(root)
            warning = box_warning()
            if warning:
                print(warning, file=sys.stderr, flush=True)
            return _cmd_grade(args)
    except WorkspaceBusy as e:
        print(f"erro: {e}", file=sys.stderr)
        return 2


def _cmd_grade(args) -> int:
    from .course import Workspace
    from .deadlines import load_deadlines
    from .executor import ExecSettings
    from .runner import GradeError, GradeOptions, run_grade, say
    from .sandbox import Limits

    ws = Workspace(args.workspace, args.solucoes)
    if args.tempo_celula is None:
        from .course import repo_config
        args.tempo_celula = float(repo_config().Execute.get("timeout", 30) or 30)
    opts = GradeOptions(
        submissions=args.entregas, assignments=args.assignment, jobs=args.jobs,
        settings=ExecSettings(cell_timeout=args.tempo_celula, notebook_timeout=args.tempo_notebook),
        limits=Limits(memory_mib=args.memoria, nproc=args.processos, disk_mib=args.disco),
        use_sandbox=not args.sem_sandbox,
        pattern=args.padrao, tz=args.fuso, deadlines=args.prazo, redo=args.refazer,
        tty=False if args.sem_barra else None, scheduler=args.scheduler, client=getattr(args, "client", None))
    try:
        from .exports import CsvFormat, read_roster
        if args.roster is not None:           # erros da lista e do separador antes de corrigir
            read_roster(args.roster)
        if args.sep is not None:
            CsvFormat(args.sep).check()
        summary = run_grade(ws, opts)
        deadlines = load_deadlines(ws.root)
        fmt = _csv_ready(ws, args)
    except (GradeError, ValueError, OSError) as e:
        return _err(e)
    except KeyboardInterrupt:
        say("\ninterrompido: o que já terminou está salvo; rode o mesmo comando para continuar.")
        return 130
    from .report import write_csvs
    rows = write_csvs(ws, deadlines, fmt)
    refused = 0
    if not args.sem_feedback:
        refused = _publish_feedback(ws, deadlines, False, None)
    if not args.sem_relatorio:
        _report_and_exports(ws, deadlines, fmt, None)
    counts: dict[str, int] = {}
    for row in rows:
        counts[str(row.status)] = counts.get(str(row.status), 0) + 1
    say(f"notas em {ws.root / 'grades.csv'} ({len(rows)} linhas: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + ")")
    if summary.failures:
        say(f"{len(summary.failures)} entrega(s) não puderam ser corrigidas (erro do corretor, "
            f"veja {ws.state / 'logs' / 'falhas.log'}); rode de novo para tentar outra vez:")
        for f in summary.failures:
            say(f"  {f}")
        return 1
    return refused


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


def main(argv: list[str] | None = None, client=None) -> int:
    """`client`: um `distributed.Client` já conectado (Dask Gateway, KubeCluster, SLURMCluster...),
    usado por `grade` no lugar de --jobs/--scheduler; quem o criou o fecha."""
    import os

    from .course import REPO, REPO_ENV
    # o nbgrader chama `alembic` pelo PATH ao criar um gradebook
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    os.environ.setdefault(REPO_ENV, str(REPO))     # o nbgrader_config.py do workspace acha o clone
    args = build_parser().parse_args(argv)
    args.client = client
    return {"grade": cmd_grade, "release": cmd_release, "feedback": cmd_feedback,
            "report": cmd_report, "export": cmd_export, "deadlines": cmd_deadlines}[args.command](args)
