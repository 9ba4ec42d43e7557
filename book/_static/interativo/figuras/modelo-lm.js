/* Capítulo 8: o modelo tiny do curso rodando no navegador do leitor.
 *
 * Dados (célula do capítulo, atencao.interativo.figura): frase (a inicial),
 * parametros, bytes (do binário de pesos), max_tokens (o contexto do treino),
 * top (quantos próximos tokens mostrar), ref = {ids, logits} (os tokens da
 * frase inicial e os logits da última posição calculados pelo PyTorch, para a
 * figura mostrar a diferença), gerar = {n, novos} (quantas continuações e de
 * quantos tokens o painel de sorteio gera), tops (os valores do top-k),
 * capitulo = {rotulo: [conhecidas, distintos]} (as medidas do capítulo, para comparar).
 *
 * O sorteio: temperatura, top-k e top-p valem para a lista dos próximos tokens
 * e para as continuações, geradas com o KV cache do lm.js (AtencaoLM.Model.sample)
 * aos pedaços, sem travar a página; a cada mudança, as medidas do capítulo
 * (palavras conhecidas, tokens distintos) são refeitas nas continuações novas.
 *
 * Nada pesado antes do botão: só ao clicar em "Carregar o modelo" a figura
 * baixa ../../modelo/lm.js (o BPE e o passo à frente) e os pesos
 * (../../modelo/lm_manifest.json + lm_weights.bin, gravados no site por
 * book/_ext/modelo_web.py). A configuração do modelo vem do manifesto.
 */
