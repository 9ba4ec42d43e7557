"""Extensão Sphinx do curso.

1. Serve o MathJax 3 de uma cópia local, para o livro abrir sem internet. A
   cópia vem do pacote PyPI `django-static-mathjax` (MathJax 3.2.2, fixado em
   requirements.txt); copiamos só o que a saída CHTML usa para _static/mathjax/.
2. A diretiva ``exercicio`` liga um capítulo ao seu caderno de exercícios:
   copia exercises/<slug>/<slug>.ipynb para o site (exercicios/<slug>.ipynb) e
   monta o link do Colab a partir do endereço do repositório em _config.yml
   (uma só configuração para todos os links). Um slug sem caderno é erro.
   O menu do foguete (Colab, JupyterHub via nbgitpuller, Binder) sai do mesmo
   `Launch`; um endereço de exemplo no _config.yml faz a construção falhar.

       ```{exercicio} 01-pontuacoes
       ```

3. Tira do site o que o leitor não deve encontrar (visto no Chromium, testado
   em tests/site/test_browser.py):
   - o sphinx-thebe, que o Jupyter Book 1 carrega sempre, injeta em toda página
     um script que declara ``const THEBE_JS_URL`` duas vezes (erro no console)
     e aponta para unpkg.com; com ``launch_buttons.thebe: false`` ele não serve
     para nada, então desligamos os seus eventos e o seu CSS;
   - LaTeX cru no título da aba (``<title>``): a matemática dos títulos vira
     texto Unicode (``$QK^\\top$`` -> ``QKᵀ``);
   - caminhos absolutos da máquina que construiu o livro nos tracebacks das
     células ``raises-exception`` (``File /home/.../atencao/core.py`` vira
     ``File atencao/core.py``);
   - LaTeX cru e texto dos botões do tema nos resultados da busca (o MathJax
     em toda página e book/_static/curso.js).
4. Traduz o que os temas deixam em inglês: o pydata-sphinx-theme não tem
   catálogo em português e o do sphinx-book-theme (pt) não cobre tudo. As
   traduções abaixo entram como *fallback* dos catálogos que os modelos já
   usam (`_()` do Sphinx e `translation()` do tema do livro): uma frase que o
   tema já traduz continua com a tradução dele. Textos fixos em inglês nos
   modelos do tema são trocados por book/_templates/.
5. Caminhos de arquivos do repositório no texto (`bench/results.md`) viram
   links para o arquivo no repositório (repository.url).
6. Busca: sem acentos (``mascara`` acha ``máscara``) e com o capítulo cujo
   título casa com a busca em primeiro (book/_ext/search_scorer.js).
7. O estilo `ptbr_alpha` das referências (sphinxcontrib-bibtex/pybtex): o
   `alpha` do pybtex com "e" entre os autores e "Em" antes do livro ou dos
   anais, no lugar de "and" e "In"; os campos `eprint` e `doi` do .bib viram
   links para o arXiv e o DOI. As citações no texto usam `ptbr_author_year`
   ("Zhang e Sennrich").
"""

from __future__ import annotations

import gettext
import hashlib
import html
import json
import re
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective


def _mathjax_es5() -> Path:
    """A cópia do MathJax que o pacote django-static-mathjax traz (importada só na
    construção: o gerador dos cadernos do Binder usa este módulo sem ela)."""
    import mathjax

    return Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"

PARTS = ["tex-chtml.js", "input", "output/chtml", "ui", "a11y", "adaptors", "sre"]
SITE_DIR = "exercicios"


def _repo_root(app) -> Path:
    return Path(app.confdir)


def _exercise(app, slug: str) -> Path:
    return _repo_root(app) / "exercises" / slug / f"{slug}.ipynb"


