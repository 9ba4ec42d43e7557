/* Página de busca do curso (o searchtools.js do Sphinx 7).
 *
 * 1. O resumo de cada resultado vem do texto da página inteira, e no tema do
 *    livro isso inclui os botões do cabeçalho (".ipynb .md .pdf"), o sumário
 *    só de impressão e os links anterior/próxima: tiramos esses pedaços, e
 *    separamos com um espaço os blocos que o textContent colaria.
 * 2. Títulos e resumos chegam com o LaTeX cru (\(QK^\top\)), porque o MathJax
 *    já rodou quando eles são inseridos: mandamos o MathJax renderizá-los, e um
 *    resumo cortado no meio de uma fórmula perde a fórmula pela metade.
 */
(() => {
  "use strict";

  const NOISE = [
    ".bd-header-article", "#jb-print-docs-body", ".onlyprint", ".prev-next-area",
    ".bd-footer-article", ".headerlink", "script", "style",
  ].join(", ");

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

  document.addEventListener("DOMContentLoaded", () => {
    if (typeof Search === "undefined") return;  // searchtools.js ausente

    const htmlToText = Search.htmlToText;
    Search.htmlToText = (htmlString, anchor) => {
      const doc = new DOMParser().parseFromString(htmlString, "text/html");
      doc.querySelectorAll(NOISE).forEach((el) => el.remove());
      // textContent cola blocos vizinhos ("decodificaçãodecodingA geração"): um espaço entre eles.
      doc.querySelectorAll("p, li, dt, dd, td, th, h1, h2, h3, h4, h5, h6, figcaption, caption")
        .forEach((el) => el.append(" "));
      return htmlToText(doc.documentElement.outerHTML, anchor);
    };

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
