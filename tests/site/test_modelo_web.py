"""O modelo do curso rodando na página do capítulo 8, conferido contra o PyTorch.

Sem navegador: `atencao.web_lm` grava os pesos que a página lê, e o binário
volta a ser o state_dict; as classes de caractere da pré-tokenização são as do
`re` do Python.

No Chromium (marca `slow`, precisa de `make book`): a página abre sem pedir
pesos; o botão "Carregar o modelo" baixa o manifesto e o binário (uma vez, no
máximo 8 MiB, do próprio site); para a frase do livro e outras, os tokens do BPE
em JavaScript são os do Python e os logits de todas as posições e os pesos de
atenção de todas as cabeças batem com o PyTorch a menos de 1e-4; o que a figura
mostra (os tokens) é o do Python; o KV cache do lm.js (step) dá os logits do passo à
frente inteiro, e o filtro do sorteio (filterProbs) é lm.filter_logits. Os controles da
figura (temperatura, top-k, top-p, sortear, posição, cabeça), as duas larguras, o axe-core e as capturas de tela estão no
caso `modelo-lm` de tests/support/interativo_casos_parte2.py (tests/site/test_interativo.py).
"""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest
import torch

from atencao import lm
from atencao.text import PRETOKEN_PATTERN
from atencao.web_lm import (MANIFEST_NAME, MAX_BYTES, WEIGHTS_NAME, CHAR_CLASSES, char_class_runs,
                            export_web_lm)

PAGE = "book/parte1/08-modelo-de-linguagem"
TOL = 1e-4
# Frases além da do livro: acentos, maiúsculas, dígitos, pontuação, espaços repetidos, emoji.
SENTENCES = [
    "O modelo lê a frase da esquerda para a direita; cada token só vê o passado.",
    "Coração, maçã e pão: 3 palavras com acento, 12,5% e  dois  espaços 🙂.",
]
# Textos só para o tokenizador (o modelo não precisa rodar neles).
TOKENIZER_TEXTS = SENTENCES + [
    "", " ", "a", "\n\n\tno fim   ", "x_y__z 3,14 e 1.000.000 ½ ² Ⅻ", "中文字 العربية ελληνικά",
    "e\u0301 decomposto contra é", "\u00a0\u2003x\u3000 y\r\nz\x1c\x85w", "...!!!??? --- ___",
]


@pytest.fixture(scope="module")
def reference():
    tok, model, info, _ = lm.load_lm()
    return tok, model, info


# --------------------------------------------------------------------------
# Sem navegador
# --------------------------------------------------------------------------

