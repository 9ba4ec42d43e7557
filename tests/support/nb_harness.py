"""Roda as células de um caderno-fonte (autograder/fontes) sem kernel Jupyter.

As células de código rodam em sequência num dicionário — o que um kernel faz,
sem os ~4 s de partida. O código de cada célula vai para o `linecache`, como
o IPython faz, para que `inspect.getsource` (usado por testes ocultos que
proíbem laços) funcione. A execução real com nbconvert e nbgrader fica com
tests/nbgrader/test_nbgrader_pipeline.py.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION\n.*?### END SOLUTION", re.S | re.M)


def meta(cell) -> dict:
    return cell.metadata["nbgrader"]


def run(cells, replace=None, stop=None, memo=frozenset()) -> dict:
    """Roda as células de código em ordem; devolve {grade_id: exceção ou None}.

    Com `stop`, para na célula `stop` e pula as outras células de teste (elas
    não definem nada que as seguintes usem), para o cenário custar só o necessário.

    `memo`: grade_ids de células cujo único efeito é o veredito e os nomes que elas atribuem
    (quem chama garante: p.ex. o treino do cap. 8, que sorteia com gerador próprio dentro de
    `fork_rng` e devolve o número de threads). Uma célula dessas roda uma vez por processo para
    cada texto de todas as células até ela, inclusive; nas outras vezes, o veredito e os nomes
    que ela atribuiu (cópias) voltam sem rodá-la. O mesmo texto dá o mesmo resultado: as
    células são deterministas (sementes fixas).
    """
    import os

    env = dict(os.environ)      # o que as células põem no ambiente fica no "kernel", não no pytest
    try:
        return _run(cells, replace, stop, memo)
    finally:
        os.environ.clear()
        os.environ.update(env)


# {(grade_id, sha256 do texto das células até ela): (exceção ou None, {nome: valor atribuído})}
_MEMO: dict[tuple[str, str], tuple[BaseException | None, dict]] = {}


def _run(cells, replace, stop, memo) -> dict:
    import copy
    import hashlib

    ns: dict = {}
    result = {}
    seen = hashlib.sha256()
    for n, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        gid = meta(cell)["grade_id"]
        if stop and meta(cell).get("grade") and gid != stop:
            continue
        src = replace(cell) if replace else cell.source
        seen.update(f"{len(src)}:{src}".encode())
        key = (gid, seen.hexdigest())
        if gid in memo and key in _MEMO:
            result[gid], assigned = _MEMO[key]
            ns.update(copy.deepcopy(assigned))
            if gid == stop:
                break
            continue
        before = dict(ns) if gid in memo else None
        fname = f"<celula-{n}-{gid}>"
        linecache.cache[fname] = (len(src), None, src.splitlines(keepends=True), fname)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(src, fname, "exec"), ns)
            result[gid] = None
        except Exception as e:  # noqa: BLE001 - queremos o que cada célula levantou
            result[gid] = e
        finally:
            plt.close("all")
        if before is not None:
            assigned = {k: v for k, v in ns.items() if k not in before or before[k] is not v}
            try:
                _MEMO[key] = (result[gid], copy.deepcopy(assigned))
            except Exception:  # noqa: BLE001 - um valor que não se copia: essa célula sempre roda
                pass
        if gid == stop:
            break
    return result


def solution_and_test_ids(cells) -> list[tuple[str, str]]:
    """Pares (célula de solução, primeira célula de testes depois dela)."""
    pairs, pending = [], None
    for c in cells:
        m = meta(c)
        if c.cell_type == "code" and m.get("solution"):
            pending = m["grade_id"]
        elif c.cell_type == "code" and m.get("grade") and pending:
            pairs.append((pending, m["grade_id"]))
            pending = None
    return pairs


def replacing(sol: str, body):
    """Função para `run(replace=...)` que troca o miolo da solução `sol` por `body(indent)`."""
    def replace(cell):
        if meta(cell)["grade_id"] != sol:
            return cell.source
        return SOLUTION.sub(lambda m: body(m[1]), cell.source)
    return replace


def _code_stub() -> str:
    """O stub de código de nbgrader_config.py (lido de lá, não copiado)."""
    from pathlib import Path

    from traitlets.config import Config

    c = Config()
    path = Path(__file__).resolve().parents[2] / "nbgrader_config.py"
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), {"get_config": lambda: c})
    return c.ClearSolutions.code_stub["python"]


CODE_STUB = _code_stub()


def stub(indent: str) -> str:
    """O que o nbgrader põe no lugar da solução (nbgrader_config.py), com o recuo da solução."""
    return "\n".join(indent + line for line in CODE_STUB.splitlines())


def returns_none(indent: str) -> str:
    return f"{indent}return None"
