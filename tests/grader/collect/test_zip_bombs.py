"""Zip-bombas e turmas grandes demais (issue 42, M2), sem kernel: a coleta tem teto.

Cenários da revisão de segurança (M2): o zip do Moodle de 626 KiB que escrevia 588 MiB no
workspace; um notebook de zeros abaixo do teto por arquivo; zips de aluno dentro do zip da
turma contando para o mesmo teto; o teto por zip e pela turma recusando quem passa (os maiores
primeiro), com o nome do aluno, e o resto da turma inteiro. Os zips são montados no teste, em
pedaços, com dados que comprimem muito: nada grande passa pela memória.
"""

from __future__ import annotations

import io
import random
import tracemalloc
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from autograder.collect import gather
from autograder.collect.spool import OverCap, Spool
from autograder.core.settings import MIB, CollectLimits

TZ = ZoneInfo("America/Sao_Paulo")
A = "01-pontuacoes"
COURSE = {A: [A]}
NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'
MOODLE = "{name}_{pid}_assignsubmission_file_"


def _zeros(f: zipfile.ZipFile, name: str, n: int) -> None:
    """`n` bytes de zeros no zip, escritos em pedaços de 1 MiB."""
    with f.open(name, "w", force_zip64=True) as w:
        for k in range(0, n, MIB):
            w.write(bytes(min(MIB, n - k)))


def _text(n: int, seed: int = 0) -> bytes:
    """`n` bytes que comprimem umas 10 vezes, como um notebook com saídas parecidas: 'a' com um
    'b' de vez em quando, ao acaso."""
    table = bytes(b"b"[0] if v < 26 else b"a"[0] for v in range(256))
    return random.Random(seed).randbytes(n).translate(table)


def _by(col):
    return {s.name: s for s in col.submissions}


def _spool_bytes(spool: Spool) -> int:
    return sum(p.stat().st_size for p in spool.dir.rglob("*") if p.is_file())


def test_redteam_moodle_zip_writes_only_the_notebooks(tmp_path):
    """M2: o zip do Moodle com três alunos, cada um com o notebook e quatro arquivos de zeros
    abaixo do teto por arquivo: antes, tudo era lido para a memória e espelhado no workspace.
    Agora só os notebooks saem do zip; o resto nem é extraído, e a linha do aluno diz o quê."""
    z = tmp_path / "moodle.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as f:
        for k, name in enumerate(["Ana Lima", "Bruno Reis", "Carla Dias"]):
            folder = MOODLE.format(name=name, pid=100 + k)
            f.writestr(f"{folder}/{A}.ipynb", NB)
            for j in range(4):
                _zeros(f, f"{folder}/zeros{j}.bin", 5 * MIB)
    assert z.stat().st_size < 400 * 1024          # uns 300 KiB com 60 MiB dentro
    spool = Spool(tmp_path / "spool")
    tracemalloc.start()
    try:
        got = gather(z, COURSE, TZ, only=A, spool=spool)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    subs = _by(got)
    assert sorted(subs) == ["Ana Lima", "Bruno Reis", "Carla Dias"]
    for s in subs.values():
        assert dict(s.files) == {f"{A}.ipynb": NB} and not s.refused
        assert s.skipped == {f"zeros{j}.bin": 5 * MIB for j in range(4)}
        assert any("4 arquivo(s) além dos notebooks" in n and "20 MiB" in n for n in s.notes), s.notes
    assert _spool_bytes(spool) == 3 * len(NB)          # no disco: os três notebooks, nada mais
    assert peak < 4 * MIB, peak                        # e nunca a turma na memória
    spool.close()
    assert not spool.dir.exists()


