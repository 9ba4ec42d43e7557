"""O ambiente do Binder (binder/) onde um capítulo roda.

O mybinder.org instala binder/requirements.txt e roda binder/postBuild na raiz
do repositório. Aqui: um ambiente novo com os mesmos requisitos (sem a linha
`--extra-index-url` do índice do PyTorch, que este teste não alcança; a roda
`torch==2.13.0+cpu` vem do disco ou do PyPI), o postBuild numa cópia do
repositório, e então o que o botão do Binder abre: a página .md de um capítulo,
que o jupytext transforma em caderno e que roda inteira no kernel do ambiente.
"""

from __future__ import annotations

import json
import shutil

import pytest

from venv_util import ROOT, bin_path, cached_venv, errors, execute, run

pytestmark = pytest.mark.slow
CHAPTER = "book/parte1/04-softmax.md"


@pytest.fixture(scope="module")
def binder(tmp_path_factory):
    venv = cached_venv("binder", ROOT / "binder" / "requirements.txt", drop_prefixes=("--extra-index-url",))
    repo = tmp_path_factory.mktemp("repo")
    for name in ("pyproject.toml",):
        shutil.copy(ROOT / name, repo)
    for name in ("atencao", "binder", "book"):
        shutil.copytree(ROOT / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", "_build"))
    env_bin = bin_path(venv, "python").parent
    # postBuild roda com o python do ambiente no PATH, como no Binder.
    run(["bash", "-c", f'export PATH="{env_bin}:$PATH" && bash binder/postBuild'], timeout=600, cwd=repo)
    return venv, repo


def test_binder_opens_markdown_pages_as_notebooks(binder):
    venv, _ = binder
    settings = venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    viewers = json.loads(settings.read_text())["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["markdown"] == "Jupytext Notebook" and viewers["myst"] == "Jupytext Notebook"
    r = run([bin_path(venv, "jupyter"), "labextension", "list"], timeout=120)
    assert "jupyterlab-jupytext" in r.stdout + r.stderr, r.stdout + r.stderr
    r = run([bin_path(venv, "jupyter"), "server", "extension", "list"], timeout=120)
    assert "jupytext" in r.stdout + r.stderr and "nbgrader" not in r.stdout + r.stderr


def test_a_chapter_runs_in_the_binder_environment(binder):
    venv, repo = binder
    page = repo / CHAPTER
    run([bin_path(venv, "jupytext"), "--to", "ipynb", page], timeout=120, cwd=page.parent)
    nb = execute(venv, page.with_suffix(".ipynb"), page.parent, timeout=900)
    assert not errors(nb), errors(nb)
    r = run([bin_path(venv, "python"), "-c", "import atencao, triton; print(atencao.__file__)"],
            timeout=120, cwd=venv)
    assert str(repo / "atencao") in r.stdout, r.stdout   # o pacote do postBuild, editável
