"""O capítulo 8 construído diz o que os seus números dizem (revisão de 2026-12-05, N1, N2, N4).

- nenhum aviso de corpus velho: a página diz de que instantâneo (nome e data) o corpus é;
- a tabela de fontes só tem os nomes de atencao.text.SOURCE_KINDS (nada de README);
- o veredito da decodificação gulosa bate com o texto que a página imprime: se ele diz
  que ela repete um trecho, o trecho está repetido no fim da saída impressa; se diz que
  não há laço, o detector não acha laço nos tokens da saída impressa.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "_build" / "html" / "book" / "parte1" / "08-modelo-de-linguagem.html"


@pytest.fixture(scope="module")
def page():
    if not PAGE.exists():
        pytest.fail("_build/html sem o capítulo 8: rode `make book` (make test faz isso antes do pytest)")
    from bs4 import BeautifulSoup

    return BeautifulSoup(PAGE.read_text(encoding="utf-8"), "html.parser")


def _prose(page) -> str:
    return " ".join(p.get_text(" ") for p in page.select("section p, section li"))


def _outputs(page) -> list[str]:
    return [pre.get_text() for pre in page.select("div.cell_output pre")]


def test_no_stale_notice_and_the_snapshot_is_named(page):
    from atencao import lm

    texto = " ".join(_prose(page).split())
    assert "mudou depois" not in texto and "make weights congela o texto novo" not in texto
    corpus = lm.load_corpus()
    assert corpus.name in texto
    ano, mes, dia = corpus.date.split("-")
    assert f"{int(dia)} de " in texto and ano in texto


def test_source_table_names_only_course_prose(page):
    from atencao.text import SOURCE_KINDS

    saida = next(o for o in _outputs(page) if "parágrafos" in o and "caracteres" in o)
    linha = re.compile(r"^\s*(\S.*?)\s{2,}[\d.]+\s{2,}[\d.]+\s+\d+%$")
    nomes = {m.group(1) for ln in saida.splitlines() if (m := linha.match(ln))}
    assert nomes == {nome for _, nome in SOURCE_KINDS}, nomes


def test_greedy_verdict_matches_the_printed_continuation(page):
    from atencao import lm

    tok = lm.load_lm()[0]
    saida = next(o for o in _outputs(page) if "gulosa com e sem cache" in o)
    linhas = saida.split("gulosa:", 1)[1].split("gulosa com e sem cache")[0]
    impresso = " ".join(x.strip() for x in linhas.splitlines())          # textwrap.fill desfeito
    texto = " ".join(_prose(page).split())
    m = re.search(r"entra em laço: repete «(.+?)», um trecho de (\d+) tokens", texto)
    if m:
        trecho = m.group(1)
        assert impresso.count(trecho) >= 2, (trecho, impresso)
        fim = impresso[-3 * len(trecho):]
        assert trecho in fim or trecho.split()[0] in fim, (trecho, impresso[-120:])
    else:
        assert "não termina num laço" in texto
        ids = tok.encode(impresso.replace(" ¶ ", "\n"))
        assert lm.repeated_tail(ids) is None, impresso
