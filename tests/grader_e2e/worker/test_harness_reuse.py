"""Reaproveitamento do kernel do corretor (issue 12): mesma nota, nada passa de um aluno ao próximo.

Duas tarefas pequenas feitas aqui (nbbuild), corrigidas no próprio processo com
`job.grade_notebook` e um `KernelPool`, na ordem escolhida pelo teste:

- `93-reuso`: `dobro` e uma célula de teste que lê e depois muda o ambiente
  (`os.environ`), imprime um sorteio do torch, um aviso e `len(In)`: com o
  reset incompleto, a saída do segundo notebook seria outra;
- `94-modelo`: o teste passa ao aluno um modelo guardado num cache de módulo
  (`sys.modules`, como um carregador com lru_cache), que o reset do IPython
  não apaga: um aluno hostil o altera pela alça (`load_state_dict`).

(a) com e sem reaproveitamento: notas, situações e saídas das células de teste
iguais; (b) alunos hostis (alça, cópia de volta, sono além do prazo, resposta
enorme) antes de um correto: a nota do correto não muda; (c) os kernels
iniciados contam o reaproveitamento e cada regra que o impede.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from aio import run_async
from autograder.core import student_seed as hidden
from autograder.worker import notebook as job
from autograder.box import sandbox
from autograder.core.workspace import Workspace
from autograder.core.settings import ExecSettings
from autograder.authoring.nbbuild import MYST_HEADER, build_text
from autograder.worker.tasks import GradeTask
from grading import template_socket

HAS_BWRAP, WHY_NOT = sandbox.bwrap_works()
pytestmark = pytest.mark.slow

A, M, F = "93-reuso", "94-modelo", "95-fronteira"
CORRECT = {"dobro": "def dobro(x):\n    return 2 * x\n"}
WRONG = {"dobro": "def dobro(x):\n    return x + 1\n"}
SLEEPER = {"dobro": "import time\ndef dobro(x):\n    time.sleep(60)\n    return 2 * x\n"}
MUTANT = {"dobro": "def dobro(x):\n    x *= 0\n    return 2 * x\n"}
IDENTITY = {"dobro": "def dobro(x):\n    return x\n"}
NEGATIVE = {"dobro": "def dobro(x):\n    return -x\n"}
HUGE = {"dobro": "import numpy as np\ndef dobro(x):\n    if len(x) == 3:\n"
                 "        return np.ones(5_000_000)\n    return 2 * x\n"}
APPLY = {"aplica": "def aplica(m, x):\n    return m(x)\n"}
POISON = {"aplica": "import torch\ndef aplica(m, x):\n"
                    "    m.load_state_dict({'weight': torch.zeros(1, 3)})\n    return m(x)\n"}
LIMITS = {"cell_timeout": 5.0, "notebook_timeout": 40.0}


def _build(sol: Path) -> None:
    """As duas tarefas, escritas como as fontes dos exercícios (MyST, autograder/fontes/README.md)."""
    text = MYST_HEADER + """
+++ {"grade_id": "titulo"}

# Reaproveitamento do corretor

```{code-cell}
:tags: [setup]
:grade_id: preparacao

import os
import warnings
import numpy as np
import torch
torch.manual_seed(0)
```

```{code-cell}
:tags: [solution]
:grade_id: dobro

def dobro(x):
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION
```

```{code-cell}
:tags: [tests]
:grade_id: test_dobro
:points: 2

conferir("dobro", dobro(np.arange(3.0)), np.array([0.0, 2.0, 4.0]))
### BEGIN HIDDEN TESTS
conferir("dobro oculto", dobro(np.array([-1.5])), np.array([-3.0]))
### END HIDDEN TESTS
```

```{code-cell}
:tags: [tests]
:grade_id: test_semente
:points: 1

### BEGIN HIDDEN TESTS
_sem = int(os.environ.get("AUTOGRADER_HIDDEN_SEED", "0"))
_entrada = np.random.default_rng(_sem).normal(size=2)
print("entrada oculta:", _entrada.tolist())
conferir("dobro da entrada oculta", dobro(_entrada), 2 * _entrada)
### END HIDDEN TESTS
```

```{code-cell}
:tags: [tests]
:grade_id: test_estado
:points: 1

print("ambiente:", os.environ.get("AG_REUSO"), "histórico:", len(In), "sorteio:", torch.randn(2))
warnings.warn("aviso do teste")
os.environ["AG_REUSO"] = "sujo"
np.set_printoptions(precision=8)
```

