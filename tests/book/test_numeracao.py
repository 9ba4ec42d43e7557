"""A numeração dos capítulos (issue 26): o modelo de linguagem é o capítulo 8, a Parte II vai de 9 a 13.

Falha se sobrar um slug, um link ou uma referência da numeração antiga (a Parte II de 8 a 12 e o
modelo de linguagem dentro do capítulo 7), ou se o índice, as pastas de exercícios e as diretivas
`exercicio` discordarem entre si.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OLD_SLUGS = ("08-custo-quadratico", "09-softmax-online", "10-flashattention", "11-kv-cache",
             "12-kernel-triton", "12-desafio-flashattention")
# assuntos do modelo de linguagem que só o capítulo 8 trata
LM_TOPICS = r"(?:BPE|perplexidade|bigrama|unigrama|treinad[oa] (?:na|em) (?:prosa|português)|modelo de linguagem em português)"


def _tracked(*patterns: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / p for p in out.stdout.split()]


def _toc_chapters() -> list[str]:
    return re.findall(r"-\s*file:\s*(book/parte\d/\S+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))


def test_toc_numbers_the_chapters_in_order():
    stems = [Path(f).name for f in _toc_chapters()]
    assert [int(s[:2]) for s in stems] == list(range(1, len(stems) + 1)), stems
    assert "08-modelo-de-linguagem" in stems and stems.index("08-modelo-de-linguagem") == 7
    for f in _toc_chapters():
        assert (ROOT / f"{f}.md").is_file(), f


def test_no_slug_of_the_old_numbering_is_left():
    found = []
    for path in _tracked("*.md", "*.py", "*.yml", "*.yaml", "*.toml", "*.txt", "*.ipynb", "*.cfg", "Makefile"):
        if not path.is_file() or path == Path(__file__).resolve():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}: {s}" for s in OLD_SLUGS if s in text]
    assert not found, "slugs da numeração antiga:\n" + "\n".join(found)


def test_each_chapter_links_its_own_exercise_and_every_exercise_has_a_chapter():
    chapters = {Path(f).name: ROOT / f"{f}.md" for f in _toc_chapters()}
    for stem, page in chapters.items():
        slugs = re.findall(r"```\{exercicio\}\s+(\S+)", page.read_text(encoding="utf-8"))
        assert all(s[:3] == stem[:3] for s in slugs), f"{stem} aponta para os exercícios {slugs}"
        assert not slugs or stem in slugs, f"{stem} não aponta para o seu próprio caderno: {slugs}"
    assert "08-modelo-de-linguagem" in re.findall(
        r"```\{exercicio\}\s+(\S+)", chapters["08-modelo-de-linguagem"].read_text(encoding="utf-8"))
    for folder in sorted(p.name for p in (ROOT / "exercises").iterdir() if p.is_dir()):
        base = folder.replace("-desafio-flashattention", "-kernel-triton")
        assert base in chapters, f"exercises/{folder} não corresponde a nenhum capítulo do índice"


def test_the_language_model_is_never_called_chapter_7():
    bad = []
    for page in sorted((ROOT / "book").rglob("*.md")):
        text = re.sub(r"\s+", " ", page.read_text(encoding="utf-8"))
        for m in re.finditer(rf"cap[íi]tulo 7\b[^.]{{0,80}}{LM_TOPICS}|{LM_TOPICS}[^.]{{0,40}}\(cap[íi]tulo 7\)", text):
            bad.append(f"{page.relative_to(ROOT)}: ...{m.group(0)}...")
    seven = (ROOT / "book/parte1/07-bloco-transformer.md").read_text(encoding="utf-8")
    for topic in ("BPE", "perplexidade", "bigrama", "load_lm"):
        if topic in seven:
            bad.append(f"07-bloco-transformer.md ainda trata de {topic} (é assunto do capítulo 8)")
    assert not bad, "\n".join(bad)


def test_built_site_has_no_link_to_language_model_anchors_in_chapter_7():
    html = ROOT / "_build" / "html"
    bad = []
    for page in sorted(html.rglob("*.html")):
        if "_static" in page.parts:
            continue
        for href in re.findall(r'href="([^"]*07-bloco-transformer\.html#[^"]*)"', page.read_text(encoding="utf-8")):
            if re.search(r"portugu|bpe|bigrama|perplex|modelo-de-linguagem|tokens|gerar", href, re.I):
                bad.append(f"{page.relative_to(html)}: {href}")
    assert not bad, "\n".join(bad)
