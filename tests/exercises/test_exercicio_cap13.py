"""O caderno do capítulo 13 escolhe o interpretador antes de importar o triton
e é autocontido (numpy, torch, triton; nada de atencao). A correção completa
(soluções = nota máxima, em branco = zero, resposta errada = nota parcial)
fica em test_nbgrader_pipeline.py."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

import pytest

ROOT = Path(__file__).resolve().parents[2]
SLUG = "13-kernel-triton"
SLUGS = (SLUG, "13-desafio-flashattention")


def _code_cells(where, slug=SLUG):
    nb = nbformat.read(ROOT / where / slug / f"{slug}.ipynb", as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("slug", SLUGS)
def test_first_code_cell_sets_interpreter_before_importing_triton(slug):
    for where in ("solutions", "exercises"):
        first = _code_cells(where, slug)[0]
        env = first.index('os.environ["TRITON_INTERPRET"] = "1"')
        imp = re.search(r"^\s*import triton\b", first, re.M).start()
        assert env < imp, f"{where}: TRITON_INTERPRET deve vir antes de import triton"
        assert "if not NA_GPU" in first[: env], "o interpretador só deve ser ligado sem GPU"
        # Nenhuma outra célula importa o triton antes da primeira.
        assert not any(re.search(r"^\s*(import|from) triton", c, re.M) for c in _code_cells(where, slug)[1:])
        # Sem triton (Windows, macOS), uma mensagem em português diz o que fazer.
        assert "except ImportError" in first and "Colab" in first


@pytest.mark.parametrize("slug", SLUGS)
def test_float32_dots_use_ieee_so_the_gpu_tolerance_stays_tight(slug):
    """Item 33 da revisão: na GPU, tl.dot em float32 seria TF32 (~1e-3); com "ieee" a tolerância
    de float32 vale na GPU e no interpretador. (Sem GPU aqui, confere-se o texto; na GPU, a
    tolerância ATOL32 = 1e-5 do próprio caderno.)"""
    sol = "\n".join(_code_cells("solutions", slug))
    dots = re.findall(r"tl\.dot\([^\n]*", sol)
    assert dots and all('input_precision="ieee"' in d for d in dots), dots
    first = _code_cells("exercises", slug)[0]
    assert 'os.environ.setdefault("TRITON_F32_DEFAULT", "ieee")' in first and "ATOL32 = 1e-5" in first


@pytest.mark.parametrize("slug", SLUGS)
def test_notebook_uses_only_numpy_torch_triton(slug):
    code = "\n".join(_code_cells("exercises", slug))
    imports = set(re.findall(r"^\s*(?:import|from)\s+([a-zA-Z_]\w*)", code, re.M))
    # IPython e types: o conferir (traceback sem os quadros do próprio conferir); todo kernel Jupyter tem o IPython.
    # hashlib: a semente dos testes ocultos (_semente_oculta); ast: a célula que trocou um nome do professor;
    # re: as regras comuns (autograder/authoring/rules.py).
    assert imports <= {"math", "os", "sys", "numpy", "torch", "triton", "contextlib", "warnings", "inspect",
                       "IPython", "types", "hashlib", "ast", "re", "dis"}, imports


def _com_celula_depois(cells, gid, src):
    """As células com uma célula de código do aluno (`src`) logo depois da célula `gid`."""
    import copy

    import nbformat as nbf

    out = []
    for c in copy.deepcopy(cells):
        out.append(c)
        if c.cell_type == "code" and c.metadata["nbgrader"]["grade_id"] == gid:
            extra = nbf.v4.new_code_cell(src)
            extra.metadata["nbgrader"] = {"grade_id": "celula_do_aluno", "solution": True, "grade": False,
                                          "locked": False}
            out.append(extra)
    return out


def test_launcher_redefined_after_the_locked_cell_is_undone_like_in_the_grader(monkeypatch):
    """E2: um kernel `pass` com `flash_forward` redefinido em PyTorch numa célula DEPOIS do lançador
    travado. Na correção, `flash_forward` é sempre o do professor (nota 0); no Jupyter do aluno, o
    teste desfaz a troca e julga o kernel do mesmo jeito: 0 também. Com o kernel certo, a troca é
    desfeita e a nota é cheia nos dois."""
    import os

    monkeypatch.setenv("TRITON_INTERPRET", os.environ.get("TRITON_INTERPRET", "1"))
    from nb_harness import run

    from autograder import fontes

    slug = "13-desafio-flashattention"
    troca = ("def flash_forward(q, k, v, causal=True, BLOCK=16):\n"
             "    return sdpa(q, k, v, causal).to(q.dtype), lse_direto(q, k, causal).float()\n")
    cells = _com_celula_depois(fontes.load(slug).cells, "lancador", troca)
    testes = ("test_desafio_sem_mascara", "test_desafio_causal", "test_desafio_float16")
    vazio = ("@triton.jit\ndef flash_fwd_kernel(Q, K, V, O, LSE, N, d, scale, stride_bh, stride_n,\n"
             "                     CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,\n"
             "                     BLOCK_D: tl.constexpr):\n    pass\n")
    res = run(cells, replace=lambda c: vazio if c.metadata["nbgrader"]["grade_id"] == "flash_fwd_kernel" else c.source)
    assert all(isinstance(res[t], AssertionError) and "não escreveu nada" in str(res[t]) for t in testes), res
    res = run(cells)
    assert all(res[t] is None for t in testes), res


def test_scoreboard_names_the_cell_that_redefined_a_locked_name(monkeypatch, capsys):
    """Num IPython: a célula de testes desfaz a troca de um nome de célula travada, avisa com o
    número da célula que trocou e o placar repete o aviso (o mecanismo vale para todo caderno)."""
    import re as _re

    from IPython.core.interactiveshell import InteractiveShell

    from autograder.authoring.nbbuild import CONFERIR

    shell = InteractiveShell.instance()
    monkeypatch.setattr(shell, "_showtraceback", lambda t, v, stb: None)
    try:
        assert shell.run_cell(CONFERIR).error_in_exec is None
        shell.run_cell("def lancar(x):\n    return x + 1\n_travar('lancar')")
        n = shell.execution_count
        shell.run_cell("def lancar(x):\n    return 2", store_history=True)
        r = shell.run_cell("_tarefa(1, 'lançar', 'test_lancar', 'cap. 1')\nconferir('lancar', lancar(1), 2)\n"
                           "_visiveis_passaram(1)", store_history=True)
        assert r.error_in_exec is None
        out = capsys.readouterr().out
        assert f"a célula [{n}] redefiniu `lancar`, que é do professor" in out, out
        shell.run_cell("placar()")
        out = _re.sub(r"\s+", " ", capsys.readouterr().out)
        assert "Tarefa 1 — lançar: ✅" in out and f"⚠ a célula [{n}] redefiniu `lancar`" in out, out
    finally:
        shell.set_custom_exc((), None)
        if getattr(shell, "_placar_do_curso", None) is not None:
            shell.events.unregister("post_run_cell", shell._placar_do_curso)
