/* Página de busca do curso (o searchtools.js do Sphinx 7).
 *
 * 1. O resumo de cada resultado vem do texto da página inteira, e no tema do
 *    livro isso inclui os botões do cabeçalho (".ipynb .md .pdf"), o sumário
 *    só de impressão e os links anterior/próxima: tiramos esses pedaços, e
 *    separamos com um espaço os blocos que o textContent colaria.
 * 2. Títulos e resumos chegam com o LaTeX cru (\(QK^\top\)), porque o MathJax
 *    já rodou quando eles são inseridos: mandamos o MathJax renderizá-los, e um
 *    resumo cortado no meio de uma fórmula perde a fórmula pela metade.
 * 3. Figuras legíveis em qualquer largura: cada figura das células ganha uma
 *    largura mínima em que o texto de tamanho normal das figuras do curso
 *    (atencao/plots.py: font.size 10 pt a 110 dpi, 15,3 px na imagem) aparece
 *    com pelo menos 9 px CSS; mais larga que a coluna, a caixa rola para o
 *    lado (book/_static/curso.css). Tocar na figura abre a imagem inteira.
 * 4. O botão de tema alterna só entre claro e escuro (o do tema passa por
 *    "igual ao sistema", que parece claro: eram dois cliques até o escuro).
 * 5. O destaque do sumário "Nesta página" segue o leitor. O do tema só muda
 *    quando um título cruza uma faixa no alto da tela (IntersectionObserver):
 *    um salto maior que a faixa (barra de rolagem, PageDown, Home/End) pula o
 *    título e o destaque fica na seção antiga. Aqui, a cada rolagem, a seção
 *    ativa é a do último título acima da mesma linha (30 % da altura útil).
 * 6. Fórmula em destaque mais larga que a sua caixa (no celular): a caixa rola
 *    (book/_static/curso.css) e ganha a classe `formula-rola`, com uma sombra
 *    na borda direita que avisa que a fórmula continua.
 * 7. Resumos de prosa: o código das células (e os botões "Mostrar o código",
 *    "Esconder o código" das células recolhidas) sai do texto de que a busca
 *    tira o resumo.
 * 8. Busca igual com ou sem acentos: os termos já são sem acento no índice
 *    (book/_ext/curso.py, _search_language), mas o Sphinx compara títulos e
 *    entradas de índice com a busca crua ("mascara" não achava os títulos com
 *    "máscara"): a comparação usa os dois sem acento, e o título mostrado é o
 *    original. O resumo começa na palavra buscada também sem acento.
 */
