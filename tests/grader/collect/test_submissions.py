"""A coleta das entregas (collect/), sem kernel: uma coleta que nenhum aluno dirige.

Cenários da revisão de segurança (C5, H4, H5): pastas dentro de uma entrega do Moodle,
colisões de nomes, zips do Moodle sem o nome da tarefa.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

from autograder.collect import collect, gather

SP = ZoneInfo("America/Sao_Paulo")
A1, A2 = "01-pontuacoes", "10-softmax-online"
COURSE = {A1: [A1], A2: [A2]}
NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def _zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as f:
        for name, data in entries.items():
            f.writestr(name, data)
    return path


def _by_student(subs):
    return {s.student: s for s in subs}


def test_folders_inside_a_moodle_submission_never_name_another_student(tmp_path):
    """C5: pastas `Pedro Alves_333/<tarefa>/…` dentro da entrega da Maria continuam sendo da Maria."""
    z = _zip(tmp_path / "m.zip", {
        f"Joao Souza_222_assignsubmission_file_/{A1}.ipynb": NB,
        f"Maria Silva_111_assignsubmission_file_/Pedro Alves_333/{A1}/{A1}.ipynb": b"pedro",
        f"Maria Silva_111_assignsubmission_file_/Joao-Souza_222/{A1}/{A1}.ipynb": b"vazio",
        f"Maria Silva_111_assignsubmission_file_/{A1}.ipynb": NB,
    })
    subs = _by_student(collect(z, COURSE, SP, only=A1)[0])
    assert sorted(subs) == ["Joao-Souza_222", "Maria-Silva_111"]
    assert subs["Joao-Souza_222"].files == {f"{A1}.ipynb": NB}          # o Joao de verdade fica com o id
    maria = subs["Maria-Silva_111"]
    assert maria.participant == "111" and maria.name == "Maria Silva"
    # as pastas de dentro ficam com a Maria (e, sem ser notebooks da raiz, nem são extraídas)
    assert set(maria.files) == {f"{A1}.ipynb"}
    assert set(maria.skipped) == {f"Pedro Alves_333/{A1}/{A1}.ipynb", f"Joao-Souza_222/{A1}/{A1}.ipynb"}


def test_nested_assignment_folder_stays_with_the_outer_student(tmp_path):
    """Numa pasta `<aluno>/<tarefa>/`, uma `<outro>/<tarefa>/` de dentro é do aluno de fora."""
    z = _zip(tmp_path / "f.zip", {f"turma/ana/{A1}/{A1}.ipynb": NB,
                                  f"turma/ana/{A1}/bruno/{A1}/{A1}.ipynb": b"x"})
    subs = _by_student(collect(z, COURSE, SP)[0])
    assert sorted(subs) == ["ana"]
    assert set(subs["ana"].files) == {f"{A1}.ipynb"} and set(subs["ana"].skipped) == {f"bruno/{A1}/{A1}.ipynb"}


def test_id_collision_marks_the_rows_and_never_aborts(tmp_path):
    """H4: `Ana_7/<tarefa>/…` ao lado da aluna do Moodle Ana (participante 7): os dois ficam,
    com ids diferentes, e as duas linhas dizem por quê."""
    z = _zip(tmp_path / "m.zip", {
        f"Ana_7_assignsubmission_file_/{A1}.ipynb": NB,
        f"Ana_7/{A1}/{A1}.ipynb": b"outro",
    })
    subs = _by_student(collect(z, COURSE, SP, only=A1)[0])
    assert len(subs) == 2 and "Ana_7" in subs
    assert subs["Ana_7"].participant == "7"                  # quem tem participante fica com o id
    other = next(s for k, s in subs.items() if k != "Ana_7")
    assert other.student.startswith("Ana_7-") and other.participant is None
    for s in subs.values():
        assert any("id repetido" in n for n in s.notes), s.notes


def test_moodle_zip_without_assignment_grades_what_the_notebook_names_say(tmp_path):
    """H5: sem --assignment nem prazo, `…_assignsubmission_file_/10-softmax-online.ipynb` é da 10."""
    z = _zip(tmp_path / "m.zip", {
        f"Maria Silva_101_assignsubmission_file_/{A2}.ipynb": NB,
        f"Joao Souza_222_assignsubmission_file_/{A1}/{A1}.ipynb": NB,
    })
    subs = {(s.student, s.assignment): s for s in collect(z, COURSE, SP)[0]}
    assert subs[("Maria-Silva_101", A2)].files == {f"{A2}.ipynb": NB}
    assert subs[("Joao-Souza_222", A1)].files == {f"{A1}.ipynb": NB}


def test_moodle_zip_with_unnamed_notebooks_is_undecided_not_dropped(tmp_path):
    """H5: um notebook que não diz a tarefa fica em `undecided` (o comando para antes de corrigir)."""
    z = _zip(tmp_path / "m.zip", {f"Maria Silva_202_assignsubmission_file_/meu caderno (1).ipynb": NB})
    got = gather(z, COURSE, SP)
    assert got.undecided == [f"m.zip:Maria Silva_202_assignsubmission_file_/meu caderno (1).ipynb"]


def test_flat_moodle_zip_keeps_the_participant_number(tmp_path):
    """Zip do Moodle baixado sem pastas: `Nome_101_assignsubmission_file_arquivo.ipynb`."""
    z = _zip(tmp_path / "m.zip", {
        f"Maria Silva_101_assignsubmission_file_{A2}.ipynb": NB,
        "Maria Silva_202_assignsubmission_file_meu caderno (1).ipynb": NB,
    })
    subs = _by_student(collect(z, COURSE, SP, only=A2)[0])
    assert sorted(subs) == ["Maria-Silva_101", "Maria-Silva_202"]
    assert subs["Maria-Silva_101"].files == {f"{A2}.ipynb": NB}
    assert subs["Maria-Silva_202"].files == {"meu caderno (1).ipynb": NB}
    assert (subs["Maria-Silva_202"].participant, subs["Maria-Silva_202"].name) == ("202", "Maria Silva")


def test_moodle_folder_pattern_is_written_once():
    root = Path(__file__).resolve().parents[3] / "autograder"
    hits = [p.relative_to(root).as_posix() for p in root.rglob("*.py") if "assignsubmission_" in p.read_text(encoding="utf-8")
            and "re.compile" in p.read_text(encoding="utf-8")
            and any("assignsubmission_" in line and "re.compile" in line
                    for line in p.read_text(encoding="utf-8").splitlines())]
    assert hits == ["collect/submissions.py"]
