"""Uma turma com uma zip-bomba, pela linha de comando (issue 42, M2).

O zip da turma tem uma entrega correta da turma de cenários, uma aluna nova com arquivos além do
notebook e um notebook-bomba de zeros (o workspace preparado da turma de cenários, `arquivos`,
sem corrigi-la inteira: esta turma é só de três). A bomba vira uma linha
`invalid-notebook` que diz por quê, sem ir ao Dask; a aluna nova é corrigida (os bytes do
notebook só saem do disco ao ir para a tarefa); nada além dos notebooks chega ao workspace.
"""

from __future__ import annotations

import zipfile

from grading import LIMITS, SLUG, clone_prepared, needs_bwrap, read_csv, run_cli

MIB = 1024 * 1024


@needs_bwrap
def test_a_bomb_in_the_class_zip_is_refused_by_name_and_the_rest_is_graded(arquivos, tmp_path):
    ws = clone_prepared(arquivos["ws"], tmp_path / "ws")
    src = arquivos["subs"] / "correct" / SLUG
    z = tmp_path / "turma.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as f:
        for p in sorted(src.iterdir()):
            f.write(p, f"correct/{SLUG}/{p.name}")
        f.write(src / f"{SLUG}.ipynb", f"nova/{SLUG}/{SLUG}.ipynb")
        for name in (f"nova/{SLUG}/dados.bin", f"bomba/{SLUG}/{SLUG}.ipynb"):   # 8 MiB de zeros cada
            with f.open(name, "w", force_zip64=True) as w:
                for _ in range(8):
                    w.write(bytes(MIB))
    p = run_cli("grade", z, "--workspace", ws, "--solutions", arquivos["sol"], "--no-report", *LIMITS)
    assert "corrigindo 2 notebook(s) de 2 aluno(s)" in p.stderr, p.stderr   # a bomba não vai ao Dask
    assert "aviso: bomba: entrega recusada (" in p.stderr and "--max-ratio" in p.stderr, p.stderr
    rows = read_csv(ws / "grades.csv")
    assert sorted(rows) == ["bomba", "correct", "nova"]
    assert rows["bomba"]["status"] == "invalid-notebook" and rows["bomba"]["score"] == "0"
    assert rows["bomba"]["details"].startswith("entrega recusada: ") and "descomprime" in rows["bomba"]["details"]
    assert rows["nova"]["score"] == rows["correct"]["score"] and rows["nova"]["status"] == rows["correct"]["status"]
    assert "além dos notebooks" in rows["nova"]["details"] and "dados.bin" in rows["nova"]["details"]
    mirrored = sorted(str(f.relative_to(ws / "submitted")) for f in (ws / "submitted").rglob("*") if f.is_file())
    assert mirrored == [f"correct/{SLUG}/{SLUG}.ipynb", f"correct/{SLUG}/timestamp.txt", f"nova/{SLUG}/{SLUG}.ipynb"]
    assert not list((ws / ".autograder").glob("coleta-*"))            # o spool sumiu com a correção
