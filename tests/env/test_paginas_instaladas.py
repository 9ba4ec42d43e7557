"""Os cadernos das páginas rodam onde são abertos, com o pacote instalado de uma roda.

O leitor baixa o .ipynb de um capítulo (_build/html/_sources/..., feito por
`make book` e book/_ext/baixar.py) e o roda longe do repositório. A primeira
célula instala o pacote do curso (`%pip install "atencao @ git+..."`). Aqui,
sem rede:

1. uma roda (wheel) é construída do repositório (pyproject.toml + atencao/);
2. um ambiente novo enxerga os pacotes de requirements-aluno.txt (o ambiente
   compartilhado de tests/support/venv_util.py) e nada do repositório;
3. em cada caderno de página, a linha do GitHub da 1ª célula vira a roda
   (`%pip install --no-index <roda>`): o mesmo pip, a mesma resolução de
   dependências, sem rede; cada caderno roda inteiro numa pasta fora do
   repositório, com o kernel do ambiente novo.

Se a roda não levar os dados (pesos, tokenizador, corpus, o .cu) ou um
capítulo ler arquivos do repositório, o caderno dele falha aqui. E a 1ª célula,
quando a instalação falha, para com a mensagem em português.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest

from venv_util import ROOT, bin_path, cached_venv, errors, execute, fresh_venv_over, keep_going_code, run

pytestmark = pytest.mark.slow
SOURCES = ROOT / "_build" / "html" / "_sources" / "book"
PAGES = sorted(SOURCES.rglob("*.ipynb")) if SOURCES.exists() else []
INSTALL_LINE = re.compile(r'%pip install --quiet \{_opcoes\} \{_pacotes\} "atencao @ git\+\S+@\S+"')


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A roda do pacote, construída de uma cópia de pyproject.toml + atencao/ (o repositório fica limpo)."""
    src = tmp_path_factory.mktemp("fonte")
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copytree(ROOT / "atencao", src / "atencao", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("roda")
    run([bin_path(cached_venv(ROOT / "requirements-aluno.txt"), "python"), "-m", "pip", "wheel",
         "--quiet", "--no-deps", "--no-index", "--no-build-isolation", "-w", out, src], timeout=600)
    (whl,) = out.glob("atencao-*.whl")
    return whl


@pytest.fixture(scope="module")
def reader_venv(tmp_path_factory) -> Path:
    return fresh_venv_over(cached_venv(ROOT / "requirements-aluno.txt"), tmp_path_factory.mktemp("leitor") / "venv")


def test_wheel_carries_the_package_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    data = {p.relative_to(ROOT).as_posix() for p in (ROOT / "atencao" / "data").iterdir() if p.is_file()}
    data |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "atencao" / "kernels").glob("*.cu")}
    assert data and data <= names, sorted(data - names)


def _with_wheel(page: Path, wheel: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(page, as_version=4)
    first = nb.cells[0]
    assert "course-install" in first.metadata.get("tags", []), f"{page.name}: a 1ª célula não instala o pacote"
    line = INSTALL_LINE.search(first.source)
    assert line, first.source
    first.source = first.source.replace(line.group(0), f'%pip install --quiet --no-index "{wheel}"')
    return nb


def test_pages_exist():
    assert len(PAGES) >= 13, f"{SOURCES.relative_to(ROOT)}: rode `make book` antes ({len(PAGES)} cadernos)"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_page_notebook_runs_where_it_is_opened(page, wheel, reader_venv, tmp_path):
    work = tmp_path / "leitor"
    work.mkdir()
    nb = _with_wheel(page, wheel)
    nbformat.write(nb, work / page.name)
    done = execute(reader_venv, work / page.name, work, timeout=900)
    assert not errors(done), f"{page.name}: {errors(done)}"
    r = run([bin_path(reader_venv, "python"), "-c", "import atencao; print(atencao.__file__)"],
            timeout=120, cwd=work)
    # instalado pela 1ª célula no ambiente do leitor, não achado no repositório
    assert str(reader_venv) in r.stdout and "site-packages" in r.stdout, r.stdout


def test_the_harness_kernel_takes_no_tcp_port(reader_venv, tmp_path):
    """O kernel da bancada fala pelo transporte `ipc`: nenhuma porta TCP escolhida, solta e pega
    depois, que outro teste em paralelo poderia tomar antes dele (venv_util.NBCLIENT_PRELUDE)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "from ipykernel.kernelapp import IPKernelApp\n"
        "app = IPKernelApp.instance()\n"
        "print(app.transport)")])
    nbformat.write(nb, tmp_path / "t.ipynb")
    done = execute(reader_venv, tmp_path / "t.ipynb", tmp_path, timeout=300)
    assert done.cells[0].outputs[0].text.strip() == "ipc", done.cells[0].outputs


def test_failed_install_stops_with_a_portuguese_message(tmp_path):
    """Sem o pacote e sem como instalá-lo, a 1ª célula para e diz o que fazer."""
    if not PAGES:
        pytest.fail("rode `make book` antes")
    venv = fresh_venv_over(cached_venv(ROOT / "requirements-aluno.txt"), tmp_path / "venv")
    nb = nbformat.read(PAGES[0], as_version=4)
    first = nb.cells[0]
    first.source = INSTALL_LINE.sub('%pip install --quiet --no-index "atencao @ file:///nao/existe"', first.source)
    nb.cells = [first, nbformat.v4.new_code_cell("import atencao")]
    nbformat.write(nb, tmp_path / "c.ipynb")
    code = keep_going_code(300)
    run([bin_path(venv, "python"), "-c", code, tmp_path / "c.ipynb"], timeout=600, cwd=tmp_path)
    done = nbformat.read(tmp_path / "c.ipynb", as_version=4)
    errs = [o for o in done.cells[0].outputs if o.output_type == "error"]
    assert errs and errs[0].ename == "InstalacaoFalhou", done.cells[0].outputs
    assert "O que fazer" in errs[0].evalue and "requirements-aluno.txt" in errs[0].evalue
    assert not done.cells[1].get("outputs"), "a célula seguinte rodou depois da falha"
