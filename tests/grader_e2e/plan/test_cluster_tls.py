"""O cluster que só o professor comanda, de verdade: um `dask scheduler` e um `dask worker` nesta
máquina, com TLS, iniciados pelos comandos do README (tests/support/dask_cluster.py os tira de
`plan/tls.py`, `cluster_commands`, a mesma fonte do README), com os certificados do comando
`certs`. Refaz o ataque C1 da revisão de 2026-12-05: de outro processo, em 127.0.0.1, trocar a
função de correção dos trabalhadores para dar nota máxima a todo teste."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from grading import SLUG, clone_prepared, needs_bwrap, read_csv, run_cli, LIMITS

# O ataque da revisão: nos trabalhadores, toda questão de teste ganha o máximo.
PATCH = """
import importlib, sys
t = importlib.import_module("autograder.worker.tasks")
_grade = t.grade
def grade(course, task):
    out = _grade(course, task)
    for q in out.result.questions:
        if q.kind == "test":
            q.score = q.max_score
    return out
t.grade, t._atacado = grade, True
"""

# Outro processo da máquina, sem o certificado do professor, tenta: TCP puro; TLS com os certificados
# de outra AC; TLS só com a AC certa (pelo Dask e direto, no agendador e no trabalhador). Cada tentativa
# pelo Dask manda PATCH aos trabalhadores.
ATTACKER = r"""
import json, os, socket, ssl, sys
from distributed import Client
from distributed.security import Security
address, worker, ca, other = sys.argv[1:5]
patch = sys.stdin.read()
out = {}
def attempt(name, **kw):
    try:
        c = Client(timeout="5s", set_as_default=False, **kw)
        c.run(exec, patch, {})
        out[name] = "ENTROU"
    except Exception as e:
        out[name] = "recusado: " + type(e).__name__
other_sec = Security(require_encryption=True, tls_ca_file=f"{other}/ca.pem",
                     tls_client_cert=f"{other}/client.pem", tls_client_key=f"{other}/client.key")
attempt("tcp", address=address.replace("tls://", "tcp://"))
attempt("outra AC", address=address, security=other_sec)
attempt("só a AC", address=address, security=Security(tls_ca_file=ca, require_encryption=True))
for name, addr in (("agendador, TLS só com a AC", address), ("trabalhador, TLS só com a AC", worker)):
    host, port = addr.split("://")[1].rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=ca)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE      # quem ataca não precisa conferir o servidor
    try:
        with socket.create_connection((host, int(port)), timeout=5) as s, ctx.wrap_socket(s) as t:
            t.sendall(b"\0" * 64)
            out[name] = "ENTROU" if t.recv(1) else "recusado: fechou"
    except Exception as e:
        out[name] = "recusado: " + type(e).__name__
print(json.dumps(out))
sys.stdout.flush()
os._exit(0)      # sem esperar o Client que não conectou se fechar
"""

# Um trabalhador adulterado (aqui, pelo próprio professor, que tem o certificado): infla as notas
# de `blank` (o ataque) e devolve o resultado de `wrong` com o identificador de outra rodada.
COMPROMISED = PATCH.replace("""    for q in out.result.questions:""", """    if task.student == "wrong":
        out.run_id = "rodada-velha"
    for q in out.result.questions:
        if task.student != "blank":
            break""") + "t._original = _grade\n"

RESTORE = """
import importlib
t = importlib.import_module("autograder.worker.tasks")
if hasattr(t, "_original"):
    t.grade = t._original
    del t._original, t._atacado
