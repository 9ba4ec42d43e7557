/* Capítulo 10: a softmax online, bloco a bloco.
 *
 * Dados (célula do capítulo): linha (as pontuações da figura estática),
 * blocos (os tamanhos de bloco oferecidos), bloco (o inicial).
 * Fórmula da página (a junção de dois estados, atencao.merge):
 *   m = max(m_A, m_B),  ℓ = ℓ_A e^{m_A − m} + ℓ_B e^{m_B − m},
 * com o estado inicial (−∞, 0) e, para um bloco B, m_B = max(B), ℓ_B = Σ e^{x − m_B}.
 * tests/site/test_interativo.py confere cada passo contra atencao.figuras.online_trace.
 */
Interativo.registrar("softmax-online", (raiz, d, I) => {
  const x = d.linha, N = x.length;
  let bloco = d.bloco, passo = 0;

  /** Os estados depois de cada bloco: {ini, fim, mB, lB, mAntes, lAntes, m, l, fator, subiu}. */
  const rastro = (b) => {
    const out = [];
    let m = -Infinity, l = 0;
    for (let ini = 0; ini < N; ini += b) {
      const fim = Math.min(ini + b, N), xb = x.slice(ini, fim);
      const mB = Math.max(...xb);
      const lB = xb.reduce((s, v) => s + Math.exp(v - mB), 0);
      const mNovo = Math.max(m, mB);
      const fator = m === -Infinity ? 0 : Math.exp(m - mNovo); // o estado antigo, reescalado
      const lNovo = l * fator + lB * Math.exp(mB - mNovo);
      out.push({ini, fim, mB, lB, mAntes: m, lAntes: l, m: mNovo, l: lNovo, fator,
                subiu: m !== -Infinity && mNovo > m});
      m = mNovo; l = lNovo;
    }
    return out;
  };
  let R = rastro(bloco);

  const controles = I.el("div", {class: "interativo-controles"});
  const escolhaBloco = I.escolha({
    rotulo: "Tamanho do bloco:", itens: d.blocos.map(String), valor: d.blocos.indexOf(bloco), nome: "bloco",
    aoMudar: (k) => {
      bloco = d.blocos[k]; R = rastro(bloco);
      deslizante.input.max = R.length; deslizante.definir(1, false); passo = 0; desenhar();
    },
  });
  const deslizante = I.deslizante({
    rotulo: "Blocos vistos", nome: "passo", min: 1, max: R.length, passo: 1, valor: 1, casas: 0,
    formato: (v) => `${v} de ${R.length}`, aoMudar: (v) => { passo = v - 1; desenhar(); },
  });
  const anterior = I.el("button", {type: "button", class: "interativo-passo", "data-controle": "anterior"}, "◀ anterior");
  const proximo = I.el("button", {type: "button", class: "interativo-passo", "data-controle": "proximo"}, "próximo ▶");
  anterior.addEventListener("click", () => deslizante.definir(Math.max(1, passo)));
  proximo.addEventListener("click", () => deslizante.definir(Math.min(R.length, passo + 2)));
  const botoes = I.el("div", {class: "interativo-botoes"}, anterior, proximo);
  controles.append(escolhaBloco.caixa, deslizante.caixa, botoes);

  // Gráfico: as pontuações (pontos), o bloco atual (faixa), o máximo corrente (escada).
  const W = 400, A = 210, esq = 34, dir = 6, topo = 10, meio = 130, base = 200;
  const lo = Math.min(...x), hi = Math.max(...x);
  const px = (j) => esq + (j / N) * (W - esq - dir);
  const py = (v) => topo + (1 - (v - lo) / (hi - lo)) * (meio - topo);
  const grafico = I.svg("svg", {viewBox: `0 0 ${W} ${A}`, role: "img", class: "interativo-online",
                                "aria-label": "Pontuações da linha, o bloco atual e o máximo corrente; embaixo, a soma corrente"});
  const faixa = I.svg("rect", {y: topo, height: base - topo, fill: "var(--interativo-destaque)", opacity: 0.15}, grafico);
  const divisorias = I.svg("g", {}, grafico);
  const pontos = I.svg("g", {}, grafico);
  x.forEach((v, j) => I.svg("circle", {cx: px(j + 0.5), cy: py(v), r: 1.4, fill: "var(--interativo-suave)"}, pontos));
  const escadaM = I.svg("polyline", {fill: "none", stroke: "var(--interativo-neg)", "stroke-width": 2}, grafico);
  const escadaL = I.svg("polyline", {fill: "none", stroke: "var(--interativo-pos)", "stroke-width": 2}, grafico);
  const marcas = I.svg("g", {}, grafico);
  I.svg("text", {x: 2, y: topo + 8, class: "interativo-suave", texto: "s, m"}, grafico);
  I.svg("text", {x: 2, y: meio + 22, class: "interativo-suave", texto: "ℓ"}, grafico);
  I.svg("line", {x1: esq, x2: W - dir, y1: base, y2: base, class: "eixo"}, grafico);

  const tabela = I.el("table", {class: "interativo-tabela", "data-saida": "estado"});
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite", "data-saida": "resumo"});
  raiz.append(controles, grafico, tabela, resumo);

  const f = (v) => (v === -Infinity ? "−∞" : I.fmt(v, 4));

  function desenhar() {
    const e = R[passo], lMax = Math.max(...R.map((r) => r.l));
    const pl = (v) => base - (v / lMax) * (base - meio - 10);
    faixa.setAttribute("x", px(e.ini));
    faixa.setAttribute("width", px(e.fim) - px(e.ini));
    divisorias.replaceChildren();
    for (let j = bloco; j < N; j += bloco) {
      I.svg("line", {x1: px(j), x2: px(j), y1: topo, y2: base, stroke: "var(--interativo-borda)", "stroke-width": 0.6},
            divisorias);
    }
    const vistos = R.slice(0, passo + 1);
    escadaM.setAttribute("points", vistos.flatMap((r) => [`${px(r.ini)},${py(r.m)}`, `${px(r.fim)},${py(r.m)}`]).join(" "));
    escadaL.setAttribute("points", vistos.flatMap((r) => [`${px(r.ini)},${pl(r.l)}`, `${px(r.fim)},${pl(r.l)}`]).join(" "));
    marcas.replaceChildren();
    vistos.forEach((r) => {
      if (r.subiu) I.svg("path", {d: `M${px(r.ini) - 4},${py(r.m) - 9} h8 l-4,6 z`, fill: "var(--interativo-alerta)"}, marcas);
    });
    const linhas = [
      ["colunas do bloco", `${e.ini} a ${e.fim - 1}`],
      ["máximo do bloco m_B", f(e.mB)],
      ["soma do bloco ℓ_B = Σ e^(x − m_B)", f(e.lB)],
      ["máximo corrente m: antes → depois", `${f(e.mAntes)} → ${f(e.m)}`],
      ["fator e^(m_antes − m) do estado antigo", f(e.fator)],
      ["soma corrente ℓ: antes → depois", `${f(e.lAntes)} → ${f(e.l)}`],
    ];
    tabela.replaceChildren(I.el("tbody", {}, ...linhas.map(([k, v], n) =>
      I.el("tr", {}, I.el("th", {scope: "row"}, k), I.el("td", {"data-valor": ["colunas", "mB", "lB", "m", "fator", "l"][n]}, v)))));
    const subidas = vistos.filter((r) => r.subiu).length;
    let texto = e.subiu
      ? `O máximo subiu neste bloco: a soma antiga foi multiplicada por ${I.fmt(e.fator, 4)} antes de somar a do bloco.`
      : passo === 0 ? "Primeiro bloco: o estado começa em (−∞, 0) e vira o do bloco."
        : "O máximo não mudou: o fator é 1 e a soma só cresce.";
    texto += ` Até aqui, ${subidas} reescala${subidas === 1 ? "" : "s"} em ${passo + 1} bloco${passo ? "s" : ""}.`;
    if (passo === R.length - 1) texto += " Fim da linha: ℓ é Σ e^(x − m) com o máximo da linha inteira.";
    resumo.textContent = texto;
    anterior.disabled = passo === 0;
    proximo.disabled = passo === R.length - 1;
  }
  desenhar();
});
