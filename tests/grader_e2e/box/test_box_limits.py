"""A caixa de cada notebook (issue 13): limites do notebook inteiro e nada sobrevive a ele.

Os testes de kernel rodam um notebook pequeno num kernel da sandbox de verdade
(bwrap + cgroup, como root); os da lógica de cgroup v2 usam uma árvore falsa
de arquivos, e o `cgroup.kill` de verdade quando o host tem uma hierarquia v2.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from aio import run_async
from autograder.box import cgroup
from autograder.box import sandbox
from autograder.core.results import Status
from autograder.core.settings import ExecSettings
from autograder.worker.executor import execute_notebook
from autograder.box.kernel import SandboxKernel, harness_code, student_stub_code
from grading import template_socket

HAS_BWRAP, WHY_NOT = sandbox.bwrap_works()
BACKEND, WHY_NO_CGROUP = sandbox.box_backend()
ROOT = os.geteuid() == 0


def needs_box(f):
    """Roda um kernel de verdade na sandbox com cgroup (root): segundos por teste."""
    return pytest.mark.slow(pytest.mark.usefixtures("_box_available")(f))


@pytest.fixture
def _box_available():
    """Sem a sandbox com cgroup (como root), o teste falha com o motivo (não é pulado)."""
    if not (HAS_BWRAP and BACKEND is not None and ROOT):
        pytest.fail(f"precisa da sandbox com cgroup, como root: sandbox: {WHY_NOT}; cgroup: {WHY_NO_CGROUP}; "
                    f"root: {ROOT}", pytrace=False)


def _procs_with(marker: str) -> list[int]:
    """Processos cuja linha de comando ou ambiente contém `marker` (varre /proc)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if marker.encode() in cmd:
            found.append(int(d))
    return found


async def _run(cells: list[str], limits: sandbox.Limits, files: dict[str, str] | None = None,
               timeout: float = 60.0, nb=None):
    """Executa as células num kernel da sandbox com caixa; devolve (notebook, resultado, caixa)."""
    cfg = sandbox.SandboxConfig(enabled=True, limits=limits, python=sys.executable, zygote=template_socket())
    kdir = Path(tempfile.mkdtemp(prefix="ag-teste-spec-"))
    sandbox.write_kernel_spec(cfg, kdir)
    run_dir, harness_dir = (Path(tempfile.mkdtemp(prefix="ag-teste-", dir="/tmp")) for _ in range(2))
    for d in (run_dir, harness_dir):
        d.chmod(0o755)
        for sub in ("trabalho", "home"):         # a pasta de um kernel: cwd e HOME
            (d / sub).mkdir()
    for name, text in (files or {}).items():
        (run_dir / "trabalho" / name).write_text(text, encoding="utf-8")
    # células sem metadados do nbgrader: são do aluno e rodam no kernel dele; o do corretor só sobe
    nb = nb or nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    kernel, harness = SandboxKernel(run_dir, [str(kdir)]), SandboxKernel(harness_dir, [str(kdir)])
    try:
        await asyncio.gather(kernel.start(60, None, student_stub_code()), harness.start(60, None, harness_code()))
        box_seen = kernel.box.pids()
        outcome = await execute_notebook(nb, kernel, harness, ExecSettings(cell_timeout=timeout,
                                                                           notebook_timeout=2 * timeout))
    finally:
        await asyncio.gather(kernel.shutdown(), harness.shutdown())
        log = (run_dir / "kernel.log").read_text(errors="replace") if (run_dir / "kernel.log").exists() else ""
        for d in (run_dir, harness_dir):
            shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(kdir, ignore_errors=True)
    return nb, outcome, {"name": kernel.box.name, "pids_at_start": box_seen, "log": log}


def _text(nb) -> str:
    out = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            out.append(o.get("text", "") or "")
            out.append(str(o.get("data", {}).get("text/plain", "")))
            if o.get("output_type") == "error":
                out.append(f"{o['ename']}: {o['evalue']}")
    return "\n".join(out)


