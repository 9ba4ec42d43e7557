"""Entradas ocultas por aluno e regras sobre COMO a tarefa é feita (issue 22: H1, H2, H3, C4).

Rápidos (sem kernel): a regra "com laços, sem produto pronto" do capítulo 1 contra os
atalhos que a revisão achou (`__matmul__`, `methodcaller("__matmul__")`, apelidos, `__code__`
trocado); a busca de evidências de contorno no notebook inteiro (o que deixa a linha
`flagged`); as entradas de cada parte oculta do capítulo 1 mudam com a semente do aluno e não
mudam sem ela (a correção do professor pelo nbgrader é determinística).

De ponta a ponta (com sandbox, `slow`), o capítulo 1 pela linha de comando:

- o que a função do aluno imprime durante uma parte oculta não chega a página de retorno,
  CSV ou exportação nenhuma (H3a);
- dois alunos recebem entradas ocultas diferentes; a tabela de respostas montada com as
  entradas que um aluno vazou na própria página (guardadas numa global e impressas numa
  célula depois) passa para ele e dá 0 para outro aluno (H3b); a solução tem todos os pontos.

E o capítulo 12: a identidade do buffer (`data_ptr()`, informada pelo kernel do aluno) não
decide a nota; vira bandeira com a evidência (H2).
"""

from __future__ import annotations

import base64
import copy
import csv
import hashlib
import pickle
import re
import sys
import types
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from autograder import cellcode, integrity
from autograder.cellcode import split_hidden, student_definitions
from autograder.hidden import SEED_ENV

ROOT = Path(__file__).resolve().parent.parent
CAP1 = "01-pontuacoes"
CAP12 = "12-kv-cache"


def _nb(kind: str, slug: str):
    return nbformat.read(ROOT / kind / slug / f"{slug}.ipynb", as_version=4)


def _cell(nb, gid):
    return next(c for c in nb.cells if integrity.grade_id(c) == gid)


# ----------------------------------------------------------------------------- H1: regra do capítulo 1

# laços que fazem produtos de elementos (a regra pede), e o resultado vindo de outro lugar
_LOOPS = ("def scores_loops(Q, K):\n"
          "    n, m = Q.shape[0], K.shape[0]\n"
          "    S = np.zeros((n, m))\n"
          "    for i in range(n):\n"
          "        for j in range(m):\n"
          "            for t in range(1):\n"
          "                S[i, j] += Q[i, t] * K[j, t]\n")
SHORTCUTS = {
    "dunder-matmul": [_LOOPS + "    return Q.__matmul__(K.T)\n"],
    "dunder-rmatmul": [_LOOPS + "    return K.T.__rmatmul__(Q)\n"],
    "dunder-imatmul": [_LOOPS + "    S = Q.copy()\n    S.__imatmul__(K.T)\n    return S\n"],
    "methodcaller": ["import operator\n_mc = operator.methodcaller('__matmul__', None)\n",
                     _LOOPS + "    return _mc(Q)\n"],
    "string-name": [_LOOPS + "    return np.__getattribute__('matmul')(Q, K.T)\n"],
    "alias": ["_h = torch.matmul\n", _LOOPS + "    return _h(torch.as_tensor(Q), torch.as_tensor(K).T).numpy()\n"],
    "code-swap": [_LOOPS + "    return S\n", "def _r(Q, K):\n    return Q @ K.T\nscores_loops.__code__ = _r.__code__\n"],
}


@pytest.fixture(scope="module")
def regra_cap1():
    """O `_sem_produto_pronto` do capítulo 1, como roda no kernel do corretor: a fonte da função
    vem das células do notebook (`student_definitions`), nunca do kernel do aluno."""
    ns: dict = {}
    exec(compile(_cell(_nb("solutions", CAP1), "preparacao").source, "preparacao", "exec"), ns)

    def check(cells):
        defs = student_definitions(cells)
        fake = types.ModuleType("_autograder_harness")
        fake.sources = defs

        def source_of(name):
            if name not in defs:
                raise AssertionError("não encontrei no notebook a definição desta função")
            return defs[name]
        fake.source_of = source_of
        saved = sys.modules.get("_autograder_harness")
        sys.modules["_autograder_harness"] = fake
        try:
            ns["_sem_produto_pronto"]("scores_loops", "scores_loops")
        finally:
            if saved is None:
                del sys.modules["_autograder_harness"]
            else:
                sys.modules["_autograder_harness"] = saved
    return check


def test_chapter1_rule_accepts_the_reference_solution(regra_cap1):
    regra_cap1([_cell(_nb("solutions", CAP1), "scores_loops").source])
    regra_cap1(['def scores_loops(Q, K):\n    """Sem matmul nem dot: laços."""\n'
                "    S = np.zeros((Q.shape[0], K.shape[0]))\n"
                "    for i in range(Q.shape[0]):\n        for j in range(K.shape[0]):\n"
                "            for t in range(Q.shape[1]):\n                S[i, j] += Q[i, t] * K[j, t]\n"
                "    return S\n"])
    # a soma por um gerador dentro dos dois laços também é "elemento a elemento"
    regra_cap1(["def scores_loops(Q, K):\n    S = np.zeros((Q.shape[0], K.shape[0]))\n"
                "    for i in range(Q.shape[0]):\n        for j in range(K.shape[0]):\n"
                "            S[i, j] = sum(Q[i, t] * K[j, t] for t in range(Q.shape[1]))\n"
                "    return S\n"])


