"""Entradas ocultas por aluno e regras sobre COMO a tarefa é feita (issue 22: H1, H2, H3, C4).

Rápidos (sem kernel): a regra "com laços, sem produto pronto" do capítulo 1 contra os
atalhos que a revisão achou (`__matmul__`, `methodcaller("__matmul__")`, apelidos, `__code__`
trocado); a busca de evidências de contorno no notebook inteiro (o que deixa a linha
`flagged`); as entradas de cada parte oculta do capítulo 1 mudam com a semente do aluno e não
mudam sem ela (a correção do professor pelo nbgrader é determinística).

De ponta a ponta (com sandbox, `slow`), o capítulo 1 pela linha de comando:

- o que a função do aluno imprime durante uma parte oculta não chega a página de retorno,
  CSV ou exportação nenhuma (H3a);
- dois alunos recebem entradas ocultas diferentes (H3b); a solução tem todos os pontos;
- M1: a função que guarda numa global tudo o que recebe, e uma célula do aluno no fim que a
  imprime, não mostram na página nenhuma entrada oculta (as partes ocultas rodam depois da
  última célula do aluno); a tabela de respostas montada com as entradas ocultas EXATAS da
  primeira entrega (lidas da cópia do professor: o pior caso) falha nas partes ocultas da
  entrega seguinte do mesmo aluno (outro notebook, outra semente), e corrigir de novo a
  mesma entrega (`--force`) sorteia as mesmas entradas e dá os mesmos pontos.

E o capítulo 12: a identidade do buffer (`data_ptr()`, informada pelo kernel do aluno) não
decide a nota; vira bandeira com a evidência (H2).
"""

from __future__ import annotations

import base64
import copy
import csv
import hashlib
import json
import pickle
import re
import shutil
import sys
import types
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from autograder.worker import cellcode
from autograder.core import nbmeta
from autograder.worker.cellcode import split_hidden, student_definitions
from autograder.core.student_seed import SEED_ENV

ROOT = Path(__file__).resolve().parents[3]
CAP1 = "01-pontuacoes"
CAP12 = "12-kv-cache"


def _nb(kind: str, slug: str):
    return nbformat.read(ROOT / kind / slug / f"{slug}.ipynb", as_version=4)


def _cell(nb, gid):
    return next(c for c in nb.cells if nbmeta.grade_id(c) == gid)


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
        meta = nbmeta.nbgrader_meta(cell)
        if meta.get("solution"):
            before = set(ns)
            exec(compile(cell.source, nbmeta.grade_id(cell), "exec"), ns)
            for name in set(ns) - before:
                if callable(ns[name]) and not isinstance(ns[name], type):
                    ns[name] = spy(ns[name])
        elif meta.get("grade"):
            out[nbmeta.grade_id(cell)] = parts = []
            for hidden, src in split_hidden(cell.source):
                log.clear()
                exec(compile(src, nbmeta.grade_id(cell), "exec"), ns)
                if hidden:
                    parts.append(list(log))
        else:
            exec(compile(cell.source, nbmeta.grade_id(cell) or "celula", "exec"), ns)
            for rule in ("_sem_produto_pronto", "_sem_laco"):      # regras de texto: não é o que se mede
                if rule in ns:
                    ns[rule] = lambda *a, **k: None
                    ns.get("_TRAVADOS", {}).pop(rule, None)   # e o placar não põe a regra de volta
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


# ----------------------------------------------------------------------------- de ponta a ponta (CLI)

def _cli():
    from grading import HAS_BWRAP, WHY_NOT, read_csv, run_cli
    if not HAS_BWRAP:
        pytest.fail(f"sandbox: {WHY_NOT}")
    return read_csv, run_cli


def _questions(ws: Path) -> dict[tuple[str, str], dict]:
    with open(ws / "questions.csv", encoding="utf-8", newline="") as f:
        return {(r["student_id"], r["grade_id"]): r for r in csv.DictReader(f)}


def _answers(slug: str) -> dict[str, str]:
    return {nbmeta.grade_id(c): c.source for c in _nb("solutions", slug).cells
            if nbmeta.nbgrader_meta(c).get("solution")}