# ----------------------------------------------------------------------------- nada sobrevive

ORPHANS = """
import ctypes, os, sys, time
libc = ctypes.CDLL(None)
def orphan(k):
    if os.fork() == 0:
        libc.prctl(1, 0, 0, 0, 0)          # PR_SET_PDEATHSIG = 0
        os.setsid()
        if os.fork() == 0:                 # neto: órfão, noutra sessão
            libc.prctl(1, 0, 0, 0, 0)
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(300)", "{marker}"])
        os._exit(0)
for k in range(12):                        # poucas dezenas: a máquina de teste fica a salvo
    orphan(k)
time.sleep(0.5)
print("soltos")
"""


@needs_box
def test_orphans_that_cleared_pdeathsig_and_left_the_session_die_with_the_notebook():
    marker = f"orfao-{os.getpid()}-{time.monotonic_ns()}"
    nb, outcome, box = run_async(_run([ORPHANS.replace("{marker}", marker)], sandbox.Limits()))
    assert "soltos" in _text(nb), box["log"][-2000:]
    assert box["pids_at_start"], "o kernel não estava na caixa"
    time.sleep(0.2)
    assert _procs_with(marker) == []
    assert box["name"] not in BACKEND.names()          # o cgroup foi removido


@needs_box
def test_box_kill_takes_everything_even_without_the_pid_namespace():
    """Sem o bwrap: 12 órfãos em sessões próprias, só a caixa os encontra e mata."""
    marker = f"caixa-{os.getpid()}-{time.monotonic_ns()}"
    box = sandbox.Box(f"ag-teste-{os.getpid()}", sandbox.Limits(memory_mib=256, nproc=64))
    code = ("import sys\nsys.path.insert(0, %r)\n" % str(Path(sandbox.__file__).parent.parent)
            + "from autograder.box import sandbox\n"
            + f"assert sandbox.Box({box.name!r}, sandbox.Limits(memory_mib=256, nproc=64)).enter()\n"
            + ORPHANS.replace("{marker}", marker))
    t0 = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-c", code], check=True, timeout=60,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert len(_procs_with(marker)) == 12             # sobreviveram ao pai
    finally:
        t1 = time.perf_counter()
        box.close()
        t_kill = time.perf_counter() - t1
    time.sleep(0.1)
    assert _procs_with(marker) == []
    assert box.name not in BACKEND.names()
    print(f"caixa: criar+rodar {t1 - t0:.3f} s; matar 12 processos e remover {t_kill * 1000:.1f} ms")


# ----------------------------------------------------------------------------- memória

# 6 x 200 MiB: cada filho fica abaixo do RLIMIT_AS (1.024 MiB por processo, e um kernel do molde
# já tem ~770 MiB de espaço de endereços com o torch), a soma passa do limite da caixa
FORKED_MEMORY = """
import os, time
kids = []
for k in range(6):
    pid = os.fork()
    if pid == 0:
        b = bytearray(200 * 1024 * 1024)
        for i in range(0, len(b), 4096):
            b[i] = 1
        time.sleep(3)
        os._exit(0)
    kids.append(pid)
codes = [os.waitpid(p, 0)[1] for p in kids]
print("filhos:", codes)
"""


@needs_box
def test_memory_of_forked_children_counts_for_the_notebook():
    nb, outcome, box = run_async(_run([FORKED_MEMORY], sandbox.Limits(memory_mib=1024)))
    assert outcome.status == "crashed", (outcome, _text(nb))
    assert any("passou do limite de memória (1.024 MiB" in d for d in outcome.details), outcome.details


MEMFD = """
import os
fds = []
for i in range(40):
    fd = os.memfd_create(f"m{i}")
    os.ftruncate(fd, 64 * 1024 * 1024)
    os.pwrite(fd, b"x" * (64 * 1024 * 1024), 0)
    fds.append(fd)
print("memfd:", len(fds))
"""


