"""Fixtures comuns aos testes de navegador: o site construído servido em localhost e
um Chromium só por sessão (test_browser, test_interativo, test_modelo_web)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def site():
    from browser_util import HTML, serve

    if not (HTML / "index.html").exists():
        pytest.fail("_build/html não existe: rode `make book` (o `make test` faz isso antes do pytest)")
    with serve(HTML) as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    from browser_util import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium não encontrado em {CHROMIUM}: rode `make apt-deps` "
                    "(instala o pacote Debian `chromium`; o `make test` faz isso)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()
