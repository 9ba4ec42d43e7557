"""O que o leitor vê ao clicar no botão do Binder de um capítulo.

O mybinder.org instala binder/requirements.txt e roda binder/postBuild na raiz
de uma cópia nova do repositório; o postBuild gera, com book/_ext/binder_pages.py,
o caderno de cada página (`notebooks/<parte>/<capítulo>.ipynb`) e o botão do
site abre esse caderno (`?urlpath=lab/tree/<caminho>`). Aqui: um ambiente novo
com os mesmos requisitos (compartilhado por hash em .cache/venvs,
tests/support/venv_util.py; sem a linha `--extra-index-url` quando o índice do PyTorch
não responde, e então a roda `torch==2.13.0+cpu` vem da pasta de rodas desta
máquina), o postBuild numa cópia do repositório (só o capítulo 4,
BINDER_PAGES, para caber no tempo dos testes), e então:

- o caminho do botão do Binder na página construída (_build/html) é um caderno
  que o postBuild gerou;
- esse caderno é o que o botão de download dá (as mesmas células; o texto igual
  a menos dos números, que cada execução recalcula), sem MyST cru: nenhum
  `{glue:text}`, nenhuma diretiva, nenhum rótulo `(nome)=`; com o número do
  capítulo no título e a célula que instala o pacote;
- ele roda inteiro no ambiente do Binder, e o JupyterLab do ambiente, no
  Chromium, o mostra como caderno com o texto renderizado sem MyST.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import nbformat
import pytest

from venv_util import ROOT, bin_path, cached_venv, errors, execute, run, stop

sys.path.insert(0, str(ROOT / "book" / "_ext"))

pytestmark = pytest.mark.slow
DOCNAME = "book/parte1/04-softmax"
HTML = ROOT / "_build" / "html"
INTERFACE = "lab/tree/"
# MyST que o leitor não deveria ver: papéis ({glue:text}`x`), diretivas (:::{note},
# ```{code-cell}), rótulos ((cap-softmax)=) e opções de diretiva (:class: tip).
RAW_MYST = re.compile(r"\{[a-z]+(?::[a-z]+)?\}`|^\s*(?::{3,}|`{3,})\{|^\([\w-]+\)=\s*$|^:[a-z-]+:\s", re.M)
NUMBER = re.compile(r"\d[\d.,]*(?:e[+-]?\d+)?")


def built_page(docname: str) -> Path:
    page = HTML / f"{docname}.html"
    if not page.exists():
        pytest.fail("_build/html não existe: rode `make book` (o `make test` faz isso antes do pytest)")
    return page


def binder_link(docname: str) -> str:
    """O caminho, relativo à raiz do repositório, que o botão do Binder da página abre."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(built_page(docname).read_text(encoding="utf-8"), "html.parser")
    hrefs = [a["href"] for a in soup.select("a[href]") if a["href"].startswith("https://mybinder.org/")]
    assert len(hrefs) == 1, f"{docname}: esperava um botão do Binder, achei {hrefs}"
    (urlpath,) = parse_qs(urlsplit(hrefs[0]).query)["urlpath"]
    assert urlpath.startswith(INTERFACE), hrefs[0]
    return urlpath.removeprefix(INTERFACE)