(() => {
  "use strict";
  const AQUI = document.currentScript ? document.currentScript.src : document.baseURI;
  const PASTA = new URL("../../modelo/", AQUI);

  const carregarScript = (url) => new Promise((ok, falha) => {
    if (window.AtencaoLM) { ok(); return; }
    const s = document.createElement("script");
    s.src = url;
    s.onload = () => ok();
    s.onerror = () => falha(new Error(`não consegui carregar ${url}`));
    document.head.append(s);
  });

  const estilo = () => {
    if (document.querySelector("link[data-modelo-lm]")) return;
    document.head.append(Object.assign(document.createElement("link"), {
      rel: "stylesheet", href: new URL("modelo-lm.css", PASTA).href,
    }));
    document.head.lastChild.dataset.modeloLm = "";
  };

  /** O token como o leitor o vê: espaço como ␣, quebra de linha como ↵, tabulação como ⇥. */
  const visivel = (s) => s.replace(/ /g, "␣").replace(/\n/g, "↵").replace(/\r/g, "␍").replace(/\t/g, "⇥");

  const mib = (bytes, I) => I.fmt(bytes / 2 ** 20, 1);
  const fmtInt = (n, I) => I.fmt(n, 0);
  const pct = (p, I) => `${I.fmt(100 * p, 1)}%`;
  const SOBRESCRITO = {"-": "⁻", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴", "5": "⁵", "6": "⁶",
                       "7": "⁷", "8": "⁸", "9": "⁹"};
  /** 5,7·10⁻⁶ (zero vira "0"). */
  const exp = (x) => {
    if (x === 0) return "0";
    const [m, e] = x.toExponential(1).split("e");
    return `${m.replace(".", ",")}·10${e.replace("+", "").replace(/./g, (ch) => SOBRESCRITO[ch])}`;
  };

  Interativo.registrar("modelo-lm", (raiz, d, I) => {
    estilo();
    const status = I.el("p", {class: "interativo-resumo modelo-lm-status", "aria-live": "polite"});
    const botao = I.el("button", {type: "button", class: "modelo-lm-carregar", "data-controle": "carregar"},
                       `Carregar o modelo (${mib(d.bytes, I)} MiB)`);
    const intro = I.el("p", {class: "modelo-lm-intro"},
      `O modelo tiny do curso, ${fmtInt(d.parametros, I)} parâmetros, roda aqui, no seu navegador: `
      + "o tokenizador BPE e o passo à frente estão escritos em JavaScript puro, e os pesos vêm do "
      + "próprio site, só quando você apertar o botão. Nada sai da página.");
    const painel = I.el("div", {class: "modelo-lm-painel", hidden: true});
    raiz.append(intro, botao, status, painel);

    let modelo = null;
    botao.addEventListener("click", async () => {
      botao.disabled = true;
      status.textContent = "Baixando os pesos…";
      try {
        await carregarScript(new URL("lm.js", PASTA).href);
        const t0 = performance.now();
        modelo = await window.AtencaoLM.load(PASTA);
        window.AtencaoLM.carregado = modelo;
        // Menos de um segundo em ms ("em 52 ms"), não "em 0,0 s".
        const ms = performance.now() - t0;
        const tempo = ms < 1000 ? `${I.fmtInt(Math.max(1, Math.round(ms)))} ms` : `${I.fmt(ms / 1000, 1)} s`;
        status.textContent = `Modelo carregado em ${tempo}: `
          + `${modelo.config.n_layers} camadas, ${modelo.config.n_heads} cabeças de consulta, `
          + `${modelo.config.n_kv_heads} de chave/valor, vocabulário de ${fmtInt(modelo.config.vocab_size, I)} tokens.`;
        botao.hidden = true;
        montarPainel();
      } catch (erro) {
        status.textContent = `Não deu para carregar o modelo: ${erro.message}`;
        status.classList.add("interativo-alerta");
        botao.disabled = false;
      }
    });

    function montarPainel() {
      const c = modelo.config, L = c.n_layers, H = c.n_heads, G = H / c.n_kv_heads;
      const tok = modelo.tokenizer;
      const idEntrada = I.id("frase");
      const MAX_LETRAS = 400;
      const entrada = I.el("input", {type: "text", id: idEntrada, value: d.frase, maxlength: MAX_LETRAS,
                                     spellcheck: "false", autocomplete: "off", "data-controle": "frase"});
      // O campo para em 400 caracteres (o navegador corta o que passa, também ao colar): dizemos isso.
      const limite = I.el("p", {class: "interativo-resumo", "data-saida": "limite", "aria-live": "polite", hidden: true},
                          `A frase chegou ao limite de ${MAX_LETRAS} caracteres: o que passa disso `
                          + "(digitado ou colado) fica de fora.");
      const caixaFrase = I.el("div", {class: "modelo-lm-frase"},
                              I.el("label", {for: idEntrada}, "Sua frase:"), entrada);
      const mudouSorteio = () => { desenharProximos(); agendarGeracao(); };
      const temperatura = I.deslizante({rotulo: "Temperatura", nome: "temperatura", min: 0.2, max: 2,
                                        passo: 0.05, valor: 1, casas: 2, aoMudar: mudouSorteio});
      const tops = d.tops, V = modelo.config.vocab_size;
      const topK = I.deslizante({rotulo: "Top-k", nome: "top_k", min: 0, max: tops.length - 1, passo: 1,
                                 valor: tops.length - 1, aoMudar: mudouSorteio,
                                 formato: (k) => tops[k] >= V ? `todos (${fmtInt(V, I)})` : fmtInt(tops[k], I)});
      const topP = I.deslizante({rotulo: "Top-p", nome: "top_p", min: 0.05, max: 1, passo: 0.05, valor: 1,
                                 casas: 2, aoMudar: mudouSorteio,
                                 formato: (p) => p >= 1 ? "1 (sem corte)" : I.fmt(p, 2)});
      const filtro = () => ({temperature: temperatura.valor,
                             topK: tops[topK.valor] >= V ? null : tops[topK.valor],
                             topP: topP.valor >= 1 ? null : topP.valor});
      const tituloTokens = I.el("p", {class: "modelo-lm-rotulo", id: I.id("tokens")});
      const fichas = I.el("div", {class: "modelo-lm-tokens", role: "group",
                                  "aria-labelledby": tituloTokens.id, "data-saida": "tokens"});
      const aviso = I.el("p", {class: "interativo-resumo"});
      const conferencia = I.el("p", {class: "interativo-resumo", "data-saida": "conferencia"});

      const tituloProx = I.el("h4", {}, "");
      const proximos = I.el("ol", {class: "modelo-lm-proximos", "data-saida": "proximos"});
      const explicaSorteio = I.el("p", {class: "interativo-resumo"},
        "O sorteio divide os logits pela temperatura, fica só com os top-k tokens mais prováveis e, "
        + "deles, só com os primeiros cuja soma chega a top-p; depois renormaliza. As probabilidades "
        + "abaixo já são as do sorteio.");
      const controles = I.el("div", {class: "modelo-lm-controles"},
                             temperatura.caixa, topK.caixa, topP.caixa);
      const colProx = I.el("div", {class: "modelo-lm-coluna"}, tituloProx, explicaSorteio, controles, proximos);

      // As continuações sorteadas e as medidas do capítulo sobre elas.
      const tituloGer = I.el("h4", {}, "Continuações sorteadas");
      const explicaGer = I.el("p", {class: "interativo-resumo"},
        `${d.gerar.n} continuações de ${d.gerar.novos} tokens da sua frase, com o sorteio acima (o mesmo `
        + "KV cache do capítulo 12). Como no capítulo: a fração das palavras geradas que existem no "
        + "texto de treino, e quantos tokens distintos cada continuação tem.");
      // As saídas da geração chegam depois (data-geracao, não data-saida): o que muda na hora,
      // a cada controle, é a lista dos próximos tokens e o número do sorteio.
      const medidas = I.el("p", {class: "interativo-resumo modelo-lm-medidas", "aria-live": "polite",
                                 "data-geracao": "medidas"});
      const continuacoes = I.el("ol", {class: "modelo-lm-continuacoes", "data-geracao": "continuacoes"});
      const sortear = I.el("button", {type: "button", "data-controle": "sortear"}, "Sortear de novo");
      const numSorteio = I.el("span", {"data-valor": "sorteio"}, "1");
      const linhaSorteio = I.el("p", {class: "interativo-resumo"}, "Sorteio nº ", numSorteio,
                                " (a mesma semente dá as mesmas continuações).");
      const noCapitulo = I.el("p", {class: "interativo-resumo"},
        `No capítulo, em ${d.capitulo.n} continuações de ${d.capitulo.novos} tokens (sem top-k nem top-p): `
        + d.capitulo.linhas.map(([rotulo, conh, dist]) => `${rotulo}, ${I.fmt(100 * conh, 0)}% de palavras `
          + `conhecidas e ${I.fmt(dist, 0)} tokens distintos`).join("; ") + ".");
      const caixaGer = I.el("div", {class: "modelo-lm-gerar", "data-estado": "parado"},
                            tituloGer, explicaGer, sortear, linhaSorteio, medidas, continuacoes,
                            noCapitulo);

      const tituloCab = I.el("h4", {}, "Atenção de cada cabeça");
      const explica = I.el("p", {class: "interativo-resumo"},
        "Uma linha por camada, uma coluna por cabeça; em cada mapa, a linha i são os pesos da consulta i "
        + "sobre as chaves 0..i (o futuro, proibido pela máscara, fica em cinza; a cor cresce com a raiz "
        + "quadrada do peso, para os pesos pequenos aparecerem). A moldura marca a consulta escolhida. "
        + "Escolha uma cabeça para ver os seus pesos.");
      const grade = I.el("div", {class: "modelo-lm-grade", style: `grid-template-columns: repeat(${H}, minmax(0, 1fr))`,
                                 role: "group", "aria-label": "Cabeças de atenção"});
      const detalhe = I.el("div", {class: "modelo-lm-detalhe", "data-saida": "detalhe"});
      const colCab = I.el("div", {class: "modelo-lm-coluna"}, tituloCab, explica, grade, detalhe);

      painel.append(caixaFrase, limite, tituloTokens, fichas, aviso, conferencia,
                    I.el("div", {class: "modelo-lm-colunas"}, colProx, colCab), caixaGer);
      painel.hidden = false;

      let r = null, ids = [], pos = 0, cabeca = [0, 0];
      const mapas = [];
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const canvas = I.el("canvas", {"aria-hidden": "true"});
          const b = I.el("button", {type: "button", class: "modelo-lm-cabeca", "aria-pressed": "false",
                                    "data-camada": l, "data-cabeca": h,
                                    "aria-label": `camada ${l}, cabeça ${h} (cabeça KV ${Math.floor(h / G)})`},
                         I.el("span", {}, `${l}.${h}`), canvas);
          b.addEventListener("click", () => { cabeca = [l, h]; desenharCabecas(); desenharDetalhe(); });
          grade.append(b);
          mapas.push({l, h, b, canvas});
        }
      }

      const calcular = () => {
        let todos = tok.encode(entrada.value);
        limite.hidden = entrada.value.length < MAX_LETRAS;
        aviso.textContent = "";
        if (todos.length > d.max_tokens) {
          aviso.textContent = `A frase tem ${todos.length} tokens; o modelo foi treinado com janelas de `
            + `${d.max_tokens}: ficam os ${d.max_tokens} primeiros.`;
          todos = todos.slice(0, d.max_tokens);
        }
        ids = todos;
        if (!ids.length) {
          r = null;
          tituloTokens.textContent = "Escreva alguma coisa: a frase está vazia.";
          fichas.replaceChildren(); proximos.replaceChildren(); detalhe.replaceChildren();
          conferencia.textContent = "";
          mapas.forEach((m) => m.canvas.getContext("2d").clearRect(0, 0, m.canvas.width, m.canvas.height));
          return;
        }
        const t0 = performance.now();
        r = modelo.forward(ids);
        const ms = performance.now() - t0;
        window.AtencaoLM.ultimo = {ids, logits: r.logits, attention: r.attention, T: r.T, V: r.V};
        pos = ids.length - 1;
        tituloTokens.textContent = `${ids.length} tokens (passo à frente em ${I.fmt(ms, 0)} ms); `
          + "escolha a posição de onde o modelo prevê:";
        fichas.replaceChildren(...ids.map((id, t) => {
          const b = I.el("button", {type: "button", "aria-pressed": "false", "data-posicao": t,
                                    title: `token ${id}`}, visivel(tok.piece(id)));
          b.addEventListener("click", () => { pos = t; desenharTudo(); });
          return b;
        }));
        const iguais = d.ref.ids.length === ids.length && d.ref.ids.every((v, t) => v === ids[t]);
        if (iguais) {
          let dif = 0;
          const V = r.V, base = (ids.length - 1) * V;
          for (let v = 0; v < V; v++) dif = Math.max(dif, Math.abs(r.logits[base + v] - d.ref.logits[v]));
          conferencia.dataset.diferenca = String(dif);
          conferencia.textContent = "Conferência: nesta frase, a do livro, os logits da última posição "
            + `calculados aqui diferem dos do PyTorch em no máximo ${exp(dif)}.`;
        } else {
          delete conferencia.dataset.diferenca;
          conferencia.textContent = "";
        }
        desenharTudo();
      };

      function desenharTudo() {
        [...fichas.children].forEach((b, t) => b.setAttribute("aria-pressed", String(t === pos)));
        desenharProximos(); desenharCabecas(); desenharDetalhe();
      }

      function desenharProximos() {
        if (!r) return;
        const V = r.V, linha = r.logits.subarray(pos * V, (pos + 1) * V);
        const f = filtro(), p = window.AtencaoLM.filterProbs(linha, f.temperature, f.topK, f.topP);
        const ordem = Array.from(p.keys()).filter((v) => p[v] > 0).sort((a, b) => p[b] - p[a] || a - b)
          .slice(0, d.top);
        tituloProx.textContent = `Próximo token depois de «${visivel(tok.piece(ids[pos]))}» (posição ${pos})`;
        proximos.replaceChildren(...ordem.map((v) => I.el("li", {"data-token": v},
          I.el("span", {class: "modelo-lm-token"}, visivel(tok.piece(v))),
          I.el("span", {class: "modelo-lm-barra", style: `width: ${(100 * p[v] / p[ordem[0]]).toFixed(1)}%`,
                        "aria-hidden": "true"}),
          I.el("span", {class: "modelo-lm-valor"}, pct(p[v], I)))));
      }

      function cores() { // as do tema (claro ou escuro), lidas a cada desenho
        const cs = getComputedStyle(raiz);
        const hex = (cs.getPropertyValue("--interativo-barra").trim() || "#3182bd").replace("#", "");
        const rgb = [0, 2, 4].map((k) => parseInt(hex.slice(k, k + 2), 16)).join(", ");
        return {proibido: cs.getPropertyValue("--interativo-proibido").trim() || "#bdbdbd",
                destaque: cs.getPropertyValue("--interativo-destaque").trim() || "#0a6",
                peso: (a) => `rgba(${rgb}, ${0.05 + 0.95 * Math.sqrt(Math.max(0, Math.min(1, a)))})`};
      }

      function desenharCabecas() {
        if (!r) return;
        const T = r.T, s = Math.max(2, Math.ceil(96 / T)), k = cores();
        for (const m of mapas) {
          const sel = m.l === cabeca[0] && m.h === cabeca[1];
          m.b.setAttribute("aria-pressed", String(sel));
          const cv = m.canvas;
          cv.width = cv.height = T * s;
          const g = cv.getContext("2d");
          g.clearRect(0, 0, cv.width, cv.height);
          const base = (m.l * H + m.h) * T * T;
          for (let i = 0; i < T; i++) {
            for (let j = 0; j < T; j++) {
              g.fillStyle = j > i ? k.proibido : k.peso(r.attention[base + i * T + j]);
              g.fillRect(j * s, i * s, s, s);
            }
          }
          g.strokeStyle = k.destaque;
          g.lineWidth = Math.max(1, s / 2);
          g.strokeRect(0, pos * s, T * s, s);
        }
      }

      function desenharDetalhe() {
        if (!r) return;
        const [l, h] = cabeca, T = r.T, base = (l * H + h) * T * T + pos * T;
        const pesos = Array.from({length: pos + 1}, (_, j) => [j, r.attention[base + j]])
          .sort((a, b) => b[1] - a[1]).slice(0, 5);
        detalhe.replaceChildren(
          I.el("p", {class: "modelo-lm-rotulo"},
               `Camada ${l}, cabeça ${h}: a consulta «${visivel(tok.piece(ids[pos]))}» (posição ${pos}) `
               + `lê, das ${pos + 1} chaves visíveis, sobretudo:`),
          I.el("ol", {class: "modelo-lm-proximos"}, ...pesos.map(([j, a]) => I.el("li", {"data-chave": j},
            I.el("span", {class: "modelo-lm-token"}, `${visivel(tok.piece(ids[j]))} (${j})`),
            I.el("span", {class: "modelo-lm-barra", style: `width: ${(100 * a).toFixed(1)}%`, "aria-hidden": "true"}),
            I.el("span", {class: "modelo-lm-valor"}, pct(a, I))))));
      }

      // Gerar aos pedaços: uma continuação por vez, devolvendo a vez ao navegador entre elas;
      // uma mudança no meio cancela a geração em curso (a rodada nova tem outro número).
      let semente = 0, rodada = 0, esperaGer = null;
      function agendarGeracao() {
        clearTimeout(esperaGer);
        rodada++;
        caixaGer.dataset.estado = "gerando";
        medidas.textContent = "Gerando…";
        esperaGer = setTimeout(gerar, 200);
      }
      async function gerar() {
        const minha = ++rodada;
        if (!ids.length) { continuacoes.replaceChildren(); medidas.textContent = ""; caixaGer.dataset.estado = "pronto"; return; }
        const comeco = ids.slice(Math.max(0, ids.length - (d.max_tokens - d.gerar.novos)));
        const f = filtro(), saidas = [];
        for (let k = 0; k < d.gerar.n; k++) {
          await new Promise((ok) => setTimeout(ok, 0));
          if (minha !== rodada) return;
          saidas.push(modelo.sample(comeco, d.gerar.novos, 1, {...f, seed: semente + k})[0]);
        }
        if (minha !== rodada) return;
        const textos = saidas.map((s) => tok.decode(s));
        const [conhecidas, nPal] = window.AtencaoLM.knownWordShare(textos.join(" "), modelo.vocabulary);
        const distintos = saidas.reduce((a, s) => a + new Set(s).size, 0) / saidas.length;
        continuacoes.replaceChildren(...saidas.map((s, k) => I.el("li", {"data-ids": s.join(",")},
          I.el("span", {class: "modelo-lm-comeco"}, "…" + tok.decode(comeco.slice(-6))),
          I.el("span", {class: "modelo-lm-novo"}, textos[k]))));
        medidas.replaceChildren(
          "Palavras conhecidas: ", I.el("strong", {"data-medida": "conhecidas"},
                                        nPal ? `${I.fmt(100 * conhecidas, 0)}%` : "—"),
          ` (de ${fmtInt(nPal, I)} palavras); tokens distintos por continuação: `,
          I.el("strong", {"data-medida": "distintos"}, I.fmt(distintos, 1)),
          ` de ${d.gerar.novos}.`);
        caixaGer.dataset.estado = "pronto";
      }
      sortear.addEventListener("click", () => {
        semente += d.gerar.n;
        numSorteio.textContent = String(semente / d.gerar.n + 1);
        agendarGeracao();
      });

      let espera = null;
      entrada.addEventListener("input", () => {
        clearTimeout(espera);
        espera = setTimeout(() => { calcular(); agendarGeracao(); }, 120);
      });
      new MutationObserver(desenharCabecas).observe(document.documentElement,
                                                    {attributes: true, attributeFilter: ["data-theme"]});
      calcular();
      agendarGeracao();
    }
  });
})();