@dataclass(frozen=True)
class Launch:
    """Endereços de abertura dos cadernos, todos do único ``repository.url`` do _config.yml.

    ``hub`` vazio quer dizer que nenhum JupyterHub foi configurado: não há botão.
    """

    repo_url: str          # https://github.com/<org>/<repo>
    branch: str
    binder: str = ""       # https://mybinder.org
    hub: str = ""          # https://hub.universidade.br
    interface: str = "lab/tree"

    @property
    def org_repo(self) -> str:
        return self.repo_url.removeprefix("https://github.com/")

    def colab(self, path: str) -> str:
        return f"https://colab.research.google.com/github/{self.org_repo}/blob/{self.branch}/{path}"

    def jupyterhub(self, path: str) -> str | None:
        """Link do nbgitpuller: clona (ou atualiza) o repositório no hub e abre `path`."""
        if not self.hub:
            return None
        repo = self.org_repo.split("/")[-1]
        query = urlencode({"repo": self.repo_url, "branch": self.branch,
                           "urlpath": f"{self.interface}/{repo}/{path}"}, safe="/")
        return f"{self.hub}/hub/user-redirect/git-pull?{query}"

    def binder_url(self, path: str) -> str | None:
        """O repositório no Binder, com o ambiente de binder/, abrindo `path` (relativo à raiz)."""
        if not self.binder:
            return None
        return f"{self.binder}/v2/gh/{self.org_repo}/{self.branch}?urlpath={self.interface}/{path}"


# Onde o binder/postBuild grava o caderno de cada página (book/_ext/binder_pages.py),
# relativo à raiz do repositório: o botão do Binder abre este caderno.
BINDER_NOTEBOOKS = "notebooks"


def binder_notebook(docname: str) -> str:
    """O caderno do Binder de uma página: book/parte1/04-softmax -> notebooks/parte1/04-softmax.ipynb."""
    return f"{BINDER_NOTEBOOKS}/{docname.removeprefix('book/')}.ipynb"


# Endereços de exemplo que não podem ir para um site publicado.
PLACEHOLDER = re.compile(r"[<>]|//([\w-]+\.)*(exemplo|example|seu-|sua-|your-)[\w.-]*|//(localhost|127\.)", re.I)


def launch_config(config) -> Launch:
    """O `Launch` do livro, a partir das opções do tema que o JB1 monta do _config.yml."""
    opts = config.html_theme_options or {}
    buttons = opts.get("launch_buttons", {}) or {}
    repo = (opts.get("repository_url") or "").rstrip("/")
    if repo and not re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", repo):
        raise ExtensionError(f"repository.url do _config.yml deve ser https://github.com/<org>/<repo>; veio {repo!r}")
    interface = {"classic": "tree", "jupyterlab": "lab/tree"}.get(buttons.get("notebook_interface", "jupyterlab"))
    if interface is None:
        raise ExtensionError("launch_buttons.notebook_interface deve ser 'jupyterlab' ou 'classic'; "
                             f"veio {buttons.get('notebook_interface')!r}")
    return Launch(repo_url=repo, branch=opts.get("repository_branch") or "main",
                  binder=(buttons.get("binderhub_url") or "").rstrip("/"),
                  hub=(buttons.get("jupyterhub_url") or "").rstrip("/"), interface=interface)


def _check_placeholders(app, config):
    """A construção falha com um endereço de exemplo no repositório ou nos botões."""
    opts = config.html_theme_options or {}
    buttons = opts.get("launch_buttons", {}) or {}
    found = {name: url for name, url in [("repository.url", opts.get("repository_url") or ""),
                                         *((f"launch_buttons.{k}", v) for k, v in buttons.items()
                                           if k.endswith("_url") and isinstance(v, str))]
             if PLACEHOLDER.search(url)}
    if found:
        raise ExtensionError("endereços de exemplo no _config.yml (troque pelo endereço real ou apague a linha): "
                             + ", ".join(f"{k} = {v}" for k, v in found.items()))
    launch_config(config)   # valida o formato