@needs_box
def test_forty_memfd_files_hit_the_notebook_limit():
    nb, outcome, box = run_async(_run([MEMFD], sandbox.Limits(memory_mib=1024)))
    assert "memfd: 40" not in _text(nb)
    assert outcome.status == "crashed", (outcome, _text(nb))
    assert any("limite de memória" in d for d in outcome.details), outcome.details


# ----------------------------------------------------------------------------- processos e disco

@needs_box
def test_process_count_is_per_notebook():
    code = ("import os, time\nn = 0\ntry:\n    for i in range(200):\n        if os.fork() == 0:\n"
            "            time.sleep(5); os._exit(0)\n        n += 1\nexcept OSError as e:\n"
            "    print('fork recusado depois de', n, type(e).__name__)\n")
    nb, outcome, box = run_async(_run([code], sandbox.Limits(nproc=64)))
    text = _text(nb)
    assert "fork recusado depois de" in text, text
    assert int(text.split("depois de")[1].split()[0]) < 64


@needs_box
def test_writing_two_gib_fails_cleanly_with_no_space_left():
    code = ("import os\nw = 0\ntry:\n    with open('grande.bin', 'wb') as f:\n"
            "        for i in range(2048):\n            f.write(b'x' * 1024 * 1024); w += 1\n"
            "except OSError as e:\n    print('parou em', w, 'MiB:', e.strerror)\n")
    nb, outcome, box = run_async(_run([code, "print('depois: ok')"],
                                        sandbox.Limits(disk_mib=128, file_mib=4096)))
    text = _text(nb)
    assert "No space left on device" in text, text
    assert int(text.split("parou em")[1].split()[0]) <= 128
    assert "depois: ok" in text and outcome.status == "ok"


# ----------------------------------------------------------------------------- imports

@needs_box
def test_handed_in_modules_never_shadow_the_real_ones():
    files = {"numpy.py": "raise SystemExit('numpy falso')\n",
             "torch.py": "raise SystemExit('torch falso')\n",
             "ipykernel_launcher.py": "raise SystemExit('kernel falso')\n",
             "ajuda.py": "X = 42\n"}
    code = ("import sys, numpy, torch\nprint('numpy', numpy.__file__)\nprint('torch', torch.__file__)\n"
            "print('cwd no path:', '' in sys.path or '.' in sys.path)\n")
    nb, outcome, box = run_async(_run([code], sandbox.Limits(), files=files))
    text = _text(nb)
    assert "numpy falso" not in text and "site-packages/numpy" in text, text
    assert "site-packages/torch" in text, text
    assert "cwd no path: False" in text, text


# ----------------------------------------------------------------------------- cgroup v2 / v1

def _fake_v2(tmp_path: Path) -> Path:
    root = tmp_path / "cg2"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    (root / "cgroup.subtree_control").write_text("")
    mounts = tmp_path / "mounts"
    mounts.write_text(f"cgroup2 {root} cgroup2 rw,nosuid 0 0\n")
    own = tmp_path / "own"
    own.write_text("0::/user.slice\n")
    return root


