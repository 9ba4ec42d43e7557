/* Capítulo 7: o fluxo residual de uma posição pelo bloco pré-norma.
 * Dados (célula do capítulo): x (T x D), pesos (o state_dict do at.Block: norm1.weight,
 * attn.w_q/w_k/w_v/w_o.weight, norm2.weight, mlp.w1/w3/w2.weight; Linear: y = x Wᵀ),
 * eps, rope_base, n_heads, n_kv_heads, etapas (os nomes das 7 linhas), posicao.
 * Fórmulas da página: RMSNorm(x) = x / √(média(x²) + ε) ⊙ w; a atenção causal com RoPE
 * (par (2i, 2i+1) girado por pos · base^(-2i/d_k)) e GQA; SwiGLU(x) = (silu(xW₁) ⊙ xW₃) W₂;
 * h = x + Atenção(RMSNorm₁(x)), y = h + SwiGLU(RMSNorm₂(h)).
 * O leitor escolhe a posição, multiplica a entrada dessa posição por α e liga ou desliga
 * a conexão residual (sem ela: h = Atenção(...), y = SwiGLU(RMSNorm₂(h))). */
Interativo.registrar("bloco", (raiz, d, I) => {
  const P = d.pesos, T = d.x.length, D = d.x[0].length, H = d.n_heads, Hkv = d.n_kv_heads;
  const dk = D / H, G = H / Hkv;
  const linear = (x, W) => W.map((w) => I.dot(x, w));
  const rms = (x, w) => { const r = 1 / Math.sqrt(x.reduce((a, v) => a + v * v, 0) / x.length + d.eps); return x.map((v, t) => v * r * w[t]); };
  const rope = (v, pos) => {
    const out = v.slice();
    for (let i = 0; i < v.length / 2; i++) {
      const ang = pos * d.rope_base ** (-(2 * i) / v.length), c = Math.cos(ang), s = Math.sin(ang);
      out[2 * i] = v[2 * i] * c - v[2 * i + 1] * s;
      out[2 * i + 1] = v[2 * i] * s + v[2 * i + 1] * c;
    }
    return out;
  };
  const silu = (a) => a / (1 + Math.exp(-a));
  const atencao = (X) => {
    const q = X.map((x) => linear(x, P["attn.w_q.weight"]));
    const k = X.map((x) => linear(x, P["attn.w_k.weight"]));
    const v = X.map((x) => linear(x, P["attn.w_v.weight"]));
    const cab = (m, h, pos) => m[pos].slice(h * dk, (h + 1) * dk);
    return X.map((_, t) => {
      const mix = [];
      for (let h = 0; h < H; h++) {
        const kv = Math.floor(h / G), qt = rope(cab(q, h, t), t);
        const s = Array.from({length: t + 1}, (_, j) => I.dot(qt, rope(cab(k, kv, j), j)) / Math.sqrt(dk));
        const a = I.softmax(s);
        for (let c = 0; c < dk; c++) mix.push(a.reduce((acc, w, j) => acc + w * cab(v, kv, j)[c], 0));
      }
      return linear(mix, P["attn.w_o.weight"]);
    });
  };
  const mlp = (x) => {
    const a = linear(x, P["mlp.w1.weight"]), b = linear(x, P["mlp.w3.weight"]);
    return linear(a.map((v, f) => silu(v) * b[f]), P["mlp.w2.weight"]);
  };
  const norma = (v) => Math.sqrt(v.reduce((a, x) => a + x * x, 0));

  let t = d.posicao, alfa = 1, residual = true;
  const controles = I.el("div", {class: "interativo-controles"});
  const cPos = I.escolha({rotulo: "Posição:", itens: d.x.map((_, k) => String(k)), valor: t, nome: "posicao",
                          aoMudar: (k) => { t = k; desenhar(); }});
  const cAlfa = I.deslizante({rotulo: "entrada da posição × α", nome: "alfa", min: 0.1, max: 5, passo: 0.1, valor: 1,
                              casas: 1, aoMudar: (v) => { alfa = v; desenhar(); }});
  const cRes = I.escolha({rotulo: "Conexão residual:", itens: ["ligada", "desligada"], valor: 0, nome: "residual",
                          aoMudar: (k) => { residual = k === 0; desenhar(); }});
  controles.append(cPos.caixa, cAlfa.caixa, cRes.caixa);

  const c = 46, esq = 130, topo = 22, larg = 62;
  const grade = I.svg("svg", {viewBox: `0 0 ${esq + D * c + larg + 8} ${topo + d.etapas.length * 30 + 4}`, role: "img",
                              "aria-label": "O vetor da posição escolhida em cada etapa do bloco, com a norma"});
  for (let col = 0; col < D; col++) I.svg("text", {x: esq + col * c + c / 2, y: 14, "text-anchor": "middle", class: "interativo-suave", texto: String(col)}, grade);
  I.svg("text", {x: esq + D * c + larg / 2 + 4, y: 14, "text-anchor": "middle", class: "interativo-suave", texto: "norma"}, grade);
  const linhas = d.etapas.map((nome, k) => {
    const rot = I.svg("text", {x: esq - 6, y: topo + k * 30 + 19, "text-anchor": "end", texto: nome}, grade);
    const cel = Array.from({length: D}, (_, col) => ({
      r: I.svg("rect", {x: esq + col * c, y: topo + k * 30, width: c - 1, height: 28}, grade),
      t: I.svg("text", {x: esq + col * c + c / 2, y: topo + k * 30 + 19, "text-anchor": "middle", style: "font-size: 11px",
                        "data-valor": `v-${k}-${col}`}, grade)}));
    const n = I.svg("text", {x: esq + D * c + larg / 2 + 4, y: topo + k * 30 + 19, "text-anchor": "middle", "font-weight": 700,
                             "data-valor": `norma-${k}`}, grade);
    return {cel, n, rot, nome};
  });
  // Sem a conexão residual, h e y perdem a soma: os rótulos dizem isso.
  const semResidual = {3: "h = Atenção", 6: "y = SwiGLU"};
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite"});
  grade.style.minWidth = "34rem";   // no celular, rola para o lado em vez de encolher o texto
  raiz.append(controles, I.rolagem(grade, "Tabela das etapas do bloco"), resumo);

  function desenhar() {
    const X = d.x.map((x, k) => (k === t ? x.map((v) => v * alfa) : x.slice()));
    const n1 = X.map((x) => rms(x, P["norm1.weight"]));
    const att = atencao(n1);
    const h = X.map((x, k) => (residual ? x.map((v, col) => v + att[k][col]) : att[k]));
    const n2 = h.map((x) => rms(x, P["norm2.weight"]));
    const m = n2.map(mlp);
    const y = h.map((x, k) => (residual ? x.map((v, col) => v + m[k][col]) : m[k]));
    const etapas = [X, n1, att, h, n2, m, y].map((e) => e[t]);
    etapas.forEach((v, k) => {
      const maior = Math.max(...v.map(Math.abs));   // a cor de cada linha na escala da própria linha
      linhas[k].rot.textContent = !residual && semResidual[k] ? semResidual[k] : linhas[k].nome;
      v.forEach((val, col) => {
        linhas[k].cel[col].r.setAttribute("fill", I.corDivergente(val, maior));
        linhas[k].cel[col].t.textContent = I.fmt(val, 2);
      });
      linhas[k].n.textContent = I.fmt(norma(v), 2);
    });
    resumo.textContent = `Posição ${t}, entrada × ${I.fmt(alfa, 1)}: a norma de x é ${I.fmt(norma(etapas[0]), 2)}, ` +
      `a de RMSNorm₁(x) é ${I.fmt(norma(etapas[1]), 2)} qualquer que seja α, e a atenção vê a mesma coisa; ` +
      (residual ? "a conexão residual leva o tamanho de x direto até y." : "sem a conexão residual, y esquece x.");
  }
  desenhar();
});
