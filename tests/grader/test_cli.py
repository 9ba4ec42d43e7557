"""A linha de comando (autograder/cli.py), sem kernel: as opções em inglês, os nomes antigos em
português ainda aceitos (escondidos na ajuda), e um zip que não diz a tarefa para antes de
corrigir.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from autograder.core.workspace import Workspace

A2 = "10-softmax-online"
COURSE = {"01-pontuacoes": ["01-pontuacoes"], A2: [A2]}
NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def _zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as f:
        for name, data in entries.items():
            f.writestr(name, data)
    return path


def _parse(*argv):
    from autograder.cli import build_parser
    return build_parser().parse_args(list(argv))


def test_flags_are_english_and_the_portuguese_spellings_still_work():
    english = _parse("grade", "e/", "--workspace", "w", "--deadline", "a=2025-01-01 10:00", "--timezone",
                     "UTC", "--memory", "512", "--cpus", "0.5", "--max-processes", "9", "--disk", "64", "--pattern", "x",
                     "--cell-timeout", "3", "--notebook-timeout", "9", "--force", "--no-feedback",
                     "--no-report", "--no-progress", "--no-sandbox", "--solutions", "s")
    portuguese = _parse("grade", "e/", "--workspace", "w", "--prazo", "a=2025-01-01 10:00", "--fuso",
                        "UTC", "--memoria", "512", "--nucleos", "0,5", "--processos", "9", "--disco", "64", "--padrao", "x",
                        "--tempo-celula", "3", "--tempo-notebook", "9", "--refazer", "--sem-feedback",
                        "--sem-relatorio", "--sem-barra", "--sem-sandbox", "--solucoes", "s")
    assert vars(english) == vars(portuguese)
    assert english.cpus == 0.5 and _parse("grade", "e/", "--workspace", "w").cpus == 1.0
    from autograder.box.sandbox import Limits
    from autograder.cli import grade_options
    assert grade_options(Path("e"), cell_timeout=1, notebook_timeout=1,
                         limits=Limits(memory_mib=64, nproc=4, disk_mib=8, cpus=english.cpus)).limits.cpus == 0.5
    assert english.memory == 512 and english.max_processes == 9 and english.deadline == ["a=2025-01-01 10:00"]
    both = _parse("grade", "e/", "--workspace", "w", "--deadline", "a=1", "--prazo", "b=2")
    assert both.deadline == ["a=1", "b=2"]
    d_en = _parse("deadlines", "--workspace", "w", "--grace", "15", "--penalty-per-day", "10",
                  "--zero-after", "7", "--remove", "x", "--timezone", "UTC")
    d_pt = _parse("deadlines", "--workspace", "w", "--tolerancia", "15", "--multa-por-dia", "10",
                  "--zero-apos", "7", "--remover", "x", "--fuso", "UTC")
    assert vars(d_en) == vars(d_pt)
    assert _parse("release", "--verificar").check and _parse("feedback", "--workspace", "w", "--refazer").force


def test_help_shows_only_the_english_flags_in_portuguese(capsys):
    with pytest.raises(SystemExit):
        _parse("grade", "--help")
    text = capsys.readouterr().out
    assert "--memory MIB" in text and "--deadline TAREFA=DATA" in text and "opções:" in text
    for old in ("--memoria", "--prazo", "--processos", "--disco", "--padrao", "--sem-sandbox", "--refazer"):
        assert old not in text, old


def test_grading_a_zip_whose_notebooks_do_not_say_the_assignment_stops_before_grading(tmp_path):
    """H5 no comando: sem --assignment nem prazo, um caderno que não diz a tarefa para tudo
    com um erro em português (antes de preparar ou corrigir qualquer coisa)."""
    from autograder.box.sandbox import Limits
    from autograder.cli import grade_options
    from autograder.plan.runner import GradeError, run_grade
    sol = tmp_path / "solucoes"
    for a in COURSE:
        (sol / a).mkdir(parents=True)
        (sol / a / f"{a}.ipynb").write_bytes(NB)
    z = _zip(tmp_path / "m.zip", {f"Maria Silva_101_assignsubmission_file_/{A2}.ipynb": NB,
                                  "Maria Silva_202_assignsubmission_file_/meu caderno (1).ipynb": NB})
    ws = Workspace(tmp_path / "ws", sol)
    opts = grade_options(z, cell_timeout=1, notebook_timeout=1, limits=Limits(memory_mib=64, nproc=4, disk_mib=8),
                         use_sandbox=False)
    with pytest.raises(GradeError, match=r"(?s)1 arquivo\(s\) de entrega sem tarefa conhecida.*meu caderno "
                                         r"\(1\)\.ipynb.*--assignment TAREFA.*Nada foi corrigido"):
        run_grade(ws, opts)
    assert not (ws.root / "release").exists()              # nada foi preparado
