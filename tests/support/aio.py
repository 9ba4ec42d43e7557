"""Corrotinas nos testes: um laço novo, numa thread própria.

Na bateria inteira, o Playwright (fixture de sessão do conftest) deixa um laço rodando na
thread principal, e lá `asyncio.run` e `run_until_complete` recusam ("Cannot run the event
loop while another loop is running"); numa thread própria não há laço nenhum."""

from __future__ import annotations

import asyncio
import concurrent.futures


def run_async(coro):
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        return ex.submit(asyncio.run, coro).result()
