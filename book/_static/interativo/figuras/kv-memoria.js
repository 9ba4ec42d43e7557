/* Capítulo 12: a memória do KV cache de cada arquitetura (MHA, GQA, janela, latente).
 *
 * Dados (célula do capítulo): modelos = [{nome, camadas, hq, hkv, d, bytes, locais, janela,
 * ralos, latente: [d_c, d_r] | null}] (os KVConfig de atencao.memoria: o modelo do curso e
 * configurações publicadas), modelo (o inicial), Ts e T (contextos), janelas e janela_padrao
 * (W oferecidos; o inicial de quem não tem janela), ralos_max, latente_padrao: [a, b]
 * (sem latente publicado: d_c = a · d e d_r = ⌊b · d⌋, as proporções do DeepSeek-V2).
 * As contas, por sequência, como a página as escreve (b bytes por número, L camadas),
 * as de atencao.memoria.kv_cache_bytes, que o teste compara com o que a figura mostra:
 *   MHA:            2 · L · H_q  · d · T · b
 *   GQA:            2 · L · H_kv · d · T · b
 *   GQA + janela:   2 · H_kv · d · b · ((L − L_loc) · T + L_loc · min(T, W + S))
 *   latente (MLA):  L · (d_c + d_r) · T · b
 */
Interativo.registrar("kv-memoria", (raiz, d, I) => {
  let mod = d.modelos.findIndex((m) => m.nome === d.modelo), T = d.T;
  let M = d.modelos[mod], loc = M.locais, W = M.janela ?? d.janela_padrao, S = M.ralos;

  const latente = (m) => m.latente ?? [d.latente_padrao[0] * m.d, Math.floor(d.latente_padrao[1] * m.d)];
  const contas = () => {
    const L = M.camadas, b = M.bytes, [dc, dr] = latente(M);
    return {
      mha: 2 * L * M.hq * M.d * T * b,
      gqa: 2 * L * M.hkv * M.d * T * b,
      janela: 2 * M.hkv * M.d * b * ((L - loc) * T + loc * Math.min(T, W + S)),
      latente: L * (dc + dr) * T * b,
    };
  };

  const controles = I.el("div", {class: "interativo-controles"});
  const escM = I.escolha({rotulo: "Modelo:", itens: d.modelos.map((m) => m.nome), valor: mod, nome: "modelo",
    aoMudar: (k) => {
      mod = k; M = d.modelos[k];
      cLoc.input.max = M.camadas; cLoc.definir(M.locais, false); loc = M.locais;
      W = M.janela ?? d.janela_padrao; cW.definir(d.janelas.indexOf(W), false);
      S = M.ralos; cS.definir(S, false);
      desenhar();
    }});
  const cT = I.deslizante({rotulo: "Contexto T", nome: "T", min: 0, max: d.Ts.length - 1, passo: 1,
                           valor: d.Ts.indexOf(T), formato: (v) => I.fmtInt(d.Ts[v]),
                           aoMudar: (v) => { T = d.Ts[v]; desenhar(); }});
  const cLoc = I.deslizante({rotulo: "Camadas com janela", nome: "locais", min: 0, max: M.camadas, passo: 1,
                             valor: loc, formato: (v) => `${I.fmtInt(v)} de ${I.fmtInt(M.camadas)}`,
                             aoMudar: (v) => { loc = v; desenhar(); }});
  const cW = I.deslizante({rotulo: "Janela W", nome: "janela", min: 0, max: d.janelas.length - 1, passo: 1,
                           valor: d.janelas.indexOf(W), formato: (v) => I.fmtInt(d.janelas[v]),
                           aoMudar: (v) => { W = d.janelas[v]; desenhar(); }});
  const cS = I.deslizante({rotulo: "Ralos S", nome: "ralos", min: 0, max: d.ralos_max, passo: 1, valor: S, casas: 0,
                           aoMudar: (v) => { S = v; desenhar(); }});
  controles.append(escM.caixa, cT.caixa, cLoc.caixa, cW.caixa, cS.caixa);

  const nomes = ["MHA", "GQA", "GQA + janela", "latente"];
  const grafico = I.barras({n: 4, rotulos: nomes, numeros: 1, altura: 140, largura: 420,
                            titulo: "KV cache de uma sequência (% do MHA)"});
  const tab = I.tabela({legenda: "KV cache de uma sequência", colunas: ["arquitetura", "bytes", "% do MHA"],
                        linhas: [["MHA (H_kv = H_q)", "mha", "mha_pct"], ["GQA (H_kv do modelo)", "gqa", "gqa_pct"],
                                 ["GQA + janela nas camadas locais", "janela", "janela_pct"],
                                 ["latente (d_c + d_r por posição)", "latente", "latente_pct"]]});
  const ficha = I.el("p", {class: "interativo-resumo", "data-saida": "ficha"});
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite", "data-saida": "resumo"});
  raiz.append(controles, ficha,
              I.el("div", {style: "display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start"},
                   I.el("div", {style: "flex: 1 1 18rem; min-width: 0"}, I.rolagem(tab.tabela, "Tabela da memória do cache")),
                   I.el("div", {style: "flex: 1 1 16rem; min-width: 0; max-width: 28rem"}, grafico.svg)),
              resumo);

  function desenhar() {
    const c = contas(), [dc, dr] = latente(M);
    for (const k of ["mha", "gqa", "janela", "latente"]) {
      tab.definir(k, I.fmtBytes(c[k]));
      tab.definir(`${k}_pct`, `${I.fmt(100 * c[k] / c.mha, 1)}%`);
    }
    grafico.atualizar([c.mha, c.gqa, c.janela, c.latente].map((v) => 100 * v / c.mha));
    ficha.textContent = `${M.nome}: ${I.fmtInt(M.camadas)} camadas, H_q = ${I.fmtInt(M.hq)}, `
      + `H_kv = ${I.fmtInt(M.hkv)}, d = ${I.fmtInt(M.d)}, ${I.fmtInt(M.bytes)} bytes por número; `
      + (M.janela ? `publicado: ${I.fmtInt(M.locais)} camadas com janela de ${I.fmtInt(M.janela)}` : "sem janela publicada")
      + (M.latente ? `; latente publicado: d_c = ${I.fmtInt(dc)}, d_r = ${I.fmtInt(dr)}.`
                   : `; latente hipotético: d_c = ${I.fmtInt(dc)}, d_r = ${I.fmtInt(dr)}.`);
    resumo.textContent = `Com T = ${I.fmtInt(T)}: MHA ${I.fmtBytes(c.mha)}, GQA ${I.fmtBytes(c.gqa)}, `
      + `GQA com ${I.fmtInt(loc)} camadas de janela ${I.fmtInt(W)} e ${I.fmtInt(S)} ralos ${I.fmtBytes(c.janela)}, `
      + `latente ${I.fmtBytes(c.latente)}.`;
  }
  desenhar();
});
