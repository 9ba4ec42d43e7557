"""O caminho de um exercício: fonte -> versão do aluno -> correção.

Para cada tarefa em solutions/:
- exercises/ é exatamente o que uma geração nova produz (nada editado à mão);
- o notebook de soluções tira nota máxima; uma resposta plausível mas errada tira
  nota parcial, sem travar (o caderno em branco, zero, é conferido pelo nosso corretor);
- nem a versão do aluno nem o livro construído contêm solução ou teste oculto.

A correção usa o nbgrader puro (num curso temporário), independente do
autograder do professor, que tem testes próprios.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import fontes
from autograder.authoring import release
from autograder.authoring.nbbuild import CONFERIR
from exercicios_errados import ERRADO

ROOT = Path(__file__).resolve().parents[2]
SLUGS = release.assignments()
# O caderno distribuído em branco é corrigido pelo nosso corretor (tests/grader_e2e/authoring:
# zero em cada tarefa); aqui, o nbgrader puro dá a nota máxima à solução e nota parcial a uma
# resposta errada (que, nas tarefas sem ERRADO, é a solução com a última célula em branco).
STUDENTS = ("solucao", "errado")


def _source_nb(slug):
    return nbformat.read(ROOT / "solutions" / slug / f"{slug}.ipynb", as_version=4)


def _release_nb(slug):
    return nbformat.read(ROOT / "exercises" / slug / f"{slug}.ipynb", as_version=4)


def _public_lines(except_slug: str) -> set[str]:
    """Linhas das versões do aluno das OUTRAS tarefas (o que qualquer aluno vê).

    A própria tarefa fica de fora: senão um vazamento nela se esconderia.
    """
    public = set()
    for slug in SLUGS:
        if slug != except_slug:
            for cell in _release_nb(slug).cells:
                public.update(line.strip() for line in cell.source.splitlines())
    return public


def _secret_lines(slug) -> list[str]:
    """Linhas de solução e de testes ocultos que não aparecem na parte visível."""
    nb = _source_nb(slug)
    secret, visible = [], []
    for cell in nb.cells:
        inside = False
        for line in cell.source.splitlines():
            if re.search(r"### (BEGIN|END) (SOLUTION|HIDDEN TESTS)", line):
                inside = "BEGIN" in line
                continue
            (secret if inside else visible).append(line.strip())
    visible_set = set(visible) | _public_lines(slug)
    # Só linhas características: longas e ausentes de toda parte visível
    # (uma linha que outro caderno mostra ao aluno, como um oráculo, é pública).
    return [s for s in secret if len(s) >= 30 and s not in visible_set and not s.startswith("#")]


def test_every_source_matches_its_notebook(tmp_path):
    assert fontes.slugs() == SLUGS, "cada pasta de solutions/ precisa de um autograder/fontes/NN-slug.md"
    for p in fontes.build_all(root=tmp_path):
        release.normalize(p)
        committed = ROOT / p.relative_to(tmp_path)
        assert p.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), (
            f"{committed.relative_to(ROOT)} difere da fonte autograder/fontes/{p.stem}.md: rode `make release`"
        )


@pytest.mark.parametrize("where", ("solutions", "exercises"))
def test_notebooks_have_stable_cell_ids_so_jupyterlab_does_not_mark_them_modified(where):
    """nbformat 4.5 com o id de cada célula igual ao seu grade_id: o JupyterLab não cria ids ao abrir."""
    for slug in SLUGS:
        raw = json.loads((ROOT / where / slug / f"{slug}.ipynb").read_text(encoding="utf-8"))
        assert (raw["nbformat"], raw["nbformat_minor"]) == (4, 5), slug
        ids = [c.get("id") for c in raw["cells"]]
        assert ids == [c["metadata"]["nbgrader"]["grade_id"] for c in raw["cells"]], slug
        assert len(set(ids)) == len(ids), slug


def test_release_is_exactly_a_fresh_generate_assignment(tmp_path):
    fresh = release.generate(SLUGS, out_root=tmp_path)
    assert len(fresh) == len(SLUGS)
    for p in fresh:
        committed = ROOT / p.relative_to(tmp_path)
        assert committed.exists(), f"{committed} não existe: rode `make release`"
        assert p.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), (
            f"{committed.relative_to(ROOT)} difere de uma geração nova: rode `make release`"
        )


@pytest.mark.parametrize("slug", SLUGS)
def test_release_has_no_solution_or_hidden_test(slug):
    text = json.dumps(_release_nb(slug), ensure_ascii=False)
    assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text
    leaks = [s for s in _secret_lines(slug) if s in text]
    assert not leaks, f"{slug}: a versão do aluno contém linhas secretas: {leaks[:3]}"


@pytest.mark.parametrize("slug", SLUGS)
def test_release_is_self_contained_and_has_the_checker(slug):
    nb = _release_nb(slug)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert not re.search(r"^\s*(import|from)\s+atencao", code, re.M), "o caderno do aluno não pode importar atencao"
    setup = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "preparacao"]
    assert setup and CONFERIR in setup[0].source, "a célula de preparação deve trazer autograder/authoring/conferir.py inteiro"
    points = sum(c.metadata["nbgrader"].get("points", 0) for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))
    graded = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert 3 <= len(graded) and points > 0


@pytest.mark.book
def test_built_book_has_no_solution_or_hidden_test():
    html = ROOT / "_build" / "html"
    blob = "\n".join(p.read_text(encoding="utf-8", errors="replace")
                     for p in html.rglob("*") if p.is_file() and p.suffix in {".html", ".ipynb", ".md", ".txt", ".js"})
    assert "BEGIN HIDDEN TESTS" not in blob
    # O código de referência do livro (atencao/) e os cadernos distribuídos (exercises/) são
    # públicos de propósito: o desafio opcional do cap. 13 pede para reescrever de memória o
    # kernel que o capítulo explica, e linhas idênticas às de lá não são segredo. Qualquer
    # outra linha da solução é.
    public = "\n".join([p.read_text(encoding="utf-8") for p in (ROOT / "atencao").rglob("*.py")]
                       + [p.read_text(encoding="utf-8") for p in (ROOT / "exercises").rglob("*.ipynb")])
    for slug in SLUGS:
        leaks = [s for s in _secret_lines(slug) if s in blob and s not in public]
        assert not leaks, f"{slug}: o livro construído contém linhas secretas: {leaks[:3]}"


# ------------------------------------------------------------------ correção

def _wrong(slug) -> nbformat.NotebookNode:
    """Resposta plausível e errada: a da fonte (ERRADO) ou a última solução em branco."""
    nb = _source_nb(slug)
    blank = {c.metadata["nbgrader"]["grade_id"]: c.source for c in _release_nb(slug).cells}
    wrong = ERRADO.get(slug)
    if wrong is None:
        sol = [c for c in nb.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")]
        wrong = {sol[-1].metadata["nbgrader"]["grade_id"]: blank[sol[-1].metadata["nbgrader"]["grade_id"]]}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in wrong:
            cell.source = wrong[gid]
    return nb


def _nbgrader(course: Path, *args: str) -> subprocess.CompletedProcess:
    """Um comando do nbgrader no curso `course`, pela linha de comando, como um professor."""
    common = [f"--CourseDirectory.root={course}", f"--CourseDirectory.db_url=sqlite:///{course / 'gradebook.db'}",
              "--log-level=ERROR"]
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args, *common], capture_output=True, text=True,
                          cwd=course, env=release.nbgrader_env())
    assert proc.returncode == 0, f"nbgrader {' '.join(args)} saiu com {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Um curso do nbgrader com todas as tarefas (gradebook próprio): `generate_assignment` e
    `autograde` de todas de uma vez ("*", o padrão de nomes do nbgrader) com as entregas de
    STUDENTS. Dois comandos, não dois por tarefa: quase todo o resto do tempo é o kernel de cada
    caderno subindo e rodando."""
    from nbgrader.api import Gradebook

    course = tmp_path_factory.mktemp("curso")
    for slug in SLUGS:
        shutil.copytree(ROOT / "solutions" / slug, course / "source" / slug)
    _nbgrader(course, "generate_assignment", "*", "--force")
    makers = {"solucao": _source_nb, "errado": _wrong}
    for slug in SLUGS:
        for student in STUDENTS:
            dest = course / "submitted" / student / slug / f"{slug}.ipynb"
            dest.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(makers[student](slug), dest)
    # ipc: sem portas TCP escolhidas, soltas e pegas depois pelo kernel, que outro teste em paralelo
    # pode tomar no meio (tests/support/venv_util.py, NBCLIENT_PRELUDE); a nota não depende disso.
    # Os sockets num caminho absoluto: o kernel roda na pasta do caderno, o nbgrader na do curso.
    _nbgrader(course, "autograde", "*", "--force", "--Execute.timeout=120",
              "--KernelManager.transport=ipc", f"--KernelManager.ip={course / 'k'}")
    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for slug in SLUGS:
            for student in STUDENTS:
                sub = gb.find_submission(slug, student)
                # Só a nota automática: as perguntas abertas ficam para o professor.
                auto_max = sum(g.max_score for nb in sub.notebooks for g in nb.grades if g.auto_score is not None)
                scores[slug, student] = (sub.code_score, auto_max, sub.needs_manual_grade)
    return scores


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLUGS)
def test_solutions_get_full_marks(graded, slug):
    score, max_score, _ = graded[slug, "solucao"]
    assert max_score > 0 and score == max_score, f"{slug}: soluções tiraram {score} de {max_score}"


@pytest.mark.slow
@pytest.mark.parametrize("slug", SLUGS)
def test_plausible_wrong_answer_gets_partial_credit(graded, slug):
    score, max_score, _ = graded[slug, "errado"]
    assert 0 < score < max_score, f"{slug}: resposta errada tirou {score} de {max_score}"
