/* Capítulo 5: a saída de uma consulta é a soma dos valores pesados, Σ_j A_ij v_j.
 * Dados (célula do capítulo): Q, K (T x d_k), V (T x 2), consulta (índice inicial).
 * Fórmulas da página: A_i = softmax(q_i Kᵀ / √d_k) nas chaves j ≤ i (causal); o_i = Σ_j A_ij v_j.
 * As setas w_j v_j vão uma depois da outra, da origem até o_i. */
Interativo.registrar("mistura", (raiz, d, I) => {
  const T = d.V.length, dk = d.Q[0].length;
  let i = d.consulta, q = d.Q[i].slice();
  const lim = 3;
  const controles = I.el("div", {class: "interativo-controles"});
  const escolha = I.escolha({rotulo: "Consulta i:", itens: d.V.map((_, k) => `${k}`), valor: i, nome: "consulta",
    aoMudar: (k) => { i = k; q = d.Q[k].slice(); sliders.forEach((s, t) => s.definir(q[t], false)); desenhar(); }});
  const sliders = q.map((v, t) => I.deslizante({rotulo: `q[${t}]`, nome: `q${t}`, min: -lim, max: lim, passo: 0.05,
                                                 valor: v, casas: 2, aoMudar: (w) => { q[t] = w; desenhar(); }}));
  controles.append(escolha.caixa, ...sliders.map((s) => s.caixa));

  // O plano dos valores.
  const todos = d.V.flat();
  const lo = Math.min(0, ...todos) - 0.5, hi = Math.max(...todos) + 0.7;
  const P = 300, m = 24, esc = (P - 2 * m) / (hi - lo);
  const px = (v) => m + (v - lo) * esc, py = (v) => P - m - (v - lo) * esc;
  const plano = I.svg("svg", {viewBox: `0 0 ${P} ${P}`, role: "img",
                              "aria-label": "Plano dos valores: as setas pesadas somam até a saída"});
  const defs = I.svg("defs", {}, plano);
  for (const [nome, cor] of [["ponta-v", "var(--interativo-suave)"], ["ponta-w", "var(--interativo-barra)"], ["ponta-o", "var(--interativo-pos)"]]) {
    const mk = I.svg("marker", {id: `${nome}-${raiz.parentElement.dataset.figura}`, viewBox: "0 0 10 10", refX: 9, refY: 5,
                                markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse"}, defs);
    I.svg("path", {d: "M0,0 L10,5 L0,10 z", fill: cor}, mk);
  }
  const ponta = (nome) => `url(#${nome}-${raiz.parentElement.dataset.figura})`;
  I.svg("line", {x1: px(lo), x2: px(hi), y1: py(0), y2: py(0), class: "eixo"}, plano);
  I.svg("line", {x1: px(0), x2: px(0), y1: py(lo), y2: py(hi), class: "eixo"}, plano);
  const vetores = d.V.map((v, j) => {
    const linha = I.svg("line", {x1: px(0), y1: py(0), x2: px(v[0]), y2: py(v[1]), stroke: "var(--interativo-suave)",
                                 "stroke-width": 1.5, "stroke-dasharray": "4 3", "marker-end": ponta("ponta-v")}, plano);
    const rot = I.svg("text", {x: px(v[0]) + 6, y: py(v[1]) - 6, texto: `v${j}`}, plano);
    return {linha, rot};
  });
  const pesadas = d.V.map(() => I.svg("line", {stroke: "var(--interativo-barra)", "stroke-width": 3,
                                               "marker-end": ponta("ponta-w")}, plano));
  const saida = I.svg("line", {x1: px(0), y1: py(0), stroke: "var(--interativo-pos)", "stroke-width": 2,
                               "marker-end": ponta("ponta-o")}, plano);
  const rotSaida = I.svg("text", {"font-weight": 700, fill: "var(--interativo-pos)"}, plano);

  const tab = I.tabela({legenda: "Pesos e saída da consulta", colunas: ["", ...d.V.map((_, j) => `chave ${j}`)],
                        linhas: [["peso A_ij", ...d.V.map((_, j) => `w-${j}`)]]});
  const saidaTxt = I.el("p", {class: "interativo-resumo", "aria-live": "polite"});
  raiz.append(controles,
              I.el("div", {style: "display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: 0.5rem 1rem; align-items: start"},
                   I.el("div", {style: "max-width: 22rem"}, plano), I.el("div", {}, I.rolagem(tab.tabela, "Tabela dos pesos"), saidaTxt)));

  function desenhar() {
    const s = d.K.map((k, j) => (j <= i ? I.dot(q, k) / Math.sqrt(dk) : -Infinity));
    const w = I.softmax(s);
    let x = 0, y = 0;
    w.forEach((wj, j) => {
      const nx = x + wj * d.V[j][0], ny = y + wj * d.V[j][1];
      const seta = pesadas[j];
      seta.setAttribute("x1", px(x)); seta.setAttribute("y1", py(y));
      seta.setAttribute("x2", px(nx)); seta.setAttribute("y2", py(ny));
      seta.style.display = wj > 1e-9 ? "" : "none";
      vetores[j].linha.style.opacity = j <= i ? 1 : 0.25;
      tab.definir(`w-${j}`, j <= i ? I.fmt(wj, 3) : "futuro");
      if (j > i) tab.celula(`w-${j}`).textContent = "—";
      x = nx; y = ny;
    });
    saida.setAttribute("x2", px(x)); saida.setAttribute("y2", py(y));
    rotSaida.setAttribute("x", px(x) + 8); rotSaida.setAttribute("y", py(y) + 16);
    rotSaida.textContent = `o${i}`;
    saidaTxt.innerHTML = "";
    saidaTxt.append(`Saída o${i} = Σ A_ij v_j = (`, I.el("span", {"data-valor": "o-0"}, I.fmt(x, 3)), "; ",
                    I.el("span", {"data-valor": "o-1"}, I.fmt(y, 3)),
                    `): as setas azuis são A_ij v_j, uma depois da outra; a consulta ${i} vê as chaves 0 a ${i}.`);
  }
  desenhar();
});