def test_export_writes_the_state_dict_in_float32(tmp_path, reference):
    tok, model, _ = reference
    manifest = export_web_lm(tmp_path)
    blob = (tmp_path / WEIGHTS_NAME).read_bytes()
    assert len(blob) == manifest.nbytes <= MAX_BYTES
    data = json.loads((tmp_path / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert data["config"] == dataclasses.asdict(model.config)
    assert data["merges"] == [list(m) for m in tok.merges]
    assert data["pretokenization"] == PRETOKEN_PATTERN
    floats = np.frombuffer(blob, dtype="<f4")
    state = model.state_dict()
    names = [t["name"] for t in data["tensors"]]
    expected = [k for k in state if not (model.config.tie_embeddings and k == "lm_head.weight")]
    assert names == expected
    for t in data["tensors"]:
        got = floats[t["offset"]: t["offset"] + t["size"]].reshape(t["shape"])
        np.testing.assert_array_equal(got, state[t["name"]].numpy())
    inode = (tmp_path / WEIGHTS_NAME).stat().st_ino
    export_web_lm(tmp_path)  # os mesmos pesos: o arquivo não é regravado (o mesmo inode)
    assert (tmp_path / WEIGHTS_NAME).stat().st_ino == inode


def test_char_classes_are_those_of_python_re():
    runs = char_class_runs()
    starts, classes = runs[0::2], runs[1::2]
    assert starts[0] == 0 and list(starts) == sorted(set(starts))
    pats = [re.compile(p) for p in CHAR_CLASSES]
    rng = np.random.default_rng(0)
    probe = set(rng.integers(0, 0x110000, 3000).tolist())
    for s in starts:  # as duas pontas de cada trecho
        probe.update((s - 1, s))
    for c in sorted(probe):
        if c < 0 or 0xD800 <= c < 0xE000:
            continue
        k = classes[int(np.searchsorted(starts, c, side="right")) - 1]
        hits = [i for i, p in enumerate(pats) if p.fullmatch(chr(c))]
        assert hits == [k], f"U+{c:04X}: classe {k} na tabela, o re diz {hits}"


# --------------------------------------------------------------------------
# No Chromium
# --------------------------------------------------------------------------

class Requests:
    """Os endereços que a aba pediu e os erros do console; o que sai do localhost é recusado."""

    def __init__(self, context, page, base):
        from browser_util import is_local

        self.urls: list[str] = []
        self.external: list[str] = []
        self.errors: list[str] = []

        def block(route):
            self.external.append(route.request.url)
            route.abort("blockedbyclient")

        context.route(lambda url: not is_local(url, base), block)
        page.on("request", lambda req: self.urls.append(req.url))
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.on("console", lambda msg: msg.type == "error" and self.errors.append(msg.text))

    def named(self, name: str) -> list[str]:
        return [u for u in self.urls if u.split("?")[0].endswith("/" + name)]


@pytest.fixture(scope="module")
def loaded(browser, site):
    """A página do capítulo aberta, com o modelo carregado pelo botão."""
    from browser_util import DESKTOP

    context = browser.new_context(viewport=DESKTOP, locale="pt-BR", service_workers="block")
    page = context.new_page()
    page.set_default_timeout(30_000)
    reqs = Requests(context, page, site)
    page.goto(f"{site}{PAGE}.html", wait_until="load")
    page.wait_for_selector('div.interativo[data-figura="modelo-lm"][data-estado="pronta"]')
    before = list(reqs.urls)
    page.click('[data-controle="carregar"]')
    page.wait_for_selector('[data-saida="tokens"] button')
    yield page, reqs, before
    context.close()


@pytest.mark.slow
def test_weights_are_fetched_only_after_the_click(loaded):
    page, reqs, before = loaded
    heavy = (WEIGHTS_NAME, MANIFEST_NAME, "lm.js")
    early = [u for u in before if u.split("?")[0].rsplit("/", 1)[-1] in heavy]
    assert not early, f"a página pediu {early} antes do botão"
    assert len(reqs.named(WEIGHTS_NAME)) == 1 and len(reqs.named(MANIFEST_NAME)) == 1, reqs.urls
    size = page.evaluate(f"""async () => (await (await fetch("{reqs.named(WEIGHTS_NAME)[0]}")).arrayBuffer())
                             .byteLength""")
    assert 0 < size <= 8 * 2**20
    assert not reqs.external, f"pedidos fora do localhost: {reqs.external}"
    assert not reqs.errors, f"erros no console: {reqs.errors}"


def _figure_data(page) -> dict:
    return page.evaluate("""() => JSON.parse(document.querySelector(
        'div.interativo[data-figura="modelo-lm"] script.interativo-dados').textContent)""")


def _type(page, text: str) -> None:
    page.fill('[data-controle="frase"]', text)
    page.wait_for_function("(n) => window.AtencaoLM.ultimo && window.AtencaoLM.ultimo.ids.length === n",
                           arg=len(page.evaluate("(s) => AtencaoLM.carregado.tokenizer.encode(s)", text)))


def _visible(s: str) -> str:
    return s.replace(" ", "␣").replace("\n", "↵").replace("\r", "␍").replace("\t", "⇥")


@pytest.mark.slow
def test_tokenizer_in_the_page_is_python_bpe(loaded, reference):
    page, _, _ = loaded
    tok = reference[0]
    got = page.evaluate("(xs) => xs.map((s) => AtencaoLM.carregado.tokenizer.encode(s))", TOKENIZER_TEXTS)
    for text, ids in zip(TOKENIZER_TEXTS, got):
        assert ids == tok.encode(text), f"tokens diferentes para {text!r}"


@pytest.mark.slow
def test_forward_pass_matches_pytorch(loaded, reference):
    page, _, _ = loaded
    tok, model, info = reference
    data = _figure_data(page)
    for text in [data["frase"]] + SENTENCES:
        _type(page, text)
        out = page.evaluate("""() => { const u = AtencaoLM.ultimo;
            return {ids: u.ids, logits: Array.from(u.logits), attention: Array.from(u.attention)}; }""")
        ids = tok.encode(text)[: info.train["context"]]
        assert out["ids"] == ids
        idx = torch.tensor([ids])
        with torch.no_grad():
            logits = model(idx)[0].double()  # (T, V)
        maps = lm.attention_maps(model, idx).double()  # (L, H, T, T)
        js_logits = torch.tensor(out["logits"], dtype=torch.float64).view_as(logits)
        js_maps = torch.tensor(out["attention"], dtype=torch.float64).view_as(maps)
        err = (js_logits - logits).abs().max().item()
        assert err < TOL, f"{text!r}: logits diferem do PyTorch em {err:.2e}"
        err_a = (js_maps - maps).abs().max().item()
        assert err_a < TOL, f"{text!r}: pesos de atenção diferem do PyTorch em {err_a:.2e}"
        shown = page.locator('[data-saida="tokens"] button').all_inner_texts()
        assert shown == [_visible(p) for p in tok.pieces(text)[: len(ids)]]
        if text == data["frase"]:
            assert data["ref"]["ids"] == ids
            dif = float(page.get_attribute('[data-saida="conferencia"]', "data-diferenca"))
            assert dif < TOL


@pytest.mark.slow
def test_cached_steps_and_sampling_filter_match_python(loaded, reference):
    """O KV cache do lm.js (step) dá os logits do passo à frente inteiro, posição a posição; o filtro
    do sorteio (filterProbs) é lm.filter_logits; o vocabulário do manifesto é o do texto de treino."""
    page, _, _ = loaded
    tok, model, info = reference
    ids = tok.encode(SENTENCES[1])[:40]
    out = page.evaluate("""(ids) => { const m = AtencaoLM.carregado, r = m.forward(ids), st = m.start();
        let err = 0;
        ids.forEach((id, t) => { const z = m.step(st, id);
            for (let v = 0; v < r.V; v++) err = Math.max(err, Math.abs(z[v] - r.logits[t * r.V + v])); });
        return err; }""", ids)
    assert out < 1e-9, f"step e forward diferem em {out:.2e}"
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0, -1].double()
    for temp, k, p in ((1.0, None, None), (0.7, 5, None), (1.3, None, 0.9), (0.5, 50, 0.6), (1.0, 1, None)):
        js = page.evaluate("([z, t, k, p]) => Array.from(AtencaoLM.filterProbs(Float64Array.from(z), t, k, p))",
                           [logits.tolist(), temp, k, p])
        want = lm.filter_logits(logits, temp, k, p)
        assert torch.allclose(torch.tensor(js, dtype=torch.float64), want, atol=1e-9), (temp, k, p)
    vocab = page.evaluate("() => Array.from(AtencaoLM.carregado.vocabulary).sort()")
    assert vocab == sorted(lm.vocabulary(lm.load_corpus().train_text))
    greedy = page.evaluate("(ids) => AtencaoLM.carregado.sample(ids, 12, 2, {temperature: 1, topK: 1})", ids)
    expected = model.generate(torch.tensor([ids]), 12)[0, len(ids):].tolist()
    assert greedy == [expected, expected]
