"""Os formatos de notebook que a entrada aceita (worker/notebook.py, `load_notebook`), sem kernel.
"""

from __future__ import annotations

import json

import nbformat


def test_nbformat_44_with_cell_ids_is_normalised_not_rejected():
    from autograder.worker.notebook import load_notebook
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_markdown_cell("oi")])
    nb.nbformat_minor = 4
    raw = json.dumps(nb).encode()      # o que o nbformat.v4 escreve, com ids
    got, why = load_notebook(raw)
    assert why is None and [c.source for c in got.cells] == ["x = 1", "oi"]
