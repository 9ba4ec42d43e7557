"""O caderno do capítulo 12 escolhe o interpretador antes de importar o triton
e é autocontido (numpy, torch, triton; nada de atencao). A correção completa
(soluções = nota máxima, em branco = zero, resposta errada = nota parcial)
fica em test_nbgrader_pipeline.py."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SLUG = "12-kernel-triton"


def _code_cells(where):
    nb = nbformat.read(ROOT / where / SLUG / f"{SLUG}.ipynb", as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "code"]


def test_first_code_cell_sets_interpreter_before_importing_triton():
    for where in ("solutions", "exercises"):
        first = _code_cells(where)[0]
        env = first.index('os.environ["TRITON_INTERPRET"] = "1"')
        imp = re.search(r"^import triton\b", first, re.M).start()
        assert env < imp, f"{where}: TRITON_INTERPRET deve vir antes de import triton"
        assert "if not NA_GPU" in first[: env], "o interpretador só deve ser ligado sem GPU"
        # Nenhuma outra célula importa o triton antes da primeira.
        assert not any(re.search(r"^\s*(import|from) triton", c, re.M) for c in _code_cells(where)[1:])


def test_notebook_uses_only_numpy_torch_triton():
    code = "\n".join(_code_cells("exercises"))
    imports = set(re.findall(r"^\s*(?:import|from)\s+([a-zA-Z_]\w*)", code, re.M))
    assert imports <= {"math", "os", "sys", "numpy", "torch", "triton", "contextlib", "warnings", "inspect"}, imports