```{code-cell}
:tags: [tests]
:grade_id: test_regras
:points: 1

_r = dobro(7.0)
if _r == 7.0:
    _autograder_harness.flag("dobro(7) deu 7")
elif _r == -7.0:
    import time
    time.sleep(60)
```
"""
    # o corretor marca o notebook (bandeira) ou estoura o tempo ele mesmo, conforme a resposta (test_regras)
    nbformat.write(build_text(text, A), _path(sol, A))

    text = MYST_HEADER + """
+++ {"grade_id": "titulo"}

# Modelo do corretor

```{code-cell}
:tags: [setup]
:grade_id: preparacao

import sys
import types
import numpy as np
import torch
if "_cache_do_curso" not in sys.modules:      # cache de módulo: sobrevive ao reset do IPython
    _c = types.ModuleType("_cache_do_curso")
    _c.modelo = torch.nn.Linear(3, 1, bias=False)
    with torch.no_grad():
        _c.modelo.weight.fill_(1.0)
    sys.modules["_cache_do_curso"] = _c
modelo = sys.modules["_cache_do_curso"].modelo
```

```{code-cell}
:tags: [solution]
:grade_id: aplica

def aplica(m, x):
    ### BEGIN SOLUTION
    return m(x)
    ### END SOLUTION
```

```{code-cell}
:tags: [tests]
:grade_id: test_aplica
:points: 2

assert torch.allclose(aplica(modelo, torch.ones(1, 3)), torch.tensor([[3.0]])), "aplica errada"
```
"""
    nbformat.write(build_text(text, M), _path(sol, M))


def _build_boundary(sol: Path) -> None:
    """`95-fronteira`: a palavra do aluno é só uma alegação (revisão C3, L1, M3)."""
    text = MYST_HEADER + """
+++ {"grade_id": "titulo"}

# Fronteira entre os kernels

```{code-cell}
:tags: [setup]
:grade_id: preparacao

import numpy as np
```

```{code-cell}
:tags: [solution]
:grade_id: dobro

def dobro(x):
    ### BEGIN SOLUTION
    if x is None:
        raise ValueError('nada')
    return 2 * x
    ### END SOLUTION
```

```{code-cell}
:tags: [solution]
:grade_id: chama

def chama(f, x):
    ### BEGIN SOLUTION
    return f(x)
    ### END SOLUTION
```

```{code-cell}
:tags: [tests]
:grade_id: test_entrada
:points: 1

_x = np.arange(3.0)
conferir("dobro", dobro(_x), 2 * _x)
```

```{code-cell}
:tags: [tests]
:grade_id: test_erro
:points: 1

conferir_erro("dobro(None)", dobro, None, tipo=ValueError)
```

