"""A turma vista de cima e a recorreção (issue 40), pela linha de comando, numa turma de três.

A tarefa de cenarios.py (`90-dobro`), com as respostas:

- ana: certa, com `soma_linhas` escrita com laços;
- carla: a de ana disfarçada (nomes trocados, comentários trocados, código morto) e um `dobro`
  que passa na parte visível e falha na oculta (números negativos);
- bruno: errada nas duas (a parte visível falha).

Corrige uma vez; o relatório tem a semelhança (o par ana–carla, com os trechos lado a lado),
os erros da turma (com a seção a reler) e os CSVs; `feedback --explain-mistakes` põe o
parágrafo na página de quem errou; nada do teste oculto (o `SECRET` de cenarios.py, que está
no código e nas mensagens dos testes ocultos) aparece no relatório, nos CSVs ou nas páginas.
Depois o teste visível de `dobro` muda na fonte e `regrade` corrige de novo ana (por
`--student`) e bruno (pelo código da página dele): só a linha de bruno nesse teste muda, o
arquivo de recorreção diz isso, o resultado de carla fica byte a byte igual e o relatório
mostra a recorreção. A célula de teste antiga que ana e bruno entregaram é a da versão
anterior da tarefa: é atualizada sem marcar a linha como "célula de teste alterada".
"""

from __future__ import annotations

import csv
import re
import shutil

import nbformat
import pytest

import cenarios
from autograder.core import nbmeta
from autograder.core.workspace import Workspace
from grading import LIMITS, SLUG, clone_prepared, needs_bwrap, read_csv, run_cli

ANSWERS = cenarios.INSIGHT_ANSWERS
OLD_TEST = cenarios.INSIGHT_OLD_TEST
NEW_TEST = cenarios.INSIGHT_NEW_TEST


@pytest.fixture(scope="module")
def classe(arquivos, tmp_path_factory):
    base = tmp_path_factory.mktemp("insight")
    sol = base / "solucoes"
    shutil.copytree(arquivos["sol"], sol)
    ws = Workspace(clone_prepared(arquivos["ws"], base / "ws"), sol)
    release = nbformat.read(ws.release(SLUG) / f"{SLUG}.ipynb", as_version=4)
    subs = base / "entregas"
    for student, answers in ANSWERS.items():
        d = subs / student / SLUG
        d.mkdir(parents=True)
        nbformat.write(cenarios._solve(release, answers), d / f"{SLUG}.ipynb")
    run_cli("grade", subs, "--workspace", ws.root, "--solutions", sol, "--assignment", SLUG, *LIMITS)
    return {"ws": ws, "sol": sol}


def _all_text(root) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(root.rglob("*"))
                     if p.is_file() and p.suffix in (".html", ".csv"))


@needs_bwrap
def test_relatorio_semelhanca_erros_e_retornos_sem_nada_oculto(classe):
    ws = classe["ws"]
    run_cli("report", "--workspace", ws.root, "--similarity-threshold", "0,5")
    run_cli("feedback", "--workspace", ws.root, "--explain-mistakes")
    page = (ws.root / "relatorio" / "index.html").read_text(encoding="utf-8")
    assert "Semelhança entre respostas: 90-dobro" in page and "não</strong> prova cópia" in page
    similar = page.split('class="insight-similarity"')[1].split("</section>")[0]
    assert "<summary>ana e carla: " in similar                       # o par disfarçado, achado
    assert "bruno" not in similar                                    # bruno não é par de ninguém
    assert "Os erros da turma: 90-dobro" in page and "Reler: Tarefa de teste do autograder" in page
    assert "falhou na parte oculta" in page                           # a de carla, sem detalhe
    with open(ws.root / "relatorio" / "similarity.csv", encoding="utf-8") as f:
        pairs = list(csv.DictReader(f, delimiter=","))
    assert [(r["student_a"], r["student_b"]) for r in pairs] == [("ana", "carla")]
    for name in ("mistakes.csv", "pass_rates.csv", "tasks.csv"):
        assert (ws.root / "relatorio" / name).is_file()
    bruno = (ws.feedback("bruno", SLUG) / f"{SLUG}.html").read_text(encoding="utf-8")
    carla = (ws.feedback("carla", SLUG) / f"{SLUG}.html").read_text(encoding="utf-8")
    ana = (ws.feedback("ana", SLUG) / f"{SLUG}.html").read_text(encoding="utf-8")
    assert "Sobre os seus erros" in bruno and "o teste visível falhou" in bruno
    assert "Sobre os seus erros" in carla and "falhou na parte oculta" in carla
    assert "Sobre os seus erros" not in ana
    assert re.search(r'data-request-id="[0-9a-f]{8}"', ana)
    # nada do teste oculto em lugar nenhum: relatório, CSVs, páginas
    for text in (_all_text(ws.root / "relatorio"), _all_text(ws.root / "retornos"),
                 (ws.root / "grades.csv").read_text(encoding="utf-8")):
        assert cenarios.SECRET not in text


@needs_bwrap
def test_recorrecao_depois_de_mudar_um_teste_so_muda_a_linha_afetada(classe):
    ws, sol = classe["ws"], classe["sol"]
    carla_before = ws.result_path("carla", SLUG).read_bytes()
    bruno_page = (ws.feedback("bruno", SLUG) / f"{SLUG}.html").read_text(encoding="utf-8")
    code = re.search(r'data-request-id="([0-9a-f]{8})"', bruno_page).group(1)
    found = run_cli("find-id", "--workspace", ws.root, code).stdout
    assert found.split("\t")[:2] == ["bruno", SLUG]

    src = sol / SLUG / f"{SLUG}.ipynb"
    nb = nbformat.read(src, as_version=4)
    cell = next(c for c in nb.cells if nbmeta.grade_id(c) == "test_dobro")
    assert OLD_TEST in cell.source
    cell.source = cell.source.replace(OLD_TEST, NEW_TEST)
    nbformat.write(nb, src)

    p = run_cli("regrade", "--workspace", ws.root, "--solutions", sol, "--student", "ana", "--id", code,
                *LIMITS)
    files = sorted((ws.root / "relatorio").glob("regrade-*.csv"))
    assert len(files) == 1, p.stderr
    with open(files[0], encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {r["student_id"] for r in rows} == {"ana", "bruno"}
    changed = [(r["student_id"], r["grade_id"]) for r in rows if r["changed"] == "true"]
    assert changed == [("bruno", "test_dobro")], rows
    row = next(r for r in rows if r["changed"] == "true")
    assert (row["before_visible"], row["after_visible"]) == ("failed", "passed")
    assert row["before_id"] == code
    assert ws.result_path("carla", SLUG).read_bytes() == carla_before     # nada mais foi refeito
    # a célula de teste antiga que ana e bruno entregaram não vira "célula de teste alterada"
    grades = read_csv(ws.root / "grades.csv")
    assert {s: grades[s]["status"] for s in ("ana", "bruno")} == {"ana": "ok", "bruno": "ok"}
    assert "versão anterior da tarefa" in grades["ana"]["details"]
    page = (ws.root / "relatorio" / "index.html").read_text(encoding="utf-8")
    assert "Recorreções" in page and files[0].name in page
    assert "falhou → passou" in page
    assert cenarios.SECRET not in _all_text(ws.root / "relatorio")
    # o código antigo de bruno ainda acha a linha (pela recorreção)
    assert run_cli("find-id", "--workspace", ws.root, code).stdout.startswith("bruno\t")