def _submission(slug: str, answers: dict[str, str]):
    nb = copy.deepcopy(_nb("exercises", slug))
    for c in nb.cells:
        if nbmeta.grade_id(c) in answers:
            c.source = answers[nbmeta.grade_id(c)]
    return nb


def _write(subs: Path, slug: str, notebooks: dict[str, object]) -> Path:
    for student, nb in notebooks.items():
        d = subs / student / slug
        d.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, d / f"{slug}.ipynb")
    return subs


# A chave de uma chamada: a mesma no kernel do aluno (tabela de respostas) e aqui.
KEY_SOURCE = '''
import hashlib as _hl, pickle as _pk
import numpy as _np_k
import torch as _torch_k
def _chave(nome, args, kwargs):
    def _c(a):
        if isinstance(a, _torch_k.Tensor):
            a = ("t", str(a.dtype), tuple(a.shape), a.detach().contiguous().numpy().tobytes())
        elif isinstance(a, _np_k.ndarray):
            a = ("a", a.dtype.str, a.shape, _np_k.ascontiguousarray(a).tobytes())
        return a
    return _hl.sha256(_pk.dumps((nome, [_c(a) for a in args], sorted((k, _c(v)) for k, v in kwargs.items())))).hexdigest()
'''

# O espião: cada função anota o que recebe e imprime na hora o resumo da chamada e a chamada
# inteira (em pickle); cada célula seguinte imprime tudo o que foi anotado até ali (revisão M1:
# antes, as chamadas ocultas dos testes anteriores também).
SPY_HEAD = KEY_SOURCE + '''
import base64 as _b64
_VISTOS = []
def _anota(nome, args, kwargs):
    # cópias simples (o tensor que chega pelo corretor traz um data_ptr próprio, que não se serializa)
    _VISTOS.append((nome, tuple(a.detach().clone() if isinstance(a, _torch_k.Tensor) else a for a in args), kwargs))
    print("CHAMADA", len(_VISTOS), _chave(nome, args, kwargs)[:24])
    print("ENTRADA:" + _b64.b64encode(_pk.dumps(_VISTOS[-1])).decode())
def _vaza():
    print("VAZOU:" + _b64.b64encode(_pk.dumps(_VISTOS)).decode())
'''
LEAK_RE = re.compile(r"VAZOU:([A-Za-z0-9+/=]+)")
INPUT_RE = re.compile(r"ENTRADA:([A-Za-z0-9+/=]+)")
CALL_RE = re.compile(r"CHAMADA \d+ ([0-9a-f]{24})")


def _spied(src: str, names: tuple[str, ...]) -> str:
    """As funções da solução com `_anota(...)` na primeira linha do corpo."""
    import ast
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True)
    for node in sorted((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names),
                       key=lambda n: -n.body[0].lineno):
        params = [a.arg for a in node.args.args]
        call = (f"    _anota({node.name!r}, ({', '.join(params)},), {{}})\n")
        lines.insert(node.body[0].lineno - 1, call)
    return "".join(lines)


def _spy_notebook():
    """O ataque da revisão (M1): a solução com o espião, `_vaza()` no começo de cada célula de
    resposta seguinte e numa célula do aluno depois do último teste."""
    a = _answers(CAP1)
    nb = _submission(CAP1, {
        "scores_loops": SPY_HEAD + _spied(a["scores_loops"], ("scores_loops",)),
        "scores": "_vaza()\n" + _spied(a["scores"], ("scores",)),
        "scores_checked": "_vaza()\n" + _spied(a["scores_checked"], ("scores_checked",)),
        "custo": "_vaza()\n" + _spied(a["custo"], ("count_scores", "scores_bytes")),
    })
    last_test = max(k for k, c in enumerate(nb.cells) if nbmeta.grade_id(c) == "test_custo")
    nb.cells.insert(last_test + 1, nbformat.v4.new_code_cell("_vaza()\n"))
    return nb


