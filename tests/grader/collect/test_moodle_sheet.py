"""Os horários de uma turma do Moodle, da planilha de avaliação do próprio Moodle
(collect/moodle_sheet.py), sem kernel (issue 41: o zip não traz horário nenhum)."""

from __future__ import annotations

import zipfile
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from autograder.collect import collect
from autograder.collect.moodle_sheet import apply_times, parse_moodle_time, read_worksheet
from autograder.readers.exports import MOODLE_STRINGS

SP = ZoneInfo("America/Sao_Paulo")
A = "04-softmax"
NB = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'

# como o Moodle baixa a planilha numa interface em português (colunas e `userdate` do pt_br)
PT = ("\ufeffIdentificador,\"Nome completo\",\"Endereço de email\",Status,Nota,\"Nota máxima\","
      "\"Nota pode ser alterada\",\"Última modificação (envio)\",\"Última modificação (nota)\","
      "\"Comentários de feedback\"\n"
      "Participante101,\"Ana Beatriz Souza\",ana@x.br,\"Enviado para avaliação\",,11,Sim,"
      "\"terça-feira, 10 mar 2026, 21:40\",-,\n"
      "Participante105,\"Élise Müller-Gonçalves\",elise@x.br,\"Enviado para avaliação\",,11,Sim,"
      "\"quinta-feira, 12 mar 2026, 10:15\",-,\n"
      "Participante109,\"Fernanda Lima\",fe@x.br,\"Nenhum envio\",,11,Sim,-,-,\n")
EN = ("Identifier,\"Full name\",\"Email address\",Status,Grade,\"Maximum Grade\",\"Grade can be changed\","
      "\"Last modified (submission)\",\"Last modified (grade)\",\"Feedback comments\"\n"
      "\"Participant 101\",\"Ana Beatriz Souza\",ana@x.br,\"Submitted for grading\",,11,Yes,"
      "\"Tuesday, 10 March 2026, 9:40 PM\",-,\n"
      "\"Participant 105\",\"Élise\",e@x.br,\"Submitted for grading\",,11,Yes,"
      "\"Thursday, 12 March 2026, 12:05 AM\",-,\n")


def test_the_worksheet_columns_are_the_ones_our_export_writes():
    """Os nomes que a leitura procura são os mesmos que readers/exports.py escreve (os do Moodle)."""
    from autograder.collect import moodle_sheet as m
    for t in MOODLE_STRINGS.values():
        assert t.identifier in m.IDENTIFIER and t.modified_submission in m.SUBMITTED_AT
        assert t.full_name in m.FULL_NAME and t.hidden_user.strip() in ("Participante", "Participant")


@pytest.mark.parametrize("text, expected", [
    ("terça-feira, 10 mar 2026, 21:40", datetime(2026, 3, 10, 21, 40)),
    ("quinta-feira, 12 mar. 2026, 10:15", datetime(2026, 3, 12, 10, 15)),          # abreviação do ICU
    ("12 de março de 2026 às 10:15", datetime(2026, 3, 12, 10, 15)),
    ("sábado, 5 dez 2026, 23:59", datetime(2026, 12, 5, 23, 59)),
    ("Thursday, 12 March 2026, 12:05 AM", datetime(2026, 3, 12, 0, 5)),
    ("Tuesday, 10 March 2026, 9:40 PM", datetime(2026, 3, 10, 21, 40)),
    ("12/03/2026 10:15", datetime(2026, 3, 12, 10, 15)),
    ("2026-03-12 10:15:30", datetime(2026, 3, 12, 10, 15, 30)),
])
def test_moodle_times_in_both_languages_read_in_the_course_zone(text, expected):
    assert parse_moodle_time(text, SP) == expected.replace(tzinfo=SP)


def test_no_submission_has_no_time_and_nonsense_is_refused():
    assert parse_moodle_time("-", SP) is None and parse_moodle_time("", SP) is None
    with pytest.raises(ValueError, match="horário que não sei ler"):
        parse_moodle_time("ontem à noite", SP)


@pytest.mark.parametrize("text", [PT, EN])
def test_worksheet_gives_each_participants_submission_time(tmp_path, text):
    f = tmp_path / "planilha.csv"
    f.write_text(text, encoding="utf-8")
    sheet = read_worksheet(f, SP)
    assert sheet.times["101"] == datetime(2026, 3, 10, 21, 40, tzinfo=SP)
    assert sheet.times["105"].date() == datetime(2026, 3, 12).date()
    assert sheet.names["101"] == "Ana Beatriz Souza"
    if text is PT:
        assert sheet.times["109"] is None                  # "Nenhum envio": sem horário


def test_a_file_that_is_not_the_worksheet_says_what_is_missing(tmp_path):
    f = tmp_path / "turma.csv"
    f.write_text("student_id,name\nana,Ana\n", encoding="utf-8")
    with pytest.raises(ValueError, match="Última modificação \\(envio\\)") as e:
        read_worksheet(f, SP)
    assert "Baixar planilha de avaliação" in str(e.value)


def test_times_reach_the_zips_submissions_by_participant_number(tmp_path):
    z = tmp_path / "Tópicos-04-softmax-12346.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("Ana Beatriz Souza_101_assignsubmission_file_04-softmax.ipynb", NB)
        zf.writestr("Élise Müller-Gonçalves_105_assignsubmission_file_04-softmax.ipynb", NB)
        zf.writestr("Carla Dias_106_assignsubmission_file_04-softmax.ipynb", NB)
    subs, _ = collect(z, {A: [A]}, SP, only=A)
    assert all(s.timestamp is None for s in subs)            # o zip do Moodle não traz horário
    f = tmp_path / "planilha.csv"
    f.write_text(PT, encoding="utf-8")
    warns = apply_times(read_worksheet(f, SP), subs, A)
    got = {s.participant: s.timestamp for s in subs}
    assert got["105"] == datetime(2026, 3, 12, 10, 15, tzinfo=SP) and got["101"].hour == 21
    assert got["106"] is None
    assert warns == [f"Carla Dias (participante 106)/{A}: não está em planilha.csv; sem horário de entrega"]
