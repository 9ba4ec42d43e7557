"""Gera exercises/ (versão do aluno) a partir de solutions/ com o nbgrader.

    python -m autograder.release            # todas as tarefas
    python -m autograder.release 01-pontuacoes

Passos: (1) reescreve solutions/ a partir das fontes em texto
(autograder/fontes/NN-slug.md, MyST); (2) roda `nbgrader generate_assignment` com um
gradebook temporário (nada de banco de dados no repositório); (3) normaliza o
resultado (sem saídas, sem metadados voláteis), para que duas gerações deem
arquivos idênticos byte a byte e um teste possa comparar com o que está
versionado.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

from .. import fontes
from ..core.workspace import nbgrader_in_process

ROOT = Path(__file__).resolve().parents[2]


def nbgrader_env() -> dict[str, str]:
    """Ambiente para chamar o nbgrader: ele roda `alembic` pelo PATH, então o
    bin/ do ambiente virtual precisa estar no PATH mesmo sem `activate`."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def assignments() -> list[str]:
    return sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def normalize(path: Path) -> None:
    """Tira o que muda de uma geração para outra e grava em formato estável.

    nbformat 4.5 com o id de cada célula igual ao seu grade_id (estável entre
    gerações): sem ids, o JupyterLab os cria ao abrir e marca o caderno como
    modificado."""
    nb = nbformat.read(path, as_version=4)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.id = cell.metadata["nbgrader"]["grade_id"]
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
        cell.metadata.pop("collapsed", None)
    nb.nbformat_minor = 5
    nbformat.validate(nb)
    text = json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    path.write_text(text, encoding="utf-8")


def nbgrader_config(**settings: str):
    """A configuração do nbgrader do curso (nbgrader_config.py) com `settings` por cima
    (chaves `Classe.traço`, p.ex. `CourseDirectory.root`)."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    for key, value in settings.items():
        klass, trait = key.split(".")
        setattr(config[klass], trait, value)
    return config


def generate(slugs: list[str], out_root: Path = ROOT) -> list[Path]:
    """Gera exercises/<slug>/ dentro de out_root (o repositório, ou uma cópia para testes).

    Um processo só, pela API do nbgrader (`NbGraderAPI.generate_assignment`, o mesmo
    conversor de `nbgrader generate_assignment`): o nbgrader importado uma vez, não uma por
    tarefa (14 subprocessos levavam 40 s numa máquina parada; assim, ~12 s)."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    written = []
    with tempfile.TemporaryDirectory(prefix="atencao-release-") as tmp:
        config = nbgrader_config(**{
            "CourseDirectory.root": str(ROOT),
            "CourseDirectory.release_directory": str(out_root / "exercises"),
            "CourseDirectory.db_url": f"sqlite:///{Path(tmp) / 'gradebook.db'}",
            "Application.log_level": "WARN",
        })
        api = NbGraderAPI(CourseDirectory(config=config), config=config)
        nbgrader_in_process()        # o gradebook novo sem o subprocesso `alembic` (nem o PATH dele)
        written += _generate_each(api, slugs, out_root)
    return written


def _generate_each(api, slugs: list[str], out_root: Path) -> list[Path]:
    written = []
    for slug in slugs:
        dest = out_root / "exercises" / slug
        if dest.exists():
            shutil.rmtree(dest)
        result = api.generate_assignment(slug, force=True)
        if not result["success"]:
            raise RuntimeError(f"nbgrader generate_assignment {slug} falhou:\n{result.get('log', '')}\n"
                               f"{result.get('error', '')}")
        for nb_path in sorted(dest.glob("*.ipynb")):
            normalize(nb_path)
            written.append(nb_path)
    return written


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    for p in fontes.build_all():
        normalize(p)
        print(f"fonte:   {p.relative_to(ROOT)}")
    slugs = argv or assignments()
    for p in generate(slugs):
        print(f"aluno:   {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
