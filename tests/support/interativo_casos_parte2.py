"""Como o leitor exercita as figuras interativas dos capítulos 9-13 (ver tests/support/interativo_util.py).

Cada figura entra aqui com uma função marcada com `@caso(pagina, nome)`. Os
números que a figura mostra são comparados com o Python: as funções do pacote
(`atencao.figuras.online_trace`, `atencao.flash.block_schedule`,
`atencao.model.KVCache`) ou, para as fórmulas que o capítulo define numa célula
(`naive_elements`, `classificar_blocos`), a tabela que a própria célula
calculou com elas e deixou nos dados da figura (`ref`).

Também aqui, por ser do mesmo autor: o modelo do capítulo 8 rodando na página
(`modelo-lm`); a conferência completa dele (logits de todas as posições a menos
de 1e-4, pesos só depois do botão) está em tests/site/test_modelo_web.py.
"""

from __future__ import annotations

import math

import numpy as np

from atencao.plots import fmt_bytes, fmt_num
from interativo_util import Leitor, caso, tabela


def escolher(leitor: Leitor, controle: str, k: int) -> None:
    """Clica no k-ésimo botão da escolha `controle`."""
    leitor.controle(controle).locator(f'button[data-indice="{k}"]').click()


def resumo(leitor: Leitor) -> str:
    return leitor.raiz.locator('[aria-live="polite"]').first.inner_text()


# --------------------------------------------------------------------------
# Capítulo 8: o modelo do curso no navegador
# --------------------------------------------------------------------------

@caso("book/parte1/08-modelo-de-linguagem", "modelo-lm")
def exercitar_modelo_lm(leitor: Leitor):
    import torch

    from atencao import lm

    tok, model, _, _ = lm.load_lm()
    d = leitor.dados()
    leitor.controle("carregar").click()
    leitor.raiz.locator('[data-saida="tokens"] button').first.wait_for()
    frase = "A máscara causal esconde o futuro de cada consulta."
    leitor.controle("frase").fill(frase)
    ids = tok.encode(frase)
    leitor.page.wait_for_function("(n) => AtencaoLM.ultimo && AtencaoLM.ultimo.ids.length === n", arg=len(ids))
    mostrados = leitor.raiz.locator('[data-saida="tokens"] button').all_inner_texts()
    assert mostrados == [p.replace(" ", "␣") for p in tok.pieces(frase)]
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0].double()

    def proximos():
        return [(int(li.get_attribute("data-token")), li.locator(".modelo-lm-valor").inner_text())
                for li in leitor.raiz.locator('[data-saida="proximos"] li').all()]

    def esperados(pos, temp):
        p, i = torch.softmax(logits[pos] / temp, -1).topk(d["top"])
        return [(int(t), f"{fmt_num(100 * v.item(), 1)}%") for v, t in zip(p, i)]

    assert proximos() == esperados(len(ids) - 1, 1.0)
    leitor.mover("temperatura", 0.5)
    assert proximos() == esperados(len(ids) - 1, 0.5)
    leitor.raiz.locator('[data-saida="tokens"] button[data-posicao="2"]').click()
    assert proximos() == esperados(2, 0.5)
    # outra cabeça: os pesos da consulta escolhida, os 5 maiores
    L, H = model.config.n_layers, model.config.n_heads
    leitor.raiz.locator(f'.modelo-lm-cabeca[data-camada="{L - 1}"][data-cabeca="{H - 1}"]').click()
    pesos = lm.attention_maps(model, torch.tensor([ids]))[L - 1, H - 1, 2, :3]
    vals, chaves = pesos.topk(3)
    mostrados = [(int(li.get_attribute("data-chave")), li.locator(".modelo-lm-valor").inner_text())
                 for li in leitor.raiz.locator('[data-saida="detalhe"] li').all()]
    assert mostrados == [(int(j), f"{fmt_num(100 * v.item(), 1)}%") for v, j in zip(vals, chaves)]
    exercitar_sorteio_lm(leitor, tok, model, ids, logits, d)


