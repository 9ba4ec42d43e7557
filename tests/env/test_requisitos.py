"""Cada arquivo de requisitos resolve no pip como numa máquina nova.

Para cada arquivo (requirements.txt, requirements-aluno.txt,
binder/requirements.txt), cada sistema em que ele vale (Linux x86-64; o do
aluno também macOS arm64 e Windows x86-64) e Python 3.11 e 3.12, o resolvedor
do pip roda de verdade, sem instalar nada:

    PIP_CONFIG_FILE=/dev/null pip install --isolated --dry-run --ignore-installed
        --report - --index-url https://pypi.org/simple [os índices do arquivo]
        --python-version X --only-binary=:all: --platform <etiquetas do sistema>

`PIP_CONFIG_FILE=/dev/null` e `--isolated` fazem o pip ignorar a configuração
e as variáveis desta máquina (a pasta de rodas locais, o teto de versões do
torch): só o PyPI e o índice de CPU do PyTorch contam. Uma versão fixada que
brigue com outra (como torch==2.13.0 do PyPI, que exige triton==3.7.1, ao lado
de triton==3.9.0) falha aqui.

O pip avalia os marcadores de ambiente (`; sys_platform == "linux"`, nas
nossas linhas e nas dependências dos pacotes, como as bibliotecas CUDA do
torch do PyPI) na máquina que roda, não no `--platform` pedido. Por isso ele
roda aqui com `default_environment` dos marcadores trocado pelo do sistema-alvo
(RESOLVER): o mesmo resolvedor, vendo o ambiente de um Mac ou de um Windows.

Onde o índice de CPU do PyTorch não responde (nestas máquinas de CI, que só
alcançam o PyPI), a roda `+cpu` sai dele de outro jeito, sem inventar nada: a
própria roda de CPU que esta máquina guarda em disco (PIP_FIND_LINKS) entra
como `--find-links` quando é da mesma versão do Python; para a outra versão,
a linha do torch é trocada pelas dependências que essa mesma roda declara
(METADATA), e o resolvedor confere que elas cabem com o resto. Sem índice e
sem roda local, o caso é pulado, dizendo por quê.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from venv_util import ROOT, index_answers, requirement_lines

pytestmark = pytest.mark.slow
PYPI = "https://pypi.org/simple"


@dataclass(frozen=True)
class Target:
    """Um sistema-alvo: os marcadores de ambiente dele e as etiquetas de roda que o pip aceita."""
    name: str
    sys_platform: str
    platform_system: str
    platform_machine: str
    os_name: str
    platforms: tuple[str, ...]

    def environment(self, python: str) -> dict[str, str]:
        return {"sys_platform": self.sys_platform, "platform_system": self.platform_system,
                "platform_machine": self.platform_machine, "os_name": self.os_name,
                "python_version": python, "python_full_version": f"{python}.0",
                "implementation_name": "cpython", "platform_python_implementation": "CPython",
                "platform_release": "", "platform_version": "", "implementation_version": f"{python}.0",
                "extra": ""}


# O pip não expande as etiquetas pedidas com --platform: cada glibc e cada macOS vai explícito.
LINUX = Target("linux", "linux", "Linux", "x86_64", "posix",
               tuple(f"manylinux_2_{v}_x86_64" for v in range(28, 4, -1))
               + ("manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"))
MACOS = Target("macos", "darwin", "Darwin", "arm64", "posix",
               tuple(f"macosx_{v}_0_{a}" for v in (14, 13, 12, 11) for a in ("arm64", "universal2"))
               + tuple(f"macosx_10_{v}_universal2" for v in range(16, 8, -1)))
WINDOWS = Target("windows", "win32", "Windows", "AMD64", "nt", ("win_amd64",))

PYTHONS = ("3.11", "3.12")
FILES = {
    "requirements.txt": ((LINUX,), PYTHONS),
    "requirements-aluno.txt": ((LINUX, MACOS, WINDOWS), PYTHONS),
    "binder/requirements.txt": ((LINUX,), ("3.11",)),   # binder/runtime.txt: python-3.11
}
CASES = [(f, t, py) for f, (targets, pys) in FILES.items() for t in targets for py in pys]


# O pip, com os marcadores de ambiente avaliados para o alvo (argv[1], JSON).
RESOLVER = """
import json, sys
import pip._vendor.packaging.markers as markers
target = json.loads(sys.argv[1])
markers.default_environment = lambda: dict(target)
from pip._internal.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


@dataclass
class Resolution:
    returncode: int
    stderr: str
    installed: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    skipped: str = ""


def local_cpu_wheels() -> list[Path]:
    """As rodas `+cpu` do torch que esta máquina guarda em disco (PIP_FIND_LINKS)."""
    found = []
    for folder in os.environ.get("PIP_FIND_LINKS", "").split():
        folder = folder.removeprefix("file://")
        if os.path.isdir(folder):
            found += sorted(Path(folder).glob("torch-*+cpu-*.whl"))
    return found


def wheel_requirements(wheel: Path) -> list[str]:
    """As linhas Requires-Dist da METADATA de uma roda (sem os extras)."""
    name, version, _, _ = parse_wheel_filename(wheel.name)
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode("utf-8")
    reqs = [ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("Requires-Dist:")]
    return [r for r in reqs if "extra ==" not in r]


