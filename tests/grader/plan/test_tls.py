"""O cluster que só o professor comanda (plan/tls.py), sem Dask rodando: o comando `certs`, o
aperto de mão TLS com os contextos que o próprio Dask monta, os comandos do README e a política
de `grade --scheduler`. O cluster de verdade está em tests/grader_e2e/plan/test_cluster_tls.py."""

from __future__ import annotations

import json
import socket
import ssl
import stat
import threading
from pathlib import Path

import dask
import pytest

from autograder.plan import tls

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """Uma pasta de `python -m autograder certs`, feita uma vez pelo próprio comando."""
    import contextlib
    import io

    out = tmp_path_factory.mktemp("certs") / "tls"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = _cli("certs", "--out", str(out), "--host", "10.0.0.5")
    return {"dir": out, "rc": rc, "stdout": buf.getvalue()}


def _cli(*argv: str) -> int:
    """Um comando da linha de comando neste processo (sem o `main`, que muda o PATH)."""
    from autograder import cli
    args = cli.build_parser().parse_args(list(argv))
    args.client = None
    return {"certs": cli.cmd_certs, "grade": cli.cmd_grade}[args.command](args)


def _handshake(server_ctx: ssl.SSLContext, client_ctx: ssl.SSLContext) -> dict:
    """Um aperto de mão TLS por um par de sockets; os erros de cada lado (vazio: os dois aceitaram)."""
    a, b = socket.socketpair()
    a.settimeout(10)
    b.settimeout(10)
    errors: dict = {}

    def serve():
        try:
            with server_ctx.wrap_socket(a, server_side=True) as s:
                assert s.recv(1) == b"x"
                s.sendall(b"y")
        except (OSError, AssertionError) as e:
            errors["server"] = e

    t = threading.Thread(target=serve)
    t.start()
    try:
        with client_ctx.wrap_socket(b) as c:
            c.sendall(b"x")
            if c.recv(1) != b"y":
                errors["client"] = "sem resposta"
    except OSError as e:
        errors["client"] = e
    finally:
        t.join(10)
        a.close()
        b.close()
    return errors


def _server(sec, role="scheduler") -> ssl.SSLContext:
    return sec.get_listen_args(role)["ssl_context"]


def _client(sec, role="client") -> ssl.SSLContext:
    return sec.get_connection_args(role)["ssl_context"]


def _roles(d: Path):
    from distributed.security import Security
    return Security(require_encryption=True, tls_ca_file=str(d / tls.CA),
                    **{f"tls_{r}_{k}": str(d / f(r)) for r in tls.ROLES for k, f in (("cert", tls.cert), ("key", tls.key))})


def test_certs_writes_a_private_ca_and_one_certificate_per_role(certs, capsys):
    d = certs["dir"]
    assert certs["rc"] == 0
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    names = sorted(p.name for p in d.iterdir())
    assert names == sorted([tls.CA, tls.CA_KEY, *(f(r) for r in tls.ROLES for f in (tls.cert, tls.key))])
    for p in d.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == (0o600 if p.suffix == ".key" else 0o644), p
    # o que o comando mostra são os comandos de cluster_commands, com a pasta e a máquina dadas
    assert tls.render_commands(tls.cluster_commands(d, "10.0.0.5")) in certs["stdout"]
    # uma segunda vez na mesma pasta não troca a AC (os trabalhadores que já a têm deixariam de entrar)
    before = (d / tls.CA).read_bytes()
    assert _cli("certs", "--out", str(d)) == 2
    assert "já tem certificados" in capsys.readouterr().err
    assert (d / tls.CA).read_bytes() == before


def test_each_role_accepts_the_others_and_refuses_a_stranger(certs):
    sec = _roles(certs["dir"])
    for server, client in (("scheduler", "client"), ("scheduler", "worker"), ("worker", "scheduler"),
                           ("worker", "client"), ("worker", "worker")):
        assert _handshake(_server(sec, server), _client(sec, client)) == {}, (server, client)
    # outra AC, com certificado de cliente e tudo: o agendador recusa (e o cliente também recusa o agendador)
    stranger = tls.temporary_security()
    assert "server" in _handshake(_server(sec), _client(stranger))
    assert "client" in _handshake(_server(stranger), _client(sec))
    # só a AC certa, sem certificado de cliente: o agendador exige um
    only_ca = ssl.create_default_context(cafile=str(certs["dir"] / tls.CA))
    only_ca.check_hostname = False
    assert "server" in _handshake(_server(sec), only_ca)
    # o LocalCluster: o certificado de uso único vale para todos os papéis, e só para ele mesmo
    local = tls.temporary_security()
    assert _handshake(_server(local), _client(local, "worker")) == {}
    assert "server" in _handshake(_server(local), _client(stranger))


