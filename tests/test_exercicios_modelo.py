"""Os exercícios dos capítulos 6 e 7 (autograder/fontes/cap06, cap07), sem kernel Jupyter.

As células de código rodam em sequência num dicionário; o código de cada
célula é registrado no `linecache`, como o IPython faz, para que
`inspect.getsource` (usado pelo teste oculto "sem laços") funcione. Cenários:
  - as soluções passam em todos os testes, visíveis e ocultos;
  - cada solução trocada pelo stub do nbgrader faz a célula de testes logo
    abaixo falhar com AssertionError em português que cita o NotImplementedError;
  - uma solução que devolve None falha com AssertionError ("devolveu None");
  - a resposta plausível e errada (ERRADO) falha nos seus testes e não em todos;
  - respostas erradas típicas são pegas pelos testes ocultos.
A execução real com nbconvert e nbgrader fica com tests/test_nbgrader_pipeline.py.
"""

import contextlib
import io
import linecache
import re

import matplotlib
import pytest

matplotlib.use("Agg")

from autograder.fontes import cap06, cap07  # noqa: E402
from autograder.nbbuild import CONFERIR  # noqa: E402

FONTES = {"06-multi-cabeca": cap06, "07-bloco-transformer": cap07}
SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION\n.*?### END SOLUTION", re.S | re.M)


def meta(cell):
    return cell.metadata["nbgrader"]


def run(cells, replace=None, stop=None):
    """Roda as células de código em ordem; devolve {grade_id: exceção ou None}."""
    ns: dict = {}
    result = {}
    for n, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        gid = meta(cell)["grade_id"]
        if stop and meta(cell).get("grade") and gid != stop:
            continue
        src = replace(cell) if replace else cell.source
        fname = f"<celula-{n}-{gid}>"
        linecache.cache[fname] = (len(src), None, src.splitlines(keepends=True), fname)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(src, fname, "exec"), ns)
            result[gid] = None
        except Exception as e:  # noqa: BLE001 - queremos o que cada célula levantou
            result[gid] = e
        finally:
            matplotlib.pyplot.close("all")
        if gid == stop:
            break
    return result


def pairs(cells):
    """(célula de solução, primeira célula de testes depois dela)."""
    out, pending = [], None
    for c in cells:
        m = meta(c)
        if c.cell_type == "code" and m.get("solution"):
            pending = m["grade_id"]
        elif c.cell_type == "code" and m.get("grade") and pending:
            out.append((pending, m["grade_id"]))
            pending = None
    return out


@pytest.fixture(scope="module", params=list(FONTES))
def slug(request):
    return request.param


def test_notebook_structure_follows_the_conventions(slug):
    cs = FONTES[slug].build().nb.cells
    graded = [c for c in cs if meta(c).get("grade")]
    assert 3 <= len(graded) <= 6 and all(meta(c).get("points", 0) > 0 for c in graded)
    assert any(c.cell_type == "markdown" for c in graded), "falta uma resposta escrita"
    setup = next(c for c in cs if meta(c)["grade_id"] == "preparacao")
    assert CONFERIR in setup.source and "atencao" not in "".join(c.source for c in cs if c.cell_type == "code")
    for c in graded:
        if c.cell_type == "code":
            assert "### BEGIN HIDDEN TESTS" in c.source and "### END HIDDEN TESTS" in c.source
            assert meta(c)["locked"]


def test_solutions_pass_every_visible_and_hidden_test(slug):
    failed = {k: repr(v) for k, v in run(FONTES[slug].build().nb.cells).items() if v is not None}
    assert not failed


def test_blank_or_none_answers_fail_their_tests_with_portuguese_messages(slug):
    cs = FONTES[slug].build().nb.cells
    for sol, test in pairs(cs):
        def stub(cell, sol=sol):
            if meta(cell)["grade_id"] != sol:
                return cell.source
            return SOLUTION.sub(lambda m: f"{m[1]}# SEU CÓDIGO AQUI\n{m[1]}raise NotImplementedError(\"Complete esta célula\")",
                                cell.source)

        err = run(cs, stub, stop=test)[test]
        assert isinstance(err, AssertionError) and "NotImplementedError" in str(err), f"{test}: {err!r}"

        def none(cell, sol=sol):
            if meta(cell)["grade_id"] != sol:
                return cell.source
            return SOLUTION.sub(lambda m: f"{m[1]}return None", cell.source)

        err = run(cs, none, stop=test)[test]
        assert isinstance(err, AssertionError) and "None" in str(err), f"{test}: {err!r}"


def test_plausible_wrong_answer_fails_its_tests_but_not_all(slug):
    cs = FONTES[slug].build().nb.cells
    wrong = FONTES[slug].ERRADO
    res = run(cs, lambda c: wrong.get(meta(c)["grade_id"], c.source))
    by_sol = dict(pairs(cs))
    tests = {g for g in res if g.startswith("test_")}
    failed = {g for g in tests if res[g] is not None}
    assert all(isinstance(res[by_sol[g]], AssertionError) for g in wrong)
    assert {by_sol[g] for g in wrong} <= failed and failed != tests, failed