def test_a_notebook_bomb_is_refused_before_extraction_and_only_that_student_loses(tmp_path):
    """Um notebook de 8 MiB de zeros (abaixo do teto de 50 MiB por arquivo): a razão de
    compressão declarada no diretório central o recusa antes de extrair; a linha diz quem e por
    quê, e os outros alunos são coletados."""
    z = tmp_path / "moodle.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as f:
        f.writestr(f"{MOODLE.format(name='Ana Lima', pid=1)}/{A}.ipynb", NB)
        _zeros(f, f"{MOODLE.format(name='Zeca Bomba', pid=2)}/{A}.ipynb", 8 * MIB)
        f.writestr(f"{MOODLE.format(name='Bruno Reis', pid=3)}/{A}.ipynb", NB + b" ")
    spool = Spool(tmp_path / "spool")
    got = gather(z, COURSE, TZ, only=A, spool=spool)
    subs = _by(got)
    assert sorted(subs) == ["Ana Lima", "Bruno Reis", "Zeca Bomba"]
    bomb = subs["Zeca Bomba"]
    assert not bomb.files and len(bomb.refused) == 1
    assert bomb.refused[0].startswith("entrega recusada: ") and "descomprime" in bomb.refused[0]
    assert "--max-ratio" in bomb.refused[0]
    assert any(w.startswith("Zeca Bomba: entrega recusada") for w in got.warnings), got.warnings
    assert dict(subs["Ana Lima"].files) == {f"{A}.ipynb": NB} and not subs["Ana Lima"].refused
    assert dict(subs["Bruno Reis"].files) == {f"{A}.ipynb": NB + b" "}
    assert _spool_bytes(spool) == 2 * len(NB) + 1


def test_the_ratio_cap_has_a_floor_and_can_be_raised(tmp_path):
    """Abaixo de 1 MiB, a razão não conta (um notebook pequeno comprime muito de verdade);
    acima, passa de 100 vezes e é recusado, a menos que o teto suba (`--max-ratio`)."""
    z = tmp_path / "t.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as f:
        _zeros(f, f"pequeno/{A}/{A}.ipynb", 512 * 1024)
        _zeros(f, f"grande/{A}/{A}.ipynb", 3 * MIB)
        f.writestr(f"texto/{A}/{A}.ipynb", _text(3 * MIB))          # ~10:1, um notebook de verdade
    subs = _by(gather(z, COURSE, TZ))
    assert subs["pequeno"].files.size(f"{A}.ipynb") == 512 * 1024 and not subs["pequeno"].refused
    assert subs["texto"].files.size(f"{A}.ipynb") == 3 * MIB and not subs["texto"].refused
    assert not subs["grande"].files and "descomprime" in subs["grande"].refused[0]
    subs = _by(gather(z, COURSE, TZ, limits=CollectLimits(ratio=5000)))
    assert subs["grande"].files.size(f"{A}.ipynb") == 3 * MIB and not subs["grande"].refused


def test_the_zip_cap_refuses_the_largest_submission_first(tmp_path):
    """A soma declarada passa do teto por zip: quem declara mais é recusado (com o nome e o
    teto na linha), até caber; os outros seguem."""
    r = random.Random(1)
    z = tmp_path / "t.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as f:
        for name, kib in [("ana", 100), ("bia", 300), ("caio", 200)]:
            f.writestr(f"{name}/{A}/{A}.ipynb", r.randbytes(kib * 1024))
    got = gather(z, COURSE, TZ, limits=CollectLimits(zip=450 * 1024))
    subs = _by(got)
    assert sorted(subs) == ["ana", "bia", "caio"]
    assert not subs["bia"].files and "--max-zip-mib" in subs["bia"].refused[0]
    assert "t.zip" in subs["bia"].refused[0] and "300 KiB" not in subs["bia"].refused[0]
    assert any(w.startswith("bia: entrega recusada") for w in got.warnings)
    assert subs["ana"].files.size(f"{A}.ipynb") == 100 * 1024 and not subs["ana"].refused
    assert subs["caio"].files.size(f"{A}.ipynb") == 200 * 1024 and not subs["caio"].refused


