"""O molde dos kernels (autograder/box/zygote.py): um kernel por fork vê o mesmo mundo que um
kernel pelo bwrap, morre com o lançador e com o molde, e sem molde tudo segue pelo bwrap.

Cada teste inicia kernels de verdade na sandbox (root + bubblewrap; senão, pulado)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from aio import run_async
from autograder.box import sandbox
from autograder.box import zygote
from autograder.box.kernel import SandboxKernel

HAS_BWRAP, WHY_NOT = sandbox.bwrap_works()
WHY_NO_ZYGOTE = zygote.available()
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(WHY_NO_ZYGOTE is not None, reason=f"molde: {WHY_NO_ZYGOTE}")]

# o que um kernel vê do mundo (tudo o que o bwrap decide), num JSON
PROBE = r'''
import json, os, socket, sys
_st = {l.split(":")[0]: l.split(":", 1)[1].strip() for l in open("/proc/self/status")}
def _visible(p):
    try:
        os.stat(p); return True
    except OSError:
        return False
print(json.dumps(dict(
    uid=os.getuid(), gid=os.getgid(), groups=os.getgroups(), pid=os.getpid(), ppid=os.getppid(),
    host=socket.gethostname(), caps={k: _st[k] for k in _st if k.startswith("Cap")},
    no_new_privs=_st["NoNewPrivs"], seccomp=_st.get("Seccomp"), root=sorted(os.listdir("/")),
    etc=sorted(os.listdir("/etc")), cwd=os.getcwd(), env=sorted(os.environ),
    home=os.environ["HOME"], threads=os.environ["OMP_NUM_THREADS"],
    root_writable=os.access("/", os.W_OK), usr_writable=os.access("/usr", os.W_OK),
    work_writable=os.access(".", os.W_OK), tmp_mib=os.statvfs("/tmp").f_blocks * os.statvfs("/tmp").f_frsize // 2**20,
    outside=[p for p in OUTSIDE if _visible(p)], sys_path=sys.path, safe_path=sys.flags.safe_path,
    grader_modules=sorted(m for m in sys.modules if "autograder" in m or "zygote" in m),
    main=sys.modules["__main__"].__name__, pids=sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    numpy_draw=__import__("numpy").random.randint(0, 2**31), torch_seed=__import__("torch").initial_seed(),
)))
'''


async def _run(k: SandboxKernel, code: str, timeout: float = 60) -> tuple[str, dict | None]:
    """O que a célula imprimiu e o conteúdo da mensagem de erro dela (None se não levantou)."""
    msg_id = k.kc.execute(code)
    text, error, end = "", None, time.monotonic() + timeout
    while time.monotonic() < end:
        m = await k.kc.get_iopub_msg(timeout=end - time.monotonic())
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        if m["msg_type"] == "stream":
            text += m["content"]["text"]
        elif m["msg_type"] == "error":
            error = m["content"]
        elif m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return text, error
    raise AssertionError("o kernel não respondeu")


async def _output(k: SandboxKernel, code: str, timeout: float = 60) -> str:
    text, error = await _run(k, code, timeout)
    if error is not None:
        raise AssertionError(error["evalue"])
    return text


async def _traceback(k: SandboxKernel, code: str, timeout: float = 60) -> str:
    """O traceback (sem as cores) do erro que `code` levanta."""
    import re
    _, error = await _run(k, code, timeout)
    assert error is not None, "a célula não levantou erro"
    return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))


def _kernel(base: Path, name: str, zsock: str = "") -> SandboxKernel:
    cfg = sandbox.SandboxConfig(enabled=True, python=sys.executable, zygote=zsock)
    kd = base / f"kernels-{name}"
    sandbox.write_kernel_spec(cfg, kd)
    run_dir = base / f"ag-teste-{name}"
    for sub in ("trabalho", "home"):             # a pasta de um kernel: cwd e HOME
        (run_dir / sub).mkdir(parents=True, exist_ok=True)
    (run_dir / "trabalho" / "entrega.txt").write_text("minha resposta")
    return SandboxKernel(run_dir, [str(kd)])


@pytest.fixture(scope="module")
def molde(tmp_path_factory):
    base = tmp_path_factory.mktemp("molde")
    z = zygote.Zygote.start(sandbox.SandboxConfig(enabled=True, python=sys.executable), str(base))
    assert z is not None, "o molde não iniciou"
    yield z
    z.close()


def _probe(base: Path, name: str, zsock: str) -> tuple[dict, str]:
    outside = [str(Path(__file__).resolve().parents[3] / "solutions"), str(base / "kernels-molde"),
               str(base / "kernels-bwrap"), "/var", "/home",
               "/etc/shadow", "/sys/fs/cgroup", "/run"]

    async def go():
        k = _kernel(base, name, zsock)
        await k.start(60)
        try:
            out = await _output(k, f"OUTSIDE = {outside!r}\n" + PROBE)
        finally:
            await k.shutdown()
        return json.loads(out), (k.run_dir / "kernel.log").read_text(errors="replace")
    return run_async(go())


def test_a_kernel_from_the_template_sees_what_a_bwrap_kernel_sees(molde, tmp_path):
    forked, log = _probe(tmp_path, "molde", molde.socket)
    plain, _ = _probe(tmp_path, "bwrap", "")
    assert "AVISO" not in log, log
    for view in (forked, plain):
        assert view["uid"] == view["gid"] == sandbox.NOBODY and view["groups"] == []
        assert set(view["caps"].values()) == {"0000000000000000"}, view["caps"]
        assert view["no_new_privs"] == "1" and view["host"] == "sandbox"
        assert view["pid"] == 2 and view["ppid"] == 1, "o kernel não está num namespace de PID próprio"
        assert view["pids"] == [1, 2], view["pids"]
        assert not view["root_writable"] and not view["usr_writable"] and view["work_writable"]
        assert view["outside"] == [], f"visível na sandbox: {view['outside']}"
        assert view["grader_modules"] == [] and view["main"] == "__main__" and view["safe_path"]
    differs = {k for k in plain if plain[k] != forked[k]}
    # cada kernel tem a sua pasta (cwd, HOME) e sorteia as suas sementes (numpy, torch); o resto é igual
    assert differs <= {"cwd", "home", "numpy_draw", "torch_seed"}, {k: (plain[k], forked[k]) for k in differs}


def test_template_kernels_start_with_torch_imported_and_draw_their_own_seeds(molde, tmp_path):
    async def go():
        draws = []
        for i in range(2):
            k = _kernel(tmp_path, f"s{i}", molde.socket)
            t0 = time.monotonic()
            await k.start(60)
            try:
                first = await _output(k, "import sys, os; m = sys.modules.get('matplotlib'); print('torch' in sys.modules, "
                                         "m is not None and m.get_configdir() == os.environ['MPLCONFIGDIR'], "
                                         "m is not None and m.get_cachedir() == os.environ['MPLCONFIGDIR'], "
                                         "m is not None and m.get_backend() == 'module://matplotlib_inline.backend_inline')")
                draws.append(await _output(k, "import numpy, random, torch; print(numpy.random.randint(2**31), "
                                              "random.random(), torch.initial_seed(), torch.rand(1).item())"))
            finally:
                await k.shutdown()
            # torch e matplotlib do molde; as pastas do matplotlib são as deste kernel, o backend o do ipykernel
            assert first.split() == ["True", "True", "True", "True"], first
            assert time.monotonic() - t0 < 30
        for a, b in zip(draws[0].split(), draws[1].split()):
            assert a != b, f"dois kernels do molde com o mesmo estado aleatório: {draws}"
    run_async(go())


def test_template_kernels_name_cells_by_a_c_hash_and_tracebacks_still_show_each_cells_lines(molde, tmp_path):
    """O nome de cada célula sai do BLAKE2 (zygote._fast_cell_names), não do murmur2 em Python puro
    do ipykernel: o mesmo texto, o mesmo nome; textos diferentes, nomes diferentes; e o traceback
    de uma função definida numa célula anterior mostra a linha DAQUELA célula ("Cell In[1]")."""
    async def go():
        k = _kernel(tmp_path, "nomes", molde.socket)
        await k.start(60)
        try:
            # 8 MB: o BLAKE2 leva milissegundos; o murmur2 do ipykernel, segundos de CPU
            names = await _output(k, "import ipykernel.compiler as c, time\n"
                                     "t = time.process_time(); a = c.get_file_name('x' * 8_000_000)\n"
                                     "print(time.process_time() - t < 0.5, c.murmur2_x86.__module__ != 'ipykernel.compiler', "
                                     "a == c.get_file_name('x' * 8_000_000), a != c.get_file_name('y'), a.endswith('.py'))")
            await _output(k, "def f():\n    raise ValueError('levantado na primeira célula')\n")
            await _output(k, "x = 1\ny = 2\n")
            tb = await _traceback(k, "f()")
        finally:
            await k.shutdown()
        assert names.split() == ["True"] * 5, names
        assert "raise ValueError('levantado na primeira célula')" in tb and "Cell In[" in tb, tb
    run_async(go())


def test_killing_the_launcher_or_the_template_takes_the_kernel_with_it(molde, tmp_path):
    async def go():
        k = _kernel(tmp_path, "kill", molde.socket)
        await k.start(60)
        pid = int((await _output(k, "import os; print(os.getpid())")).strip())
        assert pid == 2
        box = sandbox.Box.for_run_dir(k.run_dir)
        assert len(box.pids()) >= 3                  # lançador, guarda, init, kernel: na caixa
        os.kill(k.km.provisioner.process.pid, signal.SIGKILL)   # só o lançador, como o jupyter_client faz
        end = time.monotonic() + 10
        while box.pids() and time.monotonic() < end:
            await asyncio.sleep(0.1)
        left = box.pids()
        await k.shutdown()
        assert left == [], f"sobreviveram ao lançador: {left}"
    run_async(go())

    z = zygote.Zygote.start(sandbox.SandboxConfig(enabled=True, python=sys.executable), str(tmp_path))

    async def go2():
        k = _kernel(tmp_path, "kill2", z.socket)
        await k.start(60)
        box = sandbox.Box.for_run_dir(k.run_dir)
        z.proc.kill()                                 # o molde morre: o guarda (PDEATHSIG) e o kernel vão junto
        end = time.monotonic() + 10
        while len(box.pids()) > 1 and time.monotonic() < end:     # sobra só o lançador, que então sai
            await asyncio.sleep(0.1)
        left = box.pids()
        await k.shutdown()
        assert len(left) <= 1, f"sobreviveram ao molde: {left}"
    run_async(go2())
    z.close()


def test_without_a_template_the_launcher_falls_back_to_bwrap(tmp_path):
    async def go():
        k = _kernel(tmp_path, "sem", str(tmp_path / "nao-existe"))
        await k.start(60)
        try:
            out = await _output(k, "import sys, os; print('torch' in sys.modules, os.getuid())")
        finally:
            await k.shutdown()
        return out, (k.run_dir / "kernel.log").read_text(errors="replace")
    out, log = run_async(go())
    assert out.split() == ["False", str(sandbox.NOBODY)]
    assert "AVISO: o molde não iniciou o kernel" in log and "sigo pelo bwrap" in log


def test_the_template_leaves_when_the_grader_closes_its_pipe(tmp_path):
    z = zygote.Zygote.start(sandbox.SandboxConfig(enabled=True, python=sys.executable), str(tmp_path))
    assert z is not None and Path(z.socket).exists()
    proc = z.proc
    z.close()
    assert proc.poll() is not None and not Path(z.dir).exists()


def test_local_workers_ask_the_planners_template_for_kernels():
    """Com o LocalCluster, o planejador inicia um molde só (worker/tasks.local_template), com o cache
    de fontes pronto; o trabalhador não inicia o seu e o kernel.json dele aponta para o do planejador.
    A pasta do molde some na saída; sem `wanted` (cluster de fora, sem sandbox) não há molde."""
    from autograder.worker import tasks

    with tasks.local_template("ag-teste-", sandbox.Limits(), wanted=False) as none:
        assert none is None
    with tasks.local_template("ag-teste-", sandbox.Limits()) as t:
        assert t is not None and Path(t.socket).exists(), t
        assert any(Path(t.mpl_cache).rglob("fontlist-*.json")), list(Path(t.mpl_cache).rglob("*"))
        g = tasks._Grader(tasks.Course(prefix="ag-teste-", release={}, source_hashes={}, seed_db=b"",
                                       local_template=t))
        try:
            assert g.zygote is None
            spec = (g.ws.kernels_dir / sandbox.KERNEL_NAME / "kernel.json").read_text(encoding="utf-8")
            assert json.dumps(t.socket)[1:-1] in spec, spec
            assert any(g.ws.mpl_cache.rglob("fontlist-*.json"))
        finally:
            g.close()
    assert not Path(t.socket).parent.exists()
