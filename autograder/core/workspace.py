"""O workspace do professor: um diretório de curso do nbgrader fora do repositório.

    WORKSPACE/
      nbgrader_config.py          para usar o formgrader do nbgrader aqui depois
      gradebook.db                o gradebook final (notas automáticas + manuais)
      source/<tarefa>/            cópia de solutions/<tarefa>/ (fonte com testes ocultos)
      release/<tarefa>/           o que os alunos receberam (gerado pelo nbgrader)
      submitted/<aluno>/<tarefa>/ as entregas, como chegaram (+ timestamp.txt)
      autograded/<aluno>/<tarefa>/ notebooks executados (com os testes ocultos)
      retornos/<aluno>/<tarefa>/  HTML para o aluno (sem os testes ocultos; um arquivo por página)
      feedback/                   do nbgrader ("Generate Feedback" do formgrader): NÃO publicar
      grades.csv, questions.csv   notas por tarefa e por questão
      exportacoes/                tabela larga, planilha e zip de retornos do Moodle, CSV do Canvas
      relatorio/index.html        resumo com gráficos
      prazos.toml                 prazos, fuso e política de atraso (escrito por --deadline e `deadlines`)
      roster.csv                  (opcional) lista da turma: e-mail, matrícula, nº do Moodle
      .autograder/                estado interno: resultados por aluno (retomada),
                                  logs (as pastas dos kernels ficam em $TMPDIR)

O nbgrader faz o que sabe fazer: `generate_assignment` (fonte -> versão do
aluno, células e checksums no gradebook), os pré-processadores de
restauração (OverwriteCells...) e de notas (SaveAutoGrades), e o gradebook.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from traitlets.config import Config

from . import nbmeta
from .results import GradeCell

REPO = Path(__file__).resolve().parents[2]
REPO_ENV = "AUTOGRADER_REPO"        # `python -m autograder` o define para os processos que abre

# nbgrader_config.py do workspace: acha o repositório sem caminho absoluto (o clone pode
# mudar de lugar): pela variável AUTOGRADER_REPO ou pelo pacote `atencao` instalado
# (pip install -e . no .venv do clone). O curso é a pasta do próprio arquivo.
WORKSPACE_CONFIG = """\
# Gerado por `python -m autograder`: o workspace é um curso do nbgrader
# (use o formgrader daqui para as respostas escritas). Não tem caminho absoluto:
# o repositório vem de AUTOGRADER_REPO ou do pacote `atencao` instalado.
import os
import pathlib

c = get_config()  # noqa: F821


def _repositorio():
    if os.environ.get("AUTOGRADER_REPO"):
        return pathlib.Path(os.environ["AUTOGRADER_REPO"])
    try:
        import atencao
    except ImportError:
        return None
    return pathlib.Path(atencao.__file__).resolve().parent.parent


_repo = _repositorio()
if _repo is not None and (_repo / "nbgrader_config.py").is_file():
    load_subconfig(str(_repo / "nbgrader_config.py"))  # noqa: F821