def test_student_zips_inside_the_class_zip_count_toward_one_class_budget(tmp_path):
    """O Moodle guarda o zip que cada aluno enviou: ele é aberto no lugar (a pasta única do topo
    sai do caminho), os arquivos que não são notebooks nem saem dele, e os notebooks de todos os
    zips somam no mesmo teto da turma: os primeiros cabem, os seguintes são recusados pelo nome."""
    z = tmp_path / "moodle.zip"
    names = [f"Aluno {c}" for c in "ABCDEF"]
    with zipfile.ZipFile(z, "w") as f:
        for k, name in enumerate(names):
            inner = io.BytesIO()
            with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as g:
                g.writestr(f"minha entrega/{A}.ipynb", _text(MIB, seed=k))
                _zeros(g, "minha entrega/dados.bin", 4 * MIB)
            f.writestr(f"{MOODLE.format(name=name, pid=10 + k)}/entrega.zip", inner.getvalue())
    spool = Spool(tmp_path / "spool")
    got = gather(z, COURSE, TZ, only=A, spool=spool, limits=CollectLimits(klass=5 * MIB // 2))
    subs = _by(got)
    assert sorted(subs) == names                                  # ninguém some da turma
    ok = [n for n in names if subs[n].files]
    assert ok == ["Aluno A", "Aluno B"], ok                       # 2 × 1 MiB cabem em 2,5 MiB
    for n in ok:
        assert subs[n].files.size(f"{A}.ipynb") == MIB
        assert subs[n].skipped == {"dados.bin": 4 * MIB}          # nem extraído
    for n in names[2:]:
        assert not subs[n].files and "--max-class-mib" in subs[n].refused[0], subs[n].refused
        assert any(w.startswith(f"{n}: entrega recusada") for w in got.warnings)
    assert _spool_bytes(spool) == 2 * MIB                         # o zip de cada aluno já saiu do disco


def test_the_class_cap_spans_a_folder_of_students(tmp_path):
    """Uma pasta de entregas soma no teto da turma como um zip."""
    for k, name in enumerate(["ana", "bia", "caio"]):
        d = tmp_path / "e" / name / A
        d.mkdir(parents=True)
        (d / f"{A}.ipynb").write_bytes(_text(400 * 1024, seed=k))
        (d / "lixo.bin").write_bytes(b"x" * 1000)
    subs = _by(gather(tmp_path / "e", COURSE, TZ, limits=CollectLimits(klass=900 * 1024)))
    assert [n for n in ("ana", "bia", "caio") if subs[n].files] == ["ana", "bia"]
    assert "--max-class-mib" in subs["caio"].refused[0]
    assert subs["ana"].skipped == {"lixo.bin": 1000}


def test_the_student_cap_sums_every_notebook(tmp_path):
    r = random.Random(2)
    z = tmp_path / "t.zip"
    with zipfile.ZipFile(z, "w") as f:
        for j in range(4):
            f.writestr(f"ana/{A}/rascunho{j}.ipynb", r.randbytes(60 * 1024))
        f.writestr(f"bia/{A}/{A}.ipynb", NB)
    subs = _by(gather(z, COURSE, TZ, limits=CollectLimits(student=200 * 1024)))
    assert not subs["ana"].files and "teto por aluno" in subs["ana"].refused[0]
    assert dict(subs["bia"].files) == {f"{A}.ipynb": NB}


class _Endless(io.RawIOBase):
    """Um arquivo que nunca acaba (o tamanho declarado mentiu)."""

    def readable(self):
        return True

    def readinto(self, b):
        b[:] = bytes(len(b))
        return len(b)


def test_extraction_counts_bytes_and_stops_at_the_cap(tmp_path):
    spool = Spool(tmp_path)
    with pytest.raises(OverCap) as e:
        spool.put_stream(_Endless(), 3 * MIB + 5)
    assert e.value.read == 3 * MIB + 6                 # parou logo depois do teto
    assert _spool_bytes(spool) == 0                    # e não deixou nada no disco
    path, n = spool.put_stream(io.BytesIO(b"abc"), 3)
    assert n == 3 and path.read_bytes() == b"abc"


def test_equal_submissions_over_the_zip_cap_are_refused_from_the_end(tmp_path):
    """Empate no tamanho declarado: quem vem depois no zip sai primeiro, sempre o mesmo."""
    r = random.Random(3)
    z = tmp_path / "t.zip"
    with zipfile.ZipFile(z, "w") as f:
        for name in ["dora", "ana", "caio", "bia"]:
            f.writestr(f"{name}/{A}/{A}.ipynb", r.randbytes(100 * 1024))
    for _ in range(3):
        subs = _by(gather(z, COURSE, TZ, limits=CollectLimits(zip=250 * 1024)))
        assert [n for n in sorted(subs) if subs[n].refused] == ["caio", "dora"]
