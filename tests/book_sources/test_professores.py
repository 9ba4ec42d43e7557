"""A página para quem adota o curso (book/apendices/professores.md, issue 41).

- está no sumário;
- os comandos dela usam só opções que o corretor aceita (`--help` de cada subcomando), nenhuma
  inventada;
- a medida que ela cola (bench/professores-correcao.json) cobre todos os cadernos, tem data,
  máquina e a carga, e a página diz que a máquina estava carregada.
"""

import contextlib
import io
import json
import os
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "book" / "apendices" / "professores.md"
MEDIDA = ROOT / "bench" / "professores-correcao.json"


def _commands(text: str) -> list[str]:
    """As linhas `... -m autograder <comando> ...` dos blocos ```bash (com as continuações `\\`)."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        out += [ln.strip() for ln in joined.splitlines() if "-m autograder " in ln]
    return out


def _help(command: str) -> str:
    from autograder.cli import main

    buf, env = io.StringIO(), dict(os.environ)
    try:
        with contextlib.redirect_stdout(buf), contextlib.suppress(SystemExit):
            main([command, "--help"])
    finally:        # main() prepara o ambiente do corretor (AUTOGRADER_REPO, PATH): desfeito aqui
        os.environ.clear()
        os.environ.update(env)
    return buf.getvalue()


def test_page_is_in_the_table_of_contents():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert "book/apendices/professores" in files


def test_commands_use_only_options_the_grader_accepts():
    commands = _commands(PAGE.read_text(encoding="utf-8"))
    used = {re.search(r"-m autograder (\w+)", c).group(1) for c in commands}
    assert {"grade", "report", "feedback"} <= used, commands
    for c in commands:
        sub = re.search(r"-m autograder (\w+)", c).group(1)
        flags = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", c))
        known = set(re.findall(r"--[a-z][a-z-]*", _help(sub)))
        assert flags <= known, f"{c}: opções que `{sub}` não tem: {sorted(flags - known)}"
    # e as opções citadas no texto (fora dos blocos) também existem em algum comando
    prose = re.sub(r"```.*?```", "", PAGE.read_text(encoding="utf-8"), flags=re.S)
    cited = set(re.findall(r"`(--[a-z][a-z-]*)", prose))
    every = set().union(*(re.findall(r"--[a-z][a-z-]*", _help(s)) for s in ("grade", "report", "deadlines")))
    assert cited <= every, sorted(cited - every)


def test_measurement_covers_every_notebook_with_date_machine_and_load():
    from autograder import fontes

    m = json.loads(MEDIDA.read_text(encoding="utf-8"))
    assert set(m["segundos_por_caderno"]) == set(fontes.slugs()) and len(fontes.slugs()) == 14
    assert all(v > 0 for v in m["segundos_por_caderno"].values())
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", m["data"]) and m["maquina"]["nucleos"] == 2
    assert m["maquina"]["gpu"] is None and m["maquina"]["carga_media_1min_inicio"] > 2
    assert "--jobs 2" in m["comando"] and m["parede_correcao_s"] <= m["parede_total_s"]
    text = PAGE.read_text(encoding="utf-8")
    assert "carregada" in text and "sem GPU" in text
    # cada número da medida entra pela glue, não digitado na prosa
    for key in ("prof_total", "prof_correcao", "prof_soma", "prof_data", "prof_carga_ini"):
        assert f"{{glue:text}}`{key}`" in text
