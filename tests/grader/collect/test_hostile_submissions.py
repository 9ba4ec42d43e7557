"""A coleta de uma turma que tenta enganá-la (collect/), sem kernel: nomes que colidem, arquivo e
pasta com o mesmo nome, homônimos do Moodle, links simbólicos, tamanhos que mentem, arquivos
que não se leem. Nada disso derruba a coleta; cada caso vira uma observação na linha do aluno.
"""

from __future__ import annotations

import io
import os
import re
import struct
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

from autograder.collect import collect
from autograder.collect.submissions import MAX_FILE

TZ = ZoneInfo("America/Sao_Paulo")
A = "90-dobro"
NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def _folder(root: Path, tree: dict[str, bytes]) -> Path:
    for rel, data in tree.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


def test_names_colliding_after_slugging_stay_apart_and_never_crash(tmp_path):
    root = _folder(tmp_path / "e", {
        f"x/{A}/{A}.ipynb": NB, f"x/{A}/a b": b"1", f"x/{A}/a-b/c.txt": b"2",
        f"a b/{A}/{A}.ipynb": NB + b" ", f"a-b/{A}/{A}.ipynb": NB,
        f"José/{A}/{A}.ipynb": NB + b"  ", f"Jose/{A}/{A}.ipynb": NB})
    subs, warns = collect(root, {A: [A]}, TZ)
    got = {s.student: s for s in subs}
    assert len(got) == 5                                   # cinco pastas, cinco alunos
    # o que não é notebook nem é lido: fica em `skipped`, com o tamanho, e a linha diz (issue 42, M2)
    assert list(got["x"].files) == [f"{A}.ipynb"] and got["x"].skipped == {"a b": 1, "a-b/c.txt": 1}
    assert any("além dos notebooks" in n and "a b" in n for n in got["x"].notes), got["x"].notes
    assert got["a-b"].files[f"{A}.ipynb"] == NB            # `a-b` já é um id: fica com ele
    assert got["Jose"].files[f"{A}.ipynb"] == NB
    other = [s for s in got if s.startswith("a-b-")] + [s for s in got if s.startswith("Jose-")]
    assert len(other) == 2                                 # `a b` e `José` ganham um sufixo
    assert {got[o].name for o in other} == {"a b", "José"}


def test_file_and_folder_with_the_same_name_both_kept(tmp_path):
    z = tmp_path / "t.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr(f"x/{A}/{A}.ipynb", NB)
        f.writestr(f"x/{A}/dados", b"arquivo")
        f.writestr(f"x/{A}/dados/parte.csv", b"pasta")
        f.writestr(f"x/{A}/{A}.ipynb/velho.ipynb", b"pasta com nome de notebook")
    subs, _ = collect(z, {A: [A]}, TZ)
    assert subs[0].files == {f"{A}.ipynb": NB}          # só o notebook da raiz é lido
    assert set(subs[0].skipped) == {"dados", "dados/parte.csv", f"{A}.ipynb/velho.ipynb"}


def test_moodle_participant_number_keeps_homonyms_apart(tmp_path):
    z = tmp_path / "moodle.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr(f"Maria Silva_111_assignsubmission_file_/{A}.ipynb", NB)
        f.writestr(f"Maria Silva_222_assignsubmission_file_/{A}.ipynb", NB + b" ")
    subs, _ = collect(z, {A: [A]}, TZ, only=A)
    got = {s.student: s for s in subs}
    assert sorted(got) == ["Maria-Silva_111", "Maria-Silva_222"]
    assert got["Maria-Silva_222"].participant == "222"
    assert got["Maria-Silva_111"].files[f"{A}.ipynb"] == NB


