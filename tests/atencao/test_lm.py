"""O modelo de linguagem do curso: corpus, tokenizador BPE, treino reprodutível e pesos entregues."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest
import torch

from atencao import lm
from atencao.model import TinyConfig, TinyModel, Tracer
from atencao.text import (FORMULA, VALOR, BPETokenizer, Corpus, extract_prose, load_glue, orphan_punctuation,
                          project_corpus, render_math)

ROOT = Path(__file__).resolve().parents[2]
PAGE_8 = ROOT / "book" / "parte1" / "08-modelo-de-linguagem.md"


@pytest.fixture(scope="module")
def shipped():
    return lm.load_lm()


@pytest.fixture(scope="module")
def frozen():
    return lm.load_corpus()


@pytest.fixture(scope="module")
def corpus():
    """A prosa de agora (sem os valores colados: não depende de o livro estar construído)."""
    return project_corpus(use_glue=False)


# --------------------------------------------------------------------------
# corpus
# --------------------------------------------------------------------------

PAGE = """---
jupytext:
  text_representation:
    format_name: myst
---

(cap-x)=
# Um título

Um parágrafo com {term}`cabeças <cabeça>`, com $QK^\\top$ no meio e
{glue:text}`c7_n` parâmetros, citando {cite:p}`vaswani2017attention` e a função `rope`.

```{code-cell} ipython3
codigo_que_nao_e_prosa = 1
```

$$
\\text{matemática em bloco}
$$

:::{admonition} Uma caixa com título comprido o bastante
:class: tip
- o conteúdo da caixa é prosa e fica no corpus;
:::

