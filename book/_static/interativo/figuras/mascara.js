/* Capítulo 3: a consulta que o leitor escolhe, o que a máscara causal deixa ler e o que
 * a cabeça sem máscara (a que trapaceia) lê.
 * Dados (célula do capítulo): tokens, Q, K, V (T x d_k) da cabeça montada à mão.
 * Fórmulas da página: S = QKᵀ/√d_k; com máscara, S_ij + M_ij (M_ij = -∞ para j > i);
 * pesos = softmax de cada linha; saída = pesos · V. */
Interativo.registrar("mascara", (raiz, d, I) => {
  const T = d.tokens.length, dk = d.Q[0].length;
  const S = d.Q.map((q) => d.K.map((k) => I.dot(q, k) / Math.sqrt(dk)));
  const pesos = (i, causal) => I.softmax(S[i].map((v, j) => (causal && j > i ? -Infinity : v)));
  let i = Math.min(2, T - 1);

  const escolha = I.escolha({rotulo: "Consulta (posição i):", itens: d.tokens.map((t, k) => `${k} ${t}`),
                             valor: i, nome: "consulta", aoMudar: (k) => { i = k; desenhar(); }});

  // A grade T x T da máscara: verde claro = pode ler (j ≤ i), cinza = futuro; a linha i em destaque.
  const c = 30, esq = 70, topo = 70;
  const grade = I.svg("svg", {viewBox: `0 0 ${esq + T * c + 24} ${topo + T * c + 4}`, role: "img",
                              "aria-label": "Máscara causal: a consulta i lê as chaves j ≤ i"});
  const celulas = d.tokens.map((tok, r) => {
    I.svg("text", {x: esq - 6, y: topo + r * c + c / 2 + 4, "text-anchor": "end", texto: tok}, grade);
    I.svg("text", {x: esq + r * c + c / 2 - 3, y: topo - 6, transform: `rotate(-45 ${esq + r * c + c / 2 - 3} ${topo - 6})`,
                   texto: tok}, grade);
    return d.tokens.map((_, j) => I.svg("rect", {x: esq + j * c, y: topo + r * c, width: c - 1, height: c - 1}, grade));
  });
  const moldura = I.svg("rect", {x: esq - 1, width: T * c + 1, height: c + 1, fill: "none",
                                  stroke: "var(--interativo-destaque)", "stroke-width": 3}, grade);

  const com = I.barras({n: T, max: 1, altura: 90, rotulos: d.tokens, numeros: 2, nome: "com-",
                        titulo: "Com máscara: os pesos que a consulta pode usar"});
  const sem = I.barras({n: T, max: 1, altura: 90, rotulos: d.tokens, numeros: 2, nome: "sem-",
                        titulo: "Sem máscara: a cabeça que trapaceia"});
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite"});
  raiz.append(I.el("div", {class: "interativo-controles"}, escolha.caixa),
              I.el("div", {style: "display: grid; grid-template-columns: repeat(auto-fit, minmax(17rem, 1fr)); gap: 0.5rem 1rem; align-items: start"},
                   grade, I.el("div", {}, com.svg, sem.svg)),
              resumo);

  function desenhar() {
    const pc = pesos(i, true), ps = pesos(i, false);
    celulas.forEach((linha, r) => linha.forEach((rect, j) => {
      rect.setAttribute("fill", j > r ? "var(--interativo-proibido)" : I.corSequencial(pesos(r, true)[j]));
    }));
    moldura.setAttribute("y", topo + i * c - 1);
    const futuro = (j) => (j > i ? "var(--interativo-proibido)" : "");
    com.atualizar(pc, pc.map((_, j) => futuro(j)));
    sem.atualizar(ps, ps.map((_, j) => (j > i ? "var(--interativo-alerta)" : "")));
    // A saída é pesos · V; com V = identidade, o maior componente diz que token ela "prevê".
    const saida = (p) => d.V[0].map((_, t) => p.reduce((a, w, j) => a + w * d.V[j][t], 0));
    const prevê = (p) => { const o = saida(p); return d.tokens[o.indexOf(Math.max(...o))]; };
    const futuroSem = ps.reduce((a, w, j) => a + (j > i ? w : 0), 0);
    resumo.innerHTML = "";
    resumo.append(`A consulta “${d.tokens[i]}” (posição ${i}) pode ler as chaves 0 a ${i}. `,
                  "Sem máscara, ", I.el("span", {"data-valor": "futuro-sem"}, I.fmt(100 * futuroSem, 1)),
                  "% do peso vai para o futuro e a saída aponta para “",
                  I.el("strong", {"data-valor": "prevê-sem"}, prevê(ps)), "”; com máscara, para “",
                  I.el("strong", {"data-valor": "prevê-com"}, prevê(pc)), "”.");
  }
  desenhar();
});
