"""O placar e as mensagens dos testes falam igual nos 14 cadernos (issue 41).

- uma tarefa intocada é "⬜ ainda não feita" em todo capítulo, inclusive no 13, cujo guarda diz
  "o código ainda tem o `raise NotImplementedError`";
- os títulos das tarefas no placar não mostram TeX cru (`$T \\times T$`);
- os números das mensagens de `conferir` vêm no formato brasileiro (vírgula decimal), e um
  resultado escalar não aparece como "na posição ()".
"""

import json
import re
from pathlib import Path

import pytest

from autograder import fontes
from autograder.authoring.nbbuild import CONFERIR

ROOT = Path(__file__).resolve().parents[2]
TAREFA = re.compile(r"_tarefa\((\d+), ('(?:[^'\\]|\\.)*'), ")


def _namespace():
    ns: dict = {"__name__": "__main__"}
    exec(compile(CONFERIR, "<conferir>", "exec"), ns)
    return ns


def _titulos():
    """(slug, título) de toda célula de testes dos cadernos de exercícios gerados."""
    import ast

    out = []
    for slug in fontes.slugs():
        nb = json.loads((ROOT / "exercises" / slug / f"{slug}.ipynb").read_text(encoding="utf-8"))
        for c in nb["cells"]:
            for m in TAREFA.finditer("".join(c["source"])):
                out.append((slug, ast.literal_eval(m.group(2))))
    return out


def test_every_notebook_has_titles_and_fourteen_notebooks():
    slugs = {s for s, _ in _titulos()}
    assert len(slugs) == 14, sorted(slugs)


def test_scoreboard_titles_have_no_raw_tex(capsys):
    ns = _namespace()
    titulos = _titulos()
    for i, (slug, titulo) in enumerate(titulos, 1):
        ns["_PLACAR"][i] = [titulo, "test_x", slug, "falta", ""]
    ns["placar"]()
    linhas = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Tarefa ")]
    assert len(linhas) == len(titulos) >= 14 * 3
    assert [ln for ln in linhas if "$" in ln or "\\" in ln] == []
    assert [ln for ln in linhas if re.match(r"Tarefa \d+ — :", ln)] == []   # nenhum título vazio


def test_tex_titles_become_readable_text():
    ns = _namespace()
    assert ns["_sem_tex"]("atenção em blocos, sem a matriz $T \\times T$") == "atenção em blocos, sem a matriz T × T"
    assert ns["_sem_tex"]("quanto custa $S$") == "quanto custa S"
    assert ns["_sem_tex"]("suavização add-$k$") == "suavização add-k"


def _mensagens_de_nao_feita():
    """As mensagens de 'ainda não feita' que os guardas das fontes levantam (FalhaNoTeste com
    `NotImplementedError` no texto), como f-strings com {nome}."""
    out = []
    for fonte in sorted((ROOT / "autograder" / "fontes").glob("*.md")):
        texto = fonte.read_text(encoding="utf-8")
        for m in re.finditer(r'FalhaNoTeste\(\s*((?:f?"[^"\n]*"\s*)+)\)', texto):
            partes = re.findall(r'f?"([^"\n]*)"', m.group(1))
            msg = "".join(partes).replace("{nome}", "Tarefa 1")
            if "NotImplementedError" in msg:
                out.append((fonte.stem, msg))
    return out


def test_chapter_13_guard_is_found():
    assert {s for s, _ in _mensagens_de_nao_feita()} >= {"13-kernel-triton", "13-desafio-flashattention"}


def test_untouched_task_is_not_done_yet_in_every_chapter(capsys):
    """O guarda do cap. 13 (e qualquer outro) dá o mesmo estado que o `raise NotImplementedError`."""
    ns = _namespace()
    mensagens = _mensagens_de_nao_feita()
    for i, (fonte, msg) in enumerate(mensagens, 1):
        assert ns["_estado_do_erro"](ns["FalhaNoTeste"](msg)) == ("falta", ""), (fonte, msg)
        ns["_PLACAR"][i] = [fonte, "test_x", "cap.", "rodando", ""]
        ns["_TAREFA_ATUAL"][0] = i

        class R:
            error_in_exec = ns["FalhaNoTeste"](msg)

        ns["_depois_da_celula"](R())
    ns["placar"]()
    out = capsys.readouterr().out
    assert out.count("⬜ ainda não feita") == len(mensagens) and "❌" not in out, out


def _falha(ns, *args, **kw):
    with pytest.raises(AssertionError) as e:
        ns["conferir"](*args, **kw)
    return str(e.value)


def test_conferir_messages_use_brazilian_numbers():
    ns = _namespace()
    escalar = _falha(ns, "l", 2.553002, 1.571317)
    assert "0,982" in escalar and "posição ()" not in escalar, escalar
    assert "um número só" in escalar, escalar
    assert "[1,571317]" in escalar and "[2,553002]" in escalar, escalar
    import numpy as np

    matriz = _falha(ns, "m", np.array([[1.5, 2.25], [3.0, 4.0]]), np.array([[1.5, 2.0], [3.0, 4.0]]))
    assert "na posição (0, 1)" in matriz and "0,25" in matriz, matriz
    for msg in (escalar, matriz):
        assert not re.search(r"\d\.\d", msg), msg          # nenhum ponto decimal
        assert "e-0" not in msg, msg                        # nem 1e-06: 1·10⁻⁶
    assert "atol=10⁻⁶" in escalar and "rtol=10⁻⁵" in escalar, escalar