def test_symlinks_are_never_followed_and_the_row_says_why(tmp_path):
    secret = tmp_path / "solutions" / f"{A}.ipynb"
    _folder(tmp_path / "solutions", {f"{A}.ipynb": b"GABARITO"})
    root = _folder(tmp_path / "e", {f"ok/{A}/{A}.ipynb": NB})
    (root / "link" / A).mkdir(parents=True)
    os.symlink(secret, root / "link" / A / f"{A}.ipynb")
    (root / "pasta-link").mkdir()
    os.symlink(tmp_path / "solutions", root / "pasta-link" / A)
    os.symlink(root / "ok", root / "aluno-link")
    subs, _ = collect(root, {A: [A]}, TZ)
    got = {s.student: s for s in subs}
    assert sorted(got) == ["aluno-link", "link", "ok", "pasta-link"]
    for s in ("link", "pasta-link", "aluno-link"):
        assert got[s].files == {}, s
        assert any("link simbólico" in n for n in got[s].notes), got[s].notes
    assert all(b"GABARITO" not in d for s in subs for d in s.files.values())


def _zeros(f: zipfile.ZipFile, name: str, n: int) -> None:
    """`n` bytes de zeros no zip, escritos em pedaços (nunca inteiros na memória do teste)."""
    with f.open(name, "w", force_zip64=True) as w:
        for k in range(0, n, 1 << 20):
            w.write(bytes(min(1 << 20, n - k)))


def _claim_size(data: bytes, name: str, real: int, claimed: int) -> bytes:
    """O zip com o tamanho descomprimido de `name` trocado de `real` para `claimed` nos cabeçalhos
    dele (o local, com o extra zip64, e o do diretório central), sem tocar nos dados comprimidos.
    Quantas vezes o tamanho aparece no cabeçalho local muda com a versão do zipfile (o 3.11.2 o
    escreve também no campo de 4 bytes; o 3.11.7 põe 0xFFFFFFFF ali): troca-se em cada cabeçalho."""
    old, new = real.to_bytes(4, "little"), claimed.to_bytes(4, "little")
    raw = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as f:
        start = f.getinfo(name).header_offset
    n, m = struct.unpack_from("<HH", raw, start + 26)
    spans = [(start, start + 30 + n + m)]
    encoded = name.encode()
    for record in re.finditer(re.escape(b"PK\x01\x02"), data):
        i = record.start()
        n, m, k = struct.unpack_from("<HHH", raw, i + 28)
        if raw[i + 46:i + 46 + n] == encoded:
            spans.append((i, i + 46 + n + m + k))
    assert len(spans) == 2, spans
    for a, b in spans:
        header = raw[a:b]
        assert old in header, (a, b)
        raw[a:b] = header.replace(old, new)
    return bytes(raw)


def test_sizes_are_checked_before_reading_and_a_lying_zip_is_caught(tmp_path):
    z = tmp_path / "bomba.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as f:
        _zeros(f, f"grande/{A}/{A}.ipynb", MAX_FILE + 1024)           # ~50 KiB comprimido
        f.writestr(f"grande/{A}/zeros.bin", b"x")
        _zeros(f, f"mentira/{A}/{A}.ipynb", 8 * 1024 * 1024)
        f.writestr(f"bom/{A}/{A}.ipynb", NB)
    # o zip declara 1.000 bytes para o notebook da mentira (cabeçalho local e diretório central)
    z.write_bytes(_claim_size(z.read_bytes(), f"mentira/{A}/{A}.ipynb", 8 * 1024 * 1024, 1000))
    subs, _ = collect(z, {A: [A]}, TZ)
    got = {s.student: s for s in subs}
    assert sorted(got) == ["bom", "grande", "mentira"]
    assert not got["grande"].files and "descomprime" in got["grande"].refused[0], got["grande"].refused
    assert not got["mentira"].files
    assert any("não pôde ser lido" in n for n in got["mentira"].notes), got["mentira"].notes
    assert list(got["bom"].files) == [f"{A}.ipynb"] and not got["bom"].notes and not got["bom"].refused


def test_an_unreadable_file_becomes_a_note_on_that_students_row(tmp_path):
    root = _folder(tmp_path / "e", {f"a/{A}/{A}.ipynb": NB, f"b/{A}/{A}.ipynb": NB})
    os.mkfifo(root / "b" / A / "cano")
    subs, _ = collect(root, {A: [A]}, TZ)
    got = {s.student: s for s in subs}
    assert sorted(got) == ["a", "b"]
    assert any("não é um arquivo comum" in n for n in got["b"].notes)