"""


def _page(info: dict) -> int:
    """O código HTTP da página dos trabalhadores na porta HTTP do agendador (404: sem páginas)."""
    import urllib.error
    import urllib.request
    url = f"http://127.0.0.1:{info['services']['dashboard']}/info/main/workers.html"
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def _marked(client) -> dict:
    return client.run(lambda: getattr(sys.modules.get("autograder.worker.tasks"), "_atacado", False))


@pytest.fixture(scope="module")
def cluster():
    from dask_cluster import DaskCluster
    c = DaskCluster(1)
    try:
        yield c
    finally:
        c.close()


@needs_bwrap
def test_only_the_instructor_drives_the_cluster_and_a_worker_cannot_set_grades(cluster, arquivos, tmp_path):
    import shutil
    from autograder.plan import tls
    with cluster.client() as c:
        info = c.scheduler_info()
        workers = list(info["workers"])
    # tudo escuta em TLS: o agendador e o trabalhador (que também roda o que lhe mandam)
    assert info["address"] == cluster.address and all(w.startswith("tls://127.0.0.1:") for w in workers)
    assert _page(info) == 404              # a porta HTTP do agendador não mostra as tarefas

    tls.make_certs(tmp_path / "outra-ac")
    tries = _attack(cluster.address, workers[0], cluster.tls_dir, tmp_path / "outra-ac")
    assert all(v.startswith("recusado") for v in tries.values()), tries
    with cluster.client() as c:
        assert not any(_marked(c).values())          # nada chegou aos trabalhadores

    # o professor corrige pelo comando do README; um trabalhador adulterado é pego, não obedecido
    ws = clone_prepared(arquivos["ws"], tmp_path / "ws")
    subs = tmp_path / "entregas"
    for s in ("correct", "blank", "wrong"):
        shutil.copytree(arquivos["subs"] / s, subs / s)
    with cluster.client() as c:
        c.run(exec, COMPROMISED, {})
    try:
        p = run_cli("grade", subs, "--workspace", ws, "--solutions", arquivos["sol"], *cluster.grade_args,
                    "--no-feedback", "--no-report", *LIMITS, check=False)
    finally:
        with cluster.client() as c:
            c.run(exec, RESTORE, {})
            assert not any(_marked(c).values())
    assert p.returncode == 1, p.stderr[-3000:]
    assert f"com o Dask ({cluster.address}, 1 trabalhador(es))" in p.stderr, p.stderr[-3000:]
    rows = read_csv(ws / "grades.csv")
    assert (rows["correct"]["status"], float(rows["correct"]["score"])) == ("ok", 5.0), rows["correct"]
    for s, why in (("blank", "mas as saídas do teste no notebook corrigido dão 0"),
                   ("wrong", "não é desta rodada de correção")):
        row = rows[s]
        assert (row["status"], float(row["score"])) == ("crashed", 0.0), row
        assert "resultado recusado: o que o trabalhador tls://127.0.0.1:" in row["details"], row
        assert why in row["details"], row
        assert not (ws / "autograded" / s).exists() or not any((ws / "autograded" / s).rglob("*.ipynb"))
    log = (ws / ".autograder" / "logs" / "failures.log").read_text(encoding="utf-8")
    assert f"--- blank/{SLUG}" in log and f"--- wrong/{SLUG}" in log


def _attack(address: str, worker: str, tls_dir, other) -> dict:
    from autograder.plan import tls
    p = subprocess.run([sys.executable, "-c", ATTACKER, address, worker, str(tls_dir / tls.CA), str(other)],
                       input=PATCH, capture_output=True, text=True, timeout=120)
    tries = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(tries) == 5, p.stderr[-2000:]
    return tries


@needs_bwrap
def test_a_plain_tcp_scheduler_is_refused_and_the_local_cluster_uses_tls(tmp_path):
    """Sem --insecure-cluster, `grade --scheduler tcp://...` para antes de conectar; o LocalCluster
    padrão de `grade` escuta só em TLS, e outro processo da máquina não entra nele."""
    from autograder.plan import tls
    from autograder.plan.runner import GradeOptions, dask_client
    p = run_cli("grade", tmp_path, "--workspace", tmp_path / "ws", "--scheduler", "tcp://127.0.0.1:9", check=False)
    assert p.returncode == 2 and "não tem TLS" in p.stderr and "--insecure-cluster" in p.stderr, p.stderr
    tls.make_certs(tmp_path / "outra-ac")
    env = dict(os.environ)
    try:
        with dask_client(GradeOptions(submissions=tmp_path, jobs=1)) as c:
            info = c.scheduler_info()
            assert info["address"].startswith("tls://127.0.0.1:") and _page(info) == 404
            tries = _attack(info["address"], list(info["workers"])[0], tmp_path / "outra-ac", tmp_path / "outra-ac")
            assert all(v.startswith("recusado") for v in tries.values()), tries
            assert not any(_marked(c).values())
    finally:          # o LocalCluster do Dask escreve variáveis no ambiente deste processo
        os.environ.clear()
        os.environ.update(env)
