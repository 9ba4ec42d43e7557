/* Capítulo 2: o d_k que o leitor escolhe, com e sem a divisão por √d_k.
 * Dados (célula do capítulo): ds (os d_k medidos), linhas (para cada d_k, 32 pontuações
 * q·k_j de um sorteio com componentes de variância 1), entropia_media ({"sem escala",
 * "com escala"}: a média de 256 linhas, medida na célula), log_m.
 * Fórmulas da página: softmax(s) e softmax(s / √d_k); entropia -Σ p log p. */
Interativo.registrar("escala", (raiz, d, I) => {
  const n = d.ds.length, m = d.linhas[0].length;
  let k = d.ds.indexOf(64) >= 0 ? d.ds.indexOf(64) : 0;

  const controle = I.deslizante({
    rotulo: "d_k =", nome: "dk", min: 0, max: n - 1, passo: 1, valor: k,
    formato: (v) => I.fmt(d.ds[v], 0), aoMudar: (v) => { k = v; desenhar(); },
  });
  const sem = I.barras({n: m, max: 1, altura: 110, titulo: "Pesos sem escala: softmax(s)"});
  const com = I.barras({n: m, max: 1, altura: 110, titulo: "Pesos com escala: softmax(s / √d_k)"});
  const tab = I.tabela({
    legenda: "Uma linha de 32 pontuações e a média de 256 linhas",
    colunas: ["", "sem escala", "com escala"],
    linhas: [["desvio das pontuações da linha", "desvio-sem", "desvio-com"],
             ["maior peso da linha", "maior-sem", "maior-com"],
             ["entropia da linha (nats)", "entropia-sem", "entropia-com"],
             ["entropia média, 256 linhas (nats)", "media-sem", "media-com"]],
  });

  // Curvas da entropia média contra log2 d_k, com a marca do d_k escolhido.
  const W = 320, H = 130, e = 34, b = 26, topo = 10;
  const curva = I.svg("svg", {viewBox: `0 0 ${W + e + 10} ${H + b + topo}`, role: "img",
                              "aria-label": "Entropia média dos pesos contra d_k, com e sem escala"});
  const x = (i) => e + (i / (n - 1)) * W, y = (v) => topo + H - (v / d.log_m) * H;
  I.svg("line", {x1: e, x2: e + W, y1: topo + H, y2: topo + H, class: "eixo"}, curva);
  I.svg("line", {x1: e, x2: e + W, y1: y(d.log_m), y2: y(d.log_m), class: "eixo", "stroke-dasharray": "3 3"}, curva);
  I.svg("text", {x: e + W, y: y(d.log_m) + 12, "text-anchor": "end", class: "interativo-suave", texto: "uniforme (log 32)"}, curva);
  I.svg("text", {x: e - 4, y: topo + H, "text-anchor": "end", texto: "0"}, curva);
  [0, Math.floor((n - 1) / 2), n - 1].forEach((i) =>
    I.svg("text", {x: x(i), y: topo + H + 16, "text-anchor": i === 0 ? "start" : i === n - 1 ? "end" : "middle",
                   texto: `d_k = ${I.fmt(d.ds[i], 0)}`}, curva));
  for (const [nome, cor, traco] of [["sem escala", "var(--interativo-pos)", ""], ["com escala", "var(--interativo-neg)", "5 3"]]) {
    const pts = d.entropia_media[nome].map((v, i) => `${x(i)},${y(v)}`).join(" ");
    I.svg("polyline", {points: pts, fill: "none", stroke: cor, "stroke-width": 2.5, "stroke-dasharray": traco}, curva);
    const i = nome === "sem escala" ? n - 1 : Math.floor(n / 2);
    I.svg("text", {x: x(i) - (nome === "sem escala" ? 4 : 0), y: y(d.entropia_media[nome][i]) + (nome === "sem escala" ? -6 : 16),
                   "text-anchor": nome === "sem escala" ? "end" : "middle", texto: nome}, curva);
  }
  const marca = I.svg("line", {y1: topo, y2: topo + H, stroke: "var(--interativo-destaque)", "stroke-width": 2}, curva);

  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite"});
  raiz.append(I.el("div", {class: "interativo-controles"}, controle.caixa),
              I.el("div", {style: "display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 0.5rem 1rem"},
                   sem.svg, com.svg, curva, tab.tabela),
              resumo);

  const desvio = (s) => {
    const media = s.reduce((a, v) => a + v, 0) / s.length;
    return Math.sqrt(s.reduce((a, v) => a + (v - media) ** 2, 0) / s.length);
  };

  function desenhar() {
    const dk = d.ds[k], s = d.linhas[k], s2 = s.map((v) => v / Math.sqrt(dk));
    const p = I.softmax(s), p2 = I.softmax(s2);
    const cor = (q) => { const j = q.indexOf(Math.max(...q)); return q.map((_, i) => (i === j ? "var(--interativo-pos)" : "")); };
    sem.atualizar(p, cor(p));
    com.atualizar(p2, cor(p2));
    tab.definir("desvio-sem", I.fmt(desvio(s), 2));
    tab.definir("desvio-com", I.fmt(desvio(s2), 2));
    tab.definir("maior-sem", I.fmt(Math.max(...p), 3));
    tab.definir("maior-com", I.fmt(Math.max(...p2), 3));
    tab.definir("entropia-sem", I.fmt(I.entropia(p), 2));
    tab.definir("entropia-com", I.fmt(I.entropia(p2), 2));
    tab.definir("media-sem", I.fmt(d.entropia_media["sem escala"][k], 2));
    tab.definir("media-com", I.fmt(d.entropia_media["com escala"][k], 2));
    marca.setAttribute("x1", x(k)); marca.setAttribute("x2", x(k));
    resumo.textContent = `Com d_k = ${I.fmt(dk, 0)}, sem a escala a maior chave leva ${I.fmt(100 * Math.max(...p), 1)}% ` +
      `do peso; dividindo por √d_k = ${I.fmt(Math.sqrt(dk), 2)}, leva ${I.fmt(100 * Math.max(...p2), 1)}%.`;
  }
  desenhar();
});
