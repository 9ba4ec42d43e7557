"""Publicação: o workflow do GitHub Pages, o `make publish` e o `make pdf`.

- O workflow (.github/workflows/livro.yml) passa no esquema oficial de
  workflows do GitHub (o da SchemaStore que vem no check-jsonschema, sem rede),
  constrói com o mesmo comando do README (`make book`) e publica o que esse
  comando escreve (`_build/html`) com upload-pages-artifact + deploy-pages.
- `make publish` (ghp-import) põe _build/html num ramo gh-pages e o envia: o
  mesmo comando do Makefile roda aqui num repositório temporário, com um
  remoto local.
- `make pdf` imprime o livro inteiro no Chromium: o PDF existe, tem a ordem de
  grandeza de páginas esperada, as fórmulas compostas e o título de cada capítulo.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "livro.yml"
BIN = ROOT / ".venv" / "bin"
HTML = ROOT / "_build" / "html"

pytestmark = pytest.mark.slow


def _lint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=120)


def test_workflow_is_valid_for_github_actions(tmp_path):
    r = _lint(WORKFLOW)
    assert r.returncode == 0, r.stdout + r.stderr
    # O linter reprova um workflow quebrado (senão o teste acima não diria nada).
    broken = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    del broken["jobs"]["build"]["runs-on"]
    broken["jobs"]["deploy"]["permissions"]["pages"] = "sim"
    (tmp_path / "quebrado.yml").write_text(yaml.safe_dump(broken), encoding="utf-8")
    assert _lint(tmp_path / "quebrado.yml").returncode != 0


def test_workflow_builds_with_the_readme_command_and_deploys_to_pages():
    wf = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = wf.get("on", wf.get(True))   # o YAML 1.1 lê a chave `on` como True
    assert triggers["push"]["branches"] == ["main"]
    build, deploy = wf["jobs"]["build"], wf["jobs"]["deploy"]
    runs = [s.get("run", "") for s in build["steps"]]
    assert any(re.match(r"make book\b", r) for r in runs), runs
    assert "make book" in (ROOT / "README.md").read_text(encoding="utf-8")
    uses = {s["uses"].split("@")[0]: s for s in build["steps"] + deploy["steps"] if "uses" in s}
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == "_build/html"
    assert "actions/deploy-pages" in uses
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert "refs/heads/main" in deploy["if"]
    # O `make book` local escreve o que o workflow publica.
    assert (HTML / "index.html").exists(), "rode `make book` (o `make test` faz isso antes)"


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, timeout=60)


def test_make_publish_pushes_the_site_to_gh_pages(tmp_path):
    assert (HTML / "index.html").exists(), "rode `make book` (o `make test` faz isso antes)"
    dry = subprocess.run(["make", "-n", "publish", "PUBLISH_REMOTE=origin"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    command = re.search(r"^\S*ghp-import .*?_build/html$", dry.replace("\\\n", ""), re.M | re.S)
    assert command, dry
    remote, work = tmp_path / "remoto.git", tmp_path / "clone"
    _git("init", "--bare", "-q", str(remote), cwd=tmp_path)
    _git("init", "-q", str(work), cwd=tmp_path)
    for k, v in (("user.name", "teste"), ("user.email", "teste@exemplo.org")):
        _git("config", k, v, cwd=work)
    _git("commit", "-q", "--allow-empty", "-m", "início", cwd=work)
    _git("remote", "add", "origin", str(remote), cwd=work)
    line = command.group(0).replace("_build/html", str(HTML))
    line = re.sub(r"^\S*ghp-import", str(BIN / "ghp-import"), line)
    subprocess.run(["bash", "-c", line], cwd=work, check=True, capture_output=True, text=True, timeout=300)
    files = subprocess.run(["git", "ls-tree", "-r", "--name-only", "gh-pages"], cwd=remote,
                           capture_output=True, text=True, check=True).stdout.split()
    assert {"index.html", ".nojekyll", "book/intro.html"} <= set(files)
    assert any(f.startswith("_static/mathjax/") for f in files)


def test_make_pdf_prints_the_whole_book():
    from pypdf import PdfReader

    pdf = ROOT / "_build" / "pdf" / "atencao-causal.pdf"
    r = subprocess.run(["make", "pdf"], cwd=ROOT, capture_output=True, text=True, timeout=1500)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "fórmulas compostas pelo MathJax" in r.stdout
    formulas = int(re.search(r"\((\d+) fórmulas", r.stdout).group(1))
    assert formulas > 100, r.stdout
    reader = PdfReader(pdf)
    # 12 capítulos e os apêndices: ~120 páginas A4 hoje; menos de 50 ou mais de
    # 600 quer dizer páginas faltando ou algo que estourou (ex.: saída gigante).
    assert 50 <= len(reader.pages) <= 600, len(reader.pages)
    text = "\n".join(p.extract_text() for p in reader.pages)
    titles = [re.search(r"^# (.+)$", p.read_text(encoding="utf-8"), re.M).group(1)
              for p in sorted(ROOT.glob("book/parte*/*.md"))]
    plain = [t for t in titles if "$" not in t]
    assert plain and all(t in text for t in plain), [t for t in plain if t not in text]
    assert "$$" not in text and "\\frac" not in text and "\\sqrt" not in text   # TeX cru


def _print_pdf(site, out, timeout_s):
    # Num processo à parte, como o `make pdf` roda: a API síncrona do Playwright
    # não abre dentro de outra (o Chromium da sessão de testes de navegador).
    return subprocess.run([sys.executable, str(ROOT / "book" / "print_pdf.py"), str(site), str(out),
                           "--timeout", str(timeout_s)],
                          capture_output=True, text=True, timeout=timeout_s + 120)


# Um MathJax de mentira que só aparece depois de a página terminar de carregar,
# como o script `defer` do MathJax numa página única enorme numa máquina lenta.
LATE_MATHJAX = """<!DOCTYPE html><html lang="pt-BR"><head><meta charset="utf-8"><title>t</title></head>
<body><p>Fórmula: <mjx-container>x</mjx-container></p><script>
window.addEventListener("load", () => setTimeout(() => {
  window.MathJax = {startup: {promise: Promise.resolve()}, typesetPromise: () => Promise.resolve()};
}, %d));
</script></body></html>"""


def test_pdf_waits_for_a_mathjax_that_starts_late(tmp_path):
    """A CI falhou uma vez porque o MathJax ainda não tinha rodado quando a rede parou."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(LATE_MATHJAX % 2000, encoding="utf-8")
    r = _print_pdf(site, tmp_path / "livro.pdf", timeout_s=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(1 fórmula composta pelo MathJax" in r.stdout, r.stdout
    assert (tmp_path / "livro.pdf").read_bytes().startswith(b"%PDF")


def test_pdf_without_mathjax_stops_with_a_clear_message(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(LATE_MATHJAX % 600_000, encoding="utf-8")
    r = _print_pdf(site, tmp_path / "livro.pdf", timeout_s=3)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "erro: o MathJax não carregou na página única em 3 s" in r.stderr, r.stderr
    assert not (tmp_path / "livro.pdf").exists()
