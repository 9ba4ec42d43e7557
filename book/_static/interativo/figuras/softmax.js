/* Capítulo 4: temperatura e deslocamento na softmax, e a fórmula ingênua em float16.
 * Dados (célula do capítulo): pontuacoes (uma linha s), limite16 (log do maior float16),
 * max16 (o maior float16).
 * Fórmulas da página: z = (s + c) / τ; estável: softmax(z - max z) (float64);
 * ingênua em float16: e = exp(z) e e / Σe, cada passo arredondado para float16
 * (a soma acumula em float32, como a do NumPy, e só o total vira float16). */
Interativo.registrar("softmax", (raiz, d, I) => {
  const s = d.pontuacoes, n = s.length;
  let tau = 1, c = 0;
  const rotulos = s.map((_, j) => `chave ${j + 1}`);
  const ctau = I.deslizante({rotulo: "temperatura τ", nome: "tau", min: 0.1, max: 4, passo: 0.05, valor: 1,
                             casas: 2, aoMudar: (v) => { tau = v; desenhar(); }});
  const cdes = I.deslizante({rotulo: "deslocamento c", nome: "c", min: -10, max: 15, passo: 0.5, valor: 0,
                             casas: 1, aoMudar: (v) => { c = v; desenhar(); }});
  const estavel = I.barras({n, max: 1, altura: 90, rotulos, numeros: 3, titulo: "Estável (float64): softmax(z − max z)"});
  const ingenua = I.barras({n, max: 1, altura: 90, rotulos, numeros: 3, titulo: "Ingênua em float16: eᶻ / Σ eᶻ"});
  const tab = I.tabela({
    legenda: "z = (s + c) / τ em cada chave",
    colunas: ["", ...rotulos],
    linhas: [["s", ...s.map((_, j) => `s-${j}`)], ["z", ...s.map((_, j) => `z-${j}`)],
             ["eᶻ em float16", ...s.map((_, j) => `exp-${j}`)],
             ["peso ingênuo (float16)", ...s.map((_, j) => `ingenua-${j}`)],
             ["peso estável", ...s.map((_, j) => `estavel-${j}`)]],
  });
  const resumo = I.el("p", {class: "interativo-resumo", "aria-live": "polite"});
  raiz.append(I.el("div", {class: "interativo-controles"}, ctau.caixa, cdes.caixa),
              I.el("div", {style: "display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 0.5rem 1rem"},
                   estavel.svg, ingenua.svg),
              I.rolagem(tab.tabela, "Tabela de z, eᶻ e pesos por chave"), resumo);

  function desenhar() {
    const z = s.map((v) => (v + c) / tau);
    const pe = I.softmax(z);
    const z16 = z.map(I.f16);
    const e16 = z16.map((v) => I.f16(Math.exp(v)));
    const soma16 = I.f16(e16.reduce((a, v) => a + v, 0));
    const pi = e16.map((v) => I.f16(v / soma16));
    estavel.atualizar(pe);
    ingenua.atualizar(pi, pi.map((v) => (Number.isNaN(v) ? "var(--interativo-alerta)" : "")));
    s.forEach((v, j) => {
      tab.definir(`s-${j}`, I.fmt(v, 2));
      tab.definir(`z-${j}`, I.fmt(z[j], 2));
      tab.definir(`exp-${j}`, I.fmt(e16[j], 2));
      tab.definir(`ingenua-${j}`, I.fmt(pi[j], 3));
      tab.definir(`estavel-${j}`, I.fmt(pe[j], 3));
      for (const nome of [`exp-${j}`, `ingenua-${j}`]) {
        tab.celula(nome).classList.toggle("interativo-alerta", !Number.isFinite(nome.startsWith("exp") ? e16[j] : pi[j]));
      }
    });
    const zmax = Math.max(...z);
    // Três regimes: tudo cabe; cada eᶻ cabe mas a soma não (pesos 0, sem aviso); algum eᶻ é inf (NaN).
    const estado = pi.some((v) => Number.isNaN(v)) ? "eᶻ estourou: NaN"
      : !Number.isFinite(soma16) ? "a soma estourou: pesos zerados" : "sem estouro";
    resumo.innerHTML = "";
    resumo.append("Fórmula ingênua em float16: ",
      I.el("strong", {class: estado === "sem estouro" ? null : "interativo-alerta", "data-valor": "estado"}, estado),
      `. O maior z é ${I.fmt(zmax, 2)}; em float16, eᶻ passa de ${I.fmt(d.max16, 0)} quando z passa de ` +
      `${I.fmt(d.limite16, 2)}, e a soma Σ eᶻ estoura antes disso. O deslocamento c não muda os pesos estáveis; ` +
      "a temperatura τ os espalha (τ grande) ou os concentra (τ pequeno).");
  }
  desenhar();
});