| tabela | fora |
|---|---|
"""


def test_prose_extraction_drops_code_math_and_markup():
    pars = extract_prose(PAGE)
    assert pars == [
        f"Um parágrafo com cabeças, com QKᵀ no meio e {VALOR} parâmetros, citando e a função rope.",
        "Uma caixa com título comprido o bastante",
        "o conteúdo da caixa é prosa e fica no corpus;",
    ], pars


def test_glue_values_are_substituted_and_citations_leave_no_hole(tmp_path):
    glue = tmp_path / "p.glue.json"
    glue.write_text(json.dumps({"c7_n": {"data": {"text/plain": "'1.234'"}, "output_type": "display_data"}}))
    pars = extract_prose(PAGE, load_glue(glue), {"vaswani2017attention": "Vaswani et al."})
    assert pars[0] == "Um parágrafo com cabeças, com QKᵀ no meio e 1.234 parâmetros, citando e a função rope."
    assert extract_prose("Como mostram {cite:t}`vaswani2017attention`, o valor {cite:p}`x`.\n",
                         cites={"vaswani2017attention": "Vaswani et al."}) == ["Como mostram Vaswani et al., o valor."]


@pytest.mark.parametrize("tex, text", [
    ("i", "i"), (r"j \le i", "j ≤ i"), (r"\sqrt{d_k}", "√d_k"), (r"QK^\top", "QKᵀ"), ("T^2", "T²"),
    (r"S_{ij} = q_i \cdot k_j", "S_ij = q_i · k_j"), (r"d_\text{model}", "d_model"), (r"T \times T", "T × T"),
    (r"e^{-\infty} = 0", "e^(-∞) = 0"), (r"\begin{pmatrix} a \end{pmatrix}", FORMULA), (r"\frac{a}{b}", FORMULA),
])
def test_inline_math_becomes_text_or_a_visible_placeholder(tex, text):
    assert render_math(tex) == text


def test_orphan_punctuation_finds_the_holes_and_not_code():
    assert orphan_punctuation("as posições , graças à máscara")
    assert orphan_punctuation("o valor .")
    assert orphan_punctuation("Os passos ( tokens) levaram")
    assert not orphan_punctuation("baixe o .ipynb, veja x[..., i] e offs[None, :]; fim.")
    assert orphan_punctuation("a função () devolve") and not orphan_punctuation("chame torch.Generator().manual_seed(0)")


def test_corpus_is_the_course_prose_only(corpus):
    kinds = {o.split("/")[0] for o in corpus.origin}
    assert kinds == {"book", "exercises"}, kinds  # nada de README, CONTRIBUTING ou docstrings
    assert all(o.endswith((".md", ".ipynb")) for o in corpus.origin)


@pytest.mark.parametrize("which", ["frozen", "corpus"])
def test_no_paragraph_has_orphan_punctuation(which, request):
    c = request.getfixturevalue(which)
    bad = [(o, orphan_punctuation(p)) for p, o in zip(c.paragraphs, c.origin) if orphan_punctuation(p)]
    assert not bad, bad[:10]
    for marca in ("{glue", "{cite", "{term}", "$", "{code-cell}", "```", ":::"):
        assert marca not in c.text, marca


def test_corpus_is_deterministic_and_split_by_paragraph_hash(corpus):
    again = project_corpus(use_glue=False)
    assert again.sha256 == corpus.sha256 and again.is_val == corpus.is_val
    assert again.source_sha256 == corpus.source_sha256 == corpus.sha256  # sem valores colados, o texto é a fonte
    frac = sum(corpus.is_val) / len(corpus.is_val)
    assert 0.05 < frac < 0.15, f"a validação deveria ter ~10 % dos parágrafos, tem {frac:.1%}"
    assert set(corpus.train_text.split("\n")).isdisjoint(corpus.val_text.split("\n"))


def test_corpus_file_round_trip_and_tamper_check(frozen, tmp_path):
    frozen.save(tmp_path / "c.json")
    again = Corpus.load(tmp_path / "c.json")
    assert again == frozen
    raw = (tmp_path / "c.json").read_text(encoding="utf-8").replace(" a ", " o ", 1)
    (tmp_path / "c.json").write_text(raw, encoding="utf-8")
    with pytest.raises(ValueError, match="hash"):
        Corpus.load(tmp_path / "c.json")


# --------------------------------------------------------------------------
# tokenizador
# --------------------------------------------------------------------------

def test_bpe_first_merge_is_the_most_frequent_pair():
    tok = BPETokenizer.train("ab ab ab", vocab_size=257)
    assert tok.merges == [(ord("a"), ord("b"))]
    assert tok.encode("ab") == [256] and tok.pieces(" ab") == [" ", "ab"]


def test_bpe_round_trip_on_any_text(shipped):
    tok = shipped[0]
    assert tok.vocab_size == 1024
    for s in ["A máscara causal, ção!", "snake_case\tcom\n\n  espaços  ", "emoji 🙂 e 漢字", "", "1.024 e 0,47"]:
        ids = tok.encode(s)
        assert all(0 <= t < 1024 for t in ids)
        assert tok.decode(ids) == s


def test_bpe_training_is_deterministic(corpus):
    text = corpus.train_text[:20000]
    assert BPETokenizer.train(text, 400).merges == BPETokenizer.train(text, 400).merges


def test_tokenizer_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="vocab_size deve ser um inteiro >= 256"):
        BPETokenizer.train("abc", 100)
    with pytest.raises(FileNotFoundError, match="make weights"):
        BPETokenizer.load(tmp_path / "nada.json")
    with pytest.raises(ValueError, match="fora do vocabulário"):
        BPETokenizer([]).decode([300])


# --------------------------------------------------------------------------
# pesos entregues
# --------------------------------------------------------------------------

def test_shipped_files_agree_with_each_other(shipped, frozen):
    """Pesos, ficha, tokenizador, corpus congelado e curva: o mesmo treino (isto é o que o CI exige)."""
    tok, model, info, val_ids = shipped
    assert info.corpus_sha256 == frozen.sha256 and info.corpus_source_sha256 == frozen.source_sha256
    train_ids, val_again = lm.encode_splits(frozen, tok)
    assert torch.equal(val_again, val_ids) and val_ids.numel() == info.val_tokens
    assert train_ids.numel() == info.train_tokens
    curve = lm.load_curve()
    assert len(curve.batch_loss) == info.train["steps"]
    assert curve.eval_steps[0] == 0 and curve.eval_steps[-1] == info.train["steps"]
    assert len(curve.train_loss) == len(curve.val_loss) == len(curve.eval_steps)
    assert curve.val_loss[-1] == pytest.approx(info.val_loss, abs=1e-9)


def test_shipped_weights_reproduce_their_recorded_loss_and_beat_the_bigram(shipped, frozen):
    tok, model, info, val_ids = shipped
    loss = lm.lm_loss(model, val_ids, info.train["context"])
    assert loss == pytest.approx(info.val_loss, abs=1e-4)
    ngram = lm.ngram_losses(lm.encode_splits(frozen, tok)[0], val_ids, model.config.vocab_size)
    assert loss < ngram.bigram < ngram.unigram, (loss, ngram)


def test_stale_corpus_is_reported_not_failed(frozen, tmp_path):
    """O livro muda todo dia (outros capítulos, outros autores): isso vira um aviso no `make weights`,
    nunca uma falha (a página não mostra o aviso: diz o instantâneo); o que falha é pesos e corpus
    congelado discordarem."""
    status = lm.corpus_status()
    assert status.frozen_source_sha256 == frozen.source_sha256 and status.stale in (True, False)
    assert ("mudou" in status.message()) == status.stale
    outside = lm.corpus_status(root=tmp_path)  # sem book/: o pacote instalado, o caderno baixado
    assert outside.stale is None and "corpus congelado" in outside.message()


def test_the_page_evaluates_only_the_frozen_data():
    """O capítulo 8 (e o 12, que usa o mesmo modelo) leem atencao/data, não o texto atual do livro."""
    for page in (PAGE_8, ROOT / "book" / "parte2" / "12-kv-cache.md"):
        code = "\n".join(re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", page.read_text(encoding="utf-8"), re.S))
        assert "lm.load_corpus()" in code, page
        assert "project_corpus" not in code, page
        assert not re.search(r"""["'][^"']*book/[^"']*\.md""", code), page


def test_shipped_files_are_small_and_tensor_only():
    files = (lm.WEIGHTS_FILE, lm.TOKENIZER_FILE, lm.INFO_FILE, lm.CORPUS_FILE, lm.CURVE_FILE)
    size = sum((lm.DATA_DIR / f).stat().st_size for f in files)
    assert size < 8 * 2**20, f"os pesos deveriam ter poucos MiB, têm {size / 2**20:.1f} MiB"
    assert (lm.DATA_DIR / lm.CORPUS_FILE).stat().st_size < 2**20
    saved = torch.load(lm.DATA_DIR / lm.WEIGHTS_FILE, weights_only=True)
    assert all(isinstance(v, torch.Tensor) for v in saved["state"].values())
    info = json.loads((lm.DATA_DIR / lm.INFO_FILE).read_text(encoding="utf-8"))
    assert info["model"] == dataclasses.asdict(TinyConfig())


def test_load_lm_says_how_to_make_the_weights(tmp_path):
    with pytest.raises(FileNotFoundError, match="make weights"):
        lm.load_lm(tmp_path)


# --------------------------------------------------------------------------
# treino e avaliação
# --------------------------------------------------------------------------

def _train_few_steps(seed: int):
    cfg = lm.TrainConfig(steps=3, batch_size=2, context=32, warmup=2, seed=seed)
    ids = torch.randint(0, 1024, (500,), generator=torch.Generator().manual_seed(9))
    torch.manual_seed(cfg.seed)
    model = TinyModel(TinyConfig())
    losses = lm.train_lm(model, ids, cfg)
    return model, losses


def test_training_is_reproducible_bit_for_bit():
    (a, la), (b, lb), (c, lc) = _train_few_steps(0), _train_few_steps(0), _train_few_steps(1)
    assert la == lb and la != lc
    for (name, pa), pb, pc in zip(a.named_parameters(), b.parameters(), c.parameters()):
        assert torch.equal(pa, pb), name
    assert not all(torch.equal(pa, pc) for pa, pc in zip(a.parameters(), c.parameters()))


def test_make_weights_command_writes_loadable_files(tmp_path, capsys, frozen):
    lm.main(["--steps", "2", "--out", str(tmp_path), "--frozen"])
    assert "perda de validação" in capsys.readouterr().out
    tok, model, info, val_ids = lm.load_lm(tmp_path)
    assert info.train["steps"] == 2 and info.corpus_sha256 == frozen.sha256
    assert lm.load_corpus(tmp_path) == frozen
    assert lm.lm_loss(model, val_ids, 128) == pytest.approx(info.val_loss, abs=1e-4)
    curve = lm.load_curve(tmp_path)
    assert curve.eval_steps == [0, 2] and len(curve.batch_loss) == 2


def test_learning_rate_warms_up_then_follows_the_cosine():
    cfg = lm.TrainConfig(steps=100, warmup=10, lr=1.0, min_lr_ratio=0.1)
    assert lm.lr_at(0, cfg) == pytest.approx(0.1) and lm.lr_at(9, cfg) == pytest.approx(1.0)
    assert lm.lr_at(10, cfg) == pytest.approx(1.0) and lm.lr_at(100, cfg) == pytest.approx(0.1)
    assert lm.lr_at(55, cfg) == pytest.approx(0.55)


def test_bigram_learns_a_deterministic_sequence():
    ids = torch.arange(7).repeat(50)  # 0 1 2 ... 6 0 1 ...: o próximo token é sempre o seguinte
    ng = lm.ngram_losses(ids, ids, 7)
    assert ng.bigram < 0.01 and ng.unigram == pytest.approx(torch.log(torch.tensor(7.0)).item(), abs=0.01)


def test_lm_loss_predicts_every_token_after_the_first_once():
    model = TinyModel(TinyConfig(d_model=32, n_layers=1, n_heads=2, n_kv_heads=1, d_ff=64))
    ids = torch.randint(0, 1024, (301,), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        full = torch.nn.functional.cross_entropy(model(ids[None, :-1])[0], ids[1:]).item()
    assert lm.lm_loss(model, ids, context=300) == pytest.approx(full, abs=1e-5)
    with pytest.raises(TypeError, match="torch.long"):
        lm.lm_loss(model, ids.float())


def test_head_scores_name_the_patterns():
    n = 6
    prev = torch.zeros(n, n)
    prev[0, 0] = 1
    prev[torch.arange(1, n), torch.arange(n - 1)] = 1  # cada consulta olha a anterior
    first = torch.zeros(n, n)
    first[:, 0] = 1
    ind = torch.zeros(n, n)  # sequência a b c a b c: na repetição, olha o que veio depois
    ind[torch.arange(n), torch.arange(n)] = 1
    ind[torch.arange(3, n), torch.arange(1, n - 2)] = 1
    ind[3:, :] = ind[3:, :] / ind[3:, :].sum(-1, keepdim=True)
    maps = torch.stack([prev, first, ind]).view(1, 3, n, n)
    s = lm.head_scores(maps, period=3)
    assert s["anterior"][0].tolist() == pytest.approx([1.0, 0.2, 0.0])
    assert s["primeiro"][0].tolist() == pytest.approx([0.2, 1.0, 0.0])
    assert s["inducao"][0, 2] == pytest.approx(0.5) and s["inducao"][0, 0] == 0.0


def test_attention_maps_match_the_tracer(shipped):
    tok, model, _, _ = shipped
    a, b = tok.encode("A atenção olha para trás."), tok.encode("Outra frase, de outro jeito, bem mais comprida!")
    idx = torch.tensor([a, b[:len(a)]])  # duas frases do mesmo tamanho, seja qual for o tokenizador
    maps = lm.attention_maps(model, idx)  # (B, L, H, n, n)
    n = idx.shape[1]
    assert maps.shape == (2, 4, 4, n, n)
    assert torch.allclose(maps.sum(-1), torch.ones(2, 4, 4, n))
    assert torch.all(maps.triu(1) == 0)  # nada no futuro
    for b, layer, head in [(0, 0, 0), (1, 3, 2), (1, 1, 3)]:
        with Tracer(model, layer=layer, head=head, batch=b, names=["attn.softmax"]) as tr, torch.no_grad():
            model(idx)
        assert torch.equal(maps[b, layer, head], tr["attn.softmax"])
    assert lm.attention_maps(model, idx[:1]).shape == (4, 4, n, n)


def test_word_starts_and_the_competing_hypothesis():
    pieces = [b"A", b" ca", b"be", b"\xc3\xa7as", b",", b" o"]  # "A cabeças, o"
    assert lm.word_starts(pieces) == [0, 1, 1, 1, 4, 5]
    n = 6
    starts = torch.tensor(lm.word_starts(pieces))
    word = torch.zeros(n, n)  # cada consulta olha o começo da sua palavra
    word[torch.arange(n), starts] = 1
    prev = torch.zeros(n, n)
    prev[0, 0] = 1
    prev[torch.arange(1, n), torch.arange(n - 1)] = 1
    s = lm.head_scores(torch.stack([word, prev]), starts=starts)  # só a consulta 3 separa as hipóteses
    assert s["comeco"].tolist() == [1.0, 0.0] and s["anterior_onde_discordam"].tolist() == [0.0, 1.0]


def test_ablating_a_head_equals_zeroing_its_columns_of_w_o():
    torch.manual_seed(0)
    model = TinyModel(TinyConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=4, n_kv_heads=2, d_ff=64))
    idx = torch.randint(0, 64, (2, 10))
    with torch.no_grad():
        before = model(idx)
        with lm.ablate_head(model, 1, 2):
            ablated = model(idx)
        assert torch.equal(model(idx), before)  # o gancho sai com o `with`
        oracle = TinyModel(model.config)
        oracle.load_state_dict(model.state_dict())
        oracle.blocks[1].attn.w_o.weight[:, 2 * 8:3 * 8] = 0  # d_k = 8: as colunas da cabeça 2
        assert torch.allclose(ablated, oracle(idx), atol=1e-6)
        assert not torch.allclose(ablated, before)
    deltas = lm.ablation_deltas(model, torch.randint(0, 64, (50,)), context=16)
    assert deltas.shape == (2, 4)
    with pytest.raises(ValueError, match="não existe"):
        with lm.ablate_head(model, 2, 0):
            pass


def test_bigram_sample_follows_the_counts_and_known_words():
    ids = torch.arange(7).repeat(50)
    out = lm.bigram_sample(ids, 7, 1e-9, torch.tensor([[3], [6]]), 5, torch.Generator().manual_seed(0))
    assert out.tolist() == [[3, 4, 5, 6, 0, 1], [6, 0, 1, 2, 3, 4]]
    share, n = lm.known_word_share("Casa casa, Sopa!", lm.vocabulary("a casa é azul"))
    assert n == 3 and share == pytest.approx(2 / 3)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("ATENCAO_REFAZ_PESOS") != "1",
                    reason="refaz o treino inteiro (minutos): rode com ATENCAO_REFAZ_PESOS=1")
def test_make_weights_reproduces_the_shipped_loss(shipped, frozen, tmp_path):
    """Treina de novo sobre o corpus CONGELADO (não sobre o livro de hoje): a mesma perda, a menos da folga."""
    info = shipped[2]
    cfg = lm.TrainConfig(**info.train)
    again = lm.make_weights(cfg, out_dir=tmp_path, log_every=0, corpus=frozen)
    assert again.corpus_sha256 == info.corpus_sha256
    assert abs(again.val_loss - info.val_loss) < lm.REPRO_TOLERANCE, (again.val_loss, info.val_loss)


# --------------------------------------------------------------------------
# revisão de 2026-12-05 (cap. 8): corpus só da prosa do curso, instantâneo com nome,
# laço da gulosa, sorteio filtrado, amostras ao longo da curva, circuito OV
# --------------------------------------------------------------------------

def test_frozen_corpus_is_a_named_dated_snapshot_of_course_prose_only(frozen):
    """N2/N4: nenhum README nem pasta de maquinaria (book/_static) no corpus, e cada parágrafo tem
    uma fonte com nome verdadeiro na tabela do cap. 8; o instantâneo diz de que commit e de que dia é."""
    from atencao.text import SOURCE_KINDS, source_kind

    kinds = {source_kind(o) for o in frozen.origin}  # ValueError para um parágrafo de fora da prosa
    assert kinds == {name for _, name in SOURCE_KINDS}, kinds
    assert not any("/_" in o or o.endswith("README.md") for o in frozen.origin)
    assert frozen.name.startswith("prosa do curso") and re.fullmatch(r"\d{4}-\d{2}-\d{2}", frozen.date)
    with pytest.raises(ValueError, match="não é prosa do curso"):
        source_kind("book/_static/interativo/README.md")


def test_project_corpus_skips_readmes_and_underscore_folders(tmp_path):
    (tmp_path / "book" / "parte1").mkdir(parents=True)
    (tmp_path / "book" / "_static" / "x").mkdir(parents=True)
    frase = "um parágrafo com bastante texto para contar como prosa de verdade."
    (tmp_path / "book" / "parte1" / "README.md").write_text(f"Nota de desenvolvedor, {frase}\n", encoding="utf-8")
    (tmp_path / "book" / "_static" / "x" / "a.md").write_text(f"Contrato das figuras, {frase}\n", encoding="utf-8")
    (tmp_path / "book" / "parte1" / "01-x.md").write_text(f"Do livro, {frase}\n", encoding="utf-8")
    (tmp_path / "exercises").mkdir()
    c = project_corpus(tmp_path, use_glue=False)
    assert c.paragraphs == (f"Do livro, {frase}",) and c.origin == ("book/parte1/01-x.md",)


def test_the_page_shows_no_stale_corpus_notice():
    """N2: a página não compara o corpus com o livro de hoje (o livro sempre muda); diz o instantâneo."""
    page = PAGE_8.read_text(encoding="utf-8")
    assert "corpus_status" not in page and "mudou depois" not in page
    assert "c8_corpus_nome" in page and "c8_corpus_data" in page


@pytest.mark.parametrize("seq, expected", [
    (list(range(40)) + [5, 6, 7, 8] * 5, (40, 4)),          # laço que começa tarde
    (list(range(41, 43)) + [1, 2, 3] * 6 + [1], (2, 3)),     # termina no meio de um período
    (list(range(60)), None),                                 # nenhum laço
    ([1, 2, 3, 4, 9, 9], None),                              # curto demais para ser laço
    ([7] * 12, (0, 1)),
])
def test_repeated_tail_sees_a_loop_that_starts_late(seq, expected):
    assert lm.repeated_tail(seq) == expected
    assert lm.repeated_tail(torch.tensor(seq)) == expected


def test_repeated_tail_catches_the_case_the_distinct_count_missed():
    """N1: 42 tokens distintos em 60 (o critério antigo dizia "não entra em laço") e um laço no fim."""
    seq = list(range(100, 136)) + [1, 2, 3, 4, 5, 6] * 4
    assert len(seq) == 60 and len(set(seq)) == 42 and len(set(seq)) >= 60 / 2
    assert lm.repeated_tail(seq) == (36, 6)


def _filter_oracle(p, top_k, top_p):
    """Sem ordenar por tensor: os índices, do mais provável ao menos, um de cada vez."""
    order = sorted(range(len(p)), key=lambda i: (-p[i], i))
    keep, mass = [], 0.0
    for r, i in enumerate(order):
        if r and ((top_k is not None and r >= top_k) or (top_p is not None and mass >= top_p)):
            break
        keep.append(i)
        mass += p[i]
    out = [0.0] * len(p)
    for i in keep:
        out[i] = p[i] / sum(p[j] for j in keep)
    return out


@pytest.mark.parametrize("top_k, top_p, t", [(None, None, 1.0), (1, None, 1.0), (5, None, 0.7),
                                             (None, 0.5, 1.0), (None, 0.9, 1.3), (20, 0.8, 0.5), (3, 1e-9, 1.0)])
def test_filter_logits_matches_a_one_by_one_oracle(top_k, top_p, t):
    g = torch.Generator().manual_seed(5)
    logits = torch.randn(3, 50, generator=g, dtype=torch.float64) * 2
    logits[1, 7] = logits[1, 9] = logits[1].max() + 1  # um empate no topo
    got = lm.filter_logits(logits, t, top_k, top_p)
    for row, out in zip(logits, got):
        p = torch.softmax(row / t, -1).tolist()
        assert out.tolist() == pytest.approx(_filter_oracle(p, top_k, top_p), abs=1e-12)
    assert torch.allclose(got.sum(-1), torch.ones(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="temperature"):
        lm.filter_logits(logits, 0.0)


def test_curve_keeps_samples_at_three_points_that_the_weights_reproduce(shipped, frozen):
    """Amostras em 100, 300 e 600 passos (make weights); as do último ponto são as dos pesos entregues."""
    tok, model, info, _ = shipped
    curve = lm.load_curve()
    assert [s["step"] for s in curve.samples] == [100, 300, info.train["steps"]]
    assert curve.prompt == lm.sample_prompt(frozen, tok)
    start = torch.tensor([curve.prompt])
    last = curve.samples[-1]
    assert model.generate(start, lm.SAMPLE_NEW)[0, len(curve.prompt):].tolist() == last["greedy"]
    again = model.generate(start.expand(lm.SAMPLE_COUNT, -1), lm.SAMPLE_NEW, greedy=False,
                           temperature=lm.SAMPLE_TEMPERATURE, generator=torch.Generator().manual_seed(0))
    assert again[:, len(curve.prompt):].tolist() == last["sampled"]
    assert all(len(s["sampled"]) == lm.SAMPLE_COUNT and len(s["greedy"]) == lm.SAMPLE_NEW for s in curve.samples)


def test_token_losses_average_to_lm_loss(shipped):
    _, model, _, val_ids = shipped
    ids = val_ids[:300]
    per = lm.token_losses(model, ids, 128)
    assert per.shape == (299,)
    assert per.mean().item() == pytest.approx(lm.lm_loss(model, ids, 128), abs=1e-6)


def test_ov_readout_is_what_the_head_writes_when_it_reads_one_token(shipped):
    """Na camada 0, com um token só (T = 1), a cabeça lê só ele: a sua contribuição medida por um
    gancho antes de W_O, levada à saída pelos pesos da RMSNorm final e pela matriz de saída, é a
    linha de ov_readout."""
    _, model, _, _ = shipped
    c = model.config
    for head in (0, c.n_heads - 1):
        ov = lm.ov_readout(model, 0, head)
        for t in (3, 300, 1000):
            got = {}
            hook = model.blocks[0].attn.w_o.register_forward_pre_hook(
                lambda _m, args: got.setdefault("mix", args[0].detach().clone()))
            with torch.no_grad():
                model(torch.tensor([[t]]))
            hook.remove()
            mix = got["mix"][0, 0, head * c.d_k:(head + 1) * c.d_k]                 # (d_k,)
            out = model.blocks[0].attn.w_o.weight[:, head * c.d_k:(head + 1) * c.d_k] @ mix   # (D,)
            want = (out * model.norm_f.weight) @ model.lm_head.weight.T
            assert torch.allclose(ov[t], want.detach(), atol=1e-5), (head, t)
    with pytest.raises(ValueError, match="não existe"):
        lm.ov_readout(model, c.n_layers, 0)


def test_known_word_share_can_leave_out_one_letter_words():
    vocab = {"a", "casa", "e", "o"}
    assert lm.known_word_share("a casa e o xyz", vocab) == (0.8, 5)
    assert lm.known_word_share("a casa e o xyz", vocab, min_len=2) == (0.5, 2)