(() => {
  "use strict";

  const NOISE = [
    ".bd-header-article", "#jb-print-docs-body", ".onlyprint", ".prev-next-area",
    ".bd-footer-article", ".headerlink", "script", "style",
    // código e botões das células: o resumo de um resultado é prosa
    "div.cell_input", "details.hide", "summary", "button", "pre", "div.highlight",
    "div.interativo",
  ].join(", ");

  // Sem acentos, com o mesmo comprimento (cada letra acentuada vira uma letra): as posições
  // no texto dobrado valem no original.
  const foldSameLength = (text) => text.replace(/[^\u0000-\u007f]/g, (c) => {
    const d = c.normalize("NFD").replace(/[\u0300-\u036f]/g, "");
    return d.length === 1 ? d : c;
  });

  const accentBlindSearch = () => {
    const perform = Search._performSearch;
    Search._performSearch = (query, ...rest) => {
      const index = Search._index;
      const realTitles = index.alltitles, realEntries = index.indexentries;
      const original = {};
      const foldKeys = (obj, keep) => {
        const out = {};
        for (const [key, places] of Object.entries(obj || {})) {
          const f = foldSameLength(key);
          (out[f] = out[f] || []).push(...places);
          if (keep) original[f] = key;
        }
        return out;
      };
      index.alltitles = foldKeys(realTitles, true);
      index.indexentries = foldKeys(realEntries, false);
      let results;
      try {
        results = perform(foldSameLength(query), ...rest);
      } finally {
        index.alltitles = realTitles;
        index.indexentries = realEntries;
      }
      for (const r of results) {
        if (typeof r[1] !== "string") continue;
        const cut = r[1].indexOf(" > ");
        if (cut === -1) {
          if (original[r[1]]) r[1] = original[r[1]];
          continue;
        }
        const page = r[1].slice(0, cut), section = r[1].slice(cut + 3);
        if (foldSameLength(page) === section) r[1] = page;
        else if (original[section]) r[1] = `${page} > ${original[section]}`;
      }
      return results;
    };

    Search.makeSearchSummary = (htmlText, keywords, anchor) => {
      const text = Search.htmlToText(htmlText, anchor);
      if (text === "") return null;
      const base = foldSameLength(text.toLowerCase());
      const found = [...keywords].map((k) => base.indexOf(foldSameLength(k.toLowerCase())))
        .filter((i) => i > -1);
      const start = Math.max((found.length ? found[found.length - 1] : 0) - 120, 0);
      const summary = document.createElement("p");
      summary.classList.add("context");
      summary.textContent = (start === 0 ? "" : "...") + text.substr(start, 240).trim()
        + (start + 240 < text.length ? "..." : "");
      return summary;
    };
  };

  const PAIRS = [["\\(", "\\)"], ["\\[", "\\]"]];

  // Tira uma fórmula cortada no começo ou no fim de um resumo.
  const dropCutMath = (text) => {
    for (const [open, close] of PAIRS) {
      const firstClose = text.indexOf(close);
      const firstOpen = text.indexOf(open);
      if (firstClose !== -1 && (firstOpen === -1 || firstClose < firstOpen)) {
        text = "..." + text.slice(firstClose + close.length);
      }
      const lastOpen = text.lastIndexOf(open);
      if (lastOpen !== -1 && lastOpen > text.lastIndexOf(close)) {
        text = text.slice(0, lastOpen) + "...";
      }
    }
    return text;
  };

  const typeset = (node) => {
    const mj = window.MathJax;
    if (!mj || !mj.startup || !mj.startup.promise) return;
    mj.startup.promise.then(() => mj.typesetPromise([node])).catch((err) => {
      console.warn("MathJax não renderizou um resultado da busca:", err);
    });
  };

  // Texto normal das figuras na imagem (px) e o menor tamanho aceito na tela (px CSS).
  const FIGURE_TEXT_PX = 10 * 110 / 72;
  const MIN_TEXT_PX = 9;

  const readableFigures = () => {
    for (const img of document.querySelectorAll("div.cell_output > img, div.cell_output div.output > img")) {
      const link = document.createElement("a");
      link.href = img.currentSrc || img.src;
      link.className = "figura-ampliar";
      link.title = "Abrir a figura em tamanho real";
      img.replaceWith(link);
      link.append(img);
      const setWidth = () => {
        if (img.naturalWidth) {
          link.style.minWidth = Math.ceil(img.naturalWidth * MIN_TEXT_PX / FIGURE_TEXT_PX) + "px";
          link.style.maxWidth = img.naturalWidth + "px";
        }
      };
      if (img.complete) setWidth(); else img.addEventListener("load", setWidth);
    }
  };

  // O tema percorre [auto, escuro, claro] (ou [auto, claro, escuro]) a partir do modo
  // guardado; guardamos antes o modo que precede o oposto do atual, e o clique do
  // próprio tema (que vem depois, na fase de bolha) chega nele.
  const twoStateThemeButton = () => {
    for (const button of document.querySelectorAll(".theme-switch-button")) {
      button.addEventListener("click", () => {
        const dark = window.matchMedia("(prefers-color-scheme: dark)").matches;
        const cycle = dark ? ["auto", "light", "dark"] : ["auto", "dark", "light"];
        const want = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
        localStorage.setItem("mode", cycle[(cycle.indexOf(want) + cycle.length - 1) % cycle.length]);
      }, {capture: true});
    }
  };

  const tocFollowsReader = () => {
    const nav = document.getElementById("pst-page-toc-nav");
    if (!nav) return;
    const links = [...nav.querySelectorAll("a")].filter((a) => a.hash.length > 1);
    const targets = links.map((a) => {
      const section = document.getElementById(decodeURIComponent(a.hash.slice(1)));
      return section && (section.querySelector("h1, h2, h3, h4, h5, h6") || section);
    });
    const header = document.getElementById("pst-header");
    const update = () => {
      const top = header ? header.getBoundingClientRect().height : 0;
      const line = top + (window.innerHeight - top) * 0.3;
      let current = null;
      targets.forEach((el, k) => {
        if (el && el.getBoundingClientRect().top <= line) current = links[k];
      });
      if (!current) current = links[0];
      if (current.classList.contains("active") && current.getAttribute("aria-current")) return;
      for (const a of links) {
        a.classList.toggle("active", a === current);
        if (a === current) a.setAttribute("aria-current", "true"); else a.removeAttribute("aria-current");
      }
      for (const li of nav.querySelectorAll(".toc-entry")) li.classList.toggle("active", li.contains(current));
    };
    let pending = false;
    window.addEventListener("scroll", () => {
      if (pending) return;
      pending = true;
      // Depois do IntersectionObserver do tema (que roda antes da pintura): a palavra final é esta.
      requestAnimationFrame(() => setTimeout(() => { pending = false; update(); }, 0));
    }, {passive: true});
  };

  const markScrollingFormulas = () => {
    const mark = () => {
      for (const el of document.querySelectorAll('mjx-container[display="true"]')) {
        el.classList.toggle("formula-rola", el.scrollWidth > el.clientWidth + 1);
      }
    };
    const mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(mark);
    window.addEventListener("resize", mark);
  };

  document.addEventListener("DOMContentLoaded", () => {
    markScrollingFormulas();
    readableFigures();
    twoStateThemeButton();
    tocFollowsReader();
    if (typeof Search === "undefined") return;  // searchtools.js ausente

    const htmlToText = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(NOISE).forEach((el) => el.remove());
      // textContent cola blocos vizinhos ("decodificaçãodecodingA geração"): um espaço entre eles.
      doc.querySelectorAll("p, li, dt, dd, td, th, h1, h2, h3, h4, h5, h6, figcaption, caption")
        .forEach((el) => el.append(" "));
      return htmlToText(doc.documentElement.outerHTML, anchor).replace(/\s+/g, " ");
    };
    accentBlindSearch();

    const results = document.getElementById("search-results");
    if (!results) return;
    new MutationObserver((records) => {
      for (const record of records) {
        for (const node of record.addedNodes) {
          if (node.nodeType !== Node.ELEMENT_NODE) continue;
          if (node.matches("p.context")) {
            node.textContent = dropCutMath(node.textContent);
            typeset(node);
          } else if (node.matches("li")) {
            typeset(node);
          }
        }
      }
    }).observe(results, {childList: true, subtree: true});
  });
})();