@pytest.fixture(scope="module")
def binder(tmp_path_factory):
    venv = cached_venv(ROOT / "binder" / "requirements.txt")
    repo = tmp_path_factory.mktemp("repo")
    for name in ("pyproject.toml", "_config.yml", "_toc.yml", "requirements-aluno.txt"):
        shutil.copy(ROOT / name, repo)
    for name in ("atencao", "binder", "book"):
        shutil.copytree(ROOT / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", "_build"))
    env_bin = bin_path(venv, "python").parent
    # postBuild roda com o python do ambiente no PATH, como no Binder.
    run(["bash", "-c", f'export PATH="{env_bin}:$PATH" BINDER_PAGES={DOCNAME} && bash binder/postBuild'],
        timeout=900, cwd=repo)
    return venv, repo


def markdown(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


def test_every_binder_button_opens_a_notebook_the_post_build_makes():
    """Em toda página com botão do Binder, ele aponta para o caderno que binder_pages.py gera."""
    from binder_pages import pages

    made = {p.docname: p.notebook(ROOT).relative_to(ROOT).as_posix() for p in pages(ROOT)}
    with_button = {p.relative_to(HTML).with_suffix("").as_posix() for p in HTML.glob("book/**/*.html")
                   if "https://mybinder.org/" in p.read_text(encoding="utf-8")}
    assert with_button == set(made), (sorted(with_button), sorted(made))
    for docname, path in made.items():
        assert binder_link(docname) == path, docname


def test_the_binder_notebook_is_the_clean_download_notebook(binder):
    _, repo = binder
    path = repo / binder_link(DOCNAME)
    assert path.suffix == ".ipynb" and path.is_file(), f"o botão do Binder abre {path.relative_to(repo)}"
    nb = nbformat.read(path, as_version=4)
    text = "\n\n".join(markdown(nb))
    raw = sorted({m.group(0).strip() for m in RAW_MYST.finditer(text)})
    assert not raw, f"MyST cru no caderno do Binder: {raw}"
    assert markdown(nb)[0].startswith("# 4. A softmax"), markdown(nb)[0][:80]
    assert "course-install" in nb.cells[0].metadata.get("tags", [])
    assert "raise InstalacaoFalhou(" in nb.cells[0].source
    assert not errors(nb), errors(nb)

    download = nbformat.read(HTML / "_sources" / f"{DOCNAME}.ipynb", as_version=4)
    assert [c.source for c in nb.cells if c.cell_type == "code"] == \
        [c.source for c in download.cells if c.cell_type == "code"]
    # O texto, com os números trocados por #: igual ao do download (um número
    # colado que faltasse, ou MyST que sobrasse, muda o texto).
    assert [NUMBER.sub("#", s) for s in markdown(nb)] == [NUMBER.sub("#", s) for s in markdown(download)]
    # Os valores colados que a construção do livro calculou estão escritos no texto
    # (os que não dependem do arredondamento de cada execução).
    glue = json.loads((ROOT / "_build" / "jupyter_execute" / f"{DOCNAME}.glue.json").read_text())
    values = {k: v["data"]["text/plain"].strip("'") for k, v in glue.items()}
    for name in ("c4_lim16", "c4_lim32"):
        assert values[name] in text, (name, values[name])


def test_the_binder_notebook_runs_in_the_binder_environment(binder):
    """O leitor roda o caderno inteiro (Run All) no ambiente do Binder."""
    venv, repo = binder
    path = repo / binder_link(DOCNAME)
    nb = execute(venv, path, path.parent, timeout=900)
    assert not errors(nb), errors(nb)
    r = run([bin_path(venv, "python"), "-c", "import atencao, triton; print(atencao.__file__)"],
            timeout=120, cwd=venv)
    assert str(repo / "atencao") in r.stdout, r.stdout   # o pacote do postBuild, editável


def test_binder_opens_markdown_pages_as_notebooks(binder):
    """Uma página .md aberta pelo navegador de arquivos do Binder também vira caderno (jupytext)."""
    venv, _ = binder
    settings = venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    viewers = json.loads(settings.read_text())["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers["markdown"] == "Jupytext Notebook" and viewers["myst"] == "Jupytext Notebook"
    r = run([bin_path(venv, "jupyter"), "labextension", "list"], timeout=120)
    assert "jupyterlab-jupytext" in r.stdout + r.stderr, r.stdout + r.stderr
    r = run([bin_path(venv, "jupyter"), "server", "extension", "list"], timeout=120)
    assert "jupytext" in r.stdout + r.stderr and "nbgrader" not in r.stdout + r.stderr


def test_binder_link_shows_the_chapter_without_myst_in_jupyterlab(binder, browser, tmp_path):
    """O que o botão do Binder abre, no JupyterLab do ambiente e no Chromium: um
    caderno com as células do capítulo e o texto renderizado sem MyST."""
    from venv_util import clean_env, start_lab

    venv, repo = binder
    target = binder_link(DOCNAME)
    token = "teste-binder"
    env = clean_env()
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "config")   # nada da configuração desta máquina
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "data")
    server, base = start_lab(bin_path(venv, "jupyter"), repo, env, token, tmp_path / "runtime")
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            page.set_default_timeout(180_000)
            page.goto(f"{base}/{INTERFACE}{target}?token={token}")
            page.locator(".jp-NotebookPanel:visible").wait_for()
            # O JupyterLab renderiza as células aos poucos: espera o título e várias células de texto.
            page.wait_for_function("() => [...document.querySelectorAll("
                                   "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown')]"
                                   ".filter(e => e.textContent.trim()).length > 5")
            assert page.locator(".jp-FileEditor:visible").count() == 0
            tabs = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel")
            assert tabs.first.inner_text() == Path(target).name, tabs.all_inner_texts()
            shown = page.evaluate("() => [...document.querySelectorAll("
                                  "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-RenderedMarkdown')]"
                                  ".map(e => e.textContent).join('\\n')")
            shots = ROOT / "_build" / "screenshots" / "binder"
            shots.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(shots / f"{Path(target).stem}.png"))
        finally:
            page.close()
    finally:
        stop(server)
    assert "4. A softmax" in shown, shown[:300]
    raw = sorted({m.group(0).strip() for m in RAW_MYST.finditer(shown)})
    assert not raw and "{glue" not in shown and ":::" not in shown, raw
