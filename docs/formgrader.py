"""Refaz docs/formgrader-correcao-manual.png: o formgrader do nbgrader num workspace do corretor.

Monta uma turma de um aluno com a tarefa de teste (tests/support/cenarios.py),
corrige com `python -m autograder grade`, abre o servidor Jupyter no workspace
(que acha o repositório pelo nbgrader_config.py dele, sem caminho absoluto) e
fotografa, no Chromium sem interface, a página de correção manual da resposta
escrita. Uso: `.venv/bin/python docs/formgrader.py [PASTA_DE_TRABALHO]`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]
OUT = ROOT / "docs" / "formgrader-correcao-manual.png"


def _cenarios():
    import cenarios
    return cenarios


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(base: Path) -> None:
    from autograder.core.workspace import Workspace
    cen = _cenarios()
    sol, subs, ws = base / "solucoes", base / "entregas", Workspace(base / "correcao", base / "solucoes")
    cen.build_assignment(sol)
    tmp = Workspace(base / "gera", sol)
    release = tmp.prepare([cen.SLUG])[cen.SLUG].release[cen.SLUG]
    shutil.rmtree(tmp.root)
    d = subs / "ana" / cen.SLUG
    d.mkdir(parents=True)
    nbformat.write(cen._solve(release, cen.CORRECT), d / f"{cen.SLUG}.ipynb")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AUTOGRADER_REPO": str(ROOT),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run([sys.executable, "-m", "autograder", "grade", str(subs), "--workspace", str(ws.root),
                    "--solutions", str(sol), "--no-report"], env=env, check=True)

    from nbgrader.api import Gradebook
    with Gradebook(ws.db_url) as gb:
        sub_id = gb.find_submission_notebook(cen.SLUG, cen.SLUG, "ana").id
    port = _free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).parent / "jupyter"), "server", "--no-browser", f"--port={port}",
         "--ip=127.0.0.1", "--allow-root", "--ServerApp.token=", "--ServerApp.password=",
         "--ServerApp.disable_check_xsrf=True"],
        cwd=ws.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/formgrader/submissions/{sub_id}/?index=0"
        for _ in range(120):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        from playwright.sync_api import sync_playwright

        from browser_util import CHROMIUM, CHROMIUM_ARGS
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            tab = browser.new_page(viewport={"width": 1100, "height": 760})
            tab.goto(url)
            tab.wait_for_selector("textarea", timeout=60_000)
            box = tab.locator("textarea").last
            box.scroll_into_view_if_needed()
            box.fill("Boa explicação; faltou dizer que o eixo 1 percorre as colunas.")
            tab.locator("input.score").last.fill("1")
            tab.locator("input.score").last.press("Tab")
            tab.wait_for_timeout(500)
            tab.screenshot(path=str(OUT))
            browser.close()
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=30)
    print(f"{OUT} ({OUT.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory(prefix="formgrader-") as d:
            main(Path(d))
