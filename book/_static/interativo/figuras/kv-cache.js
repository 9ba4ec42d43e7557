/* Capítulo 12: o KV cache contra recalcular, token a token.
 *
 * Dados (célula do capítulo): modelos = [{nome, camadas, kv, d_k, bytes}] (os
 * casos da célula de memória), modelo (o inicial), prompts e prompt (T_0),
 * novos e novo (tokens gerados). A conta, como o TinyModel.generate faz:
 * o passo s (s = 1 .. n) produz o token na posição T_0 + s − 1, com
 * L_s = T_0 + s − 1 tokens de contexto.
 *   sem cache: o modelo roda sobre os L_s tokens: L_s (L_s + 1) / 2 pontuações;
 *   com cache: o passo 1 é o prefill (T_0 (T_0 + 1) / 2), depois uma consulta
 *   contra L_s chaves: L_s pontuações;
 *   o cache ocupa 2 × camadas × H_kv × d_k × (posições guardadas) × bytes, e cada
 *   passo com cache lê o cache inteiro (kv_cache_bytes da página).
 * Pontuações por cabeça de consulta e por camada.
 */
Interativo.registrar("kv-cache", (raiz, d, I) => {
  let mod = d.modelos.findIndex((m) => m.nome === d.modelo), T0 = d.prompt, n = d.novo, s = d.novo;

  const kvBytes = (m, pos) => 2 * m.camadas * m.kv * m.d_k * pos * m.bytes;
  const semCache = (L) => (L * (L + 1)) / 2;
  const comCache = (step) => (step === 1 ? semCache(T0) : T0 + step - 1);

  const controles = I.el("div", {class: "interativo-controles"});
  const escM = I.escolha({rotulo: "Modelo:", itens: d.modelos.map((m) => m.nome), valor: mod, nome: "modelo",
                          aoMudar: (k) => { mod = k; desenhar(); }});
  const escP = I.escolha({rotulo: "Prompt T₀:", itens: d.prompts.map((t) => I.fmt(t, 0)), valor: d.prompts.indexOf(T0),
                          nome: "prompt", aoMudar: (k) => { T0 = d.prompts[k]; desenhar(); }});
  const escN = I.escolha({rotulo: "Tokens novos n:", itens: d.novos.map(String), valor: d.novos.indexOf(n), nome: "novos",
                          aoMudar: (k) => { n = d.novos[k]; passo.input.max = n; passo.definir(n, false); s = n; desenhar(); }});
  const passo = I.deslizante({rotulo: "Passo s", nome: "passo", min: 1, max: n, passo: 1, valor: n, casas: 0,
                              formato: (v) => `${v} de ${n}`, aoMudar: (v) => { s = v; desenhar(); }});
  controles.append(escM.caixa, escP.caixa, escN.caixa, passo.caixa);

  const W = 400, H = 220, esq = 40, dir = 8, topo = 10, baixo = 46;
  const grafico = I.svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img",
                                "aria-label": "Pontuações calculadas em cada passo, com e sem cache, em escala logarítmica"});
  const tabela = I.el("table", {class: "interativo-tabela", "data-saida": "kv"});
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite", "data-saida": "resumo"});
  const figuras = I.el("div", {style: "display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start"},
                       I.el("div", {style: "flex: 1 1 18rem; min-width: 0"}, tabela),
                       I.el("div", {style: "flex: 1 1 18rem; min-width: 0; max-width: 30rem"}, grafico));
  raiz.append(controles, figuras, resumo);

  function desenhar() {
    const m = d.modelos[mod], L = T0 + s - 1;
    let somaCom = 0, somaSem = 0;
    const com = [], sem = [];
    for (let k = 1; k <= n; k++) {
      com.push(comCache(k)); sem.push(semCache(T0 + k - 1));
      if (k <= s) { somaCom += com[k - 1]; somaSem += sem[k - 1]; }
    }
    const linhas = [
      ["contexto", "contexto L_s deste passo", I.fmt(L, 0)],
      ["com", "pontuações neste passo, com cache", I.fmt(com[s - 1], 0)],
      ["sem", "pontuações neste passo, sem cache", I.fmt(sem[s - 1], 0)],
      ["soma_com", "até aqui, com cache", I.fmt(somaCom, 0)],
      ["soma_sem", "até aqui, sem cache", I.fmt(somaSem, 0)],
      ["razao", "sem / com, até aqui", `${I.fmt(somaSem / somaCom, 1)}x`],
      ["cache", "cache ocupado depois do passo", I.fmtBytes(kvBytes(m, L))],
      ["cheio", `cache com T₀ + n = ${I.fmt(T0 + n, 0)} posições`, I.fmtBytes(kvBytes(m, T0 + n))],
    ];
    tabela.replaceChildren(I.el("tbody", {}, ...linhas.map(([id, k, v]) =>
      I.el("tr", {}, I.el("th", {scope: "row"}, k), I.el("td", {"data-valor": id}, v)))));

    const yHi = Math.log10(Math.max(...sem, ...com)) + 0.2, yLo = 0;
    const px = (k) => esq + ((k - 1) / Math.max(1, n - 1)) * (W - esq - dir);
    const py = (v) => topo + (1 - (Math.log10(Math.max(v, 1)) - yLo) / (yHi - yLo)) * (H - topo - baixo);
    grafico.replaceChildren();
    I.svg("line", {x1: esq, x2: W - dir, y1: H - baixo, y2: H - baixo, class: "eixo"}, grafico);
    I.svg("line", {x1: esq, x2: esq, y1: topo, y2: H - baixo, class: "eixo"}, grafico);
    for (let e = 0; e <= yHi; e += 2) {
      I.svg("text", {x: esq - 4, y: py(10 ** e) + 4, "text-anchor": "end", class: "interativo-suave",
                     texto: e < 4 ? I.fmt(10 ** e, 0) : `10^${e}`}, grafico);
    }
    I.svg("text", {x: (esq + W) / 2, y: H - baixo + 16, "text-anchor": "middle", class: "interativo-suave",
                   texto: `passo s (1 a ${n})`}, grafico);
    const linha = (vals, cor, tracejado) => I.svg("polyline", {
      points: vals.map((v, k) => `${px(k + 1)},${py(v)}`).join(" "), fill: "none", stroke: cor, "stroke-width": 2,
      "stroke-dasharray": tracejado ? "5 3" : null}, grafico);
    linha(sem, "var(--interativo-pos)", true);
    linha(com, "var(--interativo-barra)", false);
    I.svg("line", {x1: px(s), x2: px(s), y1: topo, y2: H - baixo, stroke: "var(--interativo-destaque)", "stroke-width": 1.5},
          grafico);
    I.svg("text", {x: esq, y: H - 4, fill: "var(--interativo-pos)", texto: "– – sem cache"}, grafico);
    I.svg("text", {x: esq + 130, y: H - 4, fill: "var(--interativo-barra)", texto: "—— com cache"}, grafico);

    resumo.textContent = `${m.nome}: no passo ${s}, recalcular tudo custa ${I.fmt(sem[s - 1], 0)} pontuações por cabeça e `
      + `camada; com o cache, ${I.fmt(com[s - 1], 0)}. O preço é guardar ${I.fmtBytes(kvBytes(m, L))} e ler tudo isso a cada token.`;
  }
  desenhar();
});
