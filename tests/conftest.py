"""A bateria em camadas, pelo que cada teste precisa (CONTRIBUTING.md, "Testes").

Cada pasta de tests/ espelha uma parte do projeto, e a pasta diz do que os testes precisam:

| pasta            | o que testa                                  | marcas            |
|------------------|----------------------------------------------|-------------------|
| atencao/         | o pacote do livro (atencao/)                 | —                 |
| exercises/       | os cadernos, sem kernel (como o Jupyter)     | —                 |
| grader/          | o corretor, sem sandbox                      | —                 |
| grader_e2e/      | o corretor pela linha de comando, na sandbox | sandbox           |
| nbgrader/        | o nbgrader de verdade (subprocessos)         | nbgrader          |
| book/            | o livro construído (_build/html)             | book              |
| site/            | o site no Chromium                           | book, browser     |
| env/             | ambientes virtuais novos e o pip             | env               |

Fixtures também marcam: quem usa `site` precisa do livro, quem usa `browser`, do Chromium.
`make check` roda o que não tem marca nenhuma (nem `slow`). Um teste marcado cuja
necessidade falta FALHA dizendo o motivo (nunca é pulado em silêncio): quem não tem o que
ele pede deixa a camada de fora (`-m "not sandbox"`), como o `make check` faz.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import time
from pathlib import Path

import pytest

# Antes do nbformat: o __init__ do corretor deixa de fora o rfc3987_syntax, que o jsonschema
# montaria em cada processo do pytest (~0,9 s de CPU) só para validar IRIs.
import autograder  # noqa: E402,F401

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

NEEDS = {
    "book": "lê o livro construído (_build/html; `make book`)",
    "browser": "abre o Chromium do Debian (/usr/bin/chromium; `make apt-deps`)",
    "sandbox": "corrige na sandbox (bubblewrap e cgroups, como root; `make apt-deps`), com o Dask local",
    "nbgrader": "roda o nbgrader de verdade em subprocessos (segundos por comando)",
    "env": "cria ambientes virtuais e resolve pacotes com o pip (minutos; precisa do índice de pacotes)",
}
FOLDER_MARKS = {
    "grader_e2e": ("sandbox",),
    "nbgrader": ("nbgrader",),
    "book": ("book",),
    "site": ("book", "browser"),
    "env": ("env",),
}
FIXTURE_MARKS = {"site": ("book",), "browser": ("browser",)}

# Os arquivos mais caros das camadas lentas e quantos segundos cada um levou (fixtures e
# testes somados, de um `bash .ci/run` de 2026-12-05 num clone novo, 3 processos; o das figuras
# interativas estimado depois de juntar as visitas: só a ordem entre eles importa). O `make e2e`
# entrega arquivos inteiros aos processos do xdist na ordem da coleta (`--no-loadscope-reorder`):
# os caros primeiro, para que nenhum comece no fim, com os outros processos já parados. Entre
# arquivos de mesmo custo (e dentro de cada arquivo) vale a ordem sorteada. Um arquivo caro
# novo entra aqui.
HEAVY_FILES = {
    "grader_e2e/authoring/test_all_solutions.py": 544,
    "grader_e2e/test_grade_scenarios.py": 351,
    "env/test_paginas_instaladas.py": 346,
    "site/test_interativo.py": 290,
    "nbgrader/test_nbgrader_pipeline.py": 283,
    "grader_e2e/worker/test_harness_reuse.py": 223,
    "env/test_binder.py": 194,
    "site/test_browser.py": 128,
    "grader_e2e/wire/test_attacks.py": 126,
    "grader_e2e/worker/test_hidden_inputs.py": 116,
    "grader_e2e/readers/test_teacher_loop.py": 110,
    "env/test_instalacao_cpu.py": 86,
    "grader_e2e/box/test_box_limits.py": 82,
    "grader_e2e/readers/test_moodle_class.py": 81,
    "env/test_requisitos.py": 78,
    "grader_e2e/readers/test_insight_regrade.py": 63,
}


def pytest_configure(config):
    for name, why in NEEDS.items():
        config.addinivalue_line("markers", f"{name}: {why}")


def pytest_collection_modifyitems(config, items):
    for item in items:
        rel = Path(str(item.fspath)).resolve().relative_to(TESTS)
        marks = set(FOLDER_MARKS.get(rel.parts[0], ())) if len(rel.parts) > 1 else set()
        for fixture in getattr(item, "fixturenames", ()):
            marks.update(FIXTURE_MARKS.get(fixture, ()))
        for m in sorted(marks):
            item.add_marker(getattr(pytest.mark, m))
    # sort estável: depois do sorteio do pytest-randomly (que roda antes, num wrapper)
    items.sort(key=lambda item: -HEAVY_FILES.get(_relative(item), 0))


# `TESTS_CPU_LOG=arquivo.jsonl`: uma linha por teste com o tempo de relógio e a CPU gasta durante
# ele (núcleo·s: kernels na sandbox, Chromium e pip incluídos, que o /usr/bin/time não vê). Como
# root num cgroup v1 com o controlador cpuacct, cada processo do pytest entra num grupo seu e a
# CPU é a dele e a dos seus descendentes (as caixas dos kernels nascem dentro dele), mesmo com os
# 3 processos do `make e2e` ao mesmo tempo (`"fonte": "cgroup"`). Sem isso, a CPU da máquina
# inteira (/proc/stat), que só vale numa máquina parada e com um processo (`make e2e
# SLOW_WORKERS=1`). Somar por arquivo mostra onde está a CPU da rodada (bench/results.md).
CPU_LOG = os.environ.get("TESTS_CPU_LOG")


def _machine_cpu() -> float:
    with open("/proc/stat", encoding="ascii") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")     # sem idle e iowait


@functools.cache
def _cpu_counter():
    """(fonte, função que dá os núcleo·s até agora): um grupo cpuacct deste processo, dentro do dele
    (achado como a sandbox acha os seus, box/cgroup.py), ou a máquina."""
    from autograder.box.sandbox import box_backend

    backend, _why = box_backend()
    name = f"testes-{os.getpid()}"
    try:
        group = backend.bases["cpuacct"] / name
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except (AttributeError, KeyError, OSError):     # sem cgroup, v2 ou sem o controlador cpuacct
        return "máquina", _machine_cpu
    atexit.register(_leave, group)
    return "cgroup", lambda: backend.cpu_usage(name)


def _leave(group: Path) -> None:
    """Volta ao grupo de cima e apaga o grupo com as caixas vazias que ficaram nele; com um
    processo ainda dentro, o grupo fica."""
    try:
        (group.parent / "cgroup.procs").write_text(str(os.getpid()))
        for child in group.iterdir():
            if child.is_dir():
                try:
                    child.rmdir()
                except OSError:
                    pass
        group.rmdir()
    except OSError:
        pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not CPU_LOG:
        yield
        return
    source, counter = _cpu_counter()
    cpu, wall = counter(), time.monotonic()
    yield
    line = {"test": item.nodeid, "wall_s": round(time.monotonic() - wall, 3),
            "cpu_s": round(counter() - cpu, 2), "fonte": source}
    with open(CPU_LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(line, ensure_ascii=False) + "\n")


def _relative(item) -> str:
    return Path(str(item.fspath)).resolve().relative_to(TESTS).as_posix()


@functools.cache
def _missing(need: str) -> str | None:
    """Por que a necessidade `need` falta nesta máquina (None: não falta)."""
    if need == "book":
        return None if (ROOT / "_build" / "html" / "index.html").exists() else \
            "_build/html não existe: rode `make book` (o `make test` faz isso antes)"
    if need == "browser":
        from browser_util import CHROMIUM
        return None if Path(CHROMIUM).exists() else \
            f"Chromium não encontrado em {CHROMIUM}: rode `make apt-deps` (o `make test` faz isso)"
    if need == "sandbox":
        from autograder.box import sandbox
        ok, why = sandbox.bwrap_works()
        return None if ok else f"a sandbox não funciona aqui: {why}"
    if need == "nbgrader":
        try:
            import nbgrader  # noqa: F401
        except ImportError:
            return "o nbgrader não está instalado: rode `make deps`"
    return None


@pytest.fixture(autouse=True)
def _needs_are_met(request):
    """Um teste marcado cuja necessidade falta falha com o motivo (não é pulado)."""
    for need in NEEDS:
        if request.node.get_closest_marker(need) is not None:
            why = _missing(need)
            if why:
                pytest.fail(f"este teste precisa de {need} ({NEEDS[need]}); {why}. "
                            f"Para deixar a camada de fora: -m 'not {need}'", pytrace=False)


# variáveis que o pytest e as bibliotecas põem sozinhos (o torch põe a pasta de cache do
# inductor no primeiro uso, em qualquer teste que chegue a ele primeiro): não são sobras
_LIBRARY_ENV = {"PYTEST_CURRENT_TEST", "TORCHINDUCTOR_CACHE_DIR"}


def _library_choice(name: str, before: str | None, after: str | None) -> bool:
    """Uma mudança que é do processo, não do teste que chegou primeiro: as de _LIBRARY_ENV e o
    modo dos kernels, que atencao.kernels escolhe uma vez por processo no primeiro import
    (TRITON_INTERPRET=1 sem GPU, antes de importar o triton). Desfazê-la quebraria os testes
    seguintes (o triton já está importado no modo interpretador); outra mudança nela é sobra."""
    return name in _LIBRARY_ENV or (name == "TRITON_INTERPRET" and before is None and after == "1")


def _running_loop():
    import asyncio
    return asyncio._get_running_loop()


@pytest.fixture(autouse=True)
def _leaves_nothing_behind():
    """Nenhum teste deixa sobras para o próximo: variáveis de ambiente, pasta de trabalho,
    um laço do asyncio rodando na thread principal (a falha de 2026-12 que só aparecia na
    bateria inteira). Quem muda essas coisas usa `monkeypatch` (desfeito antes daqui) ou
    desfaz no fim; senão o teste que deixou a sobra falha com o nome dela."""
    import os

    env, cwd, loop = dict(os.environ), os.getcwd(), _running_loop()
    yield
    left = []
    now = dict(os.environ)
    changed = sorted(k for k in set(env) | set(now)
                     if env.get(k) != now.get(k) and not _library_choice(k, env.get(k), now.get(k)))
    if changed:
        left.append(f"variáveis de ambiente mudadas: {', '.join(changed)}")
    if os.getcwd() != cwd:
        left.append(f"pasta de trabalho mudada para {os.getcwd()}")
    if _running_loop() is not loop:
        left.append("um laço do asyncio ficou rodando na thread principal")
    for k in changed:                          # o próximo teste começa limpo
        if k in env:
            os.environ[k] = env[k]
        else:
            os.environ.pop(k, None)
    os.chdir(cwd)
    if left:
        pytest.fail("o teste deixou sobras para os próximos: " + "; ".join(left), pytrace=False)


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