def test_v2_is_detected_and_boxes_get_their_limits_in_a_fake_tree(tmp_path, monkeypatch):
    root = _fake_v2(tmp_path)
    orig = Path.mkdir

    def mkdir(self, *a, **k):
        """Imita o kernel: criar a pasta de um cgroup cria os arquivos de controle dele."""
        orig(self, *a, **k)
        if str(self).startswith(str(root)) and self != root:
            for f in ("cgroup.procs", "cgroup.subtree_control", "memory.max", "memory.swap.max",
                      "pids.max", "memory.events", "memory.peak", "cpu.max", "cpu.weight"):
                if not (self / f).exists():
                    (self / f).write_text("")
    monkeypatch.setattr(Path, "mkdir", mkdir)
    monkeypatch.setattr(cgroup, "_rmdir", lambda p, timeout=2.0: shutil.rmtree(p))
    backend, why = cgroup.detect(str(tmp_path / "mounts"), str(tmp_path / "own"))
    assert isinstance(backend, cgroup.CgroupV2), why
    assert (root / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    assert (root / "autograder" / "cgroup.subtree_control").read_text() == "+cpu +memory +pids"
    box = sandbox.Box("ag-x-1", sandbox.Limits(memory_mib=1024, nproc=64, cpus=1.5), backend=backend)
    assert box.enter()
    d = root / "autograder" / "ag-x-1"
    assert (d / "memory.max").read_text() == str(1024 * 1024 * 1024)
    assert (d / "memory.swap.max").read_text() == "0"
    assert (d / "pids.max").read_text() == "64"
    assert (d / "cpu.max").read_text() == "150000 100000" and (d / "cpu.weight").read_text() == "100"
    assert (d / "cgroup.procs").read_text() == str(os.getpid())
    (d / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert box.memory_exceeded() and box.memory_limit_mib() == 1024
    (d / "cgroup.procs").write_text("")
    box.close()
    assert not d.exists()


def test_without_memory_and_pids_controllers_there_is_no_box_and_the_reason_is_given(tmp_path):
    root = _fake_v2(tmp_path)
    (root / "cgroup.controllers").write_text("cpu io\n")
    backend, why = cgroup.detect(str(tmp_path / "mounts"), str(tmp_path / "own"))
    assert backend is None and "memory e pids" in why


def test_read_only_cgroupfs_falls_back_with_a_portuguese_reason(tmp_path):
    root = _fake_v2(tmp_path)
    if ROOT:                      # root escreve em qualquer pasta: simula o cgroupfs só leitura
        (root / "cgroup.subtree_control").unlink()
        (root / "cgroup.subtree_control").mkdir()
    else:
        root.chmod(0o555)
    backend, why = cgroup.detect(str(tmp_path / "mounts"), str(tmp_path / "own"))
    assert backend is None and "cgroup v2" in why and "root" in why


def test_hybrid_host_prefers_v1_controllers(tmp_path):
    for c in ("memory", "pids", "freezer"):
        (tmp_path / c / "grupo").mkdir(parents=True)
    (tmp_path / "mounts").write_text(
        f"cgroup {tmp_path / 'memory'} cgroup rw,memory 0 0\n"
        f"cgroup {tmp_path / 'pids'} cgroup rw,pids 0 0\n"
        f"cgroup {tmp_path / 'freezer'} cgroup rw,freezer 0 0\n"
        f"cgroup2 {tmp_path / 'unified'} cgroup2 rw 0 0\n")
    (tmp_path / "own").write_text("4:memory:/grupo\n8:pids:/grupo\n6:freezer:/\n0::/\n")
    mounts, own = cgroup._mounts(str(tmp_path / "mounts")), cgroup._own_paths(str(tmp_path / "own"))
    assert own["memory"] == "/grupo" and own["freezer"] == "/"
    assert cgroup._inside(str(tmp_path / "memory"), own["memory"]) == tmp_path / "memory" / "grupo"
    assert [m[1] for m in mounts] == ["cgroup", "cgroup", "cgroup", "cgroup2"]


V2_REAL = Path("/sys/fs/cgroup/unified")


@pytest.mark.skipif(not (ROOT and (V2_REAL / "cgroup.procs").exists()),
                    reason="sem hierarquia v2 gravável neste host")
def test_v2_cgroup_kill_for_real_on_the_unified_hierarchy():
    """A hierarquia v2 deste host não tem memory/pids, mas tem cgroup.kill: o caminho de matar é real."""
    backend = cgroup.CgroupV2(V2_REAL)
    name = f"ag-teste-v2-{os.getpid()}"
    try:
        backend.create(name, cgroup.CgroupLimits(memory_bytes=1 << 30, pids=16))
    except OSError as e:
        pytest.skip(f"não consegui criar um cgroup v2: {e}")
    marker = f"v2kill-{os.getpid()}-{time.monotonic_ns()}"
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", marker],
                              start_new_session=True) for _ in range(3)]
    for p in procs:
        backend.add(name, p.pid)
    assert sorted(backend.pids(name)) == sorted(p.pid for p in procs)
    assert backend.kill(name)
    for p in procs:
        assert p.wait(timeout=5) == -signal.SIGKILL
    backend.remove(name)
    assert not (V2_REAL / name).exists()


