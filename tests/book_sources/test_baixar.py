"""O texto do .ipynb baixado em Markdown comum (book/_ext/baixar.py, `plain_markdown`)."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from baixar import PageContext, glued_values, plain_markdown, rewrite_download  # noqa: E402

MYST = """(cap-softmax)=
# A softmax

:::{admonition} Ao final deste capítulo você será capaz de
:class: tip
- usar o {term}`log-sum-exp <logsumexp>`, que vale {glue:text}`c4_lse`;
:::

Veja o {ref}`capítulo 2 <cap-escala>`, a {ref}`cap-softmax` e a
{doc}`notação <../apendices/notacao>` {cite:p}`vaswani2017attention`.

:::{note}
Em `float16` o limite é {glue:text}`c4_lim16`.
:::

```{literalinclude} ../../atencao/book.py
:language: python
:pyobject: texto
```

```{exercicio} 04-softmax
```
"""


@pytest.fixture
def ctx():
    return PageContext(glue={"c4_lse": "3,14", "c4_lim16": "11,09"},
                       labels={"cap-softmax": "A softmax", "cap-escala": "A escala"},
                       citations={"vaswani2017attention": "Vaswani et al., 2017"},
                       number="4", source_dir=ROOT / "book" / "parte1")


def test_myst_becomes_plain_markdown(ctx):
    md = plain_markdown(MYST, ctx)
    assert md.startswith("# 4. A softmax"), md[:40]
    prose = md.split("```python")[0]   # o código incluído pode citar MyST na docstring
    assert "(cap-softmax)=" not in prose and ":::" not in prose and "{" + "glue" not in prose
    assert "> **Ao final deste capítulo você será capaz de**" in md
    assert "> - usar o log-sum-exp, que vale 3,14;" in md
    assert "Veja o capítulo 2, a A softmax e a\nnotação (Vaswani et al., 2017)." in md
    assert "> **Nota**" in md and "> Em `float16` o limite é 11,09." in md
    assert "```python\ndef texto(nome: str, valor) -> str:" in md
    assert "exercises/04-softmax/04-softmax.ipynb" in md
    assert "```{" not in md


def test_a_number_without_a_glued_value_fails_the_build(ctx):
    with pytest.raises(KeyError, match="c4_nada"):
        plain_markdown("vale {glue:text}`c4_nada`", ctx)


def test_rewrite_reads_the_glue_file_of_the_executed_page(tmp_path):
    glue = tmp_path / "p.glue.json"
    glue.write_text('{"c1_x": {"data": {"text/plain": "\'1.024\'"}, "metadata": {"scrapbook": '
                    '{"mime_prefix": "application/papermill.record/", "name": "c1_x"}}, '
                    '"output_type": "display_data"}}', encoding="utf-8")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("São {glue:text}`c1_x` chaves.")])
    values = glued_values(nb, glue)
    assert values == {"c1_x": "1.024"}
    out = rewrite_download(nb, "https://github.com/org/repo", "main", ROOT, PageContext(glue=values))
    assert out.cells[1].source == "São 1.024 chaves."
