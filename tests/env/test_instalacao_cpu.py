"""Num ambiente novo, sem torch: o .ipynb baixado de uma página instala o torch de CPU fixado, e
a instalação do aluno tem uma linha que funciona quando o índice de CPU do PyTorch não responde.

Aqui não há download.pytorch.org; a roda `torch-<versão>+cpu` está numa pasta de rodas local
(PIP_FIND_LINKS / configuração do pip), como numa máquina que baixou a roda antes. "Índice
fora do ar" é imitado com uma porta local fechada: a conexão é recusada na hora, e o teste
mede que nada fica tentando de novo.

1. A 1ª célula do caderno baixado (`install_cell` de book/_ext/baixar.py, a que a construção
   do livro e o Binder põem em cada página) num ambiente com só o kernel: instala o torch
   2.13.0+cpu (o de requirements-aluno.txt), nenhum pacote `nvidia-*`, e o pacote do curso.
   Antes (issue 41), ela deixava o pip escolher o torch do PyPI: 2.14.1 e 3,2 GiB de CUDA.
2. Sem a roda local e sem o índice, a célula para em português, apontando requirements-aluno.txt.
3. A linha alternativa do README (`requirements-aluno-pypi.txt`, sem o índice do PyTorch)
   resolve as mesmas versões sem tentar o índice.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from venv_util import ROOT, bin_path, cached_venv, clean_env, fresh_venv_over, keep_going_code, requirement_lines, run

pytestmark = pytest.mark.slow
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import baixar  # noqa: E402

KERNEL_PINS = [ln for ln in requirement_lines(ROOT / "requirements.txt")
               if re.match(r"(ipykernel|nbclient|nbformat)==", ln)]


@pytest.fixture(scope="module")
def closed_url():
    """Uma URL numa porta local sem ninguém ouvindo (conexão recusada na hora). A porta fica presa
    (bind sem listen) enquanto o módulo roda: nenhum outro processo a pega no meio."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{s.getsockname()[1]}/whl/cpu"