# ----------------------------------------------------------------------------- sobras
# (a coleta hostil e a trava, sem kernel, estão em tests/grader/collect e tests/grader/plan)

def test_leftovers_of_an_interrupted_run_are_cleaned_and_only_ours(tmp_path):
    from autograder.core.workspace import run_prefix, temp_base
    from autograder.plan import lock
    ours = Path(tempfile.mkdtemp(prefix=run_prefix(tmp_path / "ws"), dir=temp_base()))
    theirs = Path(tempfile.mkdtemp(prefix=run_prefix(tmp_path / "outro"), dir=temp_base()))
    (ours / "trabalho").mkdir()
    try:
        if BACKEND is not None and ROOT:
            sandbox.Box(ours.name, sandbox.Limits(memory_mib=64, nproc=8)).backend.create(
                ours.name, cgroup.CgroupLimits(64 << 20, 8))
        gone = lock.clean_leftovers(tmp_path / "ws")
        assert not ours.exists() and theirs.exists()
        assert str(ours) in gone
        if BACKEND is not None and ROOT:
            assert ours.name in gone and ours.name not in BACKEND.names()
    finally:
        shutil.rmtree(theirs, ignore_errors=True)


# ----------------------------------------------------------------------------- a turma hostil

def _cenarios():
    import cenarios
    return cenarios