else:
    print("aviso: repositório do curso não encontrado (defina AUTOGRADER_REPO com o caminho do clone)")
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
"""



def repo_config() -> Config:
    """O nbgrader_config.py do repositório (textos no lugar das soluções, marcadores):
    a versão do aluno gerada no workspace tem de ser a mesma de `make release`."""
    from traitlets.config.loader import PyFileConfigLoader
    f = REPO / "nbgrader_config.py"
    if not f.exists():
        return Config()
    return PyFileConfigLoader(f.name, path=str(f.parent)).load_config()


def nbgrader_config(root: Path, db_url: str | None = None) -> Config:
    """Configuração do repositório, com o layout padrão de um curso em `root`."""
    c = Config()
    c.merge(repo_config())
    c.CourseDirectory.root = str(root)
    c.CourseDirectory.source_directory = "source"
    c.CourseDirectory.release_directory = "release"
    if db_url:
        c.CourseDirectory.db_url = db_url
    c.OverwriteCells.add_missing_cells = True
    return c


def _quiet_nbgrader():
    for name in ("NbGraderAPI", "GenerateAssignment", "traitlets", "nbgrader"):
        logging.getLogger(name).setLevel(logging.ERROR)


@functools.cache
def gradebook_schema_head() -> str:
    """A revisão do esquema do gradebook do nbgrader instalado (a última migração dele).

    Ao criar um gradebook novo, o nbgrader (`nbgrader.api.get_alembic_version`) a pergunta a
    um subprocesso `alembic heads`: um Python novo que importa o alembic e o SQLAlchemy (~2 s
    de CPU) e que precisa do `alembic` no PATH. Aqui ela sai das mesmas migrações, que vêm
    com o nbgrader, pela API do alembic neste processo."""
    import nbgrader
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(nbgrader.__file__).parent / "alembic"))
    return ScriptDirectory.from_config(cfg).get_current_head()


def nbgrader_in_process() -> None:
    """O nbgrader deste processo cria gradebooks sem subprocesso (`gradebook_schema_head`)."""
    import nbgrader.api
    nbgrader.api.get_alembic_version = gradebook_schema_head


def tree_hash(path: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        if p.is_file() and ".ipynb_checkpoints" not in p.parts and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(path)).encode())
            h.update(b"\0")
            h.update(p.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


@dataclass
class AssignmentInfo:
    name: str
    notebooks: list[str]                         # nomes sem .ipynb
    source_hash: str
    release: dict[str, object] = field(default_factory=dict)   # nome -> notebook distribuído
    cells: dict[str, list[GradeCell]] = field(default_factory=dict)  # nome -> células de nota


_HEADING = re.compile(r"^#{1,6}\s+(?P<text>.+?)\s*#*\s*$", re.M)
_POINTS = re.compile(r"\s*\([^()]*\bpontos?\b[^()]*\)\s*$")


def _heading(markdown: str) -> str | None:
    """O último título de uma célula markdown, sem o "(3 pontos)" do fim."""
    found = _HEADING.findall(markdown)
    return _POINTS.sub("", found[-1]).strip() if found else None


def cell_titles(release_nb) -> dict[str, str]:
    """grade_id -> título da tarefa a que a célula pertence (o último título markdown
    antes dela, p.ex. "Tarefa 1 — softmax estável"; sem título, o próprio grade_id)."""
    out, title = {}, ""
    for c in release_nb.cells:
        gid = nbmeta.nbgrader_meta(c).get("grade_id")
        if gid:
            out[gid] = title or gid
        if c.cell_type == "markdown":
            title = _heading(c.source) or title
    return out


def grade_cells_of(release_nb) -> list[GradeCell]:
    """As células de nota do notebook distribuído, com o título da tarefa de cada uma."""
    titles = cell_titles(release_nb)
    out = []
    for c in release_nb.cells:
        m = nbmeta.nbgrader_meta(c)
        if m.get("grade") or m.get("task"):
            kind = ("test" if (c.cell_type == "code" and not m.get("solution"))
                    else ("written" if c.cell_type == "markdown" else "code-answer"))
            out.append(GradeCell(m["grade_id"], kind, float(m.get("points", 0)), titles[m["grade_id"]]))
    return out


def temp_base() -> str:
    """Pasta das pastas de kernel: curta (sockets Unix: caminho < 108 bytes)."""
    base = os.environ.get("TMPDIR", "/tmp")
    if len(base) > 40 or not os.path.isdir(base):
        base = "/tmp"
    return base


def run_prefix(root: Path) -> str:
    """Prefixo das pastas de kernel (e das caixas) de um workspace: ag-<6 hex do caminho>-."""
    tag = hashlib.sha256(str(Path(root).resolve()).encode()).hexdigest()[:6]
    return f"ag-{tag}-"


# O estado interno (.autograder/) teve nomes em português até a issue 37. Um workspace antigo
# continua valendo: na primeira vez que um comando o abre, cada nome antigo vira o de agora
# (os resultados gravados, o segredo das entradas ocultas e o resto ficam como estavam).
OLD_STATE_NAMES = {
    "resultados": "results",
    "identidades.json": "identities.json",
    "planilhas.json": "csv_format.json",
    "segredo-oculto": "hidden-secret",
    "logs/falhas.log": "logs/failures.log",
}


def migrate_state(state: Path) -> list[str]:
    """Renomeia os nomes antigos de `state` (.autograder/) para os de agora; devolve os renomeados.
    Um nome novo que já existe nunca é sobrescrito."""
    done = []
    for old, new in OLD_STATE_NAMES.items():
        src, dest = state / old, state / new
        if src.exists() and not dest.exists():
            try:
                src.rename(dest)
            except FileNotFoundError:       # outro processo renomeou antes
                continue
            done.append(old)
    return done


class Workspace:
    def __init__(self, root: Path, solutions: Path | None = None, prefix: str | None = None):
        """`prefix`: o das pastas de kernel; um trabalhador do Dask usa o do workspace do
        professor (worker/tasks.py), para que a limpeza de uma correção interrompida as ache."""
        self.root = Path(root).resolve()
        self.prefix = prefix or run_prefix(self.root)
        self.solutions = Path(solutions).resolve() if solutions else REPO / "solutions"
        self.state = self.root / ".autograder"
        # cache de fontes do matplotlib, feito uma vez por trabalhador (tasks.prebuild_matplotlib_cache)
        # e copiado para o HOME de cada kernel
        self.mpl_cache = self.state / "mplcache"
        self.db_path = self.root / "gradebook.db"
        self.db_url = f"sqlite:///{self.db_path}"
        if self.state.is_dir():
            migrate_state(self.state)

    # -- caminhos -----------------------------------------------------------------
    def source(self, a: str) -> Path:
        return self.root / "source" / a

    def release(self, a: str) -> Path:
        return self.root / "release" / a

    def submitted(self, s: str, a: str) -> Path:
        return self.root / "submitted" / s / a

    def autograded(self, s: str, a: str) -> Path:
        return self.root / "autograded" / s / a

    def feedback(self, s: str, a: str) -> Path:
        """Retornos do projeto; `feedback/` é do "Generate Feedback" do formgrader (com testes ocultos)."""
        return self.root / "retornos" / s / a

    @property
    def results_dir(self) -> Path:
        """`.autograder/results/<tarefa>/<aluno>.json` (store/result_files.py grava e lê)."""
        return self.state / "results"

    def result_path(self, s: str, a: str) -> Path:
        return self.results_dir / a / f"{s}.json"

    def run_dir(self) -> Path:
        """Pasta nova e curta para um kernel (sockets Unix: caminho < 108 bytes)."""
        import tempfile

        return Path(tempfile.mkdtemp(prefix=self.prefix, dir=temp_base()))

    @property
    def kernels_dir(self) -> Path:
        return self.state / "kernelspecs"

    # -- verificações ---------------------------------------------------------------
    def check_outside_repo(self, repo: Path = REPO) -> None:
        for forbidden in {repo.resolve(), self.solutions}:
            try:
                self.root.relative_to(forbidden)
            except ValueError:
                continue
            raise ValueError(f"o workspace ({self.root}) fica dentro de {forbidden}; "
                             "escolha uma pasta fora do repositório (as notas não vão para o git)")

    def available_assignments(self) -> list[str]:
        if not self.solutions.is_dir():
            return []
        return sorted(p.name for p in self.solutions.iterdir()
                      if p.is_dir() and any(p.glob("*.ipynb")))

    # -- preparação -------------------------------------------------------------------
    def prepare(self, assignments: list[str]) -> dict[str, AssignmentInfo]:
        """Copia as fontes e roda `nbgrader generate_assignment` onde mudaram."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.state.mkdir(exist_ok=True)
        cfg_file = self.root / "nbgrader_config.py"
        if not cfg_file.exists() or cfg_file.read_text(encoding="utf-8") != WORKSPACE_CONFIG:
            cfg_file.write_text(WORKSPACE_CONFIG, encoding="utf-8")
        known_file = self.state / "fontes.json"
        known = json.loads(known_file.read_text()) if known_file.exists() else {}
        todo = []
        for a in assignments:
            src = self.solutions / a
            if not src.is_dir():
                raise ValueError(f"tarefa '{a}' não existe em {self.solutions}")
            h = tree_hash(src)
            if known.get(a) != h or not self.release(a).is_dir():
                todo.append((a, h))
        if todo:
            from nbgrader.apps import NbGraderAPI
            from nbgrader.coursedir import CourseDirectory
            _quiet_nbgrader()
            nbgrader_in_process()
            cfg = nbgrader_config(self.root, self.db_url)
            api = NbGraderAPI(coursedir=CourseDirectory(config=cfg), config=cfg)
            for a, h in todo:
                shutil.rmtree(self.source(a), ignore_errors=True)
                shutil.copytree(self.solutions / a, self.source(a),
                                ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
                r = api.generate_assignment(a, force=True, create=True)
                if not r.get("success"):
                    raise RuntimeError(f"o nbgrader não gerou a tarefa '{a}':\n"
                                       f"{r.get('error') or ''}\n{r.get('log') or ''}")
                known[a] = h
                known_file.write_text(json.dumps(known, indent=1, sort_keys=True))
        return {a: self.info(a, known[a]) for a in assignments}

    def info(self, a: str, source_hash: str) -> AssignmentInfo:
        names = sorted(p.stem for p in self.release(a).glob("*.ipynb"))
        info = AssignmentInfo(a, names, source_hash)
        for n in names:
            nb = nbformat.read(self.release(a) / f"{n}.ipynb", as_version=4)
            info.release[n] = nb
            info.cells[n] = grade_cells_of(nb)
        return info
