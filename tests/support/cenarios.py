"""Fixtures do autograder: uma tarefa pequena e entregas nomeadas por cenário.

`build_assignment(solutions_dir)` escreve a fonte nbgrader `90-dobro` (com o
mesmo construtor e a mesma função `conferir` dos capítulos). As entregas são
feitas a partir da versão distribuída (`release/`), como um aluno faria:
`write_scenarios(release_nb, dest, paths)` cria `dest/<cenário>/90-dobro/`.
Cada cenário diz a nota e a situação esperadas em `EXPECTED`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat

from autograder.authoring.nbbuild import MYST_HEADER, build_text

SLUG = "90-dobro"
SECRET = "SEGREDO-OCULTO-4f1c"   # só existe nos testes ocultos: nunca pode aparecer no feedback

CORRECT = {
    "dobro": "def dobro(x):\n    return 2 * x\n",
    "soma_linhas": "def soma_linhas(m):\n    return m.sum(axis=1)\n\n"
                   "plt.plot([1, 2, 3], [1, 4, 9])\nplt.title('gráfico do aluno')\nplt.show()\n",
    "explique": "Cada linha de `m` é um exemplo; somamos as colunas de cada um.",
}
WRONG = {
    "dobro": "def dobro(x):\n    return x + 1\n",
    "soma_linhas": "def soma_linhas(m):\n    return m.sum(axis=0)\n",
}


def build_assignment(solutions: Path) -> Path:
    """A tarefa de teste, escrita como as fontes dos exercícios (MyST, autograder/fontes/README.md)."""
    text = MYST_HEADER + f"""
+++ {{"grade_id": "titulo"}}

# Tarefa de teste do autograder

+++

Complete as duas funções, $f(x) = 2x$ e $s_i = \\sum_j m_{{ij}}$. Cada célula de teste vale pontos.

```{{code-cell}}
:tags: [setup]
:grade_id: preparacao

import matplotlib.pyplot as plt
import numpy as np
import torch
```

```{{code-cell}}
:tags: [solution]
:grade_id: dobro

def dobro(x):
    \"\"\"Devolve 2 * x.\"\"\"
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION
```

```{{code-cell}}
:tags: [tests]
:grade_id: test_dobro
:points: 2

\"\"\"dobro multiplica por dois\"\"\"
conferir("dobro", dobro(np.arange(3.0)), np.array([0.0, 2.0, 4.0]))
### BEGIN HIDDEN TESTS
# {SECRET}: caso negativo
conferir("dobro (oculto {SECRET})", dobro(np.array([-1.5])), np.array([-3.0]))
### END HIDDEN TESTS
```

```{{code-cell}}
:tags: [solution]
:grade_id: soma_linhas

def soma_linhas(m):
    \"\"\"Soma cada linha de m.\"\"\"
    ### BEGIN SOLUTION
    return m.sum(axis=1)
    ### END SOLUTION
```

```{{code-cell}}
:tags: [tests]
:grade_id: test_soma_linhas
:points: 3

\"\"\"soma_linhas soma ao longo do eixo 1\"\"\"
m = torch.arange(6.0).reshape(2, 3)
assert torch.allclose(soma_linhas(m), torch.tensor([3.0, 12.0])), "soma_linhas errada"
### BEGIN HIDDEN TESTS
assert np.allclose(soma_linhas(np.ones((4, 5))), 5 * np.ones(4)), "{SECRET}"
### END HIDDEN TESTS
```

+++ {{"grade_id": "explique_enunciado"}}

Por que a soma é ao longo do eixo 1?

+++ {{"grade_id": "explique", "tags": ["answer"], "points": 1}}

Porque cada linha é um exemplo.
"""
    nb = build_text(text, SLUG)
    path = solutions / SLUG / f"{SLUG}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return path


def _solve(release, answers: dict[str, str]):
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    return nb


def _cell(nb, gid):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


_UNDECODABLE = """\
import IPython
_sessao = IPython.get_ipython().kernel.session
_fundo = (b'{"data": {"text/plain": "x", "a": ' + b'[' * 200_000 + b']' * 200_000
          + b'}, "metadata": {}, "transient": {}}')