def exercitar_sorteio_lm(leitor: Leitor, tok, model, ids, logits, d):
    """Top-k, top-p e as continuações sorteadas (revisão de 2026-12-05): as probabilidades da lista
    são as de lm.filter_logits; com top-k = 1 as continuações são a gulosa do PyTorch; com top-k = 5
    todo token sorteado está entre os 5 mais prováveis; as medidas são as do capítulo (Python)."""
    import torch

    from atencao import lm

    page, raiz = leitor.page, leitor.raiz
    pos = 2                                                       # a posição escolhida acima

    def proximos():
        return [(int(li.get_attribute("data-token")), li.locator(".modelo-lm-valor").inner_text())
                for li in raiz.locator('[data-saida="proximos"] li').all()]

    def esperados(temp, k, p):
        q = lm.filter_logits(logits[pos], temp, k, p)
        v, i = q.topk(d["top"])
        return [(int(t), f"{fmt_num(100 * x.item(), 1)}%") for x, t in zip(v, i) if x > 0]

    tops = d["tops"]
    leitor.mover("top_k", tops.index(5))
    assert proximos() == esperados(0.5, 5, None)
    leitor.mover("top_p", 0.5)
    assert proximos() == esperados(0.5, 5, 0.5)
    leitor.mover("top_p", 1)
    leitor.mover("temperatura", 1)

    def gerado():
        page.wait_for_function("(r) => r.querySelector('.modelo-lm-gerar').dataset.estado === 'pronto'",
                               arg=raiz.element_handle(), timeout=120_000)
        return [[int(x) for x in li.get_attribute("data-ids").split(",")]
                for li in raiz.locator('[data-geracao="continuacoes"] li').all()]

    vocab = lm.vocabulary(lm.load_corpus().train_text)

    def medidas_conferem(conts):
        share, n_pal = lm.known_word_share(" ".join(tok.decode(c) for c in conts), vocab)
        distintos = sum(len(set(c)) for c in conts) / len(conts)
        v = {k: raiz.locator(f'[data-medida="{k}"]').inner_text() for k in ("conhecidas", "distintos")}
        assert v["conhecidas"] == (f"{fmt_num(100 * share, 0)}%" if n_pal else "—"), (v, share)
        assert v["distintos"] == fmt_num(distintos, 1), (v, distintos)

    leitor.mover("top_k", 0)                                      # top-k = 1: a gulosa
    conts = gerado()
    assert len(conts) == d["gerar"]["n"] and all(len(c) == d["gerar"]["novos"] for c in conts)
    gulosa = model.generate(torch.tensor([ids]), d["gerar"]["novos"])[0, len(ids):].tolist()
    assert all(c == gulosa for c in conts), (conts[0], gulosa)
    medidas_conferem(conts)

    leitor.mover("top_k", tops.index(5))
    conts = gerado()
    with torch.no_grad():
        for c in conts:
            lg = model(torch.tensor([ids + c]))[0, len(ids) - 1:-1]          # (novos, V): antes de cada token
            top5 = lg.topk(5, -1).indices
            assert all(t in top5[k].tolist() for k, t in enumerate(c)), c
    medidas_conferem(conts)
    antes = conts
    leitor.controle("sortear").click()
    assert tabela(leitor)["sorteio"] == "2"
    depois = gerado()
    assert depois != antes                                        # outra semente, outros sorteios
    medidas_conferem(depois)


# --------------------------------------------------------------------------
# Capítulo 9: o custo quadrático no roofline
# --------------------------------------------------------------------------

def fmt_tempo(s: float) -> str:
    """O mesmo texto da figura: µs abaixo de 1 ms, ms abaixo de 1 s."""
    if s < 1e-3:
        return f"{fmt_num(s * 1e6, 1)} µs"
    return f"{fmt_num(s * 1e3, 2)} ms" if s < 1 else f"{fmt_num(s, 2)} s"


