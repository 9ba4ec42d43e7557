/* Capítulo 9: o custo da matriz de pontuações contra T e d, numa GPU da tabela.
 *
 * Dados (célula do capítulo): Ts, ds, blocos (opções dos controles) e os
 * iniciais T, d, bloco; gpus = [{nome, pi, beta, memoria}] (atencao.hardware:
 * pico BF16 denso em FLOP/s, banda da HBM em bytes/s, memória em bytes) e gpu
 * (a inicial); cpu = {nome, pi, beta} (medida na construção do livro);
 * bytes_por_numero (bf16); ref (a mesma conta feita pelas funções da célula,
 * para o teste).
 * Fórmulas da página, por cabeça (em números; × bytes_por_numero para bytes):
 *   ingênuo 4T² + 4Td; em blocos 2Td + 2Td⌈T/B_r⌉; mínimo 4Td;
 *   FLOPs 4T²d + 5T²; I = FLOPs / bytes; alcançável = min(π, I β);
 *   tempo mínimo = max(FLOPs / π, bytes / β).
 */
Interativo.registrar("custo-quadratico", (raiz, d, I) => {
  let iT = d.Ts.indexOf(d.T), dd = d.d, B = d.bloco, gpu = d.gpus.findIndex((g) => g.nome === d.gpu);
  const bpn = d.bytes_por_numero;

  const naive = (T, dk) => 4 * T * T + 4 * T * dk;
  const tiled = (T, dk, b) => 2 * T * dk + 2 * T * dk * Math.ceil(T / b);
  const minimo = (T, dk) => 4 * T * dk;
  const flops = (T, dk) => 4 * T * T * dk + 5 * T * T;

  const fmtTempo = (s) => (s < 1e-3 ? `${I.fmt(s * 1e6, 1)} µs` : s < 1 ? `${I.fmt(s * 1e3, 2)} ms` : `${I.fmt(s, 2)} s`);

  const controles = I.el("div", {class: "interativo-controles"});
  const deslT = I.deslizante({rotulo: "Contexto T", nome: "T", min: 0, max: d.Ts.length - 1, passo: 1, valor: iT,
                              formato: (k) => I.fmt(d.Ts[k], 0), aoMudar: (k) => { iT = k; desenhar(); }});
  const escD = I.escolha({rotulo: "d_k:", itens: d.ds.map(String), valor: d.ds.indexOf(dd), nome: "d",
                          aoMudar: (k) => { dd = d.ds[k]; desenhar(); }});
  const escB = I.escolha({rotulo: "Bloco B_r:", itens: d.blocos.map(String), valor: d.blocos.indexOf(B), nome: "bloco",
                          aoMudar: (k) => { B = d.blocos[k]; desenhar(); }});
  const escG = I.escolha({rotulo: "Processador:", itens: [...d.gpus.map((g) => g.nome), d.cpu.nome], valor: gpu,
                          nome: "gpu", aoMudar: (k) => { gpu = k; desenhar(); }});
  controles.append(deslT.caixa, escD.caixa, escB.caixa, escG.caixa);

  const W = 400, H = 236, esq = 44, dir = 8, topo = 22, baixo = 34;
  const grafico = I.svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img",
                                "aria-label": "Roofline do processador escolhido com as três intensidades da atenção"});
  const tabela = I.el("table", {class: "interativo-tabela", "data-saida": "custo"});
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite", "data-saida": "resumo"});
  const figuras = I.el("div", {style: "display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start"},
                       I.el("div", {style: "flex: 1 1 18rem; min-width: 0"}, tabela),
                       I.el("div", {style: "flex: 1 1 18rem; min-width: 0; max-width: 30rem"}, grafico));
  raiz.append(controles, figuras, resumo);

  const xLo = -1, xHi = 3.5; // log10 da intensidade
  function desenhar() {
    const T = d.Ts[iT];
    const proc = gpu < d.gpus.length ? d.gpus[gpu] : d.cpu;
    const F = flops(T, dd);
    const casos = [["ingenua", "ingênua", naive(T, dd)], ["blocos", `em blocos (B_r = ${B})`, tiled(T, dd, B)],
                   ["minimo", "mínimo (ler Q, K, V, escrever O)", minimo(T, dd)]];
    const virada = proc.pi / proc.beta;
    const linhas = [
      ["pontuacoes", "pontuações T² (por cabeça)", I.fmt(T * T, 0)],
      ["S", "matriz S em fp32 / bf16", `${I.fmtBytes(4 * T * T)} / ${I.fmtBytes(2 * T * T)}`],
      ["flops", "FLOPs 4T²d + 5T²", I.fmt(F, 0)],
      ...casos.map(([id, nome, el]) => [`trafego_${id}`, `tráfego ${nome}`, I.fmtBytes(bpn * el)]),
      ...casos.map(([id, nome, el]) => [`I_${id}`, `intensidade ${nome.split(" (")[0]} (FLOP/byte)`,
                                        I.fmt(F / (bpn * el), 1)]),
      ["virada", "virada do processador (FLOP/byte)", I.fmt(virada, 1)],
      ...casos.slice(0, 2).map(([id, nome, el]) => [`tempo_${id}`, `tempo mínimo, ${nome.split(" (")[0]}`,
                                                    fmtTempo(Math.max(F / proc.pi, bpn * el / proc.beta))]),
    ];
    tabela.replaceChildren(I.el("tbody", {}, ...linhas.map(([id, k, v]) =>
      I.el("tr", {}, I.el("th", {scope: "row"}, k), I.el("td", {"data-valor": id}, v)))));

    // roofline em log-log
    const yHi = Math.log10(Math.max(...d.gpus.map((g) => g.pi), d.cpu.pi)) + 0.3;
    const yLo = Math.log10(d.cpu.pi) - 3;
    const px = (lx) => esq + ((lx - xLo) / (xHi - xLo)) * (W - esq - dir);
    const py = (ly) => topo + (1 - (ly - yLo) / (yHi - yLo)) * (H - topo - baixo);
    const teto = (lx) => Math.log10(Math.min(proc.pi, 10 ** lx * proc.beta));
    grafico.replaceChildren();
    I.svg("line", {x1: esq, x2: W - dir, y1: H - baixo, y2: H - baixo, class: "eixo"}, grafico);
    I.svg("line", {x1: esq, x2: esq, y1: topo, y2: H - baixo, class: "eixo"}, grafico);
    for (let e = xLo; e <= 3; e++) {
      I.svg("text", {x: px(e), y: H - baixo + 14, "text-anchor": "middle", class: "interativo-suave",
                     texto: e < 0 ? "0,1" : I.fmt(10 ** e, 0)}, grafico);
    }
    I.svg("text", {x: (esq + W) / 2, y: H - 4, "text-anchor": "middle", class: "interativo-suave",
                   texto: "intensidade I (FLOP/byte)"}, grafico);
    for (let e = 3 * Math.ceil(yLo / 3); e <= yHi; e += 3) {
      const nome = {6: "1 M", 9: "1 G", 12: "1 T", 15: "1 P", 18: "1 E"}[e] || `10^${e}`;
      I.svg("text", {x: esq - 4, y: py(e) + 4, "text-anchor": "end", class: "interativo-suave", texto: nome}, grafico);
    }
    I.svg("text", {x: 4, y: 12, class: "interativo-suave", texto: "FLOP/s"}, grafico);
    const pts = [];
    for (let k = 0; k <= 60; k++) { const lx = xLo + (k / 60) * (xHi - xLo); pts.push(`${px(lx)},${py(teto(lx))}`); }
    I.svg("polyline", {points: pts.join(" "), fill: "none", stroke: "var(--interativo-destaque)", "stroke-width": 2}, grafico);
    I.svg("line", {x1: px(Math.log10(virada)), x2: px(Math.log10(virada)), y1: topo, y2: H - baixo,
                   stroke: "var(--interativo-suave)", "stroke-dasharray": "3 3"}, grafico);
    const marcas = ["●", "■", "▲"];
    casos.forEach(([, nome, el], k) => {
      const lx = Math.log10(F / (bpn * el));
      if (lx < xLo || lx > xHi) return;
      I.svg("text", {x: px(lx), y: py(teto(lx)) + 5, "text-anchor": "middle", fill: "var(--interativo-alerta)",
                     style: "font-size: 14px", texto: marcas[k]}, grafico);
    });

    const frac = (el) => Math.min(1, (F / (bpn * el)) * proc.beta / proc.pi);
    const lado = (el) => (F / (bpn * el) < virada ? "pela memória" : "pelo cálculo");
    resumo.textContent = `${proc.nome}: a ingênua (●) é limitada ${lado(casos[0][2])} e alcança no máximo `
      + `${I.fmt(100 * frac(casos[0][2]), 0)}% do pico; a em blocos (■), ${lado(casos[1][2])} `
      + `(${I.fmt(100 * frac(casos[1][2]), 0)}%); com o tráfego mínimo (▲), ${I.fmt(100 * frac(casos[2][2]), 0)}%. `
      + (2 * T * T <= (proc.memoria || Infinity) ? "" : `A matriz S de uma cabeça em bf16 já não cabe nos ${I.fmt(proc.memoria / 1e9, 0)} GB da GPU.`);
  }
  desenhar();
});