_pack = _sessao.pack
_sessao.pack = lambda o, _p=_pack: _fundo if isinstance(o, dict) and "data" in o else _p(o)
from IPython.display import display
display("oi")
_sessao.pack = _pack
"""


def scenarios(release, paths: dict[str, str]) -> dict[str, object]:
    """cenário -> notebook (ou bytes, para os arquivos quebrados)."""
    out: dict[str, object] = {}
    out["correct"] = _solve(release, CORRECT)
    out["wrong"] = _solve(release, WRONG)
    out["blank"] = copy.deepcopy(release)

    nb = _solve(release, CORRECT)
    nb.cells.remove(_cell(nb, "test_dobro"))
    out["deleted-test"] = nb

    nb = _solve(release, WRONG)
    _cell(nb, "test_dobro").source = "# teste trocado pelo aluno\npass"
    _cell(nb, "test_soma_linhas").metadata["nbgrader"]["points"] = 30
    out["edited-test"] = nb

    out["patched-allclose"] = _solve(release, {
        "dobro": CORRECT["dobro"],
        "soma_linhas": "import numpy\nimport torch\n"
                       "numpy.allclose = lambda *a, **k: True\n"
                       "torch.allclose = lambda *a, **k: True\n"
                       "def soma_linhas(m):\n    return m\n"})

    out["redefined-conferir"] = _solve(release, {
        "dobro": "def conferir(*args, **kwargs):\n    return None\n\n" + WRONG["dobro"],
        "soma_linhas": CORRECT["soma_linhas"]})

    leak = (
        "import os\n"
        "vazou = []\n"
        f"for caminho in {[paths['solution'], paths['gradebook'], paths['other_student']]!r}:\n"
        "    try:\n"
        "        with open(caminho, 'rb') as f:\n"
        "            vazou.append(f.read(100))\n"
        "    except OSError as e:\n"
        "        print('bloqueado:', type(e).__name__)\n"
        "try:\n"
        f"    vazou.append(os.listdir({paths['submissions']!r}))\n"
        "except OSError as e:\n"
        "    print('bloqueado:', type(e).__name__)\n"
        "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
        "print('processos visíveis:', len(pids))\n"
        "print('/tmp:', sorted(os.listdir('/tmp')))\n"
        "cap = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')][0]\n"
        "print('capacidades:', cap, 'uid:', os.getuid())\n"
        "import subprocess\n"
        "print('subprocesso:', subprocess.run(['/bin/echo', 'ok'], capture_output=True, text=True).stdout.strip())\n"
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('1.1.1.1', 80), timeout=2)\n"
        "    vazou.append('rede')\n"
        "except OSError as e:\n"
        "    print('rede bloqueada:', type(e).__name__)\n"
        "def dobro(x):\n"
        "    # só acerta se conseguiu ler o gabarito\n"
        "    if vazou:\n"
        "        return 2 * x\n"
        "    return x\n")
    out["reads-solutions"] = _solve(release, {"dobro": leak, "soma_linhas": WRONG["soma_linhas"]})

    out["infinite-loop"] = _solve(release, {
        "dobro": "def dobro(x):\n    while True:\n        pass\n",
        "soma_linhas": CORRECT["soma_linhas"]})
    # ignora a interrupção e nunca termina, mas dormindo: o caminho da correção (interromper,
    # esperar, matar o kernel) é o mesmo, sem gastar um núcleo pelos ~9 s dele em cada correção
    # da turma (o laço que gasta CPU é o de infinite-loop)
    out["sigint-ignoring"] = _solve(release, {
        "dobro": "import signal\nimport time\n\ndef dobro(x):\n    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                 "    while True:\n        time.sleep(0.05)\n",
        "soma_linhas": CORRECT["soma_linhas"]})
    out["os-exit"] = _solve(release, {
        "dobro": CORRECT["dobro"],
        "soma_linhas": "import os\n\ndef soma_linhas(m):\n    os._exit(3)\n"})
    out["memory-bomb"] = _solve(release, {
        "dobro": "def dobro(x):\n    lixo = []\n    while True:\n"
                 "        lixo.append(bytearray(50_000_000))\n",
        "soma_linhas": CORRECT["soma_linhas"]})
    out["print-flood"] = _solve(release, {
        "dobro": "def dobro(x):\n    for _ in range(2000):\n        print('x' * 5000)\n    return 2 * x\n",
        "soma_linhas": CORRECT["soma_linhas"]})
    # lidos no processo de correção, fora da caixa: código demais é recusado antes da AST;
    # aninhamento fundo demais é erro de sintaxe do aluno (o kernel também não compila)
    huge = _solve(release, CORRECT)
    huge.cells.append(nbformat.v4.new_code_cell("x = 1\n" * 20_000))
    out["huge-code"] = huge
    deep = _solve(release, CORRECT)
    deep.cells.append(nbformat.v4.new_code_cell("x = " + "-" * 50_000 + "1"))
    out["deep-nesting"] = deep
    # uma mensagem que o cliente do Jupyter não decodifica (JSON de 200 mil níveis, assinada com a
    # chave do próprio kernel): era um RecursionError no processo de correção, "erro do corretor"
    out["undecodable-message"] = _solve(release, {
        "dobro": _UNDECODABLE + "\n" + CORRECT["dobro"], "soma_linhas": CORRECT["soma_linhas"]})
    text = nbformat.writes(_solve(release, CORRECT))
    out["invalid-json"] = text[: len(text) // 2].encode()
    out["non-utf8"] = text.replace("Complete as duas", "Complete as duas fun\u00e7\u00f5es").encode("latin-1", "replace")
    out["late"] = _solve(release, CORRECT)
    return out


# nota esperada (de 5 automáticos; a resposta escrita vale 1 e é manual) e situação
EXPECTED = {
    "correct": (5.0, "ok"),
    "wrong": (0.0, "ok"),
    "blank": (0.0, "ok"),
    "deleted-test": (5.0, "tampered"),
    "edited-test": (0.0, "tampered"),
    # os testes rodam no kernel do corretor: trocar o allclose ou o conferir do aluno não muda nada
    "patched-allclose": (2.0, "ok"),
    "redefined-conferir": (3.0, "ok"),
    "reads-solutions": (0.0, "ok"),
    "infinite-loop": (3.0, "timeout"),
    "sigint-ignoring": (0.0, "timeout"),
    # o kernel morre no teste de soma_linhas; a parte oculta de test_dobro roda no fim do caderno
    # (worker/deferred.py, revisão M1) e não roda mais: test_dobro também fica com 0
    "os-exit": (0.0, "crashed"),
    "memory-bomb": (3.0, "crashed"),
    "print-flood": (5.0, "ok"),
    "huge-code": (0.0, "invalid-notebook"),
    "deep-nesting": (5.0, "ok"),
    "undecodable-message": (0.0, "crashed"),
    "invalid-json": (0.0, "invalid-notebook"),
    "non-utf8": (0.0, "invalid-notebook"),
    "late": (5.0, "ok"),
    "missing": (0.0, "missing"),
}

# horários (sem fuso: são de São Paulo) contra o prazo 2025-03-10 23:59 America/Sao_Paulo
DEADLINE = "2025-03-10 23:59"
TIMESTAMPS = {
    "correct": "2025-03-10 23:00:00",        # no prazo
    "late": "2025-03-11 00:29:00",           # 30 min depois (o nbgrader leria como UTC: no prazo)
}


def write_scenarios(release, dest: Path, paths: dict[str, str]) -> list[str]:
    names = []
    for name, nb in scenarios(release, paths).items():
        d = dest / name / SLUG
        d.mkdir(parents=True, exist_ok=True)
        data = nb if isinstance(nb, bytes) else nbformat.writes(nb).encode()
        (d / f"{SLUG}.ipynb").write_bytes(data)
        if name in TIMESTAMPS:
            (d / "timestamp.txt").write_text(TIMESTAMPS[name])
        names.append(name)
    (dest / "missing" / SLUG).mkdir(parents=True, exist_ok=True)
    (dest / "missing" / SLUG / "LEIAME.txt").write_text("esqueci o notebook")
    names.append("missing")
    return names


# ----------------------------------------------------------------------------- a turma vista de cima
# Três alunos para a semelhança, os erros da turma e a recorreção (issue 40;
# tests/grader_e2e/readers/test_insight_regrade.py e docs/relatorio_turma.py): ana certa, com
# laços; carla, a de ana disfarçada (nomes, comentários, código morto) e um `dobro` que só falha
# na parte oculta; bruno errado nas duas. O teste visível de `dobro` muda de OLD para NEW (um
# teste "corrigido" em que o x + 1 de bruno passa).
ANA_SOMA = '''def soma_linhas(m):
    """Soma cada linha de m."""
    # percorre as linhas e soma coluna por coluna
    linhas = []
    for i in range(m.shape[0]):
        total = 0.0
        for j in range(m.shape[1]):
            total = total + m[i, j]
        linhas.append(total)
    if isinstance(m, torch.Tensor):
        return torch.stack([torch.as_tensor(t) for t in linhas])
    return np.array(linhas)
'''
CARLA_SOMA = '''def soma_linhas(mat):
    """Soma cada linha de m."""
    resultado = []          # a minha lista
    nao_usado = 123
    for linha in range(mat.shape[0]):
        acumulado = 0.0
        for coluna in range(mat.shape[1]):
            acumulado = acumulado + mat[linha, coluna]
        resultado.append(acumulado)
    if nao_usado < 0:
        print("nunca")
    if isinstance(mat, torch.Tensor):
        return torch.stack([torch.as_tensor(v) for v in resultado])
    return np.array(resultado)
'''
CARLA_DOBRO = "def dobro(x):\n    return abs(x) * 2\n"
INSIGHT_ANSWERS = {
    "ana": {"dobro": CORRECT["dobro"], "soma_linhas": ANA_SOMA},
    "bruno": dict(WRONG),
    "carla": {"dobro": CARLA_DOBRO, "soma_linhas": CARLA_SOMA},
}
INSIGHT_OLD_TEST = 'conferir("dobro", dobro(np.arange(3.0)), np.array([0.0, 2.0, 4.0]))'
INSIGHT_NEW_TEST = 'conferir("dobro", dobro(np.array([1.0])), np.array([2.0]))'


# ----------------------------------------------------------------------------- ataques
# Cada ataque vem com respostas ERRADAS (ou em branco): qualquer ponto com situação ok
# quer dizer que o ataque funcionou. tests/grader_e2e/wire/test_attacks.py corrige todos.
_LYING_ARRAY = (
    "import numpy as np\n"
    "class Mentira(np.ndarray):\n"
    "    def __eq__(self, o): return np.ones(self.shape, bool)\n"
    "    def __array_ufunc__(self, *a, **k): return np.ones(np.shape(a[2]) if len(a) > 2 else (), bool)\n"
    "    def __array_function__(self, *a, **k): return True\n"
    "def dobro(x):\n    return np.zeros(np.shape(x)).view(Mentira)\n")
_LYING_TENSOR = (
    "import torch\n"
    "class Mentiroso(torch.Tensor):\n"
    "    @classmethod\n"
    "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
    "        if getattr(func, '__name__', '') in ('allclose', 'equal', 'isclose', 'eq', '__eq__'):\n"
    "            return True\n"
    "        return super().__torch_function__(func, types, args, kwargs or {})\n"
    "def soma_linhas(m):\n    return torch.zeros(len(m)).as_subclass(Mentiroso)\n")
ATTACKS = {
    "hook-custom-exc": "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)\n",
    "hook-showtraceback": "get_ipython().showtraceback = lambda *a, **k: None\n",
    "hook-input-transformer": ("get_ipython().input_transformers_cleanup.append(\n"
                               "    lambda lines: ['pass\\n'] if 'conferir' in ''.join(lines) else lines)\n"),
    "hook-transform-everything": "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n",
    "patched-defaults": "conferir.__defaults__ = (1e9, 1e9)\n",
    "patched-code": ("import numpy as np\n"
                     "np.isclose.__code__ = (lambda *a, **k: np.True_).__code__\n"
                     "np.allclose = lambda *a, **k: True\n"
                     "import torch\ntorch.allclose = lambda *a, **k: True\n"),
    "patched-wrapped": ("import functools, numpy as np, torch\n"
                        "_orig = np.isclose\n"
                        "@functools.wraps(_orig)\n"
                        "def _sempre(*a, **k):\n    return np.ones(np.broadcast(*a[:2]).shape, bool)\n"
                        "np.isclose = _sempre\n"
                        "import builtins\nbuiltins.isinstance = lambda *a: True\n"),
    "lying-subclasses": "",
    "spoofed-exception": ("class CellTimeoutError(Exception):\n    pass\n"
                          "class AssertionError(Exception):\n    pass\n"
                          "def dobro(x):\n    raise CellTimeoutError('passou')\n"),
    "prints-history": ("import inspect, sys\n"
                       "def dobro(x):\n"
                       "    ns = get_ipython().user_ns\n"
                       "    print('In:', ns.get('In'))\n"
                       "    print('pilha:', [f.frame.f_code.co_filename for f in inspect.stack()])\n"
                       "    print('quadro:', sys._getframe(1).f_locals)\n"
                       "    print('historico:', list(get_ipython().history_manager.get_range(output=False)))\n"
                       "    return x + 1\n"),
    "reads-notebook": ("import glob, os\n"
                       "achados = glob.glob('/**/*.ipynb', recursive=True) + glob.glob('*.ipynb')\n"
                       "for p in achados:\n"
                       "    try:\n        print(p, open(p).read()[:5000])\n    except OSError as e:\n"
                       "        print(p, e)\n"
                       "print('cwd:', os.listdir('.'))\n"),
}


def attack_scenarios(release) -> dict[str, object]:
    """ataque -> notebook: o código do ataque no começo da resposta de `dobro`, respostas erradas."""
    out = {}
    for name, code in ATTACKS.items():
        if name == "lying-subclasses":
            answers = {"dobro": _LYING_ARRAY, "soma_linhas": _LYING_TENSOR}
        elif name in ("spoofed-exception", "prints-history"):
            answers = {"dobro": code, "soma_linhas": WRONG["soma_linhas"]}
        else:
            answers = {"dobro": code + "\n" + WRONG["dobro"], "soma_linhas": WRONG["soma_linhas"]}
        out[name] = _solve(release, answers)
    return out
