/* Capítulo 1: a linha de pontuações de uma consulta que o leitor move.
 * Dados (célula do capítulo): tokens, eixos (nomes das d_k componentes), Q e K
 * (T x d_k), consulta (índice inicial), limite (dos controles).
 * Fórmula da página: S_ij = q_i · k_j; a linha da consulta escolhida usa o q dos
 * controles, as outras linhas são as de QK^T. */
Interativo.registrar("pontuacoes", (raiz, d, I) => {
  const T = d.tokens.length, dk = d.eixos.length;
  const lim = d.limite;
  let i = d.consulta;
  let q = d.Q[i].slice();

  const controles = I.el("div", {class: "interativo-controles"});
  const escolha = I.escolha({
    rotulo: "Consulta:", itens: d.tokens, valor: i, nome: "consulta",
    aoMudar: (k) => { i = k; q = d.Q[k].slice(); sliders.forEach((s, t) => s.definir(q[t], false)); desenhar(); },
  });
  controles.append(escolha.caixa);
  const sliders = d.eixos.map((nome, t) => I.deslizante({
    rotulo: `q[${nome}]`, nome: `q${t}`, min: -lim, max: lim, passo: 0.01, valor: q[t], casas: 2,
    aoMudar: (v) => { q[t] = v; desenhar(); },
  }));
  sliders.forEach((s) => controles.append(s.caixa));

  // Plano arrastável: as duas primeiras componentes de q, com as chaves projetadas.
  const P = 200, m = 28, escala = (P / 2 - m) / lim;
  const plano = I.svg("svg", {viewBox: `0 0 ${P} ${P}`, class: "interativo-plano arrastavel",
                              role: "img", "aria-label": `Plano de ${d.eixos[0]} por ${d.eixos[1]}: arraste o ponto da consulta`});
  const px = (v) => P / 2 + v * escala, py = (v) => P / 2 - v * escala;
  I.svg("line", {x1: m / 2, x2: P - m / 2, y1: P / 2, y2: P / 2, class: "eixo"}, plano);
  I.svg("line", {y1: m / 2, y2: P - m / 2, x1: P / 2, x2: P / 2, class: "eixo"}, plano);
  I.svg("text", {x: P - 4, y: P / 2 + 16, "text-anchor": "end", class: "interativo-suave", texto: d.eixos[0]}, plano);
  I.svg("text", {x: P / 2 + 4, y: 12, class: "interativo-suave", texto: d.eixos[1]}, plano);
  // Rótulos das chaves sem se sobrepor (perto da origem, três chaves caíam juntas): cada
  // rótulo vai na primeira posição em volta do seu ponto que não cobre um rótulo já posto nem
  // outro ponto; a caixa do texto é estimada (7 px por letra a 12 px, 12 px de altura).
  const ocupadas = d.K.map((k) => ({x0: px(k[0]) - 3, x1: px(k[0]) + 3, y0: py(k[1]) - 3, y1: py(k[1]) + 3}));
  const cruza = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
  d.K.forEach((k, j) => {
    I.svg("circle", {cx: px(k[0]), cy: py(k[1]), r: 3, fill: "var(--interativo-suave)"}, plano);
  });
  d.K.forEach((k, j) => {
    if (Math.hypot(k[0], k[1]) <= 0.5) return;
    const texto = `k(${d.tokens[j]})`, w = 7 * texto.length, h = 12, cx = px(k[0]), cy = py(k[1]);
    const posicoes = [[5, -5, "start"], [-5, -5, "end"], [5, 14, "start"], [-5, 14, "end"],
                      [5, -17, "start"], [-5, -17, "end"], [5, 26, "start"], [-5, 26, "end"]];
    const caixa = ([dx, dy, ancora]) => {
      const x0 = ancora === "start" ? cx + dx : cx + dx - w;
      return {x0, x1: x0 + w, y0: cy + dy - h + 2, y1: cy + dy + 2};
    };
    const livre = posicoes.find((p) => {
      const c = caixa(p);
      return c.x0 >= 0 && c.x1 <= P && c.y0 >= 0 && c.y1 <= P && !ocupadas.some((o) => cruza(o, c));
    }) || posicoes[0];
    ocupadas.push(caixa(livre));
    I.svg("text", {x: cx + livre[0], y: cy + livre[1], "text-anchor": livre[2], class: "interativo-suave",
                   "data-rotulo-chave": d.tokens[j], texto}, plano);
  });
  const seta = I.svg("line", {x1: px(0), y1: py(0), stroke: "var(--interativo-destaque)", "stroke-width": 2.5}, plano);
  const ponto = I.svg("circle", {r: 9, fill: "var(--interativo-destaque)", style: "cursor: grab"}, plano);
  const arrastar = (ev) => {
    const p = plano.createSVGPoint();
    p.x = ev.clientX; p.y = ev.clientY;
    const l = p.matrixTransform(plano.getScreenCTM().inverse());
    const clamp = (v) => Math.max(-lim, Math.min(lim, Math.round(v * 100) / 100));
    sliders[0].definir(clamp((l.x - P / 2) / escala));
    sliders[1].definir(clamp((P / 2 - l.y) / escala));
  };
  plano.addEventListener("pointerdown", (ev) => { plano.setPointerCapture(ev.pointerId); arrastar(ev); });
  plano.addEventListener("pointermove", (ev) => { if (plano.hasPointerCapture(ev.pointerId)) arrastar(ev); });

  // Mapa de calor T x T com os números; a linha da consulta em destaque.
  const c = 40, esq = 62, topo = 64;
  const mapa = I.svg("svg", {viewBox: `0 0 ${esq + T * c + 30} ${topo + T * c + 4}`, class: "interativo-mapa",
                             role: "img", "aria-label": "Mapa de calor das pontuações S = QKᵀ"});
  const celulas = [];
  d.tokens.forEach((tok, j) => {
    I.svg("text", {x: esq + j * c + c / 2 - 4, y: topo - 6, "text-anchor": "start",
                   transform: `rotate(-45 ${esq + j * c + c / 2 - 4} ${topo - 6})`, texto: tok}, mapa);
    const rot = I.svg("text", {x: esq - 6, y: topo + j * c + c / 2 + 4, "text-anchor": "end", texto: tok}, mapa);
    celulas.push({rot, linha: d.tokens.map((_, jj) => {
      const r = I.svg("rect", {x: esq + jj * c, y: topo + j * c, width: c - 1, height: c - 1}, mapa);
      const t = I.svg("text", {x: esq + jj * c + c / 2, y: topo + j * c + c / 2 + 4, "text-anchor": "middle",
                               style: "font-size: 11px"}, mapa);
      return {r, t};
    })});
  });
  const moldura = I.svg("rect", {x: esq - 1, width: T * c + 1, height: c + 1, fill: "none",
                                  stroke: "var(--interativo-destaque)", "stroke-width": 3}, mapa);
  const S0 = d.Q.map((qi) => d.K.map((kj) => I.dot(qi, kj)));
  const figuras = I.el("div", {style: "display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start"},
                       I.el("div", {style: "flex: 0 1 13rem; min-width: 10rem"}, plano),
                       I.el("div", {style: "flex: 1 1 20rem; min-width: 16rem"}, mapa));
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite"});
  raiz.append(controles, figuras, resumo);

  function desenhar() {
    const linha = d.K.map((kj) => I.dot(q, kj));
    const S = S0.map((r, ii) => (ii === i ? linha : r));
    const maior = Math.max(...S.flat().map(Math.abs));
    S.forEach((r, ii) => r.forEach((v, jj) => {
      const {r: rect, t} = celulas[ii].linha[jj];
      rect.setAttribute("fill", I.corDivergente(v, maior));
      t.textContent = I.fmt(v, 2);
      if (ii === i) t.setAttribute("data-valor", `s-${jj}`); else t.removeAttribute("data-valor");
      t.setAttribute("font-weight", ii === i ? "700" : "400");
    }));
    moldura.setAttribute("y", topo + i * c - 1);
    seta.setAttribute("x2", px(q[0])); seta.setAttribute("y2", py(q[1]));
    ponto.setAttribute("cx", px(q[0])); ponto.setAttribute("cy", py(q[1]));
    const j = linha.indexOf(Math.max(...linha));
    resumo.innerHTML = "";
    resumo.append(`Linha de “${d.tokens[i]}”: a maior pontuação é a de `,
                  I.el("strong", {"data-valor": "melhor"}, d.tokens[j]),
                  ` (${I.fmt(linha[j], 2)}). `,
                  "q = (" + q.map((v) => I.fmt(v, 2)).join("; ") + ").");
  }
  desenhar();
});