@pytest.fixture(scope="module")
def kernel_only(tmp_path_factory) -> Path:
    """Um ambiente com só o kernel e o nbclient (sem numpy, torch, matplotlib)."""
    req = tmp_path_factory.mktemp("req") / "so-o-kernel.txt"
    req.write_text("\n".join(KERNEL_PINS) + "\n", encoding="utf-8")
    venv = cached_venv(req)
    r = run([bin_path(venv, "python"), "-c", "import importlib.util as u; print([m for m in "
             "('torch', 'numpy', 'matplotlib', 'atencao') if u.find_spec(m)])"], timeout=120,
            cwd=req.parent)   # fora do repositório: a pasta atencao/ dele não conta
    assert r.stdout.strip() == "[]", r.stdout
    return venv


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A roda do pacote (só Python), feita com o Python dos testes, que tem o setuptools."""
    src = tmp_path_factory.mktemp("fonte")
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copytree(ROOT / "atencao", src / "atencao", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("roda")
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
         "-w", out, src], timeout=600)
    (whl,) = out.glob("atencao-*.whl")
    return whl


def _cell(wheel: Path, index_url: str) -> str:
    cell = baixar.install_cell("https://github.com/org/repo", "main")
    src = cell.source
    assert f'INDICE_CPU = "{baixar.TORCH_CPU_INDEX}"' in src
    src = src.replace(f'INDICE_CPU = "{baixar.TORCH_CPU_INDEX}"', f'INDICE_CPU = "{index_url}"')
    src = src.replace('"atencao @ git+https://github.com/org/repo@main"', f'"{wheel}"')
    return src


def _execute(venv: Path, work: Path, cells: list[str], env: dict[str, str], timeout: int):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbformat.write(nb, work / "c.ipynb")
    code = keep_going_code(900)
    t0 = time.monotonic()
    r = subprocess.run([str(bin_path(venv, "python")), "-c", code, str(work / "c.ipynb")], cwd=work,
                       env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return nbformat.read(work / "c.ipynb", as_version=4), time.monotonic() - t0


def _text(cell) -> str:
    return "".join(o.get("text", "") + o.get("evalue", "") for o in cell.get("outputs", []))


@pytest.mark.skipif(sys.platform != "linux", reason="o torch +cpu do índice do PyTorch é do Linux")
def test_page_notebook_installs_the_pinned_cpu_torch_without_the_index(kernel_only, wheel, closed_url, tmp_path):
    pins = baixar.student_pins()
    venv = fresh_venv_over(kernel_only, tmp_path / "leitor")
    env = clean_env()
    env["PATH"] = f"{bin_path(venv, 'python').parent}{os.pathsep}{env['PATH']}"
    nb, seconds = _execute(venv, tmp_path, [
        _cell(wheel, closed_url),
        "import torch, atencao; print('torch', torch.__version__)",
        "import importlib.metadata as md\n"
        "print(sorted(d.metadata['Name'] for d in md.distributions() if d.metadata['Name'].lower().startswith('nvidia')))",
    ], env, timeout=1800)
    assert "Retrying" not in _text(nb.cells[0]), _text(nb.cells[0])[-2000:]
    assert not [o for c in nb.cells for o in c.outputs if o.output_type == "error"], [_text(c) for c in nb.cells]
    assert _text(nb.cells[1]).strip() == f"torch {pins['torch']}+cpu", _text(nb.cells[1])
    assert _text(nb.cells[2]).strip() == "[]", _text(nb.cells[2])
    r = run([bin_path(venv, "python"), "-c", "import numpy, matplotlib; print(numpy.__version__, matplotlib.__version__)"],
            timeout=120, cwd=tmp_path)
    assert r.stdout.split() == [pins["numpy"], pins["matplotlib"]]


@pytest.mark.skipif(sys.platform != "linux", reason="o torch +cpu do índice do PyTorch é do Linux")
def test_page_notebook_stops_in_portuguese_without_index_and_without_wheel(kernel_only, wheel, closed_url,
                                                                           tmp_path):
    venv = fresh_venv_over(kernel_only, tmp_path / "leitor")
    env = clean_env()
    empty = tmp_path / "sem-rodas"
    empty.mkdir()
    env.update(PIP_FIND_LINKS=str(empty), PIP_NO_INDEX="1")   # nenhum lugar tem o torch +cpu
    nb, seconds = _execute(venv, tmp_path, [_cell(wheel, closed_url), "print('seguiu')"], env, timeout=600)
    errs = [o for o in nb.cells[0].outputs if o.output_type == "error"]
    assert errs and errs[0].ename == "InstalacaoFalhou", nb.cells[0].outputs
    assert "requirements-aluno.txt" in errs[0].evalue and "não respondeu" in errs[0].evalue
    assert "CUDA" in errs[0].evalue and not nb.cells[1].get("outputs")
    assert seconds < 120, f"a célula levou {seconds:.0f} s para desistir"


def test_readme_documents_the_one_line_alternative():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python -m pip install -r requirements-aluno-pypi.txt" in readme
    assert "download.pytorch.org" in readme and "Retrying" in readme


def test_alternative_file_has_the_same_versions_and_no_index():
    def pins(name):
        return {m.group(1): m.group(2) for ln in requirement_lines(ROOT / name)
                if (m := re.match(r"([A-Za-z0-9_.-]+)==([0-9][^\s;+]*)", ln))}
    alt = requirement_lines(ROOT / "requirements-aluno-pypi.txt")
    assert not [ln for ln in alt if ln.startswith("-")], alt
    assert pins("requirements-aluno-pypi.txt") == pins("requirements-aluno.txt")


@pytest.mark.skipif(sys.platform != "linux", reason="a roda +cpu local é do Linux")
def test_alternative_line_resolves_the_pinned_torch_without_retrying(tmp_path):
    """A linha do README, num ambiente novo, sem o índice de CPU (que aqui não responde)."""
    base = getattr(sys, "_base_executable", sys.executable)
    run([base, "-m", "venv", tmp_path / "v"], timeout=300)
    t0 = time.monotonic()
    r = run([bin_path(tmp_path / "v", "python"), "-m", "pip", "install", "--dry-run", "--ignore-installed",
             "--report", tmp_path / "r.json", "-r", ROOT / "requirements-aluno-pypi.txt"], timeout=1200, cwd=ROOT)
    seconds = time.monotonic() - t0
    assert "Retrying" not in r.stdout + r.stderr and "download.pytorch.org" not in r.stdout + r.stderr
    got = {i["metadata"]["name"].lower(): i["metadata"]["version"]
           for i in json.loads((tmp_path / "r.json").read_text())["install"]}
    assert got["torch"].startswith("2.13.0"), got["torch"]
    assert got["numpy"] == baixar.student_pins()["numpy"]
    if any(Path(p).glob("torch-2.13.0+cpu-*.whl") for p in os.environ.get("PIP_FIND_LINKS", "").split()):
        # com a roda de CPU numa pasta local, é ela que vem, sem as bibliotecas CUDA
        assert got["torch"] == "2.13.0+cpu" and not [n for n in got if n.startswith("nvidia")], got
    assert seconds < 600, seconds