@caso("book/parte2/09-custo-quadratico", "custo-quadratico")
def exercitar_custo_quadratico(leitor: Leitor):
    from atencao.hardware import DEVICES

    d = leitor.dados()
    assert [(g["nome"], g["pi"], g["beta"], g["memoria"]) for g in d["gpus"]] == [
        (g.name, g.peak_bf16, g.bandwidth, g.memory_bytes) for g in DEVICES]
    bpn, ref = d["bytes_por_numero"], d["ref"]
    procs = d["gpus"] + [d["cpu"]]
    for iT in (0, 2, len(d["Ts"]) - 1):
        leitor.mover("T", iT)
        for jd in range(len(d["ds"])):
            escolher(leitor, "d", jd)
            for kb, kp in ((0, 1), (len(d["blocos"]) - 1, len(procs) - 1)):
                escolher(leitor, "bloco", kb)
                escolher(leitor, "gpu", kp)
                T, proc, v = d["Ts"][iT], procs[kp], tabela(leitor)
                F = ref["flops"][iT][jd]
                el = {"ingenua": ref["naive"][iT][jd], "blocos": ref["tiled"][iT][jd][kb],
                      "minimo": 4 * T * d["ds"][jd]}
                assert v["pontuacoes"] == fmt_num(T * T, 0)
                assert v["S"] == f"{fmt_bytes(4 * T * T)} / {fmt_bytes(2 * T * T)}"
                assert v["flops"] == fmt_num(F, 0)
                for k, n in el.items():
                    assert v[f"trafego_{k}"] == fmt_bytes(bpn * n), (T, k)
                    assert v[f"I_{k}"] == fmt_num(F / (bpn * n), 1), (T, k)
                assert v["virada"] == fmt_num(proc["pi"] / proc["beta"], 1)
                for k in ("ingenua", "blocos"):
                    assert v[f"tempo_{k}"] == fmt_tempo(max(F / proc["pi"], bpn * el[k] / proc["beta"]))
                lado = "pela memória" if F / (bpn * el["ingenua"]) < proc["pi"] / proc["beta"] else "pelo cálculo"
                assert f"a ingênua (●) é limitada {lado}" in resumo(leitor)
    leitor.controle("T").focus()
    leitor.page.keyboard.press("Home")
    assert tabela(leitor)["pontuacoes"] == fmt_num(d["Ts"][0] ** 2, 0)


# --------------------------------------------------------------------------
# Capítulo 10: softmax online
# --------------------------------------------------------------------------

def fmt_estado(v: float) -> str:
    return "−∞" if v == -math.inf else fmt_num(v, 4)


