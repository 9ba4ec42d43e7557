"""O modelo de linguagem do curso: corpus, tokenizador BPE, treino reprodutível e pesos entregues."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
import torch

from atencao import lm
from atencao.model import TinyConfig, TinyModel
from atencao.text import BPETokenizer, extract_prose, project_corpus


@pytest.fixture(scope="module")
def shipped():
    return lm.load_lm()


@pytest.fixture(scope="module")
def corpus():
    return project_corpus()


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
        "Um parágrafo com cabeças, com no meio e parâmetros, citando e a função rope.",
        "Uma caixa com título comprido o bastante",
        "o conteúdo da caixa é prosa e fica no corpus;",
    ], pars


def test_corpus_is_deterministic_and_split_by_paragraph_hash(corpus):
    again = project_corpus()
    assert again.sha256 == corpus.sha256 and again.is_val == corpus.is_val
    frac = sum(corpus.is_val) / len(corpus.is_val)
    assert 0.05 < frac < 0.15, f"a validação deveria ter ~10 % dos parágrafos, tem {frac:.1%}"
    assert set(corpus.train_text.split("\n")).isdisjoint(corpus.val_text.split("\n"))
    livro = "\n".join(p for p, o in zip(corpus.paragraphs, corpus.origin) if o == "livro")
    for marca in ("{glue", "{code-cell}", "$$", "```", ":::", "import torch"):
        assert marca not in livro, marca


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

def test_shipped_weights_beat_the_bigram_on_the_current_corpus(shipped, corpus):
    tok, model, info, _ = shipped
    train_ids, val_ids = lm.encode_splits(corpus, tok)
    loss = lm.lm_loss(model, val_ids, info.train["context"])
    ngram = lm.ngram_losses(train_ids, val_ids, model.config.vocab_size)
    assert loss < ngram.bigram < ngram.unigram, (loss, ngram)


def test_shipped_weights_reproduce_their_recorded_loss(shipped, corpus):
    """A perda da ficha, recalculada na validação guardada com os pesos (vale mesmo se o livro mudou)."""
    tok, model, info, val_ids = shipped
    assert val_ids.numel() == info.val_tokens
    assert lm.lm_loss(model, val_ids, info.train["context"]) == pytest.approx(info.val_loss, abs=1e-4)
    if corpus.sha256 == info.corpus_sha256:  # o mesmo texto: a mesma validação, token a token
        assert torch.equal(lm.encode_splits(corpus, tok)[1], val_ids)


def test_shipped_files_are_small_and_tensor_only():
    size = sum((lm.DATA_DIR / f).stat().st_size for f in (lm.WEIGHTS_FILE, lm.TOKENIZER_FILE, lm.INFO_FILE))
    assert size < 8 * 2**20, f"os pesos deveriam ter poucos MiB, têm {size / 2**20:.1f} MiB"
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


def test_make_weights_command_writes_loadable_files(tmp_path, capsys):
    lm.main(["--steps", "2", "--out", str(tmp_path)])
    assert "perda de validação" in capsys.readouterr().out
    tok, model, info, val_ids = lm.load_lm(tmp_path)
    assert info.train["steps"] == 2 and info.corpus_sha256 == project_corpus().sha256
    assert lm.lm_loss(model, val_ids, 128) == pytest.approx(info.val_loss, abs=1e-4)


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
    idx = torch.tensor([tok.encode("A atenção olha para trás.")])
    maps = lm.attention_maps(model, idx)
    n = idx.shape[1]
    assert maps.shape == (4, 4, n, n)
    assert torch.allclose(maps.sum(-1), torch.ones(4, 4, n))
    assert torch.all(maps.triu(1) == 0)  # nada no futuro


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("ATENCAO_REFAZ_PESOS") != "1",
                    reason="refaz o treino inteiro (minutos): rode com ATENCAO_REFAZ_PESOS=1")
def test_make_weights_reproduces_the_shipped_loss(shipped, corpus, tmp_path):
    info = shipped[2]
    if corpus.sha256 != info.corpus_sha256:
        pytest.skip("o texto do projeto mudou desde o treino dos pesos: rode `make weights` e compare de novo")
    again = lm.make_weights(out_dir=tmp_path, log_every=0)
    assert abs(again.val_loss - info.val_loss) < lm.REPRO_TOLERANCE, (again.val_loss, info.val_loss)