@pytest.mark.parametrize("shortcut", sorted(SHORTCUTS))
def test_chapter1_rule_catches_every_ready_made_product(regra_cap1, shortcut):
    """H1: `@` por método especial, por texto, por apelido ou com o código trocado depois."""
    with pytest.raises(AssertionError):
        regra_cap1(SHORTCUTS[shortcut])


# ----------------------------------------------------------------------------- C4/H2: evidências

EVIDENCE = {
    # C4.1: o observador da célula travada, remendado
    "patched-observer": "_Observador.iniciar = lambda self: None\n",
    # C4.2: o tratador do pedido no kernel do aluno trocado
    "stub-handler": "import _autograder_student\n_autograder_student._OPS['chamar'] = print\n",
    # C4.3: sem forjar nada, o modo de despacho desligado
    "no-modes": ("from torch.utils._python_dispatch import _disable_current_modes as _sem_modos\n"
                 "def softmax(x, dim=-1):\n    with _sem_modos():\n        y = torch.softmax(x, dim)\n"
                 "    return y.clone()\n"),
    # C4.4: só obedece quando observado
    "obeys-when-watched": ("import torch.utils\n"
                           "def f(x):\n    if torch.utils._python_dispatch._get_current_dispatch_mode_stack():\n"
                           "        return x\n    return x.softmax(-1)\n"),
    # por texto, para não escrever o nome
    "by-string": "import importlib\n_m = importlib.import_module('torch.utils._python_dispatch')\n",
    # H2: o ptr forjado
    "forged-ptr": ("import _autograder_student as _S\n_orig = _S._encode_tensor\n"
                   "def _enc(t, x):\n    d = _orig(t, x)\n    d['ptr'] = 4242\n    return d\n"
                   "_S._encode_tensor = _enc\n"),
}


@pytest.mark.parametrize("attack", sorted(EVIDENCE))
def test_dodging_the_in_process_checks_leaves_evidence(attack):
    ev = cellcode.tamper_evidence([(7, "x = 1\n"), (9, EVIDENCE[attack])])
    assert ev and all("célula 9" in e for e in ev), ev


def test_every_solution_and_release_has_no_evidence():
    """Nenhuma solução (nem a versão distribuída) cai na busca: a bandeira não é ruído."""
    for sol in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        slug = sol.parent.name
        rel = _nb("exercises", slug)
        s = nbformat.read(sol, as_version=4)
        assert cellcode.tamper_evidence(cellcode.student_cells(s, rel)) == [], slug
        assert cellcode.tamper_evidence(cellcode.student_cells(rel, rel)) == [], slug


# ----------------------------------------------------------------------------- H3: sementes por aluno

def _digest(args, kwargs) -> str:
    h = hashlib.sha256()
    for a in list(args) + sorted(kwargs.items()):
        if isinstance(a, torch.Tensor):
            a = a.detach().cpu().numpy()
        if isinstance(a, np.ndarray):
            h.update(repr((a.dtype.str, a.shape)).encode() + np.ascontiguousarray(a).tobytes())
        else:
            h.update(repr(a).encode())
    return h.hexdigest()[:16]


def _hidden_inputs(slug: str, seed: str | None, monkeypatch) -> dict[str, list[list[str]]]:
    """Roda a solução aqui mesmo (sem corretor) e anota, para cada célula de teste, as entradas
    que as funções do aluno receberam em cada parte oculta."""
    if seed is None:
        monkeypatch.delenv(SEED_ENV, raising=False)
    else:
        monkeypatch.setenv(SEED_ENV, seed)
    sol = _nb("solutions", slug)
    ns: dict = {"__name__": "__main__"}
    log: list[str] = []
    out: dict[str, list[list[str]]] = {}

    def spy(f):
        def wrapper(*a, **k):
            log.append(_digest(a, k))
            return f(*a, **k)
        return wrapper
    for cell in sol.cells:
        if cell.cell_type != "code":
            continue
        meta = integrity.nbgrader_meta(cell)
        if meta.get("solution"):
            before = set(ns)
            exec(compile(cell.source, integrity.grade_id(cell), "exec"), ns)
            for name in set(ns) - before:
                if callable(ns[name]) and not isinstance(ns[name], type):
                    ns[name] = spy(ns[name])
        elif meta.get("grade"):
            out[integrity.grade_id(cell)] = parts = []
            for hidden, src in split_hidden(cell.source):
                log.clear()
                exec(compile(src, integrity.grade_id(cell), "exec"), ns)
                if hidden:
                    parts.append(list(log))
        else:
            exec(compile(cell.source, integrity.grade_id(cell) or "celula", "exec"), ns)
            for rule in ("_sem_produto_pronto", "_sem_laco"):      # regras de texto: não é o que se mede
                if rule in ns:
                    ns[rule] = lambda *a, **k: None
    return out


def test_every_hidden_part_of_chapter1_is_drawn_per_student(monkeypatch):
    """H3: cada parte oculta recebe entradas que mudam com a semente do aluno (uma tabela de
    respostas vazada por um aluno não serve a outro); sem a semente (nbgrader do professor), as
    entradas são sempre as mesmas."""
    ana = _hidden_inputs(CAP1, "1111", monkeypatch)
    bia = _hidden_inputs(CAP1, "2222", monkeypatch)
    assert set(ana) == {"test_scores_loops", "test_scores_vetorizado", "test_scores_checked", "test_custo"}
    for test, parts in ana.items():
        assert parts and all(parts), (test, parts)
        for pa, pb in zip(parts, bia[test]):
            assert set(pa) - set(pb), f"{test}: a parte oculta dá as mesmas entradas a dois alunos"
    assert _hidden_inputs(CAP1, None, monkeypatch) == _hidden_inputs(CAP1, None, monkeypatch)
