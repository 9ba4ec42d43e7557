"""A restauração das células travadas (worker/integrity.py), sem kernel.
"""

from __future__ import annotations

import copy


import notebooks
from autograder.worker import integrity

ROOT, CAP1 = notebooks.ROOT, notebooks.CAP1


_release, _cell = notebooks.release, notebooks.cell


def test_answer_cell_claiming_locked_is_restored_and_tampered():
    rel = _release()
    nb = copy.deepcopy(rel)
    _cell(nb, "scores_loops").metadata["nbgrader"]["locked"] = True
    restored, issues = integrity.restore_locked_cells(nb, rel)
    assert _cell(restored, "scores_loops").metadata["nbgrader"] == _cell(rel, "scores_loops").metadata["nbgrader"]
    assert any(i.kind == "tampered" and "scores_loops" in i.message for i in issues), issues
    clean, issues = integrity.restore_locked_cells(copy.deepcopy(rel), rel)
    assert not [i for i in issues if i.kind == "tampered"], issues


def test_test_cell_from_an_earlier_release_is_updated_not_tampered():
    """Um teste corrigido depois da entrega (issue 40): a célula que o aluno recebeu, de uma
    versão anterior da versão distribuída, volta ao texto novo e só vira observação; um texto
    que nunca foi distribuído continua sendo edição."""
    rel = _release()
    gid = next(g for c in rel.cells if (g := (c.metadata.get("nbgrader") or {}).get("grade_id"))
               and c.metadata["nbgrader"].get("grade") and not c.metadata["nbgrader"].get("solution"))
    old_text = _cell(rel, gid).source + "\n# versão anterior do teste\nassert True\n"
    nb = copy.deepcopy(rel)
    _cell(nb, gid).source = old_text
    restored, issues = integrity.restore_locked_cells(nb, rel, {gid: (old_text,)})
    assert _cell(restored, gid).source == _cell(rel, gid).source
    assert not [i for i in issues if i.kind == "tampered"], issues
    assert any(i.kind == "note" and "versão anterior" in i.message for i in issues), issues
    _cell(nb, gid).source = old_text + "assert 1 == 1\n"
    _, issues = integrity.restore_locked_cells(nb, rel, {gid: (old_text,)})
    assert any(i.kind == "tampered" and gid in i.message for i in issues), issues


def test_release_history_keeps_each_version(tmp_path):
    import nbformat

    from autograder.core.workspace import Workspace
    from autograder.store import release_history
    ws = Workspace(tmp_path / "ws", tmp_path / "sol")
    rel = _release()
    slug = notebooks.CAP1
    gid = next(g for c in rel.cells if (g := (c.metadata.get("nbgrader") or {}).get("grade_id"))
               and c.metadata["nbgrader"].get("locked") and c.cell_type == "code")
    path = ws.release(slug) / f"{slug}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(rel, path)
    release_history.remember(ws, [slug])
    assert release_history.earlier_locked(ws, slug, slug, rel) == {}
    new = copy.deepcopy(rel)
    _cell(new, gid).source += "\n# corrigido\n"
    nbformat.write(new, path)
    release_history.remember(ws, [slug])
    release_history.remember(ws, [slug])          # a mesma versão não se repete
    assert len(list((ws.state / "releases" / slug).glob("*.ipynb"))) == 2
    assert release_history.earlier_locked(ws, slug, slug, new) == {gid: (_cell(rel, gid).source,)}