class Exercicio(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        slug = self.arguments[0].strip()
        src = _exercise(self.env.app, slug)
        if not src.exists():
            raise self.error(f"caderno de exercícios não encontrado: {src} (rode `make release`)")
        self.env.note_dependency(str(src))
        self.env.app.env.curso_exercicios = getattr(self.env.app.env, "curso_exercicios", set()) | {slug}
        depth = self.env.docname.count("/")
        href = "../" * depth + f"{SITE_DIR}/{slug}.ipynb"
        colab = launch_config(self.config).colab(exercise_path(slug))

        box = nodes.admonition(classes=["tip", "exercicio"])
        box += nodes.title(text=f"Exercícios: {slug}.ipynb")
        para = nodes.paragraph()
        para += nodes.Text("Baixe o caderno ")
        para += nodes.reference("", f"{slug}.ipynb", refuri=href, classes=["exercicio-download"])
        para += nodes.Text(" e abra no JupyterLab, ou ")
        para += nodes.reference("", "abra no Google Colab", refuri=colab, classes=["exercicio-colab"])
        para += nodes.Text(". As células de teste mostram o que se espera; a correção também usa testes ocultos.")
        box += para
        return [box]


def exercise_path(slug: str) -> str:
    """Caminho do caderno de exercícios no repositório."""
    return f"exercises/{slug}/{slug}.ipynb"


def _launch_buttons(app, pagename, templatename, context, doctree):
    """Refaz o menu do foguete (o do sphinx-book-theme abre a página .md do capítulo).

    Colab e JupyterHub (nbgitpuller) abrem o caderno de EXERCÍCIOS do capítulo;
    o Binder abre, no ambiente de binder/, o caderno da página que o
    binder/postBuild gera do repositório (`binder_notebook`; o mesmo caderno
    limpo do botão de download: números colados escritos, caixas e referências
    em Markdown comum). Sem JupyterHub configurado, não há botão de JupyterHub.
    """
    group = next((b for b in context.get("header_buttons", [])
                  if b.get("type") == "group" and b.get("label") == "launch-buttons"), None)
    if group is None:
        return
    launch = launch_config(app.config)
    slug = Path(pagename).name
    icons = {b["text"]: b.get("icon") for b in group["buttons"]}
    buttons = []

    def add(text, url, tooltip, icon):
        if url:
            buttons.append({"type": "link", "text": text, "tooltip": tooltip, "url": url,
                            "icon": icons.get(text) or icon})

    if _exercise(app, slug).exists():
        add("Colab", launch.colab(exercise_path(slug)), "Abrir os exercícios no Colab",
            "_static/images/logo_colab.png")
        add("JupyterHub", launch.jupyterhub(exercise_path(slug)), "Abrir os exercícios no JupyterHub",
            "_static/images/logo_jupyterhub.svg")
    add("Binder", launch.binder_url(binder_notebook(pagename)), "Abrir este capítulo no Binder",
        "_static/images/logo_binder.svg")
    if buttons:
        group["buttons"] = buttons
    else:
        context["header_buttons"].remove(group)


# msgid do tema -> português (pt-BR)
THEME_PT = {
    "Color mode": "Modo de cor",
    "Light": "Claro",
    "Dark": "Escuro",
    "System Settings": "Igual ao sistema",
    "previous page": "página anterior",
    "next page": "próxima página",
    "previous": "anterior",
    "next": "próxima",
    "Version warning": "Aviso de versão",
    "Launch on": "Abrir no",
    "Launch interactive content": "Abrir em ambiente interativo",
    "Search this book...": "Buscar neste livro...",
    "Search": "Buscar",
    "Skip to main content": "Pular para o conteúdo",
    "Back to top": "Voltar ao topo",
    "Click to show": "Clique para mostrar",
    "Click to hide": "Clique para esconder",
}


class _Fallback(gettext.NullTranslations):
    """Um catálogo gettext em memória, usado só quando o do tema não tem a frase."""

    def __init__(self, table: dict[str, str]):
        super().__init__()
        self.table = table

    def gettext(self, message):
        return self.table[message] if message in self.table else super().gettext(message)


# Rótulos de acessibilidade fixos em inglês no HTML (sem gettext): modelos do
# sphinx-book-theme (sbt-sidebar-nav.html, layout.html) e o myst-nb.
FIXED_PT = {
    'aria-label="Main"': 'aria-label="Sumário do livro"',
    'aria-label="Page"': 'aria-label="Nesta página"',
    'aria-label="Toggle hidden content"': 'aria-label="Mostrar ou esconder o conteúdo"',
}


# Papéis ARIA que o axe-core acusa (WCAG 2 A): o Sphinx 7 marca cada referência
# da bibliografia com o papel `doc-biblioentry`, obsoleto no DPUB-ARIA 1.1, dentro
# de um `role="list"`, que só pode ter `listitem` como filhos.
ARIA_FIXES = {
    'class="citation" id=': 'class="citation" role="listitem" id=',
    ' role="doc-biblioentry"': '',
}


def _translate_fixed(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    table = dict(ARIA_FIXES)
    if (app.config.language or "").startswith("pt"):
        table.update(FIXED_PT)
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        new = text
        for old, pt in table.items():
            new = new.replace(old, pt)
        if new != text:
            page.write_text(new, encoding="utf-8")


def _translate_theme(app):
    if not (app.config.language or "").startswith("pt"):
        return
    from sphinx import locale
    for catalog in ("sphinx", "booktheme"):
        translator = locale.translators.get(("general", catalog))
        if translator is not None:
            translator.add_fallback(_Fallback(THEME_PT))


def _register_bib_style() -> None:
    from pybtex.plugin import find_plugin, register_plugin
    from pybtex.richtext import BaseMultipartText, String
    from pybtex.style.template import names, sentence

    alpha = find_plugin("pybtex.style.formatting", "alpha")
    # Só partes idênticas a estas (o "In " do pybtex fica sozinho entre um
    # \newblock e o título em itálico): títulos de artigos não são tocados.
    words = {"In ": "Em "}

    def translate(text):
        if isinstance(text, BaseMultipartText):
            text.parts = [String(words[p.value]) if isinstance(p, String) and p.value in words
                          else translate(p) for p in text.parts]
        return text

    class PtBrAlpha(alpha):
        def format_names(self, role, as_sentence=True):
            formatted = names(role, sep=", ", sep2=" e ", last_sep=" e ")
            return sentence[formatted] if as_sentence else formatted

        def format_entry(self, label, entry, *args, **kwargs):
            formatted = super().format_entry(label, entry, *args, **kwargs)
            translate(formatted.text)
            return formatted

    register_plugin("pybtex.style.formatting", "ptbr_alpha", PtBrAlpha)
    _register_cite_style()


def _register_cite_style() -> None:
    """Citações no texto com "e": "Zhang e Sennrich (2019)", "Dao et al. (2022)".

    O ``author_year`` do sphinxcontrib-bibtex com a ``PersonStyle`` em português;
    o resto (parênteses, "et al." a partir de três autores) fica como está.
    """
    from dataclasses import dataclass, field

    from sphinxcontrib.bibtex.plugin import register_plugin
    from sphinxcontrib.bibtex.style.referencing import PersonStyle
    from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

    @dataclass
    class PtBrAuthorYear(AuthorYearReferenceStyle):
        person: PersonStyle = field(default_factory=lambda: PersonStyle(sep2=" e ", last_sep=" e "))

    register_plugin("sphinxcontrib.bibtex.style.referencing", "ptbr_author_year", PtBrAuthorYear)


def _set_path(app, config):
    config.mathjax_path = "mathjax/tex-chtml.js"  # relativo a _static/


def _copy(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    dest = Path(app.outdir) / "_static" / "mathjax"
    es5 = _mathjax_es5()
    for part in PARTS:
        src, dst = es5 / part, dest / part
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    # Copia todos os cadernos de exercícios (não só os citados nesta construção
    # incremental): o site sempre oferece a versão atual de exercises/.
    out = Path(app.outdir) / SITE_DIR
    out.mkdir(exist_ok=True)
    for nb in sorted((_repo_root(app) / "exercises").glob("*/*.ipynb")):
        shutil.copy2(nb, out / nb.name)


# --------------------------------------------------------------------------
# sphinx-thebe desligado de verdade
# --------------------------------------------------------------------------

def _drop_thebe(app, config):
    """Remove os eventos e o CSS do sphinx-thebe quando o thebe está desligado.

    `launch_buttons.thebe: false` só esconde o botão: o sphinx_thebe, que o JB1
    põe sempre na lista de extensões, continua injetando scripts em toda página.
    Tirá-lo da lista exigiria repetir em _config.yml a lista inteira de
    extensões do JB1 (e `extra_extensions` de outra pessoa a substituiria).
    """
    launch = (config.html_theme_options or {}).get("launch_buttons", {}) or {}
    if launch.get("thebe") or "sphinx_thebe" not in app.extensions:
        return
    import sphinx_thebe

    handlers = {sphinx_thebe.st_static_path, sphinx_thebe.init_thebe_core,
                sphinx_thebe.update_thebe_context}
    for listeners in app.events.listeners.values():
        for listener in list(listeners):
            if listener.handler in handlers:
                app.disconnect(listener.id)
    app.registry.css_files = [
        (name, attrs) for name, attrs in app.registry.css_files if name != "sphinx-thebe.css"
    ]


# --------------------------------------------------------------------------
# Matemática do título da página em texto simples (a aba não roda MathJax)
# --------------------------------------------------------------------------

_TEX_SYMBOLS = {
    "top": "ᵀ", "cdot": "·", "times": "×", "infty": "∞", "le": "≤", "leq": "≤",
    "ge": "≥", "geq": "≥", "neq": "≠", "approx": "≈", "to": "→", "in": "∈",
    "ldots": "…", "dots": "…", "sum": "∑", "log": "log", "exp": "exp",
    "max": "max", "alpha": "α", "beta": "β", "ell": "ℓ", "sigma": "σ",
    "theta": "θ", "mu": "μ", "pi": "π",
}
_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def tex_to_text(tex: str) -> str:
    """Uma expressão TeX curta (de título) em texto Unicode legível.

    Um comando fora da tabela fica com a barra invertida, e o teste do
    navegador acusa LaTeX cru no título: acrescente-o a ``_TEX_SYMBOLS``.
    """
    s = re.sub(r"\^\{?\\top\}?", "ᵀ", tex)
    s = re.sub(r"\^\{?(\d+)\}?", lambda m: m[1].translate(_SUPERSCRIPT), s)
    s = re.sub(r"\\(?:text|mathrm|mathbf|mathit|operatorname)\{([^{}]*)\}", r"\1", s)
    s = re.sub(r"\\sqrt\{([^{}]*)\}",
               lambda m: "√" + (m[1] if re.fullmatch(r"\w+(_\{?\w+\}?)?", m[1]) else f"({m[1]})"), s)
    s = re.sub(r"\\([A-Za-z]+)", lambda m: _TEX_SYMBOLS.get(m[1], m[0]), s)
    s = re.sub(r"\\[,;:! ]", " ", s)
    return s.replace("{", "").replace("}", "")


_INLINE_MATH = re.compile(r"\\\((.+?)\\\)", re.S)


def _plain_text(node) -> str:
    """O texto de um título com a matemática em Unicode (em vez do TeX de astext())."""
    parts = [tex_to_text(n.astext()) if isinstance(n, nodes.math) else n.astext()
             for n in node.findall(lambda n: isinstance(n, (nodes.math, nodes.Text))
                                   and not isinstance(n.parent, nodes.math))]
    return "".join(parts)


def _plain_titles(app, pagename, templatename, context, doctree):
    if "title" in context and context["title"]:
        context["title"] = _INLINE_MATH.sub(
            lambda m: html.escape(tex_to_text(html.unescape(m[1]))), context["title"])
    node = app.env.titles.get(pagename)
    if node is not None and "pagetitle" in context:
        context["pagetitle"] = _plain_text(node)


def _plain_search_titles(app, exc):
    """Títulos de seção com matemática, no índice da busca, em texto Unicode.

    A busca mostra "Capítulo > Seção" com a seção vinda de ``title.astext()``,
    que para ``$QK^\\top$`` é o TeX sem delimitadores (``QK^\\top``): nem o
    MathJax o reconhece. Reescrevemos essas chaves de ``alltitles``.
    """
    if exc is not None or app.builder.format != "html":
        return
    index = Path(app.outdir) / "searchindex.js"
    prefix, suffix = "Search.setIndex(", ")"
    text = index.read_text(encoding="utf-8") if index.exists() else ""
    if not (text.startswith(prefix) and text.endswith(suffix)):
        return
    plain = {}
    for docname in sorted(app.env.found_docs):
        try:
            doctree = app.env.get_doctree(docname)
        except (FileNotFoundError, OSError):
            continue
        for title in doctree.findall(nodes.title):
            if next(iter(title.findall(nodes.math)), None) is not None:
                plain[title.astext()] = _plain_text(title)
    data = json.loads(text[len(prefix):-len(suffix)])
    titles: dict[str, list] = {}
    for key, places in data.get("alltitles", {}).items():
        titles.setdefault(plain.get(key, key), []).extend(places)
    data["alltitles"] = titles
    index.write_text(prefix + json.dumps(data, ensure_ascii=False, separators=(",", ":")) + suffix,
                     encoding="utf-8")


# --------------------------------------------------------------------------
# Tracebacks sem os caminhos da máquina que construiu o livro
# --------------------------------------------------------------------------

def strip_machine_paths(text: str, root: Path) -> str:
    """Tira de `text` os caminhos desta máquina: os do repositório ficam
    relativos (``atencao/core.py``) e os de pacotes instalados começam em
    ``site-packages/``. Usada nos tracebacks das páginas e nos .ipynb baixados
    (book/_ext/baixar.py)."""
    for prefix in {str(root.resolve()) + "/", str(root) + "/"}:
        text = text.replace(prefix, "")
    return re.sub(r"[^\s\"']*/site-packages/", "site-packages/", text)


def _relative_tracebacks(app, doctree):
    for block in doctree.findall(nodes.literal_block):
        if "traceback" not in block.get("classes", []):
            continue
        text = block.astext()
        new = strip_machine_paths(text, _repo_root(app))
        if new != text:
            block.children = [nodes.Text(new)]
            block.rawsource = new


# --------------------------------------------------------------------------
# Busca que perdoa acentos e põe primeiro o capítulo cujo título casa
# --------------------------------------------------------------------------

def fold_accents(text: str) -> str:
    """Texto sem acentos nem cedilha: "máscara" -> "mascara", "atenção" -> "atencao"."""
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _search_language():
    """O português do Sphinx com as palavras sem acento antes do radical.

    O índice (Python) e a consulta (JavaScript, em language_data.js) tiram os
    acentos da palavra antes do radicalizador snowball: "mascara" e "máscara"
    viram o mesmo termo, no índice e na busca.
    """
    from sphinx.search import pt

    minified = Path(pt.__file__).parent / "minified-js"
    js = "\n".join((minified / name).read_text(encoding="utf-8")
                   for name in ("base-stemmer.js", "portuguese-stemmer.js"))
    js += """
var Stemmer = function() {
  const stemmer = new PortugueseStemmer();
  const fold = (w) => w.normalize("NFD").replace(/[\\u0300-\\u036f]/g, "");
  this.stemWord = (word) => stemmer.stemWord(fold(word.toLowerCase()));
};
"""

    class SearchPortugueseFolded(pt.SearchPortuguese):
        js_stemmer_rawcode = ""   # o JS vai inteiro em js_stemmer_code
        js_stemmer_code = js

        def stem(self, word: str) -> str:
            return self.stemmer.stemWord(fold_accents(word.lower()))

    return SearchPortugueseFolded


SEARCH_SCORER = Path(__file__).with_name("search_scorer.js")


def _set_search(app, config):
    config.html_search_scorer = str(SEARCH_SCORER)


# --------------------------------------------------------------------------
# Arquivos do repositório citados no texto viram links
# --------------------------------------------------------------------------

REPO_PATH = re.compile(r"[\w.-]+(/[\w.-]+)*/?")


def _link_repository(app, doctree):
    """`bench/results.md` no texto vira link para o arquivo no repositório (repository.url).

    Só código em linha que é o caminho de um arquivo ou pasta que existe no
    repositório e tem uma barra (``bench/``, ``atencao/core.py``). O endereço de
    clone da página inicial é escrito por extenso e conferido por tests/env/test_aluno.py.
    """
    launch = launch_config(app.config)
    if not launch.repo_url:
        return
    root = _repo_root(app).resolve()
    for literal in list(doctree.findall(nodes.literal)):
        text = literal.astext()
        if "/" not in text or not REPO_PATH.fullmatch(text) or isinstance(literal.parent, nodes.reference):
            continue
        target = (root / text).resolve()
        if not target.is_relative_to(root) or not target.exists():
            continue
        kind = "tree" if target.is_dir() else "blob"
        url = f"{launch.repo_url}/{kind}/{launch.branch}/{target.relative_to(root).as_posix()}"
        ref = nodes.reference("", "", refuri=url, classes=["arquivo-do-repositorio"])
        literal.replace_self(ref)
        ref += literal



def _digest(app) -> str:
    """Impressão digital desta extensão, de book/_static/ e do _toc.yml.

    Registrada como valor de configuração que exige reler tudo: sem ela, uma
    mudança só aqui (ou num CSS/JS) não deixa nenhuma página "desatualizada", e
    o Sphinx não reescreve nada; e um capítulo novo no _toc.yml só é escrito
    ele mesmo, deixando nas outras páginas o menu lateral e o link "próximo"
    antigos (visto: o capítulo 1 continuava apontando para o glossário). Reler
    tudo não reexecuta nada: as saídas vêm do cache do jupyter-cache.
    """
    h = hashlib.sha256(Path(__file__).read_bytes() + SEARCH_SCORER.read_bytes())
    toc = _repo_root(app) / "_toc.yml"
    if toc.exists():
        h.update(toc.read_bytes())
    static = Path(__file__).resolve().parent.parent / "_static"
    for f in sorted(p for p in static.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(static)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def setup(app):
    _register_bib_style()
    es5 = _mathjax_es5()
    if not (es5 / "tex-chtml.js").exists():
        raise RuntimeError(f"MathJax local não encontrado em {es5}; rode `make` para instalar")
    # O MathJax em toda página, não só nas que têm fórmulas no corpo: o sumário
    # lateral e os links anterior/próxima mostram títulos com matemática
    # (capítulo 1: $QK^\top$), que sem ele apareceriam como LaTeX cru.
    app.set_html_assets_policy("always")
    # Busca sem LaTeX cru nem texto dos botões do tema nos resultados (book/_static/curso.js).
    app.add_js_file("curso.js")
    app.connect("config-inited", _set_path)
    app.connect("config-inited", _set_search)
    app.connect("config-inited", _check_placeholders)
    app.add_search_language(_search_language())
    app.connect("config-inited", _drop_thebe)
    app.connect("builder-inited", _translate_theme)
    app.connect("html-page-context", _plain_titles, priority=900)
    app.connect("html-page-context", _launch_buttons, priority=900)
    app.connect("doctree-read", _relative_tracebacks)
    app.connect("doctree-read", _link_repository)
    app.connect("build-finished", _copy)
    app.connect("build-finished", _translate_fixed)
    app.connect("build-finished", _plain_search_titles)
    app.add_directive("exercicio", Exercicio)
    app.add_config_value("curso_digest", _digest(app), "env")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
