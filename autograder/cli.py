"""Linha de comando do corretor (`python -m autograder`), em português."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from .readers.csvfile import MOODLE_LANGUAGES

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


def _translate(msg: str) -> str:
    return _PT.get(msg, msg)


argparse._ = _translate  # type: ignore[attr-defined]


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


def _positive_decimal(text: str) -> float:
    """Número positivo com ponto ou vírgula decimal ("0.5" ou "0,5")."""
    return _positive(float)(text.replace(",", ".", 1) if text.count(",") == 1 and "." not in text else text)



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


def _opt(q, flag: str, *aliases: str, **kw) -> None:
    """Uma opção com o nome em inglês (como o nbgrader e o Dask escrevem os seus) e, escondidos
    da ajuda, os nomes em português de antes, que continuam valendo."""
    q.add_argument(flag, **kw)
    if aliases:
        kw = {k: v for k, v in kw.items() if k not in ("help", "metavar", "required")}
        kw.setdefault("dest", flag.lstrip("-").replace("-", "_"))
        kw["default"] = argparse.SUPPRESS      # o padrão é o da opção em inglês
        q.add_argument(*aliases, help=argparse.SUPPRESS, **kw)


def _workspace_args(q, solutions=True):
    q.add_argument("--workspace", required=True, type=Path, metavar="PASTA",
                   help="pasta de trabalho do professor (fora do repositório): gradebook, "
                        "notebooks corrigidos, feedback, grades.csv")
    if solutions:
        _opt(q, "--solutions", "--solucoes", type=Path, default=None, metavar="PASTA",
             help="fontes nbgrader das tarefas (padrão: solutions/ do repositório)")


def _timezone_arg(q, what: str):
    _opt(q, "--timezone", "--fuso", default=None, metavar="FUSO", help=what)


def _deadline_args(q):
    _opt(q, "--deadline", "--prazo", action="append", default=[], metavar="TAREFA=DATA",
         help="prazo de uma tarefa, p.ex. 01-pontuacoes='2025-03-10 23:59' (repetível; fica "
              "guardado em prazos.toml do workspace e vale para todo comando seguinte)")
    _timezone_arg(q, "fuso dos prazos e dos horários sem fuso (padrão: America/Sao_Paulo; "
                     "fica guardado no workspace)")


def _assignment_args(q, what):
    q.add_argument("--assignment", action="append", default=[], metavar="TAREFA",
                   help=f"{what} só esta tarefa (repetível; padrão: as tarefas com prazo no "
                        "workspace, ou as que foram entregues)")


def _csv_args(q):
    q.add_argument("--sep", default=None, metavar="C",
                   help="separador das planilhas (grades.csv, questions.csv, tabela larga); "
                        "';' também troca o ponto decimal por vírgula (Excel em português). "
                        "Fica guardado no workspace")
    q.add_argument("--bom", action=argparse.BooleanOptionalAction, default=None,
                   help="começa as planilhas com a marca BOM do UTF-8 (o Excel reconhece os acentos)")
    q.add_argument("--roster", type=Path, default=None, metavar="CSV",
                   help="lista da turma (colunas student_id e, se houver, name, email, "
                        "participant, sis_id, section): copiada para roster.csv do workspace")
    q.add_argument("--moodle-language", default=None, choices=MOODLE_LANGUAGES, metavar="LÍNGUA",
                   help="língua da interface do Moodle que vai importar a planilha de avaliação: "
                        "pt-BR (padrão) ou en; o Moodle acha as colunas pelos nomes nessa língua. "
                        "Fica guardada no workspace")


def _grade_parser(sub) -> None:
    from .box.sandbox import Limits
    limits = Limits()
    g = sub.add_parser("grade", help="corrige as entregas de uma turma",
                       description="Corrige as entregas (pasta <aluno>/<tarefa>/<notebook>.ipynb ou "
                                   "zip do AVA) numa sandbox, em paralelo, retomando o que já foi feito.")
    g.add_argument("submissions", type=Path, metavar="ENTREGAS",
                   help="pasta <aluno>/<tarefa>/<notebook>.ipynb ou zip com notebooks por aluno")
    _workspace_args(g)
    _assignment_args(g, "corrige")
    g.add_argument("--jobs", "-j", type=_positive(int), default=1, metavar="N",
                   help="notebooks corrigidos ao mesmo tempo nesta máquina: processos do Dask, "
                        "de uma thread cada (padrão: 1)")
    g.add_argument("--scheduler", default=None, metavar="ENDEREÇO",
                   help="corrige num cluster Dask que já existe, pelo endereço do agendador "
                        "(p.ex. tls://10.0.0.5:8786) ou pelo arquivo de `dask scheduler --scheduler-file`, "
                        "em vez de nesta máquina; --jobs deixa de valer (o cluster decide). Só com TLS "
                        "(--tls), a não ser com --insecure-cluster. Ver README, \"Corrigir num cluster\"")
    g.add_argument("--tls", type=Path, default=None, metavar="PASTA",
                   help="pasta dos certificados do cluster (a de `python -m autograder certs`): a AC e "
                        "o certificado do professor, para --scheduler tls://...")
    g.add_argument("--insecure-cluster", action="store_true",
                   help="aceita um --scheduler sem TLS (PERIGOSO: quem alcança a porta do agendador "
                        "roda código nos trabalhadores e muda as notas)")
    _opt(g, "--cell-timeout", "--tempo-celula", type=_positive(float), default=None, metavar="S",
         help="limite por célula, em segundos (padrão: c.Execute.timeout do "
              "nbgrader_config.py do repositório, ou 30)")
    _opt(g, "--notebook-timeout", "--tempo-notebook", type=_positive(float), default=300.0, metavar="S",
         help="limite por notebook, em segundos (padrão: 300)")
    _opt(g, "--memory", "--memoria", type=_positive(int), default=limits.memory_mib, metavar="MIB",
         help="memória de cada notebook, somando todos os processos que ele iniciar, com "
              f"memória compartilhada e tmpfs, em MiB (padrão: {limits.memory_mib})")
    _opt(g, "--cpus", "--nucleos", type=_positive_decimal, default=limits.cpus, metavar="N",
         help="núcleos de CPU de cada kernel, somando todos os processos que ele iniciar (cota do "
              "cgroup; aceita fração, p.ex. 0,5); processos a mais num notebook não tiram CPU de "
              f"outro (padrão: {limits.cpus:g})")
    _opt(g, "--max-processes", "--processos", type=_positive(int), default=limits.nproc, metavar="N",
         help=f"processos e threads de cada notebook, somando todos (padrão: {limits.nproc})")
    _opt(g, "--disk", "--disco", type=_positive(int), default=limits.disk_mib, metavar="MIB",
         help="espaço para escrever na pasta do notebook e no HOME do kernel, em MiB "
              f"(padrão: {limits.disk_mib})")
    _collect_limit_args(g)
    _opt(g, "--no-sandbox", "--sem-sandbox", action="store_true",
         help="corrige sem bubblewrap (PERIGOSO: o código dos alunos roda com os seus direitos)")
    _opt(g, "--no-zygote", "--sem-molde", action="store_true",
         help="cada kernel começa do zero e importa o torch de novo (sem o molde: mais lento, "
              "mesmas notas; para comparar)")
    _deadline_args(g)
    _csv_args(g)
    _opt(g, "--pattern", "--padrao", default=None, metavar="REGEX",
         help="regex para os nomes dentro do zip, com grupos (?P<student>...), "
              "(?P<assignment>...), (?P<notebook>...), (?P<timestamp>...)")
    g.add_argument("--moodle-worksheet", action="append", default=[], metavar="[TAREFA=]ARQUIVO",
                   help="planilha de avaliação baixada do Moodle (\"Baixar planilha de avaliação\"): os "
                        "horários de entrega de cada participante, que o zip do Moodle não traz (repetível; "
                        "com uma tarefa só, basta o arquivo)")
    _opt(g, "--force", "--refazer", action="store_true",
         help="corrige de novo mesmo o que já estava corrigido")
    _opt(g, "--no-feedback", "--sem-feedback", action="store_true", help="não gera o feedback HTML")
    _opt(g, "--no-report", "--sem-relatorio", action="store_true",
         help="não gera o relatório com gráficos nem as exportações")
    _opt(g, "--no-progress", "--sem-barra", action="store_true",
         help="progresso em linhas de texto mesmo num terminal")


def _collect_limit_args(g) -> None:
    """Os tetos da coleta (core/settings.py, `CollectLimits`): só contam os notebooks extraídos."""
    from atencao.fmt import integer
    from .core.settings import MIB, CollectLimits
    d = CollectLimits()
    g.add_argument("--max-zip-mib", type=_positive(int), default=d.zip // MIB, metavar="MIB",
                   help="teto da soma dos notebooks extraídos de cada zip (o da turma e cada zip de "
                        f"aluno dentro dele), em MiB; quem passaria dele tem a entrega recusada, os "
                        f"maiores primeiro (padrão: {integer(d.zip // MIB)})")
    g.add_argument("--max-class-mib", type=_positive(int), default=d.klass // MIB, metavar="MIB",
                   help="teto da soma dos notebooks extraídos da turma inteira, em MiB "
                        f"(padrão: {integer(d.klass // MIB)})")
    g.add_argument("--max-ratio", type=_positive_decimal, default=d.ratio, metavar="N",
                   help="teto da razão descomprimido/comprimido de um arquivo do zip acima de "
                        f"{d.ratio_floor // MIB} MiB (padrão: {d.ratio:g}); acima disso, a entrega "
                        "é recusada antes de extrair (zip-bomba)")


def _collect_limits(args):
    from .core.settings import MIB, CollectLimits
    return CollectLimits(zip=args.max_zip_mib * MIB, klass=args.max_class_mib * MIB, ratio=args.max_ratio)


def _deadlines_parser(sub) -> None:
    pz = sub.add_parser("deadlines", help="mostra ou muda os prazos e a política de atraso do workspace",
                        description="Prazos, fuso e política de atraso ficam em prazos.toml do "
                                    "workspace e valem para todo comando. Sem opções, só mostra.")
    _workspace_args(pz, solutions=False)
    pz.add_argument("deadlines", nargs="*", metavar="TAREFA=DATA", help="prazo de uma tarefa")
    _timezone_arg(pz, "fuso dos prazos")
    _opt(pz, "--remove", "--remover", action="append", default=[], metavar="TAREFA",
         help="tira o prazo de uma tarefa")
    _opt(pz, "--grace", "--tolerancia", type=_nonnegative(int), default=None, metavar="MIN",
         help="minutos depois do prazo que ainda contam como no prazo")
    _opt(pz, "--penalty-per-day", "--multa-por-dia", type=_nonnegative(float), default=None, metavar="PCT",
         help="porcentagem da nota máxima descontada por dia (ou fração) de atraso")
    _opt(pz, "--zero-after", "--zero-apos", type=_nonnegative(int), default=None, metavar="DIAS",
         help="com mais dias de atraso que isto, a nota é zero")
    _opt(pz, "--no-zero-after", "--sem-zero", action="store_true", help="tira o limite de --zero-after")


def _read_side_parsers(sub) -> None:
    f = sub.add_parser("feedback", help="gera o feedback HTML de cada aluno (sem os testes ocultos)",
                       description="Escreve retornos/<aluno>/<tarefa>/<notebook>.html no workspace, "
                                   "com as notas e os comentários do gradebook (inclusive os manuais). "
                                   "Uma página que mostraria um teste oculto não é gravada.")
    _workspace_args(f, solutions=False)
    _deadline_args(f)
    _assignment_args(f, "gera o feedback de")
    _opt(f, "--force", "--refazer", action="store_true", help="refaz todos, mesmo os que não mudaram")
    f.add_argument("--explain-mistakes", action=argparse.BooleanOptionalAction, default=None,
                   help="acrescenta à página de cada aluno um parágrafo curto sobre o erro dele "
                        "(a mensagem do teste visível ou \"falhou na parte oculta\", quantos colegas "
                        "erraram igual e a seção do livro a reler; nunca as entradas ocultas). "
                        "Fica guardado no workspace; --no-explain-mistakes tira")

    rp = sub.add_parser("report", help="grades.csv, questions.csv, exportações e o relatório com gráficos",
                        description="Reescreve grades.csv e questions.csv (com as notas manuais e os "
                                    "comentários do gradebook), exportacoes/ e relatorio/index.html.")
    _workspace_args(rp, solutions=False)
    _deadline_args(rp)
    _assignment_args(rp, "relata")
    _csv_args(rp)
    rp.add_argument("--similarity-threshold", type=_positive_decimal, default=None, metavar="X",
                    help="semelhança mínima (de 0 a 1; aceita 0,6) para um par de respostas aparecer "
                         "no relatório e em relatorio/similarity.csv (padrão: "
                         + f"{_default_threshold():g}".replace(".", ",") + "). Fica guardado no workspace")

    ex = sub.add_parser("export", help="exportações para o AVA (Moodle, Canvas) e a tabela larga",
                        description="Escreve exportacoes/: notas_por_aluno.csv (um aluno por linha, uma "
                                    "coluna por tarefa), a planilha de avaliação e o zip de retornos do "
                                    "Moodle de cada tarefa e o CSV de importação do Canvas.")
    _workspace_args(ex, solutions=False)
    _assignment_args(ex, "exporta")
    _csv_args(ex)


def _certs_parser(sub) -> None:
    from .plan import tls
    c = sub.add_parser("certs", help="cria os certificados TLS do cluster Dask e mostra os comandos",
                       description="Cria numa pasta uma autoridade certificadora (AC) só sua e os "
                                   "certificados do agendador, dos trabalhadores e do professor, "
                                   "assinados por ela, e mostra os comandos `dask scheduler`, "
                                   "`dask worker` e `grade` que os usam. Ver README, \"Corrigir num "
                                   "cluster\".")
    c.add_argument("--out", required=True, type=Path, metavar="PASTA",
                   help="pasta nova dos certificados (fica só com o professor; cada máquina recebe "
                        "a AC, ca.pem, e o certificado do seu papel)")
    c.add_argument("--host", action="append", default=[], metavar="MÁQUINA",
                   help="nome ou IP do agendador, como os trabalhadores o alcançam (repetível; o "
                        "primeiro vai nos comandos; padrão: o nome desta máquina)")
    c.add_argument("--port", type=_positive(int), default=tls.PORT, metavar="PORTA",
                   help=f"porta do agendador nos comandos (padrão: {tls.PORT})")
    c.add_argument("--days", type=_positive(int), default=tls.DAYS, metavar="DIAS",
                   help=f"validade dos certificados, em dias (padrão: {tls.DAYS})")
    c.add_argument("--force", action="store_true",
                   help="troca a AC de uma pasta que já tem certificados")


def cmd_certs(args) -> int:
    """`certs`: a AC e os certificados (plan/tls.py) e os comandos que os usam."""
    import socket

    from .plan import tls
    try:
        tls.make_certs(args.out, args.host, days=args.days, force=args.force)
    except (ValueError, OSError) as e:
        return _err(e)
    out = args.out.expanduser().absolute()
    host = args.host[0] if args.host else socket.gethostname()
    print(f"certificados em {out} (válidos por {args.days} dias). A chave da AC ({tls.CA_KEY}) e o "
          f"certificado do professor ({tls.cert('client')}, {tls.key('client')}) ficam só com você;\n"
          "copie para cada máquina só o que o comentário dela diz, na mesma pasta. Comandos:\n")
    print(tls.render_commands(tls.cluster_commands(out, host, args.port)), end="")
    return 0


def _default_threshold() -> float:
    from .readers.class_insight import DEFAULT_THRESHOLD
    return DEFAULT_THRESHOLD


def _regrade_parsers(sub) -> None:
    from .box.sandbox import Limits
    limits = Limits()
    r = sub.add_parser("regrade", help="corrige de novo só alguns alunos e tarefas e diz o que mudou",
                       description="Corrige de novo as entregas escolhidas (as que já estão em submitted/ "
                                   "do workspace), com as mesmas entradas ocultas, depois de um teste "
                                   "corrigido ou de um pedido de revisão; grava o que mudou, teste a teste, "
                                   "em relatorio/regrade-AAAAmmdd-HHMMSS.csv e no relatório. Nada mais "
                                   "do workspace é corrigido de novo.")
    _workspace_args(r)
    r.add_argument("--student", action="append", default=[], metavar="ALUNO",
                   help="corrige de novo este aluno (repetível)")
    _assignment_args(r, "corrige de novo")
    r.add_argument("--id", action="append", default=[], metavar="CÓDIGO",
                   help="o código de 8 caracteres da página de retorno (repetível): corrige de novo "
                        "aquela entrega")
    r.add_argument("--jobs", "-j", type=_positive(int), default=1, metavar="N",
                   help="notebooks corrigidos ao mesmo tempo (padrão: 1)")
    r.add_argument("--cell-timeout", type=_positive(float), default=None, metavar="S",
                   help="limite por célula, em segundos (padrão: o mesmo de grade)")
    r.add_argument("--notebook-timeout", type=_positive(float), default=300.0, metavar="S",
                   help="limite por notebook, em segundos (padrão: 300)")
    r.add_argument("--memory", type=_positive(int), default=limits.memory_mib, metavar="MIB",
                   help=f"memória de cada notebook, em MiB (padrão: {limits.memory_mib})")
    r.add_argument("--no-sandbox", action="store_true",
                   help="corrige sem bubblewrap (PERIGOSO: o código dos alunos roda com os seus direitos)")
    f = sub.add_parser("find-id", help="acha a entrega de um código de página de retorno",
                       description="Diz de que aluno e tarefa é o código que o aluno citou (o atual ou "
                                   "um de antes de uma recorreção).")
    _workspace_args(f, solutions=False)
    f.add_argument("code", metavar="CÓDIGO", help="o código de 8 caracteres da página de retorno")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m autograder",
        description="Corretor automático do curso: gera os exercícios, corrige a turma "
                    "inteira numa sandbox, produz feedback e relatório.")
    sub = p.add_subparsers(dest="command", metavar="COMANDO", required=True)
    r = sub.add_parser("release", help="regenera solutions/ e exercises/ (nbgrader generate_assignment)",
                       description="Reescreve solutions/ a partir de autograder/fontes e gera exercises/ "
                                   "com o nbgrader (gradebook temporário).")
    _opt(r, "--check", "--verificar", action="store_true",
         help="não escreve nada: só confere se exercises/ é o que o nbgrader gera")
    _grade_parser(sub)
    _certs_parser(sub)
    _read_side_parsers(sub)
    _deadlines_parser(sub)
    _regrade_parsers(sub)
    return p


def _workspace_ready(args):
    from .core.workspace import Workspace
    from .core.deadlines import update_deadlines
    ws = Workspace(args.workspace)
    if not ws.db_path.exists() or not ws.results_dir.is_dir():
        raise ValueError(f"{ws.root} não tem correções; rode `python -m autograder grade` antes")
    return ws, update_deadlines(ws.root, getattr(args, "deadline", []), getattr(args, "timezone", None))


def _csv_ready(ws, args):
    from .readers.csvfile import csv_format
    from .store.identities import install_roster
    if getattr(args, "roster", None) is not None:
        install_roster(ws, args.roster)
    return csv_format(ws.state, args.sep, args.bom, args.moodle_language)


def _err(e: Exception) -> int:
    print(f"erro: {e}", file=sys.stderr)
    return 2


@dataclass
class Outputs:
    """O que um comando escreve a partir das linhas da turma (calculadas uma vez só)."""

    csvs: bool = False
    feedback: bool = False
    force_feedback: bool = False
    report: bool = False
    exports: bool = False
    similarity_threshold: float | None = None    # None: o guardado no workspace (ou o padrão)
    explain_mistakes: bool | None = None         # None: o guardado no workspace


def publish(ws, deadlines, fmt, assignments, out: Outputs) -> tuple[list, int]:
    """Calcula as linhas da turma UMA vez (`report.collect`) e as entrega a cada escritor:
    grades.csv/questions.csv, as páginas de retorno, o relatório e as exportações (que vêm
    por último: o zip do Moodle leva as páginas). Devolve (linhas, 1 se uma página foi recusada)."""
    from .store.identities import identities
    from .readers.exports import write_exports
    from .readers.report import collect, write_csvs, write_report
    from .readers.gaps import unknown_lateness
    from .readers import class_insight
    rows = collect(ws, deadlines, assignments)
    if (warn := unknown_lateness(rows)):
        print(f"AVISO: {warn}", file=sys.stderr)
    rc = 0
    threshold, explain = class_insight.insight_settings(ws.state, out.similarity_threshold,
                                                        out.explain_mistakes)
    insight = (class_insight.build_insight(ws, rows, threshold)
               if out.report or (out.feedback and explain) else None)
    if out.csvs:
        write_csvs(ws, rows, fmt)
    if out.feedback:
        names = {sid: ident.name for sid, ident in identities(ws).items() if ident.name}
        notes = ({k: class_insight.notes_html(v) for k, v in class_insight.mistake_notes(insight, rows).items()}
                 if explain else None)
        rc = _publish_feedback(ws, rows, names, out.force_feedback, notes)
    if out.report:
        class_insight.write_insight(ws, insight, fmt.sep, fmt.decimal)
        for w in insight.warnings:
            print(f"AVISO: {w}", file=sys.stderr)
        page = write_report(ws, rows, deadlines, class_insight.report_sections(ws, insight))
        print(f"relatório em {page}; notas em {ws.root / 'grades.csv'}", file=sys.stderr)
    if out.exports:
        files = write_exports(ws, rows, fmt)
        print(f"{len(files)} exportação(ões) em {ws.root / 'exportacoes'}", file=sys.stderr)
    return rows, rc


def _publish_feedback(ws, rows, names, force: bool, notes=None) -> int:
    """Gera os retornos e avisa do que não pode ir para os alunos; 1 se alguma página foi recusada."""
    from .readers.feedback import check_nbgrader_feedback, generate_feedback
    written, fresh, refused = generate_feedback(ws, rows, names, force=force, notes=notes)
    print(f"feedback em {ws.root / 'retornos'} ({written} escrito(s), {fresh} já em dia)", file=sys.stderr)
    for r in refused:
        print(f"RECUSADO: {r}", file=sys.stderr)
    bad = check_nbgrader_feedback(ws)
    if bad:
        print(f"AVISO: {len(bad)} página(s) em {ws.root / 'feedback'} (do \"Generate Feedback\" do "
              "formgrader) mostram testes ocultos; não as publique. Os retornos do curso estão em "
              f"{ws.root / 'retornos'}.", file=sys.stderr)
    return 1 if refused else 0


def cmd_feedback(args) -> int:
    from .readers.csvfile import csv_format
    try:
        ws, deadlines = _workspace_ready(args)
    except ValueError as e:
        return _err(e)
    # as exportações vêm junto: o zip de retornos do Moodle leva as páginas novas
    _, rc = publish(ws, deadlines, csv_format(ws.state), args.assignment or None,
                    Outputs(feedback=True, force_feedback=args.force, exports=True,
                            explain_mistakes=args.explain_mistakes))
    return rc


def cmd_report(args) -> int:
    try:
        ws, deadlines = _workspace_ready(args)
        fmt = _csv_ready(ws, args)
    except (ValueError, OSError) as e:
        return _err(e)
    try:
        publish(ws, deadlines, fmt, args.assignment or None,
                Outputs(csvs=True, report=True, exports=True, similarity_threshold=args.similarity_threshold))
    except ValueError as e:
        return _err(e)
    return 0


def cmd_export(args) -> int:
    from .readers.exports import write_exports
    from .readers.report import collect
    try:
        ws, deadlines = _workspace_ready(args)
        fmt = _csv_ready(ws, args)
    except (ValueError, OSError) as e:
        return _err(e)
    for f in write_exports(ws, collect(ws, deadlines, args.assignment or None), fmt):
        print(f)
    return 0


def cmd_deadlines(args) -> int:
    from .core.workspace import Workspace
    from .core.deadlines import update_deadlines
    ws = Workspace(args.workspace)
    try:
        ws.check_outside_repo()
        d = update_deadlines(ws.root, args.deadlines, args.timezone, grace=args.grace,
                             per_day=args.penalty_per_day, zero_after=args.zero_after,
                             no_zero=args.no_zero_after, remove=args.remove)
    except ValueError as e:
        return _err(e)
    from .store.gradebook import set_due_dates
    set_due_dates(ws, d.due)          # o formgrader mostra o prazo novo
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
    from .core.workspace import Workspace
    from .plan.lock import WorkspaceBusy, clean_leftovers, hold
    from .box.sandbox import box_warning
    ws = Workspace(args.workspace, args.solutions)
    root = ws.root
    try:
        ws.check_outside_repo()          # antes da trava: ela cria .autograder/ no workspace
    except ValueError as e:
        return _err(e)
    try:
        with hold(root):
            clean_leftovers(root)
            warning = box_warning()
            if warning:
                print(warning, file=sys.stderr, flush=True)
            return _cmd_grade(args)
    except WorkspaceBusy as e:
        return _err(e)


def grade_options(submissions, *, cell_timeout: float, notebook_timeout: float, **rest):
    """As opções de `run_grade` (plan/runner.py, `GradeOptions`) a partir dos argumentos."""
    from .core.settings import ExecSettings
    from .plan.runner import GradeOptions
    return GradeOptions(submissions=Path(submissions), **rest,
                        settings=ExecSettings(cell_timeout=cell_timeout, notebook_timeout=notebook_timeout))


def _cmd_grade(args) -> int:
    from .core.workspace import Workspace
    from .core.deadlines import load_deadlines
    from .box.sandbox import Limits
    from .plan.runner import GradeError, run_grade, say

    ws = Workspace(args.workspace, args.solutions)
    if args.cell_timeout is None:
        from .core.workspace import repo_config
        args.cell_timeout = float(repo_config().Execute.get("timeout", 30) or 30)
    opts = grade_options(
        args.submissions, assignments=args.assignment, jobs=args.jobs, cell_timeout=args.cell_timeout,
        notebook_timeout=args.notebook_timeout, limits=Limits(memory_mib=args.memory, cpus=args.cpus,
                                                              nproc=args.max_processes, disk_mib=args.disk),
        use_sandbox=not args.no_sandbox, use_zygote=not args.no_zygote, pattern=args.pattern, tz=args.timezone,
        worksheets=args.moodle_worksheet,
        deadlines=args.deadline, redo=args.force, tty=False if args.no_progress else None,
        scheduler=args.scheduler, tls=args.tls, insecure_cluster=args.insecure_cluster,
        client=getattr(args, "client", None), collect=_collect_limits(args))
    try:
        from .readers.csvfile import CsvFormat
        from .store.identities import read_roster
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
    rows, refused = publish(ws, deadlines, fmt, None, Outputs(
        csvs=True, feedback=not args.no_feedback, report=not args.no_report, exports=not args.no_report))
    counts: dict[str, int] = {}
    for row in rows:
        counts[str(row.status)] = counts.get(str(row.status), 0) + 1
    say(f"notas em {ws.root / 'grades.csv'} ({len(rows)} linhas: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) + ")")
    if summary.failures:
        say(f"{len(summary.failures)} entrega(s) não puderam ser corrigidas (erro do corretor, "
            f"veja {ws.state / 'logs' / 'failures.log'}); rode de novo para tentar outra vez:")
        for f in summary.failures:
            say(f"  {f}")
        return 1
    return refused


def cmd_release(args) -> int:
    """`make release` (autograder/release.py), ou só a comparação com --verificar."""
    from .authoring import release
    if not args.check:
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

    from .core.workspace import REPO, REPO_ENV, nbgrader_in_process
    nbgrader_in_process()        # um gradebook novo sem o subprocesso `alembic` (nem o PATH dele)
    os.environ.setdefault(REPO_ENV, str(REPO))     # o nbgrader_config.py do workspace acha o clone
    args = build_parser().parse_args(argv)
    args.client = client
    return {"grade": cmd_grade, "release": cmd_release, "feedback": cmd_feedback,
            "report": cmd_report, "export": cmd_export, "deadlines": cmd_deadlines,
            "certs": cmd_certs, "regrade": cmd_regrade, "find-id": cmd_find_id}[args.command](args)


# ----------------------------------------------------------------------------- recorreção

def _regrade_targets(ws, args) -> dict[str, list[str]]:
    """tarefa -> alunos a corrigir de novo: os pares de --id e o produto de --student por
    --assignment (sem --assignment, as tarefas já corrigidas de cada aluno)."""
    from .readers.regrade import find_id
    from .readers.report import load_results
    results = load_results(ws)
    pairs: set[tuple[str, str]] = set()
    for code in args.id:
        found = find_id(ws, results, code)
        if not found:
            raise ValueError(f"nenhuma entrega com o código {code!r}")
        pairs.update((f.student, f.assignment) for f in found)
    known = {(r.student, r.assignment) for r in results}
    for s in args.student:
        for a in args.assignment or sorted({a for st, a in known if st == s}):
            if (s, a) not in known:
                raise ValueError(f"{s} não tem correção de {a} neste workspace")
            pairs.add((s, a))
    if not args.student and args.assignment and not args.id:
        raise ValueError("diga quem corrigir de novo: --student ALUNO ou --id CÓDIGO")
    if not pairs:
        raise ValueError("diga quem corrigir de novo: --student ALUNO (e --assignment TAREFA) ou --id CÓDIGO")
    out: dict[str, list[str]] = {}
    for s, a in sorted(pairs):
        out.setdefault(a, []).append(s)
    return out


def cmd_regrade(args) -> int:
    """Corrige de novo só as entregas pedidas pelo mesmo caminho de `grade` (com o filtro de
    alunos), grava o que mudou e refaz CSVs, retornos e relatório a partir dos resultados."""
    from datetime import datetime

    from .core.workspace import Workspace, repo_config
    from .plan.lock import WorkspaceBusy, clean_leftovers, hold
    from .box.sandbox import Limits
    from .plan.runner import GradeError, run_grade, say
    from .readers.csvfile import csv_format
    from .readers.regrade import diff_rows, write_regrade_csv
    from .store.result_files import read_result
    try:
        ws, deadlines = _workspace_ready(args)
        ws = Workspace(args.workspace, args.solutions)
        targets = _regrade_targets(ws, args)
    except ValueError as e:
        return _err(e)
    cell_timeout = args.cell_timeout or float(repo_config().Execute.get("timeout", 30) or 30)
    before = {(s, a): read_result(ws.result_path(s, a)) for a, ss in targets.items() for s in ss}
    try:
        with hold(ws.root):
            clean_leftovers(ws.root)
            for a, students in targets.items():
                say(f"recorrigindo {a}: {', '.join(students)}")
                run_grade(ws, grade_options(
                    ws.root / "submitted", assignments=[a], students=students, regrade=True, redo=True,
                    jobs=args.jobs, cell_timeout=cell_timeout, notebook_timeout=args.notebook_timeout,
                    limits=Limits(memory_mib=args.memory), use_sandbox=not args.no_sandbox, tty=False))
    except (WorkspaceBusy, GradeError, ValueError, OSError) as e:
        return _err(e)
    rows = []
    for (s, a), old in before.items():
        new = read_result(ws.result_path(s, a))
        if new is not None:
            rows += diff_rows(old, new)
    path = write_regrade_csv(ws, rows, datetime.now())
    changed = [r for r in rows if r["changed"] == "true"]
    say(f"{len(changed)} de {len(rows)} questão(ões) mudaram; o que mudou está em {path}")
    for r in changed:
        say(f"  {r['student_id']}/{r['assignment']} {r['grade_id']}: {r['before_score'] or '—'} -> "
            f"{r['after_score'] or '—'} de {r['max_score']}")
    _, rc = publish(ws, deadlines, csv_format(ws.state), None,
                    Outputs(csvs=True, feedback=True, report=True, exports=True))
    return rc


def cmd_find_id(args) -> int:
    from .readers.regrade import find_id
    from .readers.report import load_results
    try:
        ws, _ = _workspace_ready(args)
    except ValueError as e:
        return _err(e)
    found = find_id(ws, load_results(ws), args.code)
    if not found:
        print(f"nenhuma entrega com o código {args.code!r}", file=sys.stderr)
        return 1
    for f in found:
        when = "página atual" if f.current else f"de antes de uma recorreção ({f.where})"
        print(f"{f.student}\t{f.assignment}\t{when}")
    return 0
