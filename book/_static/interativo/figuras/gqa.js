/* Capítulo 6: cabeças de consulta, grupos de chave/valor e os bytes do KV cache.
 * Dados (célula do capítulo): modelos [{nome, H, Hkv, d_k, T}], bytes_por_numero, tipo.
 * Fórmulas da página: G = H / H_kv; a consulta h usa a KV ⌊h / G⌋; cada posição de cada
 * camada guarda 2 · H_kv · d_k números; o cache de uma camada com T posições, T vezes isso. */
Interativo.registrar("gqa", (raiz, d, I) => {
  const b = d.bytes_por_numero;
  let mod = d.modelos[0], hkv = mod.Hkv, T = mod.T;
  const divisores = (n) => Array.from({length: n}, (_, k) => k + 1).filter((k) => n % k === 0);
  const potencias = (max) => { const r = []; for (let t = 1; t <= max; t *= 2) r.push(t); if (r[r.length - 1] !== max) r.push(max); return r; };
  let ds = divisores(mod.H), ts = potencias(mod.T);

  const controles = I.el("div", {class: "interativo-controles"});
  const escolha = I.escolha({rotulo: "Modelo:", itens: d.modelos.map((m) => m.nome), valor: 0, nome: "modelo",
    aoMudar: (k) => {
      mod = d.modelos[k]; ds = divisores(mod.H); ts = potencias(mod.T);
      cKv.input.max = ds.length - 1; cT.input.max = ts.length - 1;
      cKv.definir(ds.indexOf(mod.Hkv), false); cT.definir(ts.length - 1, false);
      hkv = mod.Hkv; T = mod.T; desenhar();
    }});
  const cKv = I.deslizante({rotulo: "cabeças KV H_kv", nome: "hkv", min: 0, max: ds.length - 1, passo: 1,
                            valor: ds.indexOf(hkv), formato: (v) => I.fmtInt(ds[v]),
                            aoMudar: (v) => { hkv = ds[v]; desenhar(); }});
  const cT = I.deslizante({rotulo: "posições T", nome: "t", min: 0, max: ts.length - 1, passo: 1,
                           valor: ts.length - 1, formato: (v) => I.fmtInt(ts[v]),
                           aoMudar: (v) => { T = ts[v]; desenhar(); }});
  controles.append(escolha.caixa, cKv.caixa, cT.caixa);

  const W = 480, H = 150;
  const diagrama = I.svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img",
                                 "aria-label": "Ligações entre as cabeças de consulta e as cabeças de chave e valor"});
  const camada = I.svg("g", {}, diagrama);
  const tab = I.tabela({legenda: `K e V guardados em ${d.tipo}, por camada`, colunas: ["", "valor"],
                        linhas: [["consultas por grupo G = H / H_kv", "g"], ["números por posição 2 · H_kv · d_k", "numeros"],
                                 ["bytes por posição", "bytes-posicao"], ["cache de T posições", "bytes-cache"],
                                 ["economia contra a MHA (H_kv = H)", "razao"]]});
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite"});
  raiz.append(controles, diagrama, I.rolagem(tab.tabela, "Tabela dos bytes do cache"), resumo);

  function desenhar() {
    const Hq = mod.H, G = Hq / hkv;
    camada.replaceChildren();
    const xq = (h) => 20 + (h + 0.5) * (W - 40) / Hq;
    const xkv = (j) => 20 + ((j + 0.5) * G) * (W - 40) / Hq;
    const r = Math.max(3, Math.min(11, (W - 40) / Hq / 2.6));
    const cores = ["var(--interativo-barra)", "var(--interativo-pos)", "var(--interativo-neg)", "var(--interativo-destaque)"];
    for (let h = 0; h < Hq; h++) {
      I.svg("line", {x1: xq(h), y1: 40, x2: xkv(Math.floor(h / G)), y2: H - 34, stroke: cores[Math.floor(h / G) % 4],
                     "stroke-width": 1.5}, camada);
    }
    for (let h = 0; h < Hq; h++) {
      I.svg("circle", {cx: xq(h), cy: 40, r, fill: "var(--pst-color-background, #fff)", stroke: "var(--interativo-texto)"}, camada);
      if (Hq <= 12) I.svg("text", {x: xq(h), y: 44, "text-anchor": "middle", style: "font-size: 10px", texto: String(h)}, camada);
    }
    for (let j = 0; j < hkv; j++) {
      I.svg("rect", {x: xkv(j) - r, y: H - 34 - r, width: 2 * r, height: 2 * r, fill: "var(--interativo-proibido)",
                     stroke: "var(--interativo-texto)"}, camada);
      if (hkv <= 12) I.svg("text", {x: xkv(j), y: H - 30, "text-anchor": "middle", style: "font-size: 10px", texto: String(j)}, camada);
    }
    I.svg("text", {x: 4, y: 16, texto: `${I.fmtInt(Hq)} cabeças de consulta`}, camada);
    I.svg("text", {x: 4, y: H - 6, texto: `${I.fmtInt(hkv)} cabeça(s) KV (${hkv === Hq ? "MHA" : hkv === 1 ? "MQA" : "GQA"})`}, camada);
    const numeros = 2 * hkv * mod.d_k, porPos = numeros * b;
    tab.definir("g", I.fmtInt(G));
    tab.definir("numeros", I.fmtInt(numeros));
    tab.definir("bytes-posicao", I.fmtBytes(porPos));
    tab.definir("bytes-cache", I.fmtBytes(porPos * T));
    tab.definir("razao", `${I.fmtInt(Hq / hkv)}×`);
    resumo.textContent = `${mod.nome}: H = ${I.fmtInt(Hq)}, d_k = ${I.fmtInt(mod.d_k)}; com H_kv = ${I.fmtInt(hkv)}, ` +
      `cada grupo de ${I.fmtInt(G)} consulta(s) lê a mesma cabeça KV e uma camada guarda ${I.fmtBytes(porPos * T)} ` +
      `para ${I.fmtInt(T)} posições.`;
  }
  desenhar();
});
