/* Núcleo das figuras interativas do livro (contrato: README.md nesta pasta).
 *
 * Uma célula escreve, com atencao.interativo.figura, um bloco
 *   <div class="interativo" data-figura="NOME" data-titulo="..." hidden>
 *     <script type="application/json" class="interativo-dados">{...}</script>
 *   </div>
 * O módulo figuras/NOME.js chama Interativo.registrar(NOME, montar). Quando o
 * documento termina de carregar, o núcleo chama montar(raiz, dados, I) para cada
 * bloco, mostra o bloco e esconde na tela as imagens da mesma célula (a figura
 * estática continua na impressão e para quem lê sem JavaScript).
 *
 * Sem biblioteca: SVG à mão e <input type="range"> de verdade (teclado, toque,
 * leitor de tela). Os números aparecem no formato brasileiro de
 * atencao.plots.fmt_num ("1.234,50", "-0,25").
 */
(() => {
  "use strict";

  const registro = new Map();
  const SVG = "http://www.w3.org/2000/svg";
  let serial = 0;

  /** Mesmo texto de atencao.plots.fmt_num(x, casas): vírgula decimal, ponto de milhar. */
  const fmt = (x, casas = 2) => {
    if (Number.isNaN(x)) return "nan";
    if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
    let s = x.toFixed(casas);
    // Empate exato (0,125 com 2 casas): o Python arredonda para o par, o toFixed para longe do zero.
    const longo = x.toFixed(Math.min(100, casas + 30));
    const resto = longo.slice(longo.length - 30);
    if (/^50*$/.test(resto)) {
      const truncado = longo.slice(0, longo.length - (casas === 0 ? 31 : 30));
      if (Number(truncado.slice(-1)) % 2 === 0) s = truncado;
    }
    const neg = s.startsWith("-");
    const [int, dec] = (neg ? s.slice(1) : s).split(".");
    const grupos = int.replace(/\B(?=(\d{3})+(?!\d))/g, ".");
    return (neg ? "-" : "") + grupos + (dec !== undefined ? "," + dec : "");
  };

  /** O float16 (IEEE meia precisão) mais próximo de x, com empate para o par, como o
   *  np.float16(x) do NumPy: passa de 65.504 (a partir de 65.520) vira infinito. */
  const f16 = (x) => {
    if (!Number.isFinite(x) || x === 0) return x;
    const a = Math.abs(x), sinal = Math.sign(x);
    if (a >= 65520) return sinal * Infinity;
    let e = Math.floor(Math.log2(a));
    if (2 ** e > a) e -= 1; else if (2 ** (e + 1) <= a) e += 1;
    const ulp = 2 ** (Math.max(e, -14) - 10);   // subnormais: passo 2^-24
    const q = a / ulp, piso = Math.floor(q), frac = q - piso;
    const n = frac > 0.5 || (frac === 0.5 && piso % 2 === 1) ? piso + 1 : piso;
    return sinal * n * ulp;
  };

  /** Mesmo texto de atencao.plots.fmt_int: 1048576 -> "1.048.576". */
  const fmtInt = (n) => fmt(Math.trunc(n), 0);

  /** Mesmo texto de atencao.plots.fmt_bytes: 4194304 -> "4,00 MiB". */
  const fmtBytes = (n) => {
    const unidades = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    for (const u of unidades) {
      if (Math.abs(n) < 1024 || u === "PiB") return `${fmt(n, u === "B" ? 0 : 2)} ${u}`;
      n /= 1024;
    }
    return "";
  };

  /** Elemento HTML com atributos e filhos. */
  const el = (tag, attrs = {}, ...filhos) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "texto") e.textContent = v; else e.setAttribute(k, v === true ? "" : v);
    }
    e.append(...filhos);
    return e;
  };

  /** Elemento SVG com atributos, anexado a `pai` se vier. */
  const svg = (tag, attrs = {}, pai = null) => {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "texto") e.textContent = v; else e.setAttribute(k, v);
    }
    if (pai) pai.append(e);
    return e;
  };

  const id = (base) => `interativo-${base}-${++serial}`;

  /** Controle deslizante com rótulo visível e valor ao lado (formato brasileiro).
   *  opções: {rotulo, min, max, passo, valor, casas, nome, formato(v) -> texto, aoMudar(v)}
   *  `nome` vai em data-controle (os testes acham o controle por ele). */
  const deslizante = (o) => {
    const ident = id(o.nome || "controle");
    const formato = o.formato || ((v) => fmt(v, o.casas ?? 2));
    const input = el("input", {type: "range", id: ident, min: o.min, max: o.max, step: o.passo ?? 1,
                               value: o.valor, "data-controle": o.nome || null});
    const saida = el("output", {for: ident, class: "interativo-valor-controle", "aria-hidden": "true"});
    const rotulo = el("label", {for: ident}, o.rotulo);
    // No celular, um passo do controle tem poucos px de trilho (81 px para ~49 passos): os
    // botões − e + (alvos de 44 px, só em telas estreitas ou de toque, interativo.css) andam
    // um passo por toque. Fora da ordem do Tab: o teclado já tem ←/→ no próprio controle.
    const botaoPasso = (sinal, texto, acao) => {
      const b = el("button", {type: "button", class: "interativo-um-passo", tabindex: "-1",
                              "aria-label": `${acao} ${o.rotulo}`, "data-passo": String(sinal)}, texto);
      b.addEventListener("click", () => {
        const antes = input.value;
        if (sinal > 0) input.stepUp(); else input.stepDown();
        if (input.value !== antes) o.aoMudar(atualizar());
      });
      return b;
    };
    const menos = botaoPasso(-1, "−", "diminuir"), mais = botaoPasso(1, "+", "aumentar");
    const caixa = el("div", {class: "interativo-controle"}, rotulo, menos, input, mais, saida);
    const atualizar = () => {
      const v = Number(input.value);
      menos.disabled = v <= Number(input.min);     // na ponta, o botão não faz nada: desligado
      mais.disabled = v >= Number(input.max);
      const texto = formato(v);
      saida.textContent = texto;
      input.setAttribute("aria-valuetext", texto);
      return v;
    };
    input.addEventListener("input", () => o.aoMudar(atualizar()));
    atualizar();
    return {
      caixa, input,
      get valor() { return Number(input.value); },
      definir(v, avisar = true) { input.value = v; const w = atualizar(); if (avisar) o.aoMudar(w); },
    };
  };

  /** Grupo de botões de escolha única (role=radiogroup não: botões com aria-pressed, que o
   *  teclado e o toque usam sem surpresa). opções: {rotulo, itens: [texto], valor, nome, aoMudar(k)} */
  const escolha = (o) => {
    const rot = el("span", {class: "interativo-rotulo", id: id("rotulo")}, o.rotulo);
    const grupo = el("div", {class: "interativo-botoes", role: "group", "aria-labelledby": rot.id,
                             "data-controle": o.nome || null});
    const botoes = o.itens.map((texto, k) => {
      const b = el("button", {type: "button", "data-indice": k, "aria-pressed": "false"}, texto);
      b.addEventListener("click", () => { marcar(k); o.aoMudar(k); });
      grupo.append(b);
      return b;
    });
    const marcar = (k) => botoes.forEach((b, j) => b.setAttribute("aria-pressed", String(j === k)));
    marcar(o.valor ?? 0);
    return {caixa: el("div", {class: "interativo-controle interativo-escolha"}, rot, grupo), botoes,
            definir(k) { marcar(k); o.aoMudar(k); }};
  };

  /** Mapa de cor divergente (valores com sinal) entre as cores do tema: devolve rgba. */
  const corDivergente = (v, limite) => {
    const t = Math.max(-1, Math.min(1, v / (limite || 1)));
    return t >= 0 ? `rgba(214, 96, 77, ${0.12 + 0.78 * t})` : `rgba(67, 147, 195, ${0.12 + 0.78 * -t})`;
  };
  /** Mapa de cor sequencial (0..1), como o dos mapas de calor do curso. */
  const corSequencial = (v) => `rgba(49, 130, 189, ${0.06 + 0.9 * Math.max(0, Math.min(1, v))})`;

  /** Softmax estável de um vetor (a fórmula do capítulo 4); entradas -Infinity pesam 0. */
  const softmax = (x) => {
    const m = Math.max(...x);
    const e = x.map((v) => (v === -Infinity ? 0 : Math.exp(v - m)));
    const z = e.reduce((a, b) => a + b, 0);
    return e.map((v) => v / z);
  };
  const dot = (a, b) => a.reduce((s, v, t) => s + v * b[t], 0);

  /** Gráfico de barras verticais em SVG, de 0 a `max` (ou ao maior valor).
   *  opções: {n, rotulos ([texto] sob as barras, opcional), titulo, max, altura, largura,
   *           numeros (escreve o valor de cada barra: casas; omitido = sem números),
   *           nome (prefixo de data-valor dos números: "<nome><j>")}
   *  devolve {svg, atualizar(valores, cores?)}; `cores[j]` troca a cor de uma barra. */
  const barras = (o) => {
    const W = o.largura ?? 420, H = o.altura ?? 150, base = o.rotulos ? 34 : 8, topo = o.titulo ? 30 : 16;
    const g = svg("svg", {viewBox: `0 0 ${W} ${H + topo + base}`, role: "img",
                          "aria-label": o.titulo || "gráfico de barras"});
    if (o.titulo) svg("text", {x: 0, y: 14, texto: o.titulo, "font-weight": 600}, g);
    const passo = W / o.n, larg = Math.max(1, passo * 0.8);
    svg("line", {x1: 0, x2: W, y1: topo + H, y2: topo + H, class: "eixo"}, g);
    const itens = Array.from({length: o.n}, (_, j) => {
      const r = svg("rect", {x: j * passo + (passo - larg) / 2, width: larg, fill: "var(--interativo-barra)"}, g);
      const t = o.numeros !== undefined ? svg("text", {x: j * passo + passo / 2, "text-anchor": "middle",
        style: "font-size: 11px", "data-valor": o.nome ? `${o.nome}${j}` : null}, g) : null;
      if (t && !o.nome) t.removeAttribute("data-valor");
      if (o.rotulos) {
        svg("text", {x: j * passo + passo / 2, y: topo + H + 16, "text-anchor": "middle", texto: o.rotulos[j]}, g);
      }
      return {r, t};
    });
    const atualizar = (valores, cores = []) => {
      const max = o.max ?? Math.max(...valores.map((v) => (Number.isFinite(v) ? v : 0)), 1e-12);
      valores.forEach((v, j) => {
        const h = Number.isFinite(v) ? Math.max(0, Math.min(1, v / max)) * H : 0;
        const {r, t} = itens[j];
        r.setAttribute("y", topo + H - h);
        r.setAttribute("height", h);
        r.setAttribute("fill", cores[j] || "var(--interativo-barra)");
        if (t) { t.textContent = fmt(v, o.numeros); t.setAttribute("y", topo + H - h - 4); }
      });
    };
    return {svg: g, atualizar};
  };

  /** Tabela de números: {legenda, colunas: [texto], linhas: [[rótulo, nome_da_col1, ...]]}.
   *  Cada célula de número leva data-valor=<nome>; devolve {tabela, definir(nome, texto)}. */
  const tabela = (o) => {
    const celulas = new Map();
    const t = el("table", {class: "interativo-tabela"});
    if (o.legenda) t.append(el("caption", {}, o.legenda));
    t.append(el("thead", {}, el("tr", {}, ...o.colunas.map((c) => el("th", {scope: "col"}, c)))));
    const corpo = el("tbody");
    for (const [rotulo, ...nomes] of o.linhas) {
      const tr = el("tr", {}, el("th", {scope: "row"}, rotulo));
      for (const nome of nomes) {
        const td = el("td", {"data-valor": nome});
        celulas.set(nome, td);
        tr.append(td);
      }
      corpo.append(tr);
    }
    t.append(corpo);
    return {tabela: t, definir: (nome, texto) => { celulas.get(nome).textContent = texto; },
            celula: (nome) => celulas.get(nome)};
  };

  /** Caixa que rola para o lado quando o conteúdo (uma tabela larga) não cabe no celular;
   *  focável, para quem rola pelo teclado (WCAG 2.1.1). Quando rola, ela diz isso: uma linha
   *  "a tabela continua à direita" acima dela e uma sombra na borda (marcarRolagens). */
  const rolagem = (conteudo, rotulo) => {
    const caixa = el("div", {class: "interativo-rolagem", tabindex: "0", role: "region", "aria-label": rotulo},
                     conteudo);
    const dica = el("p", {class: "interativo-dica-rolagem", hidden: true},
                    "A tabela continua à direita: deslize-a para o lado →");
    return el("div", {class: "interativo-rolagem-externa"}, dica, caixa);
  };

  const marcarRolagens = () => {
    for (const caixa of document.querySelectorAll(".interativo-rolagem")) {
      const rola = caixa.scrollWidth > caixa.clientWidth + 1;
      caixa.classList.toggle("interativo-rola", rola);
      const fim = caixa.scrollLeft + caixa.clientWidth >= caixa.scrollWidth - 1;
      caixa.classList.toggle("interativo-rola-fim", rola && fim);
      const dica = caixa.parentElement && caixa.parentElement.querySelector(":scope > .interativo-dica-rolagem");
      if (dica) dica.hidden = !rola;
      if (!caixa.dataset.ouvindo) {
        caixa.dataset.ouvindo = "1";
        caixa.addEventListener("scroll", () => {
          caixa.classList.toggle("interativo-rola-fim",
                                 caixa.scrollLeft + caixa.clientWidth >= caixa.scrollWidth - 1);
        }, {passive: true});
      }
    }
  };

  /** Entropia (nats) de uma distribuição: -sum p log p, com 0 log 0 = 0. */
  const entropia = (p) => -p.reduce((s, v) => s + (v > 0 ? v * Math.log(v) : 0), 0);

  /** Registra o módulo de uma figura: montar(raiz, dados, I) desenha dentro de `raiz`. */
  const registrar = (nome, montar) => {
    if (registro.has(nome)) throw new Error(`figura interativa registrada duas vezes: ${nome}`);
    registro.set(nome, montar);
  };

  const montarTudo = () => {
    for (const raiz of document.querySelectorAll("div.interativo[data-figura]")) {
      if (raiz.dataset.estado) continue;
      const nome = raiz.dataset.figura;
      const montar = registro.get(nome);
      const bloco = raiz.querySelector("script.interativo-dados");
      if (!montar || !bloco) {
        raiz.dataset.estado = "erro";
        console.error(`figura interativa sem módulo ou sem dados: ${nome}`);
        continue;
      }
      const dados = JSON.parse(bloco.textContent);
      const corpo = el("div", {class: "interativo-corpo", role: "group",
                               "aria-label": raiz.dataset.titulo || nome});
      raiz.append(corpo);
      try {
        montar(corpo, dados, Interativo);
      } catch (erro) {
        corpo.remove();
        raiz.dataset.estado = "erro";
        console.error(`figura interativa ${nome} não montou:`, erro);
        continue;  // a imagem estática fica
      }
      raiz.hidden = false;
      raiz.dataset.estado = "pronta";
      const celula = raiz.closest(".cell_output") || raiz.parentElement;
      if (celula) celula.classList.add("interativo-montada");
    }
    marcarRolagens();
  };
  window.addEventListener("resize", () => marcarRolagens());

  window.Interativo = {registrar, fmt, fmtInt, fmtBytes, el, svg, id, deslizante, escolha, corDivergente, corSequencial,
                       softmax, dot, barras, tabela, entropia, f16, rolagem, montarTudo};
  // Os módulos (defer) rodam depois deste arquivo e antes do DOMContentLoaded; o
  // "load" cobre um núcleo carregado depois disso. montarTudo não repete uma figura.
  document.addEventListener("DOMContentLoaded", montarTudo);
  window.addEventListener("load", montarTudo);
})();
