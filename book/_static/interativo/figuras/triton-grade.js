/* Capítulo 13: a grade de programas do kernel Triton e os blocos que cada programa lê.
 *
 * Dados (célula do capítulo): Ns e N, blocos_m e bloco_m, blocos_n e bloco_n,
 * cabecas e cabeca (B·H, o segundo eixo da grade), d, bytes_por_numero e ref
 * (para cada (N, BLOCK_M, BLOCK_N), por programa do eixo 0: [sem máscara, com
 * máscara], de classificar_blocos da célula, para o teste).
 * A grade é (cdiv(N, BLOCK_M), B·H); o programa pid_m lê o seu bloco de Q
 * (BLOCK_M × d), percorre os blocos de chaves com a regra do kernel
 * (start_n < min(start_m, n_full): sem máscara; start_n < min(start_m + BLOCK_M, N):
 * com máscara; o resto nem é carregado) e escreve o seu bloco de O.
 */
Interativo.registrar("triton-grade", (raiz, d, I) => {
  let N = d.N, BM = d.bloco_m, BN = d.bloco_n, BH = d.cabeca, pid = 0;
  const cdiv = (a, b) => Math.ceil(a / b);

  const classe = (i, j) => { // 2 = sem máscara, 1 = com máscara, 0 = pulado (a regra do kernel)
    const nFull = Math.floor(N / BN) * BN, startM = i * BM, startN = j * BN;
    const hiFull = Math.min(startM, nFull), hi = Math.min(startM + BM, N);
    return startN < hiFull ? 2 : startN < hi ? 1 : 0;
  };

  const controles = I.el("div", {class: "interativo-controles"});
  const reiniciar = () => { pid = Math.min(pid, cdiv(N, BM) - 1); slider.input.max = cdiv(N, BM) - 1; slider.definir(pid, false); desenhar(); };
  const escN = I.escolha({rotulo: "N:", itens: d.Ns.map((v) => I.fmt(v, 0)), valor: d.Ns.indexOf(N), nome: "N",
                          aoMudar: (k) => { N = d.Ns[k]; reiniciar(); }});
  const escM = I.escolha({rotulo: "BLOCK_M:", itens: d.blocos_m.map(String), valor: d.blocos_m.indexOf(BM),
                          nome: "bloco_m", aoMudar: (k) => { BM = d.blocos_m[k]; reiniciar(); }});
  const escBN = I.escolha({rotulo: "BLOCK_N:", itens: d.blocos_n.map(String), valor: d.blocos_n.indexOf(BN),
                           nome: "bloco_n", aoMudar: (k) => { BN = d.blocos_n[k]; reiniciar(); }});
  const escH = I.escolha({rotulo: "B·H:", itens: d.cabecas.map(String), valor: d.cabecas.indexOf(BH), nome: "cabecas",
                          aoMudar: (k) => { BH = d.cabecas[k]; desenhar(); }});
  const slider = I.deslizante({rotulo: "Programa pid_m", nome: "pid", min: 0, max: cdiv(N, BM) - 1, passo: 1, valor: 0,
                               casas: 0, formato: (v) => `${v} (0 a ${cdiv(N, BM) - 1})`,
                               aoMudar: (v) => { pid = v; desenhar(); }});
  controles.append(escN.caixa, escM.caixa, escBN.caixa, escH.caixa, slider.caixa);

  const W = 400, H = 250;
  const grafico = I.svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img",
                                "aria-label": "À esquerda a grade de programas; à direita, os blocos de chaves que cada programa lê"});
  const tabela = I.el("table", {class: "interativo-tabela", "data-saida": "grade"});
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite", "data-saida": "resumo"});
  raiz.append(controles, grafico, tabela, resumo);

  const COR = ["none", "var(--interativo-pos)", "var(--interativo-barra)"];
  function desenhar() {
    const nm = cdiv(N, BM), nn = cdiv(N, BN);
    grafico.replaceChildren();
    // grade de programas: nm linhas (pid_m) por BH colunas (pid_bh)
    const gx = 8, gy = 26, gw = 110, gh = 200, cw = gw / BH, ch = gh / nm;
    I.svg("text", {x: gx, y: 14, class: "interativo-suave", texto: `grade (${nm}, ${BH})`}, grafico);
    for (let i = 0; i < nm; i++) {
      for (let b = 0; b < BH; b++) {
        I.svg("rect", {x: gx + b * cw, y: gy + i * ch, width: Math.max(cw - 1, 0.5), height: Math.max(ch - (nm > 40 ? 0 : 1), 0.5),
                       fill: i === pid ? "var(--interativo-destaque)" : "var(--interativo-borda)"}, grafico);
      }
    }
    // blocos de chaves de cada programa: nm linhas por nn colunas
    const kx = 150, kw = 240, bw = kw / nn;
    I.svg("text", {x: kx, y: 14, class: "interativo-suave", texto: `blocos de K e V lidos (${nn} por linha)`}, grafico);
    for (let i = 0; i < nm; i++) {
      for (let j = 0; j < nn; j++) {
        const c = classe(i, j);
        if (c) {
          I.svg("rect", {x: kx + j * bw, y: gy + i * ch, width: Math.max(bw - (nn > 40 ? 0 : 1), 0.5),
                         height: Math.max(ch - (nm > 40 ? 0 : 1), 0.5), fill: COR[c], opacity: i === pid ? 1 : 0.35}, grafico);
        }
      }
    }
    I.svg("rect", {x: kx - 1, y: gy + pid * ch - 1, width: kw + 2, height: ch + 1, fill: "none",
                   stroke: "var(--interativo-texto)", "stroke-width": 2}, grafico);
    I.svg("rect", {x: kx, y: gy, width: kw, height: gh, fill: "none", stroke: "var(--interativo-borda)"}, grafico);

    let sem = 0, com = 0, todos = 0;
    for (let j = 0; j < nn; j++) { const c = classe(pid, j); if (c === 2) sem++; else if (c === 1) com++; }
    for (let i = 0; i < nm; i++) for (let j = 0; j < nn; j++) if (classe(i, j)) todos++;
    const bpn = d.bytes_por_numero;
    const linhas = [
      ["programas", "programas na grade", I.fmt(nm * BH, 0)],
      ["sem", `blocos sem máscara (programa ${pid})`, I.fmt(sem, 0)],
      ["com", `blocos com máscara (programa ${pid})`, I.fmt(com, 0)],
      ["pulados", `blocos nem carregados (programa ${pid})`, I.fmt(nn - sem - com, 0)],
      ["lidos", `bytes lidos pelo programa ${pid} (Q, K, V)`, I.fmtBytes(bpn * d.d * (BM + 2 * BN * (sem + com)))],
      ["total", "blocos de K e V carregados pela grade toda", I.fmt(todos * BH, 0)],
    ];
    tabela.replaceChildren(I.el("tbody", {}, ...linhas.map(([id, k, v]) =>
      I.el("tr", {}, I.el("th", {scope: "row"}, k), I.el("td", {"data-valor": id}, v)))));
    resumo.textContent = `O programa (${pid}, ·) cuida das consultas ${pid * BM} a ${Math.min((pid + 1) * BM, N) - 1}: `
      + `lê o seu bloco de Q uma vez, ${sem} blocos de chaves sem máscara (azul) e ${com} com máscara (vermelho), `
      + `e escreve ${Math.min(BM, N - pid * BM)} linhas de O. `
      + (nn - sem - com ? `Os ${B(nn - sem - com)} blocos acima da diagonal nem são carregados.`
        : "Nenhum bloco de chaves fica inteiro no futuro deste programa.");
  }
  const B = (v) => I.fmt(v, 0);
  desenhar();
});
