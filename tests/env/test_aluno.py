"""O caminho do aluno, num ambiente virtual novo só com requirements-aluno.txt.

1. Uma solução de exercício roda inteira (nbclient, com o kernel do ambiente
   do aluno): numpy, torch, matplotlib e jupyterlab bastam para os capítulos
   1 a 12, e nada do professor (nbgrader) está instalado.
2. `python -m atencao.copiar_exercicios` copia os cadernos para fora do
   repositório e não sobrescreve as respostas de quem roda de novo.
3. No Linux x86-64 o ambiente traz o triton (capítulo 13 na CPU, no
   interpretador); no macOS e no Windows o arquivo não o pede.

Os cadernos das páginas, instalados de uma roda num ambiente novo, ficam em
tests/env/test_paginas_instaladas.py. O ambiente fica em .cache/venvs/<hash>
(tests/support/venv_util.py), compartilhado com aquele teste: a primeira execução
instala (alguns minutos), as outras reutilizam.
"""

from __future__ import annotations

import json
import platform
import re
import shutil
import subprocess
import sys

import pytest

from venv_util import ROOT, bin_path, cached_venv, clean_env, errors, execute, run, start_lab, stop

REQUIREMENTS = ROOT / "requirements-aluno.txt"
CHAPTER_DOWNLOAD = ROOT / "_build" / "html" / "_sources" / "book" / "parte1" / "04-softmax.ipynb"
SOLUTION = ROOT / "solutions" / "04-softmax" / "04-softmax.ipynb"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def student_venv():
    return cached_venv(REQUIREMENTS)


def test_student_env_has_no_instructor_tools(student_venv):
    r = run([bin_path(student_venv, "python"), "-c",
              "import importlib.util as u, json; print(json.dumps({m: u.find_spec(m) is not None "
              "for m in ['numpy', 'torch', 'matplotlib', 'jupyterlab', 'nbgrader', 'triton', 'atencao']}))"],
             timeout=120, cwd=student_venv)
    found = json.loads(r.stdout)
    linux_x86 = sys.platform == "linux" and platform.machine() == "x86_64"
    assert found == {"numpy": True, "torch": True, "matplotlib": True, "jupyterlab": True,
                     "nbgrader": False, "triton": linux_x86, "atencao": False}, found
    r = run([bin_path(student_venv, "python"), "-c", "import torch; print(torch.__version__)"],
            timeout=120, cwd=student_venv)
    if linux_x86:
        assert r.stdout.strip().endswith("+cpu"), r.stdout   # não o do PyPI, com as bibliotecas CUDA
    r = run([bin_path(student_venv, "jupyter"), "labextension", "list"], timeout=120, cwd=student_venv)
    assert "nbgrader" not in (r.stdout + r.stderr).lower(), r.stdout + r.stderr


def test_student_env_runs_an_exercise_solution(student_venv, tmp_path):
    shutil.copy(SOLUTION, tmp_path / SOLUTION.name)
    nb = execute(student_venv, tmp_path / SOLUTION.name, tmp_path)
    assert not errors(nb), errors(nb)
    assert sum(c.cell_type == "code" for c in nb.cells) >= 5


def test_copy_exercises_outside_the_clone_keeps_answers(student_venv, tmp_path):
    dest = tmp_path / "meus-exercicios"
    py = bin_path(student_venv, "python")
    r = run([py, "-m", "atencao.copiar_exercicios", dest], timeout=120, cwd=ROOT)
    slugs = sorted(p.name for p in (ROOT / "exercises").iterdir() if p.is_dir())
    for slug in slugs:
        assert (dest / slug / f"{slug}.ipynb").read_bytes() == \
            (ROOT / "exercises" / slug / f"{slug}.ipynb").read_bytes()
    answer = dest / slugs[0] / f"{slugs[0]}.ipynb"
    answer.write_text("minha resposta", encoding="utf-8")
    r = run([py, "-m", "atencao.copiar_exercicios", dest], timeout=120, cwd=ROOT)
    assert answer.read_text(encoding="utf-8") == "minha resposta"
    assert "mantido" in r.stdout
    bad = subprocess.run([str(py), "-m", "atencao.copiar_exercicios", ROOT / "exercises" / "x"],
                         capture_output=True, text=True, env=clean_env(), cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "fora do repositório" in bad.stderr, bad.stderr


def test_student_jupyterlab_of_the_full_env_hides_instructor_extensions(tmp_path):
    """`make lab-aluno`: o JupyterLab do ambiente completo, sem formgrader nem criar tarefa."""
    import os
    import urllib.error
    import urllib.request

    subprocess.run(["make", "-s", "student-config"], cwd=ROOT, check=True, timeout=120)
    dry = subprocess.run(["make", "-n", "lab-aluno"], cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=60).stdout
    launch = next(ln for ln in dry.splitlines() if "jupyter lab" in ln)
    env = dict(os.environ)
    env.update(dict(kv.split("=", 1) for kv in launch.split() if "=" in kv and kv.startswith("JUPYTER_")))
    assert env["JUPYTER_PREFER_ENV_PATH"] == "0" and env["JUPYTER_CONFIG_DIR"].endswith(".cache/jupyter-aluno")
    token = "teste-aluno"
    server, base = start_lab(ROOT / ".venv" / "bin" / "jupyter", tmp_path, env, token, tmp_path / "runtime")

    def get(path):
        try:
            with urllib.request.urlopen(f"{base}{path}?token={token}", timeout=30) as r:
                return r.status, r.read().decode("utf-8")
        except urllib.error.HTTPError as e:
            return e.code, ""

    try:
        status, page = get("/lab")
        assert status == 200
        config = json.loads(re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
                                      page, re.S).group(1))
        disabled = set(config["disabledExtensions"])
        assert {"@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                "@jupyter/nbgrader:course-list"} <= disabled, disabled
        # O que o aluno usa no JupyterHub (buscar/entregar, validar) continua.
        assert "@jupyter/nbgrader:assignment-list" not in disabled
        assert any(e["name"] == "@jupyter/nbgrader" for e in config["federated_extensions"])
        assert get("/formgrader")[0] == 404   # a extensão de servidor do professor está desligada
    finally:
        stop(server)


def test_readme_clones_the_configured_repository():
    """Os `git clone` do README e da introdução usam o endereço do livro (repository.url)."""
    import yaml

    url = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    clones = re.findall(r"git clone (\S+)", readme)
    assert len(clones) >= 2 and set(clones) == {url}, (clones, url)
    assert "requirements-aluno.txt" in readme and "atencao.copiar_exercicios" in readme
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    assert set(re.findall(r"git clone (\S+)", intro)) == {url}
    assert "requirements-aluno.txt" in intro and "atencao.copiar_exercicios" in intro