@needs_box
def test_hostile_class_every_student_gets_a_row_and_nothing_survives(tmp_path):
    """Em série, no mesmo processo de correção: o atacante solta órfãos, o próximo aluno
    corrige normalmente; homônimos, link para o gabarito, notebook 4.4 com ids, módulos
    entregues com nomes de pacotes e nomes de arquivo que colidem, cada um na sua linha."""
    import csv

    from autograder.core.workspace import Workspace
    cen = _cenarios()
    A = cen.SLUG
    sol = tmp_path / "solucoes"
    cen.build_assignment(sol)
    ws = Workspace(tmp_path / "ws", sol)
    release = ws.prepare([A])[A].release[A]
    marker = f"atacante-{os.getpid()}-{time.monotonic_ns()}"
    subs = tmp_path / "entregas"

    def put(student, nb_bytes, extra=None):
        d = subs / student / A
        d.mkdir(parents=True)
        (d / f"{A}.ipynb").write_bytes(nb_bytes)
        for k, v in (extra or {}).items():
            (d / k).parent.mkdir(parents=True, exist_ok=True)
            (d / k).write_bytes(v)

    good = nbformat.writes(cen._solve(release, cen.CORRECT)).encode()
    attack = dict(cen.CORRECT, dobro=ORPHANS.replace("{marker}", marker) + cen.CORRECT["dobro"])
    put("a1-atacante", nbformat.writes(cen._solve(release, attack)).encode())
    put("a2-depois", good)
    put("José", good)
    put("Jose", good)
    old = json.loads(good)
    old["nbformat_minor"] = 4                  # 4.4 com ids nas células
    put("antigo", json.dumps(old).encode())
    put("sombra", good, {"numpy.py": b"raise SystemExit('numpy falso')\n",
                         "ipykernel_launcher.py": b"raise SystemExit('kernel falso')\n"})
    put("nomes", good, {"a b": b"1", "a-b/c.txt": b"2"})
    (subs / "link" / A).mkdir(parents=True)
    os.symlink(sol / A / f"{A}.ipynb", subs / "link" / A / f"{A}.ipynb")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "autograder", "grade", str(subs), "--workspace", str(ws.root),
                        "--solutions", str(sol), "--jobs", "1", "--no-feedback",
                        "--no-report", "--cell-timeout", "10", "--notebook-timeout", "60"],
                       capture_output=True, text=True, env=env, timeout=900)
    seconds = time.monotonic() - t0
    assert p.returncode == 0, p.stderr[-3000:]
    with open(ws.root / "grades.csv", encoding="utf-8", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    assert _procs_with(marker) == [], "processos do atacante sobreviveram à correção"
    ids = sorted(rows)
    jose = [s for s in ids if s.startswith("Jose")]
    assert len(ids) == 8 and len(jose) == 2, ids
    for s in ("a1-atacante", "a2-depois", "antigo", "sombra", "nomes", *jose):
        assert (rows[s]["status"], float(rows[s]["score"])) == ("ok", 5.0), (s, rows[s])
    assert rows["link"]["status"] == "missing" and "link simbólico" in rows["link"]["details"]
    print(f"turma hostil: 8 alunos em {seconds:.1f} s")


@pytest.mark.slow
def test_a_kernel_that_cannot_start_is_a_crashed_row_with_the_reason(tmp_path):
    """1 MiB de memória: nenhum kernel inicia; cada aluno ainda tem a sua linha, `crashed`."""
    import csv

    from autograder.core.workspace import Workspace
    cen = _cenarios()
    A = cen.SLUG
    sol = tmp_path / "solucoes"
    cen.build_assignment(sol)
    ws = Workspace(tmp_path / "ws", sol)
    release = ws.prepare([A])[A].release[A]
    for s in ("ana", "bia"):
        d = tmp_path / "entregas" / s / A
        d.mkdir(parents=True)
        (d / f"{A}.ipynb").write_text(nbformat.writes(cen._solve(release, cen.CORRECT)), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    p = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "entregas"),
                        "--workspace", str(ws.root), "--solutions", str(sol), "--no-sandbox",
                        "--memory", "1", "--no-feedback", "--no-report"],
                       capture_output=True, text=True, env=env, timeout=600)
    # a correção termina (cada aluno tem a sua linha); o resumo e o CSV dizem o que houve
    assert p.returncode == 0 and "crashed: 2" in p.stderr, p.stderr[-2000:]
    with open(ws.root / "grades.csv", encoding="utf-8", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    assert sorted(rows) == ["ana", "bia"]
    for r in rows.values():
        assert r["status"] == "crashed" and "o kernel não iniciou" in r["details"], r


@pytest.mark.slow
@pytest.mark.usefixtures("_box_available")
def test_busy_processes_of_one_notebook_get_only_its_cpu_share():
    """C6: quatro processos ocupados numa caixa de 0,2 núcleo usam no máximo 0,2 núcleo (cota do
    cgroup cpu), e a caixa vizinha, com um só processo, recebe CPU mesmo assim."""
    import subprocess
    mounts = cgroup._mounts(cgroup.MOUNTS)
    if not any(("cpu" in opts and kind == "cgroup") or kind == "cgroup2" for _, kind, opts in mounts):
        pytest.skip("este host não tem o controlador cpu")
    names = [f"ag-cpu-{os.getpid()}-{i}" for i in (0, 1)]
    procs = []
    try:
        BACKEND.create(names[0], cgroup.CgroupLimits(memory_bytes=256 << 20, pids=16, cpus=0.2))
        BACKEND.create(names[1], cgroup.CgroupLimits(memory_bytes=256 << 20, pids=16, cpus=1.0))
        for i in range(5):
            p = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            procs.append(p)
            BACKEND.add(names[0] if i < 4 else names[1], p.pid)
        start = [BACKEND.cpu_usage(n) or 0.0 for n in names]
        t0 = time.monotonic()
        time.sleep(3.0)
        used = [(BACKEND.cpu_usage(n) or 0.0) - s for n, s in zip(names, start)]
        wall = time.monotonic() - t0
        assert used[0] <= 0.2 * wall * 1.25 + 0.05, (used, wall)
        assert used[1] > 0.1 * wall, (used, wall)          # a vizinha não ficou sem CPU
    finally:
        for p in procs:
            p.kill()
            p.wait()
        for n in names:
            BACKEND.kill(n)
            BACKEND.remove(n)


HUGE_REPLY = """
import _autograder_student as _S
class _Enorme:
    def _repr_json_(self):
        return {"r": "x" * (250 << 20), "erro": None}
_S.serve = lambda text: setattr(_S, "reply", _Enorme())
def f(x):
    return x
"""

HUGE_SCRIPT = """
import asyncio, json, resource, sys
sys.path[:0] = [sys.argv[1], str(__import__("pathlib").Path(sys.argv[1]).parents[1] / "support")]
import nbformat
import test_box_limits as t
from autograder.box import sandbox
test = nbformat.v4.new_code_cell("assert f(1) == 1")
test.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "grade_id": "t", "points": 1}
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(sys.argv[2]), test])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
nb, outcome, _ = asyncio.run(t._run([], sandbox.Limits(), timeout=10.0, nb=nb))
print(json.dumps({"rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "rss_before_mib": before,
                  "status": str(outcome.status), "details": outcome.details, "seconds": outcome.seconds,
                  "test": t._text(nbformat.v4.new_notebook(cells=[nb.cells[1]]))}))
"""


@needs_box
def test_a_huge_reply_is_dropped_at_the_socket_before_the_grader_reads_it():
    """H6: uma resposta de 250 MiB do kernel do aluno não entra na memória de quem corrige
    (o zmq derruba a mensagem pelo tamanho e corta a conexão, sem reconectar); o corretor vê a
    conexão cortada na hora, encerra esse kernel e dá `crashed` com o motivo, sem esperar o
    tempo da célula (antes: o próximo envio ao kernel travava o laço até o limite de 300 s)."""
    p = subprocess.run([sys.executable, "-c", HUGE_SCRIPT, str(Path(__file__).parent), HUGE_REPLY],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    # a resposta nunca foi lida aqui: o pico cresce bem menos que os 250 MiB dela (lida, são
    # +750 MiB); mede-se a diferença, porque o ambiente herdado muda o que o processo já importou
    assert out["rss_mib"] - out["rss_before_mib"] < 200, out
    assert out["status"] == "crashed", out
    assert any("maior que 68 MiB" in d and "cortada" in d for d in out["details"]), out
    assert "StudentKernelFailure" in out["test"] and "recusada" in out["test"], out
    assert out["seconds"] < 10.0, out                      # antes do limite de 10 s da célula


@needs_box
def test_a_setup_cell_that_fails_only_in_the_graders_kernel_is_the_graders_fault():
    """A preparação (travada, sem nada do aluno) com erro no kernel do corretor: os testes não
    valeriam (todos zero, com situação ok, era o que acontecia com memória curta para os imports),
    então a correção do notebook falha com o motivo (o planejador deixa a linha `crashed`, sem
    chave, e a próxima correção tenta de novo). A mesma célula com erro no kernel do aluno é só
    a saída dele."""
    from autograder.worker.executor import GraderSetupError
    setup = nbformat.v4.new_code_cell(
        "import sys\nif '_autograder_harness' in sys.modules:\n    raise MemoryError('import do torch')\n")
    setup.metadata["nbgrader"] = {"grade_id": "preparacao", "locked": True, "grade": False, "solution": False,
                                  "schema_version": 3}
    nb = nbformat.v4.new_notebook(cells=[setup, nbformat.v4.new_code_cell("x = 1")])
    with pytest.raises(GraderSetupError, match=r"célula 1, que não depende do aluno.*MemoryError: import do torch"):
        run_async(_run([], sandbox.Limits(), nb=nb))
    student_only = nbformat.v4.new_code_cell("import sys\nif '_autograder_harness' not in sys.modules:\n"
                                             "    raise ValueError('só no aluno')\n")
    student_only.metadata["nbgrader"] = dict(setup.metadata["nbgrader"])
    nb, outcome, _ = run_async(_run([], sandbox.Limits(), nb=nbformat.v4.new_notebook(cells=[student_only])))
    assert outcome.status == Status.OK and nb.cells[0].outputs[0]["ename"] == "ValueError"
