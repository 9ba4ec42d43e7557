"""Copia os cadernos de exercícios para uma pasta de trabalho do aluno.

    python -m atencao.copiar_exercicios ~/atencao-exercicios
    python -m atencao.copiar_exercicios ~/atencao-exercicios 01-pontuacoes 02-escala

`exercises/` é versionado (gerado por `make release`): quem resolve os
exercícios dentro do clone edita arquivos do repositório, e um `git pull`
depois briga com as respostas. Este comando copia `exercises/<slug>/` para
`DESTINO/<slug>/` e nunca sobrescreve um arquivo que já existe lá (as respostas
de quem roda de novo, depois de um `git pull` com capítulos novos, ficam).
Funciona igual em Linux, macOS e Windows (só usa a biblioteca padrão).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

EXERCISES = Path(__file__).resolve().parent.parent / "exercises"


@dataclass
class CopyReport:
    """O que a cópia fez: arquivos novos e arquivos que já existiam (mantidos)."""

    copied: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)


def available(source: Path = EXERCISES) -> list[str]:
    """Os slugs com caderno em `source` (01-pontuacoes, ...)."""
    return sorted(p.name for p in source.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def copy_exercises(dest: Path, slugs: list[str] | None = None,
                   source: Path = EXERCISES) -> CopyReport:
    """Copia `source/<slug>/` para `dest/<slug>/` sem sobrescrever nada."""
    if not source.is_dir():
        raise FileNotFoundError(
            f"pasta de exercícios não encontrada: {source}. Este comando copia os cadernos de um "
            "clone do repositório do curso; rode-o a partir da pasta do clone "
            "(python -m atencao.copiar_exercicios DESTINO).")
    dest = dest.expanduser().resolve()
    src = source.resolve()
    if dest == src or src in dest.parents or dest in src.parents:
        raise ValueError(
            f"o destino {dest} fica dentro de {src} (ou o contém): escolha uma pasta fora do "
            "repositório, por exemplo ~/atencao-exercicios, para não editar os arquivos versionados.")
    todos = available(src)
    slugs = todos if not slugs else slugs
    desconhecidos = [s for s in slugs if s not in todos]
    if desconhecidos:
        raise ValueError(f"capítulo(s) sem caderno de exercícios: {', '.join(desconhecidos)}; "
                         f"esperado um de: {', '.join(todos)}")
    report = CopyReport()
    for slug in slugs:
        for f in sorted(p for p in (src / slug).rglob("*") if p.is_file()):
            if ".ipynb_checkpoints" in f.parts:
                continue
            target = dest / slug / f.relative_to(src / slug)
            if target.exists():
                report.kept.append(target)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
            report.copied.append(target)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m atencao.copiar_exercicios",
        description="Copia os cadernos de exercícios do curso para uma pasta sua (nunca "
                    "sobrescreve um arquivo que já existe lá).")
    parser.add_argument("destino", type=Path, help="pasta de trabalho, fora do repositório")
    parser.add_argument("capitulos", nargs="*", metavar="capitulo",
                        help="slugs dos capítulos (por exemplo 01-pontuacoes); sem nenhum, todos")
    args = parser.parse_args(argv)
    try:
        report = copy_exercises(args.destino, args.capitulos)
    except (FileNotFoundError, ValueError) as erro:
        print(f"erro: {erro}", file=sys.stderr)
        return 2
    destino = args.destino.expanduser().resolve()
    print(f"{len(report.copied)} arquivo(s) copiado(s) para {destino}")
    if report.kept:
        print(f"{len(report.kept)} arquivo(s) já existiam e foram mantidos (suas respostas ficam):")
        for p in report.kept:
            print(f"  {p}")
    print(f"Para começar: jupyter lab {destino}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