@caso("book/parte2/10-softmax-online", "softmax-online")
def exercitar_softmax_online(leitor: Leitor):
    from atencao.figuras import online_trace

    d = leitor.dados()
    linha = np.array(d["linha"])
    for k, b in enumerate(d["blocos"]):
        escolher(leitor, "bloco", k)
        tr = online_trace(linha, b)
        n = tr.m.size
        for passo in sorted({1, 2, n // 2, n}):
            leitor.mover("passo", passo)
            j, v = passo - 1, tabela(leitor)
            antes = (tr.m[j - 1], tr.l[j - 1]) if j else (-math.inf, 0.0)
            assert v["m"] == f"{fmt_estado(antes[0])} → {fmt_estado(tr.m[j])}", (b, passo)
            assert v["l"] == f"{fmt_estado(antes[1])} → {fmt_estado(tr.l[j])}", (b, passo)
            assert v["fator"] == fmt_estado(tr.factor[j]), (b, passo)
            assert ("O máximo subiu" in resumo(leitor)) == bool(tr.rescaled[j])
        leitor.controle("anterior").click()
        assert tabela(leitor)["l"].endswith(fmt_estado(tr.l[n - 2]))
        leitor.controle("proximo").click()
        assert tabela(leitor)["l"].endswith(fmt_estado(tr.l[n - 1]))
    leitor.controle("passo").focus()
    leitor.page.keyboard.press("Home")
    leitor.page.keyboard.press("ArrowRight")
    assert leitor.controle("passo").input_value() == "2"


# --------------------------------------------------------------------------
# Capítulo 11: o cronograma de blocos do FlashAttention-2
# --------------------------------------------------------------------------

@caso("book/parte2/11-flashattention", "flashattention-blocos")
def exercitar_flashattention_blocos(leitor: Leitor):
    from atencao.flash import block_schedule

    d = leitor.dados()
    dd, bpn = d["d"], d["bytes_por_numero"]
    for kc, causal in enumerate((True, False)):
        escolher(leitor, "causal", kc)
        for kt in (0, len(d["Ts"]) - 1):
            escolher(leitor, "T", kt)
            for kb, B in enumerate(d["blocos"]):
                escolher(leitor, "bloco", kb)
                T = d["Ts"][kt]
                pares = [(i0, j0, j1, m) for (i0, _), row in block_schedule(T, T, B, causal=causal)
                         for (j0, j1, m) in row]
                nb, v = math.ceil(T / B), tabela(leitor)
                assert v["pares"] == fmt_num(nb * nb, 0)
                assert v["calculados"] == fmt_num(len(pares), 0)
                assert v["mascara"] == fmt_num(sum(p[3] for p in pares), 0)
                pulados = nb * nb - len(pares)
                assert v["pulados"] == f"{fmt_num(pulados, 0)} ({fmt_num(100 * pulados / nb**2, 1)}%)"
                chaves = sum(j1 - j0 for _, j0, j1, _ in pares)
                assert v["trafego"] == fmt_bytes(bpn * (2 * T * dd + T + 2 * dd * chaves))
                assert v["ingenuo"] == fmt_bytes(bpn * (4 * T * T + 4 * T * dd))
                k = max(1, len(pares) // 3)   # um passo no meio do cronograma
                leitor.mover("passo", k)
                i0, j0, _, mascara = pares[k - 1]
                texto = resumo(leitor)
                assert f"bloco de consultas {i0 // B}, bloco de chaves {j0 // B}" in texto
                assert ("com máscara" in texto) == mascara
                lidos = min(i0 + B, T) * dd + 2 * dd * sum(j1 - j0 for _, j0, j1, _ in pares[:k])
                assert tabela(leitor)["ate"] == fmt_bytes(bpn * lidos)


@caso("book/parte2/11-flashattention", "mascara-funcao")
def exercitar_mascara_funcao(leitor: Leitor):
    """O mapa de blocos que a figura desenha e conta é o de atencao.masks.block_map, e as
    frações de pares visíveis são as de atencao.masks.dense_mask, para as mesmas escolhas."""
    import torch

    from atencao import masks

    d = leitor.dados()
    chaves = [m["chave"] for m in d["mascaras"]]

    def conferir(chave, T, B, W, S):
        ids = torch.repeat_interleave(torch.arange(len(d["documentos"][str(T)])),
                                      torch.tensor(d["documentos"][str(T)]))
        f = {"causal": masks.causal(), "janela": masks.sliding_window(W), "ralos": masks.with_sinks(S, W),
             "documentos": masks.document(ids)}[chave]
        bm = masks.block_map(f, T, B)
        total, cheios, parciais = bm.numel(), int((bm == 2).sum()), int((bm == 1).sum())
        pulados, nb = total - cheios - parciais, bm.shape[0]
        v, onde = tabela(leitor), (chave, T, B, W, S)
        assert v["pares"] == fmt_num(total, 0), onde
        assert (v["cheios"], v["parciais"]) == (fmt_num(cheios, 0), fmt_num(parciais, 0)), onde
        assert v["visitados"] == fmt_num(cheios + parciais, 0), onde
        assert v["pulados"] == f"{fmt_num(pulados, 0)} ({fmt_num(100 * pulados / total, 1)}%)", onde
        assert v["visiveis"] == f"{fmt_num(100 * int(masks.dense_mask(f, T).sum()) / T**2, 1)}%", onde
        assert v["calculados"] == f"{fmt_num(100 * (cheios + parciais) * B * B / T**2, 1)}%", onde
        assert v["contra_causal"] == fmt_num((cheios + parciais) / (nb * (nb + 1) / 2), 2), onde
        assert f"pula {fmt_num(100 * pulados / total, 1)}%" in resumo(leitor), onde

    W, S = d["janela"], d["ralos"]
    for km, chave in enumerate(chaves):
        escolher(leitor, "mascara", km)
        for kt in (0, len(d["Ts"]) - 1):
            escolher(leitor, "T", kt)
            for kb, B in enumerate(d["blocos"]):
                escolher(leitor, "bloco", kb)
                conferir(chave, d["Ts"][kt], B, W, S)
    # A janela e os ralos, movidos como o leitor, no meio do intervalo e nas pontas.
    escolher(leitor, "mascara", chaves.index("ralos"))
    escolher(leitor, "T", 1)
    escolher(leitor, "bloco", 1)
    T, B = d["Ts"][1], d["blocos"][1]
    for W in (d["janela_min"], 3 * d["janela_passo"] + d["janela_min"], d["janela_max"]):
        leitor.mover("janela", W)
        for S in (0, 1, d["ralos_max"]):
            leitor.mover("ralos", S)
            conferir("ralos", T, B, W, S)
    escolher(leitor, "mascara", chaves.index("janela"))
    conferir("janela", T, B, W, S)


# --------------------------------------------------------------------------
# Capítulo 12: KV cache contra recalcular
# --------------------------------------------------------------------------

@caso("book/parte2/12-kv-cache", "kv-cache")
def exercitar_kv_cache(leitor: Leitor):
    import torch

    from atencao.model import KVCache

    d = leitor.dados()
    dtypes = {4: torch.float32, 2: torch.bfloat16}

    def cache_bytes(m, posicoes):   # o que o KVCache do pacote aloca ("meta": sem memória de verdade)
        return KVCache(m["camadas"], 1, m["kv"], posicoes, m["d_k"], dtype=dtypes[m["bytes"]], device="meta").nbytes

    for km, m in enumerate(d["modelos"]):
        escolher(leitor, "modelo", km)
        for kp, kn in ((0, 0), (len(d["prompts"]) - 1, len(d["novos"]) - 1)):
            escolher(leitor, "prompt", kp)
            escolher(leitor, "novos", kn)
            T0, n = d["prompts"][kp], d["novos"][kn]
            com = [T0 * (T0 + 1) // 2] + [T0 + k - 1 for k in range(2, n + 1)]
            sem = [(T0 + k - 1) * (T0 + k) // 2 for k in range(1, n + 1)]
            for s in sorted({1, 2, n}):
                leitor.mover("passo", s)
                L, v = T0 + s - 1, tabela(leitor)
                assert v["contexto"] == fmt_num(L, 0)
                assert (v["com"], v["sem"]) == (fmt_num(com[s - 1], 0), fmt_num(sem[s - 1], 0))
                assert (v["soma_com"], v["soma_sem"]) == (fmt_num(sum(com[:s]), 0), fmt_num(sum(sem[:s]), 0))
                assert v["razao"] == f"{fmt_num(sum(sem[:s]) / sum(com[:s]), 1)}x"
                assert v["cache"] == fmt_bytes(cache_bytes(m, L))
                assert v["cheio"] == fmt_bytes(cache_bytes(m, T0 + n))


@caso("book/parte2/12-kv-cache", "kv-memoria")
def exercitar_kv_memoria(leitor: Leitor):
    """Os bytes que a calculadora mostra são os de atencao.memoria.kv_cache_bytes, com os
    KVConfig que a célula embutiu, para cada modelo, contexto, camadas com janela, janela e ralos."""
    from atencao import memoria

    d = leitor.dados()

    def conferir(m, T, loc, W, S):
        base = memoria.KVConfig(m["nome"], m["camadas"], m["hq"], m["hkv"], m["d"])
        dc, dr = m["latente"] or (d["latente_padrao"][0] * m["d"], int(d["latente_padrao"][1] * m["d"]))
        cfgs = {"mha": memoria.KVConfig("mha", m["camadas"], m["hq"], m["hq"], m["d"]), "gqa": base,
                "janela": memoria.KVConfig("j", m["camadas"], m["hq"], m["hkv"], m["d"], window=W,
                                           n_local_layers=loc, n_sinks=S),
                "latente": memoria.KVConfig("l", m["camadas"], m["hq"], m["hkv"], m["d"], latent_dim=dc, rope_dim=dr)}
        b = {k: memoria.kv_cache_bytes(c, T, 1, m["bytes"]) for k, c in cfgs.items()}
        v, onde = tabela(leitor), (m["nome"], T, loc, W, S)
        for k in cfgs:
            assert v[k] == fmt_bytes(b[k]), (k, onde, v[k], fmt_bytes(b[k]))
            assert v[f"{k}_pct"] == f"{fmt_num(100 * b[k] / b['mha'], 1)}%", (k, onde)

    for km, m in enumerate(d["modelos"]):
        escolher(leitor, "modelo", km)
        W = m["janela"] or d["janela_padrao"]
        conferir(m, d["T"], m["locais"], W, m["ralos"])
        for kt in (0, len(d["Ts"]) - 1):
            leitor.mover("T", kt)
            conferir(m, d["Ts"][kt], m["locais"], W, m["ralos"])
        leitor.mover("T", d["Ts"].index(d["T"]))
    # Os deslizantes de janela, num modelo com janela publicada.
    km = next(k for k, m in enumerate(d["modelos"]) if m["janela"])
    escolher(leitor, "modelo", km)
    m = d["modelos"][km]
    for loc in (0, m["camadas"] // 2, m["camadas"]):
        leitor.mover("locais", loc)
        for kw in (0, len(d["janelas"]) - 1):
            leitor.mover("janela", kw)
            for S in (0, d["ralos_max"]):
                leitor.mover("ralos", S)
                conferir(m, d["T"], loc, d["janelas"][kw], S)
    assert f"T = {fmt_num(d['T'], 0)}" in resumo(leitor)


# --------------------------------------------------------------------------
# Capítulo 13: a grade de programas do Triton
# --------------------------------------------------------------------------

@caso("book/parte2/13-kernel-triton", "triton-grade")
def exercitar_triton_grade(leitor: Leitor):
    d = leitor.dados()
    dd, bpn = d["d"], d["bytes_por_numero"]
    for kN, N in enumerate(d["Ns"]):
        escolher(leitor, "N", kN)
        for km, bm in enumerate(d["blocos_m"]):
            escolher(leitor, "bloco_m", km)
            for kn in (0, len(d["blocos_n"]) - 1):
                escolher(leitor, "bloco_n", kn)
                bn = d["blocos_n"][kn]
                linhas = d["ref"][f"{N}/{bm}/{bn}"]
                nm, nn = math.ceil(N / bm), math.ceil(N / bn)
                assert len(linhas) == nm
                kh = (kN + km) % len(d["cabecas"])
                escolher(leitor, "cabecas", kh)
                bh, v = d["cabecas"][kh], tabela(leitor)
                assert v["programas"] == fmt_num(nm * bh, 0)
                assert v["total"] == fmt_num(bh * sum(a + b for a, b in linhas), 0)
                for pid in sorted({0, nm // 2, nm - 1}):
                    leitor.mover("pid", pid)
                    sem, com = linhas[pid]
                    v = tabela(leitor)
                    assert (v["sem"], v["com"]) == (fmt_num(sem, 0), fmt_num(com, 0)), (N, bm, bn, pid)
                    assert v["pulados"] == fmt_num(nn - sem - com, 0)
                    assert v["lidos"] == fmt_bytes(bpn * dd * (bm + 2 * bn * (sem + com)))