def _replay_notebook(table: dict) -> object:
    """Nenhuma conta: cada função procura a resposta na tabela (zeros se não acha). O texto de
    `scores_loops` tem os laços que a regra de texto pede."""
    blob = base64.b64encode(pickle.dumps(table)).decode()
    head = KEY_SOURCE + (
        f"import base64 as _b64\n_TABELA = _pk.loads(_b64.b64decode({blob!r}))\n"
        "def _responde(nome, *args, **kwargs):\n"
        "    print('CHAMADA 0', _chave(nome, args, kwargs)[:24])\n"
        "    r = _TABELA.get(_chave(nome, args, kwargs))\n"
        "    if r is None:\n        return _np_k.zeros(1)\n"
        "    if r[0] == 'erro':\n        raise ValueError(r[1])\n"
        # um tensor da tabela sai por um clone: feito à vista do observador do cap. 1 (scores sem laços)
        "    return r[1].clone() if isinstance(r[1], _torch_k.Tensor) else r[1]\n")
    return _submission(CAP1, {
        # os laços multiplicam tudo (a contagem de produtos do cap. 1 pede), e a resposta vem da tabela
        "scores_loops": head + ("def scores_loops(Q, K):\n    S = _responde('scores_loops', Q, K)\n"
                                "    for i in range(Q.shape[0]):\n        for j in range(K.shape[0]):\n"
                                "            for t in range(Q.shape[1]):\n                _ = Q[i, t] * K[j, t]\n"
                                "    return S\n"),
        "scores": "def scores(q, k):\n    return _responde('scores', q, k)\n",
        "scores_checked": "def scores_checked(q, k):\n    return _responde('scores_checked', q, k)\n",
        "custo": ("def count_scores(T, n_heads, n_layers, batch=1):\n"
                  "    return _responde('count_scores', T, n_heads, n_layers, batch)\n"
                  "def scores_bytes(T, bytes_per_element):\n"
                  "    return _responde('scores_bytes', T, bytes_per_element)\n"),
    })


def _leaked_calls(page: str) -> list:
    """As chamadas que a última célula `_vaza()` da página imprimiu."""
    leaks = LEAK_RE.findall(page)
    assert leaks, "o espião não imprimiu nada na página (o cenário não rodou)"
    return pickle.loads(base64.b64decode(leaks[-1]))


def _key_of():
    ns: dict = {}
    exec("import math\nimport numpy as np\nimport torch\n" + KEY_SOURCE, ns)
    return lambda call: ns["_chave"](*call)[:24]


def _table(calls: list) -> dict:
    """A tabela que um aluno monta fora do notebook: as entradas que ele conhece e as
    respostas certas (calculadas aqui com a solução)."""
    ns: dict = {}
    exec("import math\nimport numpy as np\nimport torch\n" + KEY_SOURCE, ns)
    for gid in ("scores_loops", "scores", "scores_checked", "custo"):
        exec(_answers(CAP1)[gid], ns)
    table = {}
    for name, args, kwargs in calls:
        try:
            table[ns["_chave"](name, args, kwargs)] = ("valor", ns[name](*args, **kwargs))
        except ValueError as e:
            table[ns["_chave"](name, args, kwargs)] = ("erro", str(e))
    return table


def _page(ws: Path, student: str, slug: str) -> str:
    return (ws / "retornos" / student / slug / f"{slug}.html").read_text(encoding="utf-8")


def _hidden_outputs(ws: Path, student: str, slug: str) -> tuple[str, list[str]]:
    """(texto das saídas das partes visíveis, o de cada parte oculta) das células de teste do
    notebook corrigido (a cópia do professor, que guarda tudo)."""
    import json
    nb = nbformat.read(ws / "autograded" / student / slug / f"{slug}.ipynb", as_version=4)
    vis, hid = [], []
    for c in nb.cells:
        parts = c.metadata.get("autograder", {}).get("parts") if c.cell_type == "code" else None
        pos = 0
        for p in parts or []:
            chunk = c.outputs[pos: pos + p["outputs"]]
            pos += p["outputs"]
            (hid if p["hidden"] else vis).append(json.dumps(chunk, ensure_ascii=False))
    return "\n".join(vis), hid