def test_the_readme_shows_the_commands_that_certs_prints_and_the_e2e_test_runs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".venv/bin/python -m autograder certs --out /home/prof/tls --host 10.0.0.5\n" in text
    shown = tls.render_commands(tls.cluster_commands("/home/prof/tls", "10.0.0.5"))
    assert shown in text
    # o que o teste de ponta a ponta lê de volta (tests/support/dask_cluster.py) é o mesmo comando
    assert tls.commands_of(shown) == [c for _, c in tls.cluster_commands("/home/prof/tls", "10.0.0.5")]
    scheduler, worker, grade = tls.commands_of(shown)
    assert "--protocol tls" in scheduler and "--no-dashboard" in scheduler and "tls://10.0.0.5:8786" in worker
    assert "--tls-cert /home/prof/tls/scheduler.pem" in scheduler and "--tls-key /home/prof/tls/worker.key" in worker
    assert grade.endswith("--scheduler tls://10.0.0.5:8786 --tls /home/prof/tls")


@pytest.mark.parametrize("address", ["tcp://10.0.0.5:8786", "tcp://127.0.0.1:8786", "10.0.0.5:8786",
                                     "ws://10.0.0.5:8786"])
def test_a_scheduler_without_tls_is_refused_unless_the_instructor_says_so(address, tmp_path):
    with pytest.raises(ValueError, match="--insecure-cluster"):
        tls.scheduler_security(address, None, insecure=False)
    sec, warning = tls.scheduler_security(address, None, insecure=True)
    assert sec is None and "SEM TLS" in warning and address in warning
    # o mesmo pelo arquivo do agendador
    f = tmp_path / "agendador.json"
    f.write_text(json.dumps({"address": address}), encoding="utf-8")
    with pytest.raises(ValueError, match="não tem TLS"):
        tls.scheduler_security(str(f), None, insecure=False)


def test_a_tls_scheduler_needs_the_certificates(certs, tmp_path):
    d = certs["dir"]
    sec, warning = tls.scheduler_security("tls://10.0.0.5:8786", d, insecure=False)
    assert warning is None and sec.require_encryption
    assert (sec.tls_ca_file, sec.tls_client_cert, sec.tls_client_key) == (
        str(d / "ca.pem"), str(d / "client.pem"), str(d / "client.key"))
    f = tmp_path / "agendador.json"
    f.write_text(json.dumps({"address": "tls://10.0.0.5:8786"}), encoding="utf-8")
    assert tls.scheduler_security(str(f), d, insecure=False)[0].tls_client_cert == str(d / "client.pem")
    with pytest.raises(ValueError, match="faltam os certificados: --tls"):
        tls.scheduler_security("tls://10.0.0.5:8786", None, insecure=False)
    with pytest.raises(ValueError, match="faltam em .*client.pem, client.key"):
        tls.scheduler_security("tls://10.0.0.5:8786", tmp_path, insecure=False)
    with pytest.raises(ValueError, match="tem de ser tls://"):
        tls.scheduler_security("tcp://10.0.0.5:8786", d, insecure=True)
    # certificados dados pela configuração do Dask, sem --tls
    with dask.config.set({"distributed.comm.tls.ca-file": str(d / "ca.pem"),
                          "distributed.comm.tls.client.cert": str(d / "client.pem"),
                          "distributed.comm.tls.client.key": str(d / "client.key")}):
        sec, _ = tls.scheduler_security("tls://10.0.0.5:8786", None, insecure=False)
    assert sec.tls_client_cert == str(d / "client.pem") and sec.require_encryption


def test_grade_refuses_a_plain_tcp_scheduler_before_grading_anything(tmp_path, capsys):
    subs = tmp_path / "entregas"
    subs.mkdir()
    rc = _cli("grade", str(subs), "--workspace", str(tmp_path / "ws"), "--scheduler", "tcp://127.0.0.1:9")
    err = capsys.readouterr().err
    assert rc == 2 and "não tem TLS" in err and "autograder certs" in err, err
    assert not (tmp_path / "ws" / ".autograder" / "results").exists()
