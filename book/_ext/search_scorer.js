/* Pontuação da busca do curso (html_search_scorer, book/_ext/curso.py).
 *
 * Os valores são os padrões do searchtools.js do Sphinx 7; o que muda é
 * `score`: um resultado que é a própria página (sem âncora) e cujo título
 * contém todas as palavras buscadas, sem contar acentos nem maiúsculas, sobe
 * para o topo: "máscara" (ou "mascara") traz primeiro "A máscara causal".
 */
var Scorer = {
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: {0: 15, 1: 5, 2: -5},
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
  // Bônus de um título de página que contém a busca inteira.
  pageTitle: 100,

  fold: (text) => text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase(),

  queryWords: () => {
    const query = new URLSearchParams(window.location.search).get("q") || "";
    return Scorer.fold(query).split(/[^\p{L}\p{N}_]+/u).filter((w) => w.length > 1);
  },

  score: (result) => {
    const [, title, anchor, , score] = result;
    const words = Scorer.queryWords();
    if (anchor || !title || words.length === 0) return score;
    const titleWords = Scorer.fold(title).split(/[^\p{L}\p{N}_]+/u);
    // Cada palavra buscada é o começo de uma palavra do título ("mascar" acha "máscara").
    const all = words.every((w) => titleWords.some((t) => t.startsWith(w)));
    return all ? score + Scorer.pageTitle : score;
  },
};