def prepare(path: Path, target: Target, python: str, work: Path) -> tuple[list[str], list[str], list[str]]:
    """O arquivo para o pip (marcadores já avaliados para o alvo), as opções extras e as notas."""
    env = target.environment(python)
    lines, options, notes = [], [], []
    indexes = []
    for line in requirement_lines(path):
        if line.startswith("-"):
            flag, _, url = line.partition(" ")
            assert flag in {"--extra-index-url", "--index-url"}, f"{path}: opção inesperada {line!r}"
            indexes.append(url.strip())
            continue
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        req.marker = None
        lines.append(str(req))
    answering = [u for u in indexes if index_answers(u)]
    for url in answering:
        options += ["--extra-index-url", url]
    if set(indexes) - set(answering):
        # Sem o índice de CPU: as linhas `+cpu` saem da roda local (ou das dependências dela).
        tag = f"cp{python.replace('.', '')}"
        for i, line in enumerate(lines):
            req = Requirement(line)
            pinned = [s.version for s in req.specifier if s.operator == "=="]
            if not pinned or "+" not in pinned[0]:
                continue
            wheels = [w for w in local_cpu_wheels()
                      if parse_wheel_filename(w.name)[:2] == (canonicalize_name(req.name), Version(pinned[0]))]
            if not wheels:
                return [], [], [f"índice {indexes} inalcançável e nenhuma roda local de {line}"]
            same = [w for w in wheels if f"-{tag}-" in w.name and target is LINUX and w.name.endswith("_x86_64.whl")]
            if same:
                links = work / "rodas"
                links.mkdir(exist_ok=True)
                (links / same[0].name).symlink_to(same[0])
                options += ["--find-links", str(links)]
                notes.append(f"{line}: a roda local {same[0].name} (índice inalcançável)")
            else:
                deps = [str(r) for r in map(Requirement, wheel_requirements(wheels[0]))
                        if r.marker is None or r.marker.evaluate(env)]
                lines[i:i + 1] = []
                lines += deps
                notes.append(f"{line}: as dependências declaradas por {wheels[0].name} "
                             f"(índice inalcançável, sem roda {tag} local): {deps}")
    return lines, options, notes


def resolve(path: Path, target: Target, python: str) -> Resolution:
    with tempfile.TemporaryDirectory(prefix="resolver-") as tmp:
        work = Path(tmp)
        lines, options, notes = prepare(path, target, python, work)
        if not lines:
            return Resolution(0, "", skipped="; ".join(notes))
        req = work / "requisitos.txt"
        req.write_text("\n".join(lines) + "\n", encoding="utf-8")
        report = work / "relatorio.json"
        cmd = [sys.executable, "-c", RESOLVER, json.dumps(target.environment(python)), "install", "--isolated", "--dry-run", "--ignore-installed",
               "--quiet", "--disable-pip-version-check", "--report", str(report), "--index-url", PYPI,
               *options, "--python-version", python, "--only-binary=:all:",
               *(a for p in target.platforms for a in ("--platform", p)), "-r", str(req)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
        env["PIP_CONFIG_FILE"] = os.devnull
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        installed = {}
        if r.returncode == 0:
            data = json.loads(report.read_text(encoding="utf-8"))
            installed = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in data["install"]}
        return Resolution(r.returncode, r.stderr, installed, notes)


@pytest.fixture(scope="module")
def resolutions():
    # Cada resolução espera pela rede (metadados do PyPI): quatro de cada vez.
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {case: pool.submit(resolve, ROOT / case[0], case[1], case[2]) for case in CASES}
        return {case: f.result() for case, f in futures.items()}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1].name}-py{c[2]}")
def test_requirements_resolve_on_a_new_machine(resolutions, case):
    path, target, python = case
    res = resolutions[case]
    if res.skipped:
        pytest.skip(res.skipped)
    assert res.returncode == 0, f"{path} não resolve em {target.name}, Python {python}:\n{res.stderr[-4000:]}"
    heavy = sorted(n for n in res.installed if n.startswith(("nvidia-", "cuda-")))
    assert not heavy, f"{path} em {target.name} puxa bibliotecas CUDA: {heavy}"
    torch = res.installed.get("torch")
    if target is LINUX and torch is not None:
        assert torch.endswith("+cpu"), f"{path}: o torch do Linux devia ser o de CPU, veio {torch}"
    wants_triton = any(Requirement(ln).name == "triton" for ln in requirement_lines(ROOT / path)
                       if not ln.startswith("-"))
    assert ("triton" in res.installed) == (wants_triton and target is LINUX), (path, target.name, res.installed)
    for note in res.notes:
        print(f"{path} {target.name} {python}: {note}")


def test_the_check_catches_a_conflicting_pin(tmp_path):
    """O teste pode falhar: as versões de antes (torch do PyPI + triton 3.9.0) não resolvem."""
    old = tmp_path / "antigo.txt"
    old.write_text("torch==2.13.0\ntriton==3.9.0\n", encoding="utf-8")
    res = resolve(old, LINUX, "3.11")
    assert res.returncode != 0 and "ResolutionImpossible" in res.stderr, res.stderr[-2000:]