```{code-cell}
:tags: [tests]
:grade_id: test_chama
:points: 1

conferir("chama", chama(lambda v: v + 1, 1.0), 2.0)
```
"""
    # test_entrada: a referência é calculada DEPOIS da chamada, sobre o mesmo objeto (C3)
    nbformat.write(build_text(text, F), _path(sol, F))


def _path(sol: Path, a: str) -> Path:
    p = sol / a / f"{a}.ipynb"
    p.parent.mkdir(parents=True, exist_ok=True)
    return p


@pytest.fixture(scope="module")
def curso(tmp_path_factory):
    base = tmp_path_factory.mktemp("reuso")
    sol = base / "solucoes"
    _build(sol)
    _build_boundary(sol)
    ws = Workspace(base / "ws", sol)
    infos = ws.prepare([A, M, F])
    # os kernels saem do molde, como na correção (cada trabalhador do Dask tem um)
    cfg = sandbox.SandboxConfig(enabled=True, limits=sandbox.Limits(), python=sys.executable, zygote=template_socket())
    sandbox.write_kernel_spec(cfg, ws.kernels_dir)
    return {"ws": ws, "infos": infos, "base": base, "runs": 0}


def _notebook(info, answers: dict) -> str:
    nb = nbformat.from_dict(json.loads(json.dumps(info.release[info.name])))
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            c.source = answers[gid]
    return nbformat.writes(nb)


def grade(curso, order: list[tuple[str, str, dict]], reuse: bool = True,
          secret: str | None = None) -> tuple[list[dict], job.PoolStats]:
    """Corrige (aluno, tarefa, respostas) nesta ordem, num processo e num KernelPool só
    (`secret`: com as sementes ocultas por aluno de hidden.py, como no trabalhador do Dask)."""
    ws, infos = curso["ws"], curso["infos"]
    curso["runs"] += 1
    shard = curso["base"] / f"shard-{curso['runs']}.db"
    shutil.copy(ws.db_path, shard)
    settings = ExecSettings(**LIMITS, reuse_harness=reuse)

    async def run():
        pool = job.KernelPool(ws, settings)
        out = []
        try:
            for student, a, answers in order:
                raw = (answers if isinstance(answers, str) else _notebook(infos[a], answers)).encode()
                task = GradeTask(student, a, a, raw, {})
                seed = None if secret is None else hidden.hidden_seed(secret, student, a,
                                                                      hidden.submission_digest(raw))
                r, nb = await job.grade_notebook(ws, infos[a], task, f"sqlite:///{shard}", settings, pool,
                                                 hidden_seed=seed)
                tests = {c.metadata["nbgrader"]["grade_id"]: (c.execution_count, _outputs(c))
                         for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
                         and c.cell_type == "code"}
                out.append({"student": student, "status": str(r.status),
                            "scores": {q.grade_id: q.score for q in r.questions},
                            "tests": tests, "details": list(r.details), "flags": list(r.flags),
                            "outputs": json.dumps([c.outputs for c in nb.cells if c.cell_type == "code"],
                                                  ensure_ascii=False)})
        finally:
            await pool.close()
        return out, pool.stats
    return run_async(run())


def _outputs(cell) -> list:
    """Saídas comparáveis: sem o traceback e sem a pasta do kernel (outra a cada kernel, novo ou não)."""
    out = []
    for o in cell.outputs:
        o = dict(o)
        o.pop("execution_count", None)
        if o.get("output_type") == "error":     # o traceback traz o arquivo temporário do kernel
            o.pop("traceback", None)
        o = json.loads(re.sub(r"/[^\s:\"]*/trabalho/", "TRABALHO/", json.dumps(o)))
        if out and o.get("output_type") == "stream" and out[-1].get("output_type") == "stream" \
                and out[-1].get("name") == o.get("name"):
            out[-1]["text"] += o["text"]        # o mesmo texto, em uma ou duas mensagens (máquina ocupada)
        else:
            out.append(o)
    return out


def _same(a: dict, b: dict) -> None:
    assert (a["status"], a["scores"]) == (b["status"], b["scores"]), (a, b)
    assert a["tests"] == b["tests"], json.dumps([a["tests"], b["tests"]], ensure_ascii=False, indent=1)


CLASS = [("ana", A, CORRECT), ("bruno", A, WRONG), ("carla", A, CORRECT), ("davi", A, {})]


@pytest.fixture(scope="module")
def fresh(curso):
    """A turma com um kernel do corretor novo por notebook (o corretor antes da issue 12)."""
    rows, stats = grade(curso, CLASS + [("eva", M, APPLY)], reuse=False)
    return {"rows": {r["student"]: r for r in rows}, "stats": stats}


def test_same_grades_and_test_outputs_with_and_without_reuse(curso, fresh):
    rows, stats = grade(curso, CLASS, reuse=True)
    for r in rows:
        _same(r, fresh["rows"][r["student"]])
    # test_estado vale 0 para todos: o nbgrader zera uma célula com saída em stderr (o aviso)
    assert (fresh["rows"]["ana"]["scores"]["test_dobro"], fresh["rows"]["ana"]["scores"]["test_estado"]) == (2, 0)
    assert fresh["rows"]["bruno"]["scores"]["test_dobro"] == 0.0
    text = json.dumps(fresh["rows"]["carla"]["tests"]["test_estado"], ensure_ascii=False)
    assert "ambiente: None" in text and "aviso do teste" in text, text
    # (c) um kernel do corretor para os quatro notebooks; sem reaproveitamento, um por notebook
    assert (stats.harness_starts, stats.harness_reuses) == (1, 3), stats
    assert fresh["stats"].harness_starts >= 5 and fresh["stats"].harness_reuses == 0, fresh["stats"]


def test_hostile_students_cannot_change_the_next_grade(curso, fresh):
    """Cada hostil é corrigido logo antes de um aluno correto, no mesmo processo."""
    order = [("h-dorme", A, SLEEPER), ("c1", A, CORRECT), ("h-muda", A, MUTANT), ("c2", A, CORRECT),
             ("h-enorme", A, HUGE), ("c3", A, CORRECT), ("h-veneno", M, POISON), ("c4", M, APPLY)]
    rows, stats = grade(curso, order, reuse=True)
    by = {r["student"]: r for r in rows}
    for c in ("c1", "c2", "c3"):
        _same(by[c], fresh["rows"]["ana"])
    _same(by["c4"], fresh["rows"]["eva"])
    assert by["c4"]["scores"]["test_aplica"] == 2.0
    assert by["h-dorme"]["status"] == "timeout" and by["h-veneno"]["scores"]["test_aplica"] == 0.0, by
    reasons = " | ".join(stats.recycled)
    for what in ("estourou o tempo", "cópia de volta", "alças"):
        assert what in reasons, reasons


def test_each_rule_recycles_the_harness(curso, monkeypatch):
    monkeypatch.setattr(job, "MAX_HARNESS_USES", 2)
    _, stats = grade(curso, [("u1", A, CORRECT), ("u2", A, CORRECT), ("u3", A, CORRECT)])
    assert (stats.harness_starts, stats.harness_reuses) == (2, 1), stats
    assert any("já serviu a 2" in r for r in stats.recycled), stats
    monkeypatch.setattr(job, "MAX_HARNESS_USES", 20)
    monkeypatch.setattr(job, "MAX_HARNESS_MEMORY", 1e-6)
    _, stats = grade(curso, [("m1", A, CORRECT), ("m2", A, CORRECT)])
    # o terceiro é o substituto que começa a subir depois do reset recusado do segundo notebook
    assert (stats.harness_starts, stats.harness_reuses) == (3, 0), stats
    assert len(stats.recycled) == 2 and all("memória" in r for r in stats.recycled), stats


def test_flag_and_harness_timeout_recycle_it(curso, fresh):
    rows, stats = grade(curso, [("f", A, IDENTITY), ("c5", A, CORRECT), ("t", A, NEGATIVE), ("c6", A, CORRECT)])
    by = {r["student"]: r for r in rows}
    assert (by["f"]["status"], by["t"]["status"]) == ("flagged", "timeout"), by
    for c in ("c5", "c6"):
        _same(by[c], fresh["rows"]["ana"])
    reasons = " | ".join(stats.recycled)
    assert "bandeira" in reasons and "interrompido" in reasons, reasons
    assert (stats.harness_starts, stats.harness_reuses) == (3, 1), stats


# ----------------------------------------------------------------------------- revisão de 2026-12-01 (C1, C2)

# O aluno marca a própria célula de resposta como travada: ela rodaria no kernel do corretor e
# instalaria nele um transformador de entrada que aprova todo teste (C1), inclusive os dos
# notebooks corrigidos depois no mesmo kernel (C2).
LOCKED_ANSWER = ("_ip = get_ipython()\n"
                 "def _rt(lines):\n"
                 "    return ['pass\\n'] if 'conferir' in ''.join(lines) else lines\n"
                 "if '_autograder_harness' in __import__('sys').modules:\n"
                 "    _ip.input_transformers_cleanup.append(_rt)\n"
                 "def dobro(x):\n"
                 "    return x + 1\n")


def _with_locked_answer(info) -> str:
    nb = nbformat.reads(_notebook(info, {"dobro": LOCKED_ANSWER}), as_version=4)
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade_id") == "dobro":
            c.metadata["nbgrader"]["locked"] = True
    return nbformat.writes(nb)


def test_answer_cell_claiming_locked_never_runs_in_the_harness(curso, fresh):
    """C1 e C2: a célula volta a ser do aluno (tampered, 0 ponto), e o aluno em branco depois dele,
    no mesmo kernel do corretor, continua com 0; o correto, com a nota de sempre."""
    raw = _with_locked_answer(curso["infos"][A])
    rows, _ = grade(curso, [("h-trava", A, raw), ("d2", A, {}), ("c7", A, CORRECT)])
    by = {r["student"]: r for r in rows}
    # (flagged por cima de tampered: o código procura `_autograder_harness`, evidência de contorno)
    assert by["h-trava"]["status"] in ("tampered", "flagged") and by["h-trava"]["scores"]["test_dobro"] == 0.0, by["h-trava"]
    assert any("metadados" in d for d in by["h-trava"]["details"]), by["h-trava"]["details"]
    assert by["d2"]["scores"]["test_dobro"] == 0.0, by["d2"]
    _same(by["c7"], fresh["rows"]["ana"])


async def _harness_after(curso, code: str) -> str | None:
    """Sobe um kernel do corretor, roda `code` nele e devolve o motivo de não reaproveitá-lo."""
    from autograder.box.kernel import SandboxKernel, harness_start_code, reset_harness
    from autograder.worker.tasks import prebuild_matplotlib_cache
    ws = curso["ws"]
    prebuild_matplotlib_cache(ws.mpl_cache)       # como num trabalhador: o kernel não escreve o cache de fontes
    run_dir = job.prepare_run_dir(ws, A, {})
    kernel = SandboxKernel(run_dir, [str(ws.kernels_dir)])
    try:
        await kernel.start(60.0, ["numpy"], harness_start_code())
        reply = await kernel.run_silent(code, 30.0)
        assert reply is not None and reply.get("status") == "ok", reply
        return await reset_harness(kernel, 60.0, job.MAX_HARNESS_MEMORY)
    finally:
        await kernel.shutdown()
        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.mark.parametrize("code, reason", [
    ("x = 1\nimport numpy as np\nnp.arange(3).sum()", None),
    # uma figura no kernel do corretor não vira PNG (HARNESS_SKIPPED_OUTPUTS) e não impede o reuso
    ("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nfmt = get_ipython().display_formatter.format(plt.gcf())[0]\n"
     "assert 'image/png' not in fmt and 'text/plain' in fmt, fmt\nplt.show()", None),
    ("get_ipython().input_transformers_cleanup.append(lambda lines: lines)", "ganchos"),
    ("get_ipython().ast_transformers.append(__import__('ast').NodeTransformer())", "ganchos"),
    ("get_ipython().set_custom_exc((AssertionError,), lambda *a, **k: None)", "ganchos"),
    ("get_ipython().events.register('pre_run_cell', lambda *a: None)", "ganchos"),
    ("import numpy\nnumpy.isclose = lambda *a, **k: True", "numpy"),
    ("import builtins\nbuiltins.AssertionError = ValueError", "builtins"),
    # o FlopCounterMode (oráculo do cap. 6) importa o torch._dynamo, que embrulha torch.manual_seed:
    # esse embrulho do próprio torch não impede o reuso; outro embrulho com __wrapped__, sim
    ("import torch\nfrom torch.utils.flop_counter import FlopCounterMode\nx = torch.ones(2, 2)\n"
     "with FlopCounterMode(display=False) as fc:\n    x @ x\nassert fc.get_total_flops() == 16\n"
     "assert torch.manual_seed.__wrapped__ is not None", None),
    ("import functools, torch\ntorch.manual_seed = functools.wraps(torch.manual_seed)(lambda s: None)", "torch"),
])
def test_any_interpreter_change_stops_reuse(curso, code, reason):
    """C2: o que o reset do IPython não desfaz (transformadores, exceções próprias, eventos,
    atributos de módulos) impede o reaproveitamento; um kernel só usado continua servindo."""
    why = run_async(_harness_after(curso, code))
    if reason is None:
        assert why is None, why
    else:
        assert why is not None and reason in why, why


STUDENT_SEES_SEED = {"dobro": 'import os\nprint("semente no aluno:", os.environ.get("AUTOGRADER_HIDDEN_SEED"))\n'
                              "def dobro(x):\n    return 2 * x\n"}


def _hidden_input(row) -> str:
    return next(o["text"] for o in row["tests"]["test_semente"][1] if "entrada oculta" in o.get("text", ""))


def test_two_students_get_different_hidden_inputs(curso):
    """H3: a semente oculta vem do aluno e da tarefa (e do segredo do workspace), só no corretor."""
    rows, _ = grade(curso, [("ana", A, STUDENT_SEES_SEED), ("bia", A, STUDENT_SEES_SEED),
                            ("ana", A, STUDENT_SEES_SEED)], secret="segredo-do-teste")
    ana, bia, ana2 = rows
    assert _hidden_input(ana) != _hidden_input(bia)
    assert _hidden_input(ana) == _hidden_input(ana2)          # reprodutível para o mesmo aluno
    assert all(r["scores"]["test_semente"] == 1.0 for r in rows), rows
    assert "semente no aluno: None" in ana["outputs"], ana["outputs"]
    other, _ = grade(curso, [("ana", A, STUDENT_SEES_SEED)], secret="outro-ano")
    assert _hidden_input(other[0]) != _hidden_input(ana)
    assert hidden.hidden_seed("s", "ana", A, "d") != hidden.hidden_seed("s", "ana", M, "d")


def test_hidden_parts_run_after_the_last_student_cell_and_a_kernel_death_costs_them(curso):
    """M1: a parte oculta roda depois da última célula do aluno. Um `os._exit` nessa célula
    (depois de todos os testes) não pula os testes ocultos: as células com parte oculta ficam
    com 0 e a mensagem diz por quê; as células sem parte oculta, que já rodaram, valem."""
    nb = nbformat.reads(_notebook(curso["infos"][A], {"dobro": "def dobro(x):\n    return 2 * x\n"}), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("print('última célula')\nimport os\nos._exit(0)\n"))
    rows, _ = grade(curso, [("ana", A, nbformat.writes(nb)),
                            ("bia", A, {"dobro": "def dobro(x):\n    return 2 * x\n"})], secret="s")
    ana, bia = rows
    assert bia["scores"]["test_dobro"] == 2.0 and bia["scores"]["test_semente"] == 1.0, bia
    assert ana["scores"]["test_dobro"] == 0.0 and ana["scores"]["test_semente"] == 0.0, ana
    assert ana["scores"]["test_regras"] == 1.0 and ana["status"] == "crashed", ana
    assert "A parte oculta deste teste não rodou: o kernel parou antes do fim do notebook." in ana["outputs"]
    assert "entrada oculta" not in json.dumps(ana["tests"]["test_semente"], ensure_ascii=False)


BOUNDARY_OK = {"dobro": "def dobro(x):\n    if x is None:\n        raise ValueError('nada')\n    return 2 * x\n",
               "chama": "def chama(f, x):\n    return f(x)\n"}
# zera a entrada e devolve zeros: a referência 2 * _x, lida depois, daria zeros (C3)
ZEROES = {**BOUNDARY_OK, "dobro": "def dobro(x):\n    x[...] = 0\n    return 0 * x\n"}
# não levanta nada: corrompe a resposta ao corretor, que não pode virar "o aluno levantou ValueError" (L1)
CORRUPT = {**BOUNDARY_OK, "dobro": (
    "import _autograder_student as _S\n_Orig = _S._Reply\n"
    "class _Corrompe(_Orig):\n    def __init__(self, text, raised=None):\n"
    "        super().__init__('{' if raised else text, raised)\n"
    "_S._Reply = _Corrompe\n"
    "def dobro(x):\n    if x is None:\n        raise ValueError('nada')\n    return 2 * x\n")}
# imprime a alça da função do teste: o número não pode ser o mesmo em dois notebooks (M3)
HANDLE = {**BOUNDARY_OK, "chama": "def chama(f, x):\n    print('alça:', object.__getattribute__(f, '_ag_handle').id)\n"
                                  "    return f(x)\n"}


def test_the_students_word_is_a_claim(curso):
    rows, _ = grade(curso, [("ok", F, BOUNDARY_OK), ("zera", F, ZEROES), ("corrompe", F, CORRUPT),
                            ("alca1", F, HANDLE), ("alca2", F, HANDLE)])
    by = {r["student"]: r for r in rows}
    assert all(by["ok"]["scores"][k] == 1.0 for k in ("test_entrada", "test_erro", "test_chama")), by["ok"]
    assert by["zera"]["scores"]["test_entrada"] == 0.0, by["zera"]            # C3
    assert by["corrompe"]["scores"]["test_erro"] == 0.0, by["corrompe"]       # L1
    assert "StudentKernelFailure" in json.dumps(by["corrompe"]["tests"]["test_erro"]), by["corrompe"]["tests"]
    assert by["corrompe"]["status"] == "flagged", by["corrompe"]                   # o corretor não pôde julgar
    assert any("não pôde julgar" in f and "corrompida" in f for f in by["corrompe"]["flags"]), by["corrompe"]
    ids = [re.search(r"alça: (\d+)", by[s]["outputs"]).group(1) for s in ("alca1", "alca2")]
    assert ids[0] != ids[1], ids                                               # M3
    assert by["alca1"]["scores"]["test_chama"] == 1.0
