"""O cluster Dask que só o professor comanda: TLS com autenticação dos dois lados.

Quem fala com o agendador de um cluster Dask pode mandar qualquer função rodar
nos trabalhadores (`Client.run`), e os trabalhadores rodam a sandbox como root:
um agendador em `tcp://` aberto é um convite para rodar código como root em
todas as máquinas que corrigem e para mudar as notas. Aqui:

- `make_certs` cria, com o `openssl` do sistema, uma autoridade certificadora
  (AC) só desta turma e um certificado para cada papel (agendador,
  trabalhador, professor), todos assinados por ela; `cluster_commands` escreve
  os comandos que os usam (o README mostra a saída dele, e o teste de ponta a
  ponta roda os mesmos comandos).
- O Dask (`distributed.security.Security`) exige nas duas pontas de cada
  conexão um certificado assinado pela AC: sem ele, nem o agendador nem os
  trabalhadores aceitam a conexão.
- `scheduler_security` é a política de `grade --scheduler`: `tls://` com os
  certificados; `tcp://` aberto, mesmo em 127.0.0.1 (numa máquina com outros
  usuários a porta local é de todos), só com `--insecure-cluster`.
- `temporary_security` dá ao `LocalCluster` de `grade` uma AC de uso único,
  que não fica em arquivo (o Dask só a escreve por um instante numa pasta
  temporária privada, ao montar cada conexão): ele também escuta em portas
  TCP de 127.0.0.1, que qualquer usuário da máquina alcança.

O Dask não confere o nome da máquina no certificado (ele espera endereços IP):
quem tem qualquer certificado assinado pela AC entra no cluster, em qualquer
papel. A chave da AC (`ca.key`) fica só com o professor.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import shlex
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

CA, CA_KEY = "ca.pem", "ca.key"
ROLES = ("scheduler", "worker", "client")
DAYS = 365
PORT = 8786
# as máquinas que corrigem: um processo de uma thread por núcleo (o README usa 16)
NWORKERS = 16
# Mesmo com --no-dashboard, o agendador abre uma porta HTTP em todas as interfaces, sem TLS nem
# senha, com páginas que listam os trabalhadores e as tarefas (os nomes delas têm os dos alunos):
# sem rotas, ela só responde 404.
NO_PAGES = "DASK_DISTRIBUTED__SCHEDULER__HTTP__ROUTES"


def cert(role: str) -> str:
    return f"{role}.pem"


def key(role: str) -> str:
    return f"{role}.key"


def _openssl(*args: str, cwd: Path) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise ValueError("o comando `openssl` não foi encontrado; instale-o "
                         "(`sudo apt-get install -y openssl`, ou `make sandbox-deps`)")
    r = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise ValueError(f"o openssl falhou ({' '.join(args[:2])}): {r.stderr.strip()[-400:]}")


def _san(hosts: list[str]) -> str:
    out = []
    for h in dict.fromkeys(hosts):
        try:
            out.append(f"IP:{ipaddress.ip_address(h)}")
        except ValueError:
            out.append(f"DNS:{h}")
    return ",".join(out)


_EC = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")


def _write_ca(d: Path, days: int) -> None:
    _openssl("req", "-x509", "-new", *_EC, "-keyout", CA_KEY, "-out", CA, "-days", str(days),
             "-subj", "/CN=autograder-ca", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)


def _write_leaf(d: Path, role: str, hosts: list[str], days: int) -> None:
    """O certificado de um papel, assinado pela AC de `d` (serve de servidor e de cliente:
    no Dask, o trabalhador também é cliente do agendador, e o agendador, dos trabalhadores)."""
    ext = d / f"{role}.ext"
    ext.write_text("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                   "extendedKeyUsage=serverAuth,clientAuth\n"
                   f"subjectAltName={_san(hosts)}\n", encoding="ascii")
    csr = d / f"{role}.csr"
    try:
        _openssl("req", "-new", *_EC, "-keyout", key(role), "-out", csr.name,
                 "-subj", f"/CN=autograder-{role}", cwd=d)
        _openssl("x509", "-req", "-in", csr.name, "-CA", CA, "-CAkey", CA_KEY,
                 "-set_serial", "0x" + secrets.token_hex(16), "-days", str(days),
                 "-extfile", ext.name, "-out", cert(role), cwd=d)
    finally:
        ext.unlink(missing_ok=True)
        csr.unlink(missing_ok=True)


def default_hosts() -> list[str]:
    return ["localhost", "127.0.0.1", socket.gethostname()]


def make_certs(out: Path, hosts: list[str] | None = None, days: int = DAYS, force: bool = False) -> list[Path]:
    """A AC e os certificados de agendador, trabalhador e professor em `out` (pasta 0700,
    chaves 0600). Não sobrescreve uma AC que já existe (os trabalhadores que já têm os
    certificados dela deixariam de entrar), a não ser com `force`."""
    out = Path(out).expanduser().absolute()
    names = [CA, CA_KEY, *(f(r) for r in ROLES for f in (cert, key))]
    if not force and any((out / n).exists() for n in names):
        raise ValueError(f"{out} já tem certificados ({', '.join(n for n in names if (out / n).exists())}); "
                         "use outra pasta, ou --force para trocar a AC (os trabalhadores terão de "
                         "receber os novos)")
    hosts = [*(hosts or []), *default_hosts()]
    out.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o700)
    with tempfile.TemporaryDirectory(dir=out, prefix=".novo-") as tmp:
        d = Path(tmp)
        _write_ca(d, days)
        for role in ROLES:
            _write_leaf(d, role, hosts, days)
        for n in names:
            os.chmod(d / n, 0o600 if n.endswith(".key") else 0o644)
            os.replace(d / n, out / n)
    return [out / n for n in names]


def cluster_commands(tls_dir: str | Path, host: str, port: int = PORT, nworkers: int = NWORKERS,
                     submissions: str = "entregas/", workspace: str = "~/correcao-2026") -> list[tuple[str, str]]:
    """Os comandos do cluster com TLS, (para quem, comando): o que `certs` mostra e o README
    copia (tests/grader/plan/test_tls.py confere), e o que o teste de ponta a ponta roda."""
    d = str(tls_dir).rstrip("/")
    q = shlex.quote

    def tls(role: str) -> str:
        return f"--tls-ca-file {q(f'{d}/{CA}')} --tls-cert {q(f'{d}/{cert(role)}')} --tls-key {q(f'{d}/{key(role)}')}"
    address = f"tls://{host}:{port}"
    return [
        (f"no agendador, {host} (recebe {CA}, {cert('scheduler')} e {key('scheduler')})",
         f"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=1 {NO_PAGES}={q('[]')} "
         f".venv/bin/dask scheduler --protocol tls "
         f"--host {q(host)} --port {port} --no-dashboard {tls('scheduler')}"),
        (f"em cada máquina que corrige (recebe {CA}, {cert('worker')} e {key('worker')})",
         f".venv/bin/dask worker {address} {tls('worker')} "
         f"--nworkers {nworkers} --nthreads 1 --memory-limit 0 --no-dashboard"),
        (f"no professor (o único com {cert('client')}, {key('client')} e {CA_KEY})",
         f".venv/bin/python -m autograder grade {submissions} --workspace {workspace} "
         f"--scheduler {address} --tls {q(d)}"),
    ]


_BREAKS = (" .venv/bin/dask scheduler ", " --host ", " --tls-ca-file ", " --tls-key ", " --nworkers ", " --scheduler ")


def render_commands(commands: list[tuple[str, str]]) -> str:
    """Os comandos como o README os mostra: um comentário por máquina e o comando dela,
    quebrado em linhas com `\\` (`commands_of` desfaz)."""
    out = []
    for who, cmd in commands:
        for b in _BREAKS:
            cmd = cmd.replace(b, " \\\n    " + b[1:])
        out.append(f"# {who}:\n{cmd}")
    return "\n".join(out) + "\n"


def commands_of(text: str) -> list[str]:
    """Os comandos de um texto de `render_commands` (sem os comentários), uma linha cada."""
    text = text.replace("\\\n", " ")
    return [" ".join(line.split()) for line in text.splitlines() if line.strip() and not line.startswith("#")]


# ----------------------------------------------------------------------------- o lado do professor

def client_security(tls_dir: Path):
    """O `Security` do professor: a AC e o certificado de cliente de `tls_dir`, e só TLS."""
    from distributed.security import Security
    d = Path(tls_dir).expanduser()
    need = [d / CA, d / cert("client"), d / key("client")]
    missing = [p.name for p in need if not p.is_file()]
    if missing:
        raise ValueError(f"faltam em {d}: {', '.join(missing)} (crie com "
                         f"`python -m autograder certs --out {d}`)")
    return Security(require_encryption=True, tls_ca_file=str(need[0]),
                    tls_client_cert=str(need[1]), tls_client_key=str(need[2]))


def temporary_security():
    """TLS para o `LocalCluster` de uma correção: uma AC e um certificado novos, feitos numa
    pasta temporária apagada em seguida (ficam só na memória deste processo e dos
    trabalhadores que ele inicia). None se não há `openssl` nesta máquina."""
    from distributed.security import Security
    if shutil.which("openssl") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="ag-tls-") as tmp:
        d = Path(tmp)
        _write_ca(d, 2)
        _write_leaf(d, "worker", ["127.0.0.1", "localhost"], 2)
        ca, crt, k = ((d / n).read_text(encoding="ascii") for n in (CA, cert("worker"), key("worker")))
    return Security(require_encryption=True, tls_ca_file=ca,
                    **{f"tls_{r}_{kind}": v for r in ROLES for kind, v in (("cert", crt), ("key", k))})


def _address_of(scheduler: str) -> str:
    """O endereço de `--scheduler`: ele mesmo, ou o que o arquivo do agendador diz."""
    p = Path(scheduler).expanduser()
    if p.is_file():
        try:
            return str(json.loads(p.read_text(encoding="utf-8"))["address"])
        except (ValueError, KeyError, OSError) as e:
            raise ValueError(f"arquivo do agendador ilegível: {p} ({e})") from None
    return scheduler


def insecure_warning(address: str) -> str:
    return (f"AVISO: cluster Dask SEM TLS ({address}, --insecure-cluster): quem alcançar a porta "
            "do agendador ou de um trabalhador roda código com os direitos dos trabalhadores "
            "(root, se rodam como root), lê as entregas e os testes ocultos e muda as notas. "
            "Use só numa rede em que ninguém mais entra.")


def scheduler_security(scheduler: str, tls_dir: Path | None, insecure: bool):
    """A política de `--scheduler`: (Security ou None, aviso ou None), ou ValueError.

    `tls://` exige os certificados (`--tls PASTA`, ou os da configuração do Dask,
    `distributed.comm.tls.*`); qualquer outro protocolo, inclusive `tcp://` em 127.0.0.1,
    só com `insecure` (numa máquina com mais usuários, a porta local é de todos eles)."""
    address = _address_of(scheduler)
    scheme = address.split("://", 1)[0] if "://" in address else "tcp"
    if scheme == "tls":
        if tls_dir is not None:
            return client_security(tls_dir), None
        from distributed.security import Security
        sec = Security(require_encryption=True)          # a configuração do Dask, se tiver TLS
        if sec.tls_ca_file and sec.tls_client_cert:
            return sec, None
        raise ValueError(f"o agendador {address} é tls://, mas faltam os certificados: "
                         "--tls PASTA (a pasta de `python -m autograder certs`)")
    if tls_dir is not None:
        raise ValueError(f"--tls com um agendador {scheme}:// ({address}): o endereço tem de ser "
                         "tls://, como o `dask scheduler --protocol tls` mostra")
    if insecure:
        return None, insecure_warning(address)
    raise ValueError(
        f"o agendador {address} não tem TLS: quem alcança essa porta (em 127.0.0.1, qualquer "
        "usuário desta máquina) roda código como os trabalhadores, que rodam como root, e muda "
        "as notas. Crie os certificados com `python -m autograder certs --out PASTA`, que mostra "
        "os comandos do agendador e dos trabalhadores, e use --scheduler tls://... --tls PASTA. "
        "Para usar TCP aberto mesmo assim, numa rede só sua: --insecure-cluster")
