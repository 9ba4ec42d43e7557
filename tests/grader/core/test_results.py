"""O contrato de resultados (core/results.py): as situações só existem lá, e as partes de um
teste e as células de nota são objetos, não dicionários soltos."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat

from autograder.core.results import GradeCell, QuestionResult
from autograder.core.results import TestPart as Part

PKG = Path(__file__).resolve().parents[3] / "autograder"


def test_status_names_and_their_portuguese_live_only_in_results():
    """Fora de results.py, nenhuma situação é uma string solta: nem comparada, nem gravada
    como "status"; e os nomes em português (STATUS_PT) só existem lá."""
    from autograder.core.results import Status
    values = {s.value for s in Status}
    for path in sorted(PKG.rglob("*.py")):
        name = path.relative_to(PKG).as_posix()
        # o lado da leitura, o planejador e a linha de comando (os kernels têm o seu próprio "ok")
        if name == "core/results.py" or not (name == "cli.py" or name.startswith(("readers/", "store/", "plan/",
                                                                                   "core/"))):
            continue
        text = path.read_text(encoding="utf-8")
        assert "STATUS_PT" not in text, name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Compare):
                consts = [n.value for n in [node.left, *node.comparators] if isinstance(n, ast.Constant)]
                assert not set(consts) & values, (name, node.lineno, consts)
            if isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values):
                    if isinstance(k, ast.Constant) and k.value == "status":
                        assert not (isinstance(v, ast.Constant) and v.value in values), (name, node.lineno)


def test_test_parts_survive_the_cell_metadata():
    cell = nbformat.v4.new_code_cell("x")
    parts = [Part(hidden=False, outputs=2, passed=True, ran=True), Part(hidden=True, ran=False)]
    cell.metadata["autograder"] = Part.to_metadata(parts)
    back = nbformat.reads(nbformat.writes(nbformat.v4.new_notebook(cells=[cell])), as_version=4)
    assert Part.from_metadata(back.cells[0].metadata["autograder"]) == parts
    assert Part.from_metadata(None) == [] and Part.from_metadata({}) == []


def test_a_question_without_an_automatic_grade_starts_at_zero():
    q = QuestionResult.zero(GradeCell("test_f", "test", 2.0, "Tarefa 1 — f"))
    assert (q.grade_id, q.kind, q.max_score, q.title, q.score) == ("test_f", "test", 2.0, "Tarefa 1 — f", 0.0)
    assert q.visible_passed is None and q.hidden_passed is None and not q.needs_manual
