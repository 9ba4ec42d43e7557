/* Capítulo 11: a máscara como função e o mapa de blocos que ela dá.
 *
 * Dados (célula do capítulo): Ts e T (contextos), blocos e bloco (B consultas por
 * B chaves), janela_min, janela_max, janela_passo e janela (W), ralos_max e ralos
 * (S), mascaras = [{chave, nome}] e mascara (a inicial), documentos = {T: [comprimentos]}
 * (os documentos que a célula sorteou para cada T).
 * As regras são as de atencao.masks, como a página as escreve (consulta i, chave j):
 *   causal:        j ≤ i
 *   janela W:      i − W < j ≤ i
 *   ralos S + W:   j ≤ i e (j < S ou i − W < j)
 *   documentos:    j ≤ i e doc(i) = doc(j)
 * O mapa de blocos é o de atencao.masks.visited_blocks: um par (bloco i, bloco j)
 * é pulado se a regra não deixa passar nenhum par (consulta, chave) dele, é cheio se
 * deixa passar todos e parcial (calculado com máscara) nos outros casos.
 */
Interativo.registrar("mascara-funcao", (raiz, d, I) => {
  let T = d.T, B = d.bloco, W = d.janela, S = d.ralos, masc = d.mascaras.findIndex((m) => m.chave === d.mascara);

  const documentos = (T) => { // doc(i) para i = 0 .. T − 1
    const ids = new Int32Array(T);
    let i = 0;
    d.documentos[String(T)].forEach((n, k) => { for (let t = 0; t < n && i < T; t++) ids[i++] = k; });
    return ids;
  };
  const regra = (chave, doc) => ({
    causal: (i, j) => j <= i,
    janela: (i, j) => j <= i && i - W < j,
    ralos: (i, j) => j <= i && (j < S || i - W < j),
    documentos: (i, j) => j <= i && doc[i] === doc[j],
  })[chave];

  /** {nb, classe: Int8Array(nb·nb) com 0 pulado, 1 parcial, 2 cheio, visiveis} */
  const mapa = (chave) => {
    const f = regra(chave, documentos(T)), nb = Math.ceil(T / B), cont = new Int32Array(nb * nb);
    let visiveis = 0;
    for (let i = 0; i < T; i++) {
      const bi = Math.floor(i / B) * nb;
      for (let j = 0; j <= i; j++) if (f(i, j)) { cont[bi + Math.floor(j / B)]++; visiveis++; }
    }
    const classe = new Int8Array(nb * nb);
    for (let a = 0; a < nb; a++) {
      for (let b = 0; b < nb; b++) {
        const area = (Math.min(T, (a + 1) * B) - a * B) * (Math.min(T, (b + 1) * B) - b * B);
        const c = cont[a * nb + b];
        classe[a * nb + b] = c === 0 ? 0 : (c === area ? 2 : 1);
      }
    }
    return {nb, classe, visiveis};
  };

  const controles = I.el("div", {class: "interativo-controles"});
  const escM = I.escolha({rotulo: "Máscara:", itens: d.mascaras.map((m) => m.nome), valor: masc, nome: "mascara",
                          aoMudar: (k) => { masc = k; desenhar(); }});
  const escT = I.escolha({rotulo: "Contexto T:", itens: d.Ts.map((t) => I.fmt(t, 0)), valor: d.Ts.indexOf(T), nome: "T",
                          aoMudar: (k) => { T = d.Ts[k]; desenhar(); }});
  const escB = I.escolha({rotulo: "Bloco B:", itens: d.blocos.map(String), valor: d.blocos.indexOf(B), nome: "bloco",
                          aoMudar: (k) => { B = d.blocos[k]; desenhar(); }});
  const janela = I.deslizante({rotulo: "Janela W", nome: "janela", min: d.janela_min, max: d.janela_max,
                               passo: d.janela_passo, valor: W, casas: 0, aoMudar: (v) => { W = v; desenhar(); }});
  const ralos = I.deslizante({rotulo: "Ralos S", nome: "ralos", min: 0, max: d.ralos_max, passo: 1, valor: S, casas: 0,
                              aoMudar: (v) => { S = v; desenhar(); }});
  controles.append(escM.caixa, escT.caixa, escB.caixa, janela.caixa, ralos.caixa);

  const P = 300, m = 22;
  const grade = I.svg("svg", {viewBox: `0 0 ${P + m} ${P + m}`, role: "img", class: "interativo-grade-blocos",
                              "aria-label": "Mapa de blocos da máscara: blocos de consultas nas linhas, de chaves nas colunas"});
  const tabela = I.el("table", {class: "interativo-tabela", "data-saida": "contas"});
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite", "data-saida": "resumo"});
  const legenda = I.el("p", {class: "interativo-resumo"},
    "Azul: bloco cheio, calculado sem máscara; vermelho: bloco parcial, calculado com a máscara; vazio: "
    + "bloco pulado, que o laço nem carrega. A janela W e os ralos S valem para as máscaras que os usam.");
  raiz.append(controles,
              I.el("div", {style: "display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start"},
                   I.el("div", {style: "flex: 1 1 14rem; min-width: 12rem; max-width: 24rem"}, grade),
                   I.el("div", {style: "flex: 1 1 16rem; min-width: 0"}, tabela, resumo)),
              legenda);

  const pct = (x) => `${I.fmt(100 * x, 1)}%`;

  function desenhar() {
    const chave = d.mascaras[masc].chave, M = mapa(chave), nb = M.nb, c = P / nb;
    grade.replaceChildren();
    I.svg("text", {x: m + P / 2, y: 14, "text-anchor": "middle", class: "interativo-suave", texto: "chaves j →"}, grade);
    I.svg("text", {x: 12, y: m + P / 2, "text-anchor": "middle", class: "interativo-suave",
                   transform: `rotate(-90 12 ${m + P / 2})`, texto: "consultas i →"}, grade);
    I.svg("rect", {x: m, y: m, width: P, height: P, fill: "none", stroke: "var(--interativo-borda)"}, grade);
    const folga = nb > 32 ? 0 : 1;
    for (let a = 0; a < nb; a++) {
      for (let b = 0; b < nb; b++) {
        const k = M.classe[a * nb + b];
        if (k === 0) continue;
        I.svg("rect", {x: m + b * c, y: m + a * c, width: Math.max(c - folga, 0.5), height: Math.max(c - folga, 0.5),
                       fill: k === 1 ? "var(--interativo-pos)" : "var(--interativo-barra)"}, grade);
      }
    }
    let cheios = 0, parciais = 0, area = 0;
    for (let a = 0; a < nb; a++) {
      for (let b = 0; b < nb; b++) {
        const k = M.classe[a * nb + b];
        if (k === 0) continue;
        if (k === 1) parciais++; else cheios++;
        area += (Math.min(T, (a + 1) * B) - a * B) * (Math.min(T, (b + 1) * B) - b * B);
      }
    }
    const total = nb * nb, visitados = cheios + parciais, pulados = total - visitados;
    const causalVisitados = (nb * (nb + 1)) / 2;
    const linhas = [
      ["pares", "pares de blocos (n_b²)", I.fmt(total, 0)],
      ["visitados", "visitados", I.fmt(visitados, 0)],
      ["cheios", "cheios (sem máscara)", I.fmt(cheios, 0)],
      ["parciais", "parciais (com máscara)", I.fmt(parciais, 0)],
      ["pulados", "pulados", `${I.fmt(pulados, 0)} (${pct(pulados / total)})`],
      ["visiveis", "pares (i, j) que a máscara deixa ver", pct(M.visiveis / (T * T))],
      ["calculados", "pares (i, j) calculados", pct(area / (T * T))],
      ["contra_causal", "blocos visitados / os da causal", I.fmt(visitados / causalVisitados, 2)],
    ];
    tabela.replaceChildren(I.el("tbody", {}, ...linhas.map(([id, k, v]) =>
      I.el("tr", {}, I.el("th", {scope: "row"}, k), I.el("td", {"data-valor": id}, v)))));
    resumo.textContent = `Máscara ${d.mascaras[masc].nome}, T = ${I.fmt(T, 0)}, blocos de ${B}: `
      + `o laço visita ${I.fmt(visitados, 0)} de ${I.fmt(total, 0)} pares de blocos e pula ${pct(pulados / total)}; `
      + `calcula ${pct(area / (T * T))} das pontuações, das quais a máscara deixa ver ${pct(M.visiveis / (T * T))}.`;
  }
  desenhar();
});
