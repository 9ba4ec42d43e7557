"""Os dados que as figuras da máscara como função (cap. 11) e da memória do cache (cap. 12)
embutem nas páginas construídas conferem com o pacote.

As figuras aplicam no navegador as regras que a página escreve (tests/site/test_interativo.py
confere o que elas mostram contra atencao.masks e atencao.memoria); aqui, sem navegador, o que
elas recebem: os documentos cobrem cada contexto, as máscaras são as quatro de atencao.masks,
os modelos publicados são os de atencao.memoria.PUBLISHED, o do curso é o TinyConfig.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
BLOCO = re.compile(r'<div class="interativo" data-figura="([a-z0-9-]+)"[^>]*>\s*'
                   r'<script type="application/json" class="interativo-dados">(.*?)</script>', re.S)


def dados(pagina: str, nome: str) -> dict:
    path = HTML / f"{pagina}.html"
    if not path.exists():
        pytest.fail(f"{path} não existe: rode `make book`")
    achados = {n: json.loads(j.replace("<\\/", "</")) for n, j in BLOCO.findall(path.read_text(encoding="utf-8"))}
    assert nome in achados, f"{pagina}: a figura {nome!r} não está na página (achadas: {sorted(achados)})"
    return achados[nome]


def test_mascara_funcao_recebe_documentos_que_cobrem_cada_contexto_e_as_quatro_mascaras():
    import torch

    from atencao import masks

    d = dados("book/parte2/11-flashattention", "mascara-funcao")
    assert [m["chave"] for m in d["mascaras"]] == ["causal", "janela", "ralos", "documentos"]
    assert d["mascara"] in [m["chave"] for m in d["mascaras"]]
    assert d["T"] in d["Ts"] and d["bloco"] in d["blocos"]
    assert d["janela_min"] <= d["janela"] <= d["janela_max"]
    assert (d["janela"] - d["janela_min"]) % d["janela_passo"] == 0
    assert 0 <= d["ralos"] <= d["ralos_max"]
    for T in d["Ts"]:
        comp = d["documentos"][str(T)]
        assert sum(comp) == T and min(comp) >= 1, (T, comp)
        ids = torch.repeat_interleave(torch.arange(len(comp)), torch.tensor(comp))
        # documentos contíguos: o block_map usa a regra fechada, a mesma que a figura aplica
        assert masks.document(ids).block_rule is not None


def test_kv_memoria_recebe_os_kvconfig_do_pacote():
    from atencao import memoria
    from atencao.model import TinyConfig

    d = dados("book/parte2/12-kv-cache", "kv-memoria")
    por_nome = {m["nome"]: m for m in d["modelos"]}
    assert d["modelo"] in por_nome and d["T"] in d["Ts"]
    for nome, cfg in memoria.PUBLISHED.items():
        if nome not in por_nome:
            continue
        m = por_nome[nome]
        assert (m["camadas"], m["hq"], m["hkv"], m["d"]) == (cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_head)
        assert (m["locais"], m["janela"], m["ralos"]) == (cfg.n_local_layers, cfg.window, cfg.n_sinks)
        assert m["latente"] == ([cfg.latent_dim, cfg.rope_dim] if cfg.latent_dim else None)
        if m["janela"]:
            assert m["janela"] in d["janelas"]
    assert {"Mistral 7B", "Gemma 3 27B", "gpt-oss-120b", "DeepSeek-V2"} <= set(por_nome)
    tiny = memoria.from_tiny(TinyConfig())
    m = por_nome["tiny do curso"]
    assert (m["camadas"], m["hq"], m["hkv"], m["d"], m["bytes"]) == (
        tiny.n_layers, tiny.n_heads, tiny.n_kv_heads, tiny.d_head, 4)
    assert d["janela_padrao"] in d["janelas"]