def _readable_outputs(ws: Path) -> str:
    """Tudo o que a correção escreve para pessoas lerem fora da cópia do professor: CSVs,
    páginas de retorno e exportações (os zips abertos)."""
    import zipfile
    out = []
    for f in sorted(ws.rglob("*")):
        rel = f.relative_to(ws).parts
        if not f.is_file() or rel[0] in ("autograded", "submitted", "source", "release", ".autograder") \
                or f.suffix in (".db", ".sqlite", ".ipynb"):
            continue
        if f.suffix == ".zip":
            with zipfile.ZipFile(f) as z:
                out += [z.read(n).decode("utf-8", "replace") for n in z.namelist()]
        else:
            out.append(f.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def _outputs_of(ws: Path, student: str) -> dict:
    vis, hid = _hidden_outputs(ws, student, CAP1)
    return {"visible": vis, "hidden": hid, "page": _page(ws, student, CAP1)}


@pytest.fixture(scope="module")
def vazamento(tmp_path_factory):
    """Primeira rodada: ana e bia com o espião (o mesmo arquivo), e a solução. Segunda, no mesmo
    workspace (mesmo segredo), com `--force`: ana entrega a tabela de respostas montada com TODAS
    as entradas que as funções dela receberam na primeira (visíveis e ocultas, lidas da cópia do
    professor) e bia entrega de novo o mesmo arquivo."""
    read_csv, run_cli = _cli()
    base = tmp_path_factory.mktemp("ocultos")
    ws = base / "ws"
    spy = _spy_notebook()
    subs = _write(base / "entregas1", CAP1, {"ana": spy, "bia": copy.deepcopy(spy),
                                           "ref": _submission(CAP1, _answers(CAP1))})
    run_cli("grade", subs, "--workspace", ws, "--assignment", CAP1, "--jobs", "2")
    first = {"grades": read_csv(ws / "grades.csv"), "questions": _questions(ws),
             "ref_page": _page(ws, "ref", CAP1),
             "out": {s: _outputs_of(ws, s) for s in ("ana", "bia")},
             "readable": _readable_outputs(ws)}
    ana = first["out"]["ana"]
    calls = [pickle.loads(base64.b64decode(b)) for b in INPUT_RE.findall(ana["visible"] + "\n".join(ana["hidden"]))]
    table = _table(calls)
    replay = _replay_notebook(table)
    subs = _write(base / "entregas2", CAP1, {"ana": replay})
    shutil.copytree(base / "entregas1" / "bia", subs / "bia")            # os mesmos bytes
    run_cli("grade", subs, "--workspace", ws, "--assignment", CAP1, "--jobs", "2", "--force")
    return {"first": first, "calls": calls, "table": table, "grades": read_csv(ws / "grades.csv"),
            "questions": _questions(ws), "out": {s: _outputs_of(ws, s) for s in ("ana", "bia")}}


TASKS_LEAKED = {"test_scores_loops": 2.0, "test_scores_vetorizado": 3.0, "test_scores_checked": 1.0}


@pytest.mark.slow
def test_prints_during_hidden_parts_reach_no_page_or_csv(vazamento):
    """H3a: a linha que a função do aluno imprime numa chamada oculta fica só na cópia do
    professor; a das chamadas visíveis aparece na página (o aluno vê o que imprimiu)."""
    first = vazamento["first"]
    for s in ("ana", "bia"):
        out = first["out"][s]
        vis, hid = out["visible"], "\n".join(out["hidden"])
        hidden_calls = set(CALL_RE.findall(hid)) - set(CALL_RE.findall(vis))
        assert len(hidden_calls) >= 15, hid[:500]          # o espião rodou nas partes ocultas
        assert set(CALL_RE.findall(vis)) & set(CALL_RE.findall(out["page"]))
        leaked = [h for h in hidden_calls if h in first["readable"]]
        assert not leaked, f"{s}: {len(leaked)} chamada(s) oculta(s) numa página, CSV ou exportação"
        hidden_inputs = set(INPUT_RE.findall(hid)) - set(INPUT_RE.findall(vis))
        assert hidden_inputs and not [b for b in hidden_inputs if b in first["readable"]]


@pytest.mark.slow
def test_a_later_student_cell_sees_no_hidden_input(vazamento):
    """M1 (o vazamento): o que a função guardou numa global e a última célula do aluno imprimiu
    são só as chamadas visíveis; nenhuma entrada oculta chega à página."""
    key = _key_of()
    for s in ("ana", "bia"):
        out = vazamento["first"]["out"][s]
        hidden_calls = set(CALL_RE.findall("\n".join(out["hidden"]))) - set(CALL_RE.findall(out["visible"]))
        seen = {key(c) for c in _leaked_calls(out["page"])}
        assert set(CALL_RE.findall(out["visible"])) <= seen, s        # o espião guardou as visíveis
        assert not seen & hidden_calls, f"{s}: {len(seen & hidden_calls)} chamada(s) oculta(s) na página"
        page_calls = {key(pickle.loads(base64.b64decode(b))) for b in INPUT_RE.findall(out["page"])}
        assert page_calls and not page_calls & hidden_calls


@pytest.mark.slow
def test_two_students_get_different_hidden_inputs(vazamento):
    """Cada parte oculta dá a bia ao menos uma entrada que ana não recebeu (e vice-versa), com o
    mesmo arquivo entregue: a semente vem também do aluno."""
    first = vazamento["first"]
    parts = [first["out"][s]["hidden"] for s in ("ana", "bia")]
    assert len(parts[0]) == len(parts[1]) == 4
    for pa, pb in zip(*parts):
        ana, bia = set(CALL_RE.findall(pa)), set(CALL_RE.findall(pb))
        assert ana - bia and bia - ana, (pa[:300], pb[:300])


@pytest.mark.slow
def test_the_solution_earns_everything_with_hidden_parts_at_the_end(vazamento):
    g = vazamento["first"]["grades"]["ref"]
    assert float(g["score"]) == 8.0 and g["status"] == "ok", g
    for gid in ("test_scores_loops", "test_scores_vetorizado", "test_scores_checked", "test_custo"):
        assert vazamento["first"]["questions"][("ref", gid)]["hidden_tests"] == "passed"
    assert "Testes ocultos: passaram" in vazamento["first"]["ref_page"]


@pytest.mark.slow
def test_a_table_of_the_previous_hidden_inputs_fails_the_next_submission(vazamento):
    """M1 (a reprise): a tabela tem as respostas de todas as chamadas ocultas da primeira entrega
    de ana; na entrega seguinte (outro arquivo, outra semente) as partes ocultas recebem outras
    entradas e falham; as visíveis (entradas fixas) passam com a mesma tabela. O que o teste
    oculto disse da falha fica só na cópia do professor."""
    first, q2 = vazamento["first"]["out"]["ana"], vazamento["questions"]
    key = _key_of()
    before = set(CALL_RE.findall("\n".join(first["hidden"]))) - set(CALL_RE.findall(first["visible"]))
    assert before and before <= {key(c) for c in vazamento["calls"]}     # a tabela cobre a 1ª entrega
    assert len(vazamento["table"]) >= len(before)
    now = vazamento["out"]["ana"]
    drawn = set(CALL_RE.findall("\n".join(now["hidden"]))) - set(CALL_RE.findall(now["visible"]))
    assert drawn and not drawn & before, "a nova entrega recebeu entradas ocultas da anterior"
    for gid in TASKS_LEAKED:
        row = q2[("ana", gid)]
        assert row["visible_tests"] == "passed" and row["hidden_tests"] == "failed", row
        assert float(row["score"]) == 0.0, row
    messages = [o.get("evalue", "") for chunk in now["hidden"] for o in json.loads(chunk)
                if o.get("output_type") == "error"]
    assert messages and not [m for m in messages if m and m in now["page"]]


@pytest.mark.slow
def test_a_regrade_of_the_same_file_draws_the_same_hidden_inputs(vazamento):
    """A mesma entrega corrigida de novo (`--force`): as mesmas entradas ocultas, os mesmos pontos."""
    before, after = vazamento["first"]["out"]["bia"]["hidden"], vazamento["out"]["bia"]["hidden"]
    assert [sorted(CALL_RE.findall(p)) for p in after] == [sorted(CALL_RE.findall(p)) for p in before]
    q1, q2 = vazamento["first"]["questions"], vazamento["questions"]
    for gid in ("test_scores_loops", "test_scores_vetorizado", "test_scores_checked", "test_custo"):
        assert q2[("bia", gid)]["score"] == q1[("bia", gid)]["score"]
        assert q2[("bia", gid)]["hidden_tests"] == "passed"


# ----------------------------------------------------------------------------- H2: capítulo 12

REALLOCATING_CACHE = '''class KVCache:
    """Realoca o buffer a cada append e devolve cópias (os valores estão certos)."""

    def __init__(self, batch, kv_heads, max_len, d_k, dtype=torch.float64):
        self.max_len = max_len
        self.k = torch.zeros(batch, kv_heads, max_len, d_k, dtype=dtype)
        self.v = torch.zeros(batch, kv_heads, max_len, d_k, dtype=dtype)
        self.length = 0

    def append(self, k_new, v_new):
        n = k_new.shape[-2]
        if self.length + n > self.max_len:
            raise ValueError(f"KVCache cheio: cabem {self.max_len} posições, já há {self.length} e chegaram {n}.")
        self.k, self.v = self.k.clone(), self.v.clone()
        self.k[:, :, self.length:self.length + n] = k_new
        self.v[:, :, self.length:self.length + n] = v_new
        self.length += n
        return self.k[:, :, :self.length].clone(), self.v[:, :, :self.length].clone()
'''
# H2 da revisão: todo tensor "mora" no mesmo endereço
FORGED_PTR = ('''import _autograder_student as _S
_orig_enc = _S._encode_tensor
def _enc_ptr_fixo(torch_mod, x):
    d = _orig_enc(torch_mod, x)
    if d.get("ptr"):
        d["ptr"] = 4242
    return d
_S._encode_tensor = _enc_ptr_fixo
''' + REALLOCATING_CACHE)


@pytest.fixture(scope="module")
def buffer_cap12(tmp_path_factory):
    read_csv, run_cli = _cli()
    base = tmp_path_factory.mktemp("cap12")
    a = _answers(CAP12)
    subs = _write(base / "entregas", CAP12, {"solution": _submission(CAP12, a),
                                            "realloc": _submission(CAP12, {**a, "kv_cache": REALLOCATING_CACHE}),
                                            "forged": _submission(CAP12, {**a, "kv_cache": FORGED_PTR})})
    run_cli("grade", subs, "--workspace", base / "ws", "--assignment", CAP12, "--jobs", "2", "--no-report")
    return {"grades": read_csv(base / "ws" / "grades.csv"), "questions": _questions(base / "ws")}


@pytest.mark.slow
def test_buffer_identity_from_the_student_kernel_is_a_flag_not_a_verdict(buffer_cap12):
    """H2: o `data_ptr()` vem do kernel do aluno. Um cache que realoca, com os valores certos,
    não perde pontos por ele: a linha fica `flagged`, com a evidência; o `ptr` forjado também
    fica `flagged` (o contorno está no notebook); a solução fica `ok`."""
    g, q = buffer_cap12["grades"], buffer_cap12["questions"]
    assert g["solution"]["status"] == "ok", g["solution"]
    assert float(q[("solution", "test_kv_cache")]["score"]) == 3.0
    for s in ("realloc", "forged"):
        assert float(q[(s, "test_kv_cache")]["score"]) == 3.0, q[(s, "test_kv_cache")]
        assert g[s]["status"] == "flagged", g[s]
    assert "realocado" in g["realloc"]["details"] and "data_ptr" in g["realloc"]["details"], g["realloc"]
    assert "_autograder_student" in g["forged"]["details"], g["forged"]
