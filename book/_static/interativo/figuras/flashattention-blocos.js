/* Capítulo 11: o cronograma de blocos do FlashAttention-2, os blocos pulados e o tráfego na HBM.
 *
 * Dados (célula do capítulo): Ts e T (contextos oferecidos e o inicial), blocos e
 * bloco (tamanhos de bloco, B consultas por B chaves), d, bytes_por_numero.
 * O cronograma é o de atencao.flash.block_schedule: consultas fora, chaves
 * dentro; com a máscara causal, o laço interno para no primeiro bloco de chaves
 * inteiro no futuro (j0 > i1 − 1), e um bloco precisa de máscara quando j1 − 1 > i0.
 * Tráfego na HBM por cabeça, como a figura escreve: Q lido uma vez e O e lse
 * escritos uma vez (2Td + T números), mais K_j e V_j lidos a cada par calculado
 * (2d números por chave do bloco).
 */
Interativo.registrar("flashattention-blocos", (raiz, d, I) => {
  let T = d.T, B = d.bloco, causal = true, passo = 1;

  const cronograma = () => { // [{i, j, j0, j1, mascara}], na ordem do laço
    const out = [];
    for (let i0 = 0, i = 0; i0 < T; i0 += B, i++) {
      const i1 = Math.min(i0 + B, T);
      for (let j0 = 0, j = 0; j0 < T; j0 += B, j++) {
        const j1 = Math.min(j0 + B, T);
        if (causal && j0 > i1 - 1) break;
        out.push({i, j, j0, j1, mascara: causal && j1 - 1 > i0});
      }
    }
    return out;
  };
  let C = cronograma();

  const controles = I.el("div", {class: "interativo-controles"});
  const reiniciar = () => { C = cronograma(); passo = C.length; deslizante.input.max = C.length; deslizante.definir(C.length, false); desenhar(); };
  const escolhaT = I.escolha({rotulo: "Contexto T:", itens: d.Ts.map((t) => I.fmt(t, 0)), valor: d.Ts.indexOf(T),
                              nome: "T", aoMudar: (k) => { T = d.Ts[k]; reiniciar(); }});
  const escolhaB = I.escolha({rotulo: "Bloco B:", itens: d.blocos.map(String), valor: d.blocos.indexOf(B),
                              nome: "bloco", aoMudar: (k) => { B = d.blocos[k]; reiniciar(); }});
  const escolhaM = I.escolha({rotulo: "Máscara causal:", itens: ["sim", "não"], valor: 0, nome: "causal",
                              aoMudar: (k) => { causal = k === 0; reiniciar(); }});
  const deslizante = I.deslizante({rotulo: "Pares já calculados", nome: "passo", min: 1, max: C.length, passo: 1,
                                   valor: C.length, casas: 0, formato: (v) => `${I.fmt(v, 0)} de ${I.fmt(C.length, 0)}`,
                                   aoMudar: (v) => { passo = v; desenhar(); }});
  passo = C.length;
  controles.append(escolhaT.caixa, escolhaB.caixa, escolhaM.caixa, deslizante.caixa);

  const P = 300, m = 22;
  const grade = I.svg("svg", {viewBox: `0 0 ${P + m} ${P + m}`, role: "img", class: "interativo-grade-blocos",
                              "aria-label": "Grade de pares de blocos: consultas nas linhas, chaves nas colunas"});
  const legenda = I.el("p", {class: "interativo-resumo"},
    "Azul: calculado sem máscara; vermelho: calculado com máscara (cortado pela diagonal); vazio: pulado, "
    + "inteiro no futuro. Em cor cheia, os pares já calculados até o passo escolhido (os que faltam, apagados); "
    + "a moldura é o par da vez.");
  const tabela = I.el("table", {class: "interativo-tabela", "data-saida": "contas"});
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite", "data-saida": "resumo"});
  const figuras = I.el("div", {style: "display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start"},
                       I.el("div", {style: "flex: 1 1 14rem; min-width: 12rem; max-width: 24rem"}, grade),
                       I.el("div", {style: "flex: 1 1 16rem; min-width: 0"}, tabela, resumo));
  raiz.append(controles, figuras, legenda);

  const bytes = (n) => I.fmtBytes(n * d.bytes_por_numero); // números -> bytes

  function desenhar() {
    const nb = Math.ceil(T / B), c = P / nb;
    grade.replaceChildren();
    I.svg("text", {x: m + P / 2, y: 14, "text-anchor": "middle", class: "interativo-suave", texto: "chaves j →"}, grade);
    I.svg("text", {x: 12, y: m + P / 2, "text-anchor": "middle", class: "interativo-suave",
                   transform: `rotate(-90 12 ${m + P / 2})`, texto: "consultas i →"}, grade);
    I.svg("rect", {x: m, y: m, width: P, height: P, fill: "none", stroke: "var(--interativo-borda)"}, grade);
    C.forEach((p, k) => {
      const feito = k < passo;
      I.svg("rect", {x: m + p.j * c, y: m + p.i * c, width: Math.max(c - (nb > 32 ? 0 : 1), 0.5),
                     height: Math.max(c - (nb > 32 ? 0 : 1), 0.5),
                     fill: p.mascara ? "var(--interativo-pos)" : "var(--interativo-barra)", opacity: feito ? 1 : 0.3}, grade);
    });
    const atual = C[passo - 1];
    I.svg("rect", {x: m + atual.j * c - 1, y: m + atual.i * c - 1, width: c + 2, height: c + 2, fill: "none",
                   stroke: "var(--interativo-texto)", "stroke-width": 2.5}, grade);

    const total = nb * nb, calculados = C.length, comMascara = C.filter((p) => p.mascara).length;
    const chaves = (lista) => lista.reduce((s, p) => s + (p.j1 - p.j0), 0);
    const io = 2 * T * d.d + T + 2 * d.d * chaves(C); // Q + O + lse, e K_j, V_j por par
    const ioAte = Math.min(atual.i * B + B, T) * d.d + 2 * d.d * chaves(C.slice(0, passo)); // Q_i lidos até aqui + K, V
    const ingenuo = 4 * T * T + 4 * T * d.d; // capítulo 9
    const linhas = [
      ["pares", "pares de blocos (n_b²)", I.fmt(total, 0)],
      ["calculados", "calculados", I.fmt(calculados, 0)],
      ["pulados", "pulados (inteiros no futuro)", `${I.fmt(total - calculados, 0)} (${I.fmt(100 * (total - calculados) / total, 1)}%)`],
      ["mascara", "com máscara", I.fmt(comMascara, 0)],
      ["trafego", "tráfego na HBM, total", bytes(io)],
      ["ingenuo", "ingênuo (4T² + 4Td)", bytes(ingenuo)],
      ["ate", "lido até o par da vez", bytes(ioAte)],
    ];
    tabela.replaceChildren(I.el("tbody", {}, ...linhas.map(([id, k, v]) =>
      I.el("tr", {}, I.el("th", {scope: "row"}, k), I.el("td", {"data-valor": id}, v)))));
    resumo.textContent = `Par da vez: bloco de consultas ${atual.i}, bloco de chaves ${atual.j}`
      + (atual.mascara ? " (na diagonal: com máscara)." : ".")
      + ` Na SRAM: Q_${atual.i}, K_${atual.j} e V_${atual.j} (${bytes(3 * B * d.d)}) e o bloco S de ${B} × ${B}.`
      + ` O FlashAttention-2 move ${I.fmt(ingenuo / io, 1)} vezes menos bytes que o ingênuo.`;
  }
  desenhar();
});
