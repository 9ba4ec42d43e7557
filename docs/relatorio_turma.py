"""Refaz as imagens do README das partes novas do relatório da turma (issue 40): a semelhança
entre respostas, os erros da turma e as recorreções, cada uma na largura de um computador
(1280 px) e de um celular (390 px): docs/relatorio-<parte>-<largura>.png.

Monta a turma de três de tests/support/cenarios.py (`INSIGHT_ANSWERS`: ana certa, carla a
cópia disfarçada de ana, bruno errado), corrige com `python -m autograder grade`, gera os
retornos com `--explain-mistakes`, muda o teste visível de `dobro` na fonte e recorrige bruno
e ana com `regrade`; depois fotografa relatorio/index.html no Chromium sem interface.
Uso: `.venv/bin/python docs/relatorio_turma.py [PASTA_DE_TRABALHO]`; com
`--workspace PASTA`, só fotografa o relatório de um workspace que já existe.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]
OUT = ROOT / "docs"
PARTS = {"semelhanca": "section.insight-similarity", "erros": "section.insight-mistakes",
         "recorrecao": "section.insight-regrade"}
WIDTHS = (1280, 390)


def _cli(*args, env) -> None:
    subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], env=env, check=True)


TITLES = {"dobro": "## Tarefa 1 — o dobro (2 pontos)", "soma_linhas": "## Tarefa 2 — a soma das linhas (3 pontos)"}


def _with_task_titles(path: Path) -> None:
    """Um título de tarefa antes de cada resposta, como nos capítulos (a seção a reler é
    "título do caderno, título da tarefa")."""
    from autograder.core import nbmeta
    nb = nbformat.read(path, as_version=4)
    cells = []
    for c in nb.cells:
        if nbmeta.grade_id(c) in TITLES:
            cells.append(nbformat.v4.new_markdown_cell(TITLES[nbmeta.grade_id(c)]))
        cells.append(c)
    nb.cells = cells
    nbformat.write(nb, path)


def build(base: Path) -> Path:
    """A turma corrigida, com os retornos explicados e uma recorreção; devolve o workspace."""
    import cenarios
    from autograder.core import nbmeta
    from autograder.core.workspace import Workspace
    slug = cenarios.SLUG
    sol, subs = base / "solucoes", base / "entregas"
    ws = Workspace(base / "correcao", sol)
    _with_task_titles(cenarios.build_assignment(sol))
    release = ws.prepare([slug])[slug].release[slug]
    for student, answers in cenarios.INSIGHT_ANSWERS.items():
        d = subs / student / slug
        d.mkdir(parents=True)
        nbformat.write(cenarios._solve(release, answers), d / f"{slug}.ipynb")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AUTOGRADER_REPO": str(ROOT),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    _cli("grade", subs, "--workspace", ws.root, "--solutions", sol, "--assignment", slug, env=env)
    _cli("feedback", "--workspace", ws.root, "--explain-mistakes", env=env)
    src = sol / slug / f"{slug}.ipynb"
    nb = nbformat.read(src, as_version=4)
    cell = next(c for c in nb.cells if nbmeta.grade_id(c) == "test_dobro")
    cell.source = cell.source.replace(cenarios.INSIGHT_OLD_TEST, cenarios.INSIGHT_NEW_TEST)
    nbformat.write(nb, src)
    _cli("regrade", "--workspace", ws.root, "--solutions", sol, "--student", "bruno", "--student", "ana",
         "--assignment", slug, env=env)
    return ws.root


def shoot(workspace: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    from browser_util import CHROMIUM, CHROMIUM_ARGS
    page = (Path(workspace) / "relatorio" / "index.html").resolve()
    out = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for width in WIDTHS:
            tab = browser.new_page(viewport={"width": width, "height": 900}, device_scale_factor=1)
            tab.goto(page.as_uri())
            tab.evaluate("document.querySelectorAll('section.insight-similarity details')"
                         ".forEach((d, i) => { if (i === 0) d.open = true; })")
            tab.evaluate("document.querySelectorAll('section.insight-mistakes details')"
                         ".forEach((d, i) => { if (i === 0) d.open = true; })")
            for name, selector in PARTS.items():
                target = OUT / f"relatorio-{name}-{width}.png"
                tab.locator(selector).first.screenshot(path=str(target))
                out.append(target)
            tab.close()
        browser.close()
    for p in out:
        print(f"{p} ({p.stat().st_size // 1024} KiB)")
    return out


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--workspace":
        shoot(Path(sys.argv[2]))
    elif len(sys.argv) > 1:
        shoot(build(Path(sys.argv[1])))
    else:
        with tempfile.TemporaryDirectory(prefix="relatorio-") as d:
            shoot(build(Path(d)))
