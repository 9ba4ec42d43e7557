"""O ambiente do Binder (binder/) onde um capítulo roda.

O mybinder.org instala binder/requirements.txt e roda binder/postBuild na raiz
do repositório. Aqui: um ambiente novo com os mesmos requisitos (compartilhado
por hash em .cache/venvs, tests/venv_util.py; sem a linha `--extra-index-url`
quando o índice do PyTorch não responde, e então a roda `torch==2.13.0+cpu`
vem da pasta de rodas desta máquina), o postBuild numa cópia do
repositório, e então o que o botão do Binder abre: a página .md de um capítulo,
que o jupytext transforma em caderno e que roda inteira no kernel do ambiente.
"""

from __future__ import annotations

import json
import shutil

import pytest

from venv_util import ROOT, bin_path, cached_venv, errors, execute, run, stop

pytestmark = pytest.mark.slow
CHAPTER = "book/parte1/04-softmax.md"


@pytest.fixture(scope="module")
def binder(tmp_path_factory):
    venv = cached_venv(ROOT / "binder" / "requirements.txt")
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


def test_binder_link_opens_the_chapter_as_a_notebook_in_jupyterlab(binder, tmp_path):
    """O que o botão do Binder abre (`urlpath=lab/tree/<página>.md`), no JupyterLab do
    ambiente e no Chromium: um caderno com as células do capítulo, não um editor de texto."""
    import os
    import socket
    import subprocess
    import time
    import urllib.request

    from browser_util import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright
    from venv_util import clean_env

    venv, repo = binder
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "teste-binder"
    env = clean_env()
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "config")   # nada da configuração desta máquina
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "data")
    server = subprocess.Popen(
        [str(bin_path(venv, "jupyter")), "lab", "--no-browser", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={repo}",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=10) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "o JupyterLab não subiu"
            time.sleep(1)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(180_000)
            page.goto(f"{base}/lab/tree/{CHAPTER}?token={token}")
            panel = page.locator(".jp-NotebookPanel:visible")
            panel.wait_for()
            page.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell').length > 5")
            assert page.locator(".jp-FileEditor:visible").count() == 0
            tabs = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel")
            assert tabs.first.inner_text() == CHAPTER.rsplit("/", 1)[1], tabs.all_inner_texts()
            browser.close()
    finally:
        stop(server)