# Respostas erradas típicas e o teste que deve pegá-las (visível ou oculto).
TYPICAL_MISTAKES = [
    (cap06, "split_merge", "test_split_merge",  # view depois do transpose: não junta dimensões
     "def split_heads(x, n_heads):\n"
     "    if x.ndim != 3 or x.shape[-1] % n_heads:\n        raise ValueError('forma')\n"
     "    B, T, D = x.shape\n    return x.view(B, T, n_heads, D // n_heads).transpose(1, 2)\n\n"
     "def merge_heads(x):\n    B, H, T, d = x.shape\n    return x.transpose(1, 2).view(B, T, H * d)\n"),
    (cap06, "split_merge", "test_split_merge",  # esquece de validar D múltiplo de H
     "def split_heads(x, n_heads):\n"
     "    B, T, D = x.shape\n    return x.reshape(B, T, n_heads, -1).transpose(1, 2)\n\n"
     "def merge_heads(x):\n    B, H, T, d = x.shape\n    return x.transpose(1, 2).reshape(B, T, H * d)\n"),
    (cap06, "mha", "test_mha",  # laço sobre as cabeças: certo nos números, proibido pelo enunciado
     "def multi_head_attention(x, W_q, W_k, W_v, W_o, n_heads):\n"
     "    q, k, v = (split_heads(x @ W, n_heads) for W in (W_q, W_k, W_v))\n"
     "    T = x.shape[1]\n    outs = []\n"
     "    for h in range(n_heads):\n"
     "        s = q[:, h] @ k[:, h].transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
     "        s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float('-inf'))\n"
     "        outs.append(torch.softmax(s, -1) @ v[:, h])\n"
     "    return merge_heads(torch.stack(outs, 1)) @ W_o\n"),
    (cap06, "gqa", "test_gqa",  # repeat em vez de repeat_interleave: grupos trocados
     "def repeat_kv(k, n_rep):\n    return k.repeat(1, n_rep, 1, 1)\n\n"
     "def gqa_attention(q, k, v):\n"
     "    if k.shape[1] != v.shape[1] or q.shape[1] % k.shape[1]:\n        raise ValueError('cabeças')\n"
     "    G = q.shape[1] // k.shape[1]\n    k, v = repeat_kv(k, G), repeat_kv(v, G)\n"
     "    T = q.shape[-2]\n    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
     "    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float('-inf'))\n"
     "    return torch.softmax(s, -1) @ v\n"),
    (cap06, "custos", "test_custos",  # esquece que K e V têm só Hkv cabeças
     "def attention_params(D, H, Hkv):\n    return 4 * D * D\n\n"
     "def attention_flops(B, T, D, H, Hkv):\n    return 2 * B * T * 4 * D * D + 4 * B * T * T * D\n"),
    (cap07, "rms_norm", "test_rms_norm",  # sem subir para float32: float16 transborda
     "def rms_norm(x, weight, eps=1e-5):\n"
     "    if tuple(weight.shape) != (x.shape[-1],):\n        raise ValueError('forma')\n"
     "    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight\n"),
    (cap07, "rope", "test_rope",  # esquece o start
     "def rope(x, start=0, base=10000.0):\n"
     "    T, d = x.shape[-2], x.shape[-1]\n"
     "    if d % 2:\n        raise ValueError('d ímpar')\n"
     "    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)\n"
     "    ang = torch.arange(T, dtype=torch.float64)[:, None] * theta\n"
     "    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)\n"
     "    x0, x1 = x[..., 0::2], x[..., 1::2]\n"
     "    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), -1).flatten(-2)\n"),
    (cap07, "swiglu", "test_swiglu",  # ReLU no lugar da silu
     "def swiglu(x, W1, W3, W2):\n    return (torch.relu(x @ W1) * (x @ W3)) @ W2\n"),
    (cap07, "decoder_block", "test_decoder_block",  # RoPE também em V
     "def decoder_block(x, p, n_heads, n_kv_heads, eps=1e-5):\n"
     "    h = rms_norm(x, p['norm1'], eps)\n"
     "    q = rope(split_heads(h @ p['W_q'], n_heads))\n"
     "    k = rope(split_heads(h @ p['W_k'], n_kv_heads))\n"
     "    v = rope(split_heads(h @ p['W_v'], n_kv_heads))\n"
     "    x = x + merge_heads(gqa_causal_attention(q, k, v)) @ p['W_o']\n"
     "    return x + swiglu(rms_norm(x, p['norm2'], eps), p['W1'], p['W3'], p['W2'])\n"),
]


@pytest.mark.parametrize("mod,sol,test,src", TYPICAL_MISTAKES, ids=[f"{m[1]}-{i}" for i, m in enumerate(TYPICAL_MISTAKES)])
def test_typical_mistake_is_caught(mod, sol, test, src):
    cs = mod.build().nb.cells
    err = run(cs, lambda c: src if meta(c)["grade_id"] == sol else c.source, stop=test)[test]
    assert isinstance(err, AssertionError), f"{sol}: {err!r}"
