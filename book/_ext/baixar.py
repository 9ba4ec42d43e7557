"""Extensão Sphinx: o .ipynb que o leitor baixa de um capítulo roda fora do repositório.

O sphinx-book-theme oferece, no botão de download, o caderno executado de cada
página MyST (`_build/jupyter_execute/<página>.ipynb`, copiado para
`_sources/`). Como sai do JB1, esse caderno não roda fora do repositório: a
primeira célula importa `atencao`, que nada instala, e os tracebacks trazem os
caminhos da máquina que construiu o livro. Ao fim da construção, cada um desses
cadernos é reescrito assim:

1. uma primeira célula instala o pacote do curso do repositório configurado em
   `_config.yml` (`repository.url` e `repository.branch`) quando `atencao` não
   está instalado (`%pip install "atencao @ git+<url>@<ref>"`; o pacote está na
   raiz do repositório, sem subpasta). A ref é o ramo configurado; na
   construção do GitHub Actions (que publica o site), é o commit construído
   (`GITHUB_SHA`), para o caderno instalar o pacote da mesma versão da página;
2. saem as células `remove-cell` e `remove-input`: o caderno baixado tem o
   código que a página mostra (inclusive o recolhido em "Mostrar o código"),
   na mesma ordem; tests/book/test_paginas.py garante que nenhuma célula mostrada
   usa um nome definido só numa célula removida;
3. as saídas perdem os caminhos da máquina (`strip_machine_paths` de curso.py);
4. as células de texto viram Markdown comum (`plain_markdown`), que o
   JupyterLab e o Colab mostram sem o MyST: os números colados
   ({glue:text}) escritos no lugar, caixas (admonition, note) como citações
   com título em negrito, rótulos `(nome)=` fora, referências ({ref},
   {doc}, {term}, {cite:p}) como texto legível, o número do capítulo no
   título, o código de `literalinclude` escrito no caderno.

Se a instalação da primeira célula falhar (sem rede, sem `git`), ela para com
uma mensagem em português dizendo o que fazer (`InstalacaoFalhou`), em vez de
deixar o leitor num `ModuleNotFoundError` células depois.

A reescrita é idempotente (marca `metadata.curso.download`): uma página que
não foi reescrita nesta construção incremental já está pronta.

O botão do Binder abre o mesmo caderno, gerado no Binder pelo binder/postBuild
com estas funções (book/_ext/binder_pages.py): lá não há Sphinx, e o número do
capítulo sai do _toc.yml (`chapter_numbers`); cada construção confere que ele
é o mesmo que o Sphinx dá.

O tema só copia o caderno e mostra o botão ".ipynb" quando há algum botão de
lançamento configurado (é `add_launch_buttons` quem copia); `_offer_notebook`
faz a cópia sempre, para o download não depender dessa configuração.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from curso import strip_machine_paths

from atencao.text import glue_text, load_glue

REMOVED_TAGS = {"remove-cell", "remove-input"}
INSTALL_TAG = "course-install"  # a célula de instalação (os testes a reconhecem por esta tag)


def install_requirement(repo_url: str, ref: str) -> str:
    """A linha do pip que instala o pacote do curso do repositório, no ramo ou commit `ref`."""
    return f"atencao @ git+{repo_url.rstrip('/')}@{ref}"


TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
STUDENT_REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements-aluno.txt"


def student_pins(path: Path = STUDENT_REQUIREMENTS) -> dict[str, str]:
    """As versões do curso (requirements-aluno.txt) de numpy, matplotlib e torch, sem o `+cpu`."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*(numpy|matplotlib|torch)==([0-9][^\s;+]*)", line)
        if m:
            pins.setdefault(m.group(1), m.group(2))
    assert set(pins) == {"numpy", "matplotlib", "torch"}, f"{path.name}: faltam versões ({pins})"
    return pins


INSTALL_FAILED = (
    "Não consegui instalar o pacote do curso (atencao) a partir de {req}. "
    "O que fazer: confira a conexão com a internet e se o `git` está instalado "
    "(no Windows: https://git-scm.com); ou, num terminal, clone o repositório "
    "({url}) e rode `python -m pip install -r requirements-aluno.txt` e "
    "`python -m pip install -e .` na pasta dele, no mesmo ambiente deste caderno "
    "(o README, em \"Para quem estuda\", diz o que fazer se o índice do PyTorch não responde). "
    "Depois reinicie o kernel e rode o caderno de novo."
)
NO_CPU_INDEX = (
    " O índice do torch de CPU ({index}) não respondeu, e o torch {version}+cpu só está nele "
    "(ou numa pasta de rodas sua, com `pip --find-links`): este caderno não instala o torch "
    "do PyPI no Linux, que traria alguns GB de bibliotecas CUDA."
)


def install_cell(repo_url: str, ref: str, pins: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """A 1ª célula do caderno baixado: instala o pacote do curso se ele falta.

    Com ele, as versões do curso (requirements-aluno.txt) de numpy, matplotlib e torch, só dos
    que faltam (no Colab, o torch que já está lá fica). No Linux x86-64, o torch é o de CPU
    (`+cpu`, do índice do PyTorch): o do PyPI traria as bibliotecas CUDA (alguns GB) e o pip,
    sem versão, pegaria a mais nova. O índice é sondado antes (10 s): um índice que não
    responde não entra no pip, que senão tentaria de novo por minutos, pacote a pacote; sem
    ele, o `+cpu` só vem de uma pasta de rodas local, e se não vier a célula para com a
    mensagem em português.
    """
    pins = pins or student_pins()
    req = install_requirement(repo_url, ref)
    message = INSTALL_FAILED.format(req=f"`{req}`", url=repo_url)
    no_index = NO_CPU_INDEX.format(index=TORCH_CPU_INDEX, version=pins["torch"])
    source = (
        "# Este caderno usa o pacote do curso (`import atencao as at`). Fora do\n"
        "# repositório (no Colab, noutra pasta), ele é instalado do GitHub na\n"
        "# primeira vez, com as versões do curso de numpy, torch e matplotlib se\n"
        "# faltarem. No Linux, o torch é o só de CPU, do índice do PyTorch (o do\n"
        "# PyPI traria alguns GB de bibliotecas CUDA).\n"
        "import importlib\n"
        "import importlib.util\n"
        "import platform\n"
        "import sys\n"
        "import urllib.request\n"
        "\n"
        f'INDICE_CPU = "{TORCH_CPU_INDEX}"\n'
        "\n"
        "\n"
        "class InstalacaoFalhou(RuntimeError):\n"
        "    pass\n"
        "\n"
        "\n"
        "def _indice_responde(url):\n"
        "    try:\n"
        '        with urllib.request.urlopen(url.rstrip("/") + "/torch/", timeout=10):\n'
        "            return True\n"
        "    except Exception:\n"
        "        return False\n"
        "\n"
        "\n"
        'if importlib.util.find_spec("atencao") is None:\n'
        f'    _versoes = {{"numpy": "{pins["numpy"]}", "matplotlib": "{pins["matplotlib"]}", "torch": "{pins["torch"]}"}}\n'
        '    _faltam = {m: f"{m}=={v}" for m, v in _versoes.items() if importlib.util.find_spec(m) is None}\n'
        '    _opcoes, _sem_indice = "", ""\n'
        '    if "torch" in _faltam and sys.platform == "linux" and platform.machine() == "x86_64":\n'
        '        _faltam["torch"] += "+cpu"\n'
        "        if _indice_responde(INDICE_CPU):\n"
        '            _opcoes = f"--extra-index-url {INDICE_CPU}"\n'
        "        else:\n"
        f"            _sem_indice = {no_index!r}\n"
        '    _pacotes = " ".join(_faltam.values())\n'
        f'    %pip install --quiet {{_opcoes}} {{_pacotes}} "{req}"\n'
        "    importlib.invalidate_caches()\n"
        '    if importlib.util.find_spec("atencao") is None:\n'
        f"        raise InstalacaoFalhou({message!r} + _sem_indice)\n"
    )
    return nbformat.v4.new_code_cell(source, metadata={"tags": [INSTALL_TAG]})


def _clean(value, root: Path):
    if isinstance(value, str):
        return strip_machine_paths(value, root)
    if isinstance(value, list):
        return [_clean(v, root) for v in value]
    if isinstance(value, dict):
        return {k: (v if k.startswith("image/") else _clean(v, root)) for k, v in value.items()}
    return value


def glued_values(nb: nbformat.NotebookNode, glue_file: Path | None = None) -> dict[str, str]:
    """Os valores colados (myst_nb.glue) como o {glue:text} os mostra.

    Na construção do livro, o myst_nb guarda-os em `<página>.glue.json`, ao
    lado do caderno executado (`glue_file`). Num caderno executado fora dele (o
    do Binder, book/_ext/binder_pages.py) eles estão nas saídas de glue das
    células, que saem do caderno aqui, como na construção
    (`extract_glue_data_cell` do myst_nb).
    """
    from myst_nb.ext.glue import extract_glue_data_cell

    out = {}
    for c in nb.cells:
        for name, output in extract_glue_data_cell(c) if c.cell_type == "code" else []:
            plain = output.get("data", {}).get("text/plain")
            if plain is not None:
                out[name] = glue_text(plain)
    if glue_file is not None:
        out.update(load_glue(glue_file))
    return out


@dataclass(frozen=True)
class PageContext:
    """O que a conversão para Markdown comum precisa saber do livro."""
    glue: dict[str, str]
    labels: dict[str, str] = field(default_factory=dict)        # rótulo -> título da seção
    citations: dict[str, str] = field(default_factory=dict)     # chave -> "Autor et al., ano"
    number: str = ""                                            # "4" para o capítulo 4
    source_dir: Path | None = None                              # pasta do .md (literalinclude)


BOX_TITLES = {"note": "Nota", "warning": "Atenção", "tip": "Dica", "important": "Importante"}
ROLE = re.compile(r"\{([a-z]+(?::[a-z]+)?)\}`([^`]*)`")
FENCE_OPEN = re.compile(r"^(:{3,}|`{3,})\{([a-z-]+)\}\s*(.*)$")


def _role(ctx: PageContext, role: str, text: str) -> str:
    shown, _, target = text.partition(" <")
    target = target.rstrip(">") if target else ""
    if role.startswith("glue"):
        name = text.split(":", 1)[0] if "::" not in text else text
        if name not in ctx.glue:
            raise KeyError(f"{{glue}}`{name}` sem valor colado no caderno executado")
        return ctx.glue[name]
    if role in {"term", "doc"}:
        return shown
    if role == "ref":
        return shown if target else ctx.labels.get(shown, shown)
    if role.startswith("cite"):
        keys = [k.strip() for k in text.split(",")]
        refs = "; ".join(ctx.citations.get(k, k) for k in keys)
        return refs if role == "cite:t" else f"({refs})"
    if role == "math":
        return f"${text}$"
    return shown


def _literalinclude(ctx: PageContext, arg: str, options: dict[str, str]) -> list[str]:
    path = (ctx.source_dir / arg).resolve() if ctx.source_dir else Path(arg)
    code = path.read_text(encoding="utf-8")
    name = options.get("pyobject")
    if name:
        node = ast.parse(code)
        for part in name.split("."):   # `Classe.metodo`, como o pyobject do Sphinx
            node = next(n for n in ast.iter_child_nodes(node)
                        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                        and n.name == part)
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        code = textwrap.dedent("\n".join(code.splitlines()[start - 1:node.end_lineno]))
    return [f"```{options.get('language', '')}", *code.rstrip().splitlines(), "```"]


def plain_markdown(source: str, ctx: PageContext) -> str:
    """Uma célula MyST em Markdown comum (o que o JupyterLab e o Colab mostram direito)."""
    lines = source.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.fullmatch(r"\(([^()\s]+)\)=\s*", line):          # rótulo (nome)=
            i += 1
            continue
        m = FENCE_OPEN.match(line)
        if m and m.group(2) != "code-cell":
            fence, name, arg = m.groups()
            body, options = [], {}
            i += 1
            while i < len(lines) and lines[i].strip() != fence:
                opt = re.fullmatch(r":([a-z-]+):\s*(.*)", lines[i])
                if opt and not body:
                    options[opt.group(1)] = opt.group(2)
                else:
                    body.append(lines[i])
                i += 1
            i += 1   # o fecho
            if name == "literalinclude":
                out += _literalinclude(ctx, arg, options)
            elif name == "exercicio":
                out += [f"> **Exercícios deste capítulo:** o caderno `exercises/{arg}/{arg}.ipynb` "
                        "do repositório do curso."]
            else:
                title = arg or BOX_TITLES.get(name, name.capitalize())
                inner = plain_markdown("\n".join(body), ctx).splitlines()
                out += [f"> **{ROLE.sub(lambda r: _role(ctx, *r.groups()), title)}**", ">"]
                out += [f"> {b}".rstrip() for b in inner]
            continue
        if ctx.number and re.match(r"# \S", line):
            line = f"# {ctx.number}. {line[2:]}"
        out.append(ROLE.sub(lambda r: _role(ctx, *r.groups()), line))
        i += 1
    return "\n".join(out)


def rewrite_download(nb: nbformat.NotebookNode, repo_url: str, ref: str,
                     root: Path, ctx: PageContext | None = None) -> nbformat.NotebookNode:
    """O caderno executado de uma página, pronto para rodar fora do repositório."""
    if ctx is None:
        ctx = PageContext(glue=glued_values(nb))
    cells = [install_cell(repo_url, ref)]
    for cell in nb.cells:
        tags = set(cell.get("metadata", {}).get("tags", []))
        if tags & REMOVED_TAGS:
            continue
        if cell.cell_type == "code":
            cell.outputs = [nbformat.from_dict(_clean(dict(o), root)) for o in cell.outputs]
        elif cell.cell_type == "markdown":
            cell.source = plain_markdown(cell.source, ctx)
        cells.append(cell)
    nb.cells = cells
    nb.metadata.setdefault("curso", {})["download"] = True
    return nb


def _rewrite_all(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    opts = app.config.html_theme_options
    repo_url = opts.get("repository_url", "")
    ref = os.environ.get("GITHUB_SHA") or opts.get("repository_branch", "") or "main"
    sources = Path(app.outdir) / "_sources"
    labels = {name: title for name, (_, _, title) in
              app.env.domaindata.get("std", {}).get("labels", {}).items() if title}
    citations = book_citations(Path(app.confdir))
    chapters = chapter_numbers(Path(app.confdir))
    for path in sorted(sources.rglob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        if nb.metadata.get("curso", {}).get("download"):
            continue
        if not repo_url:
            raise RuntimeError(
                f"{path.name}: sem `repository.url` em _config.yml não há de onde instalar o "
                "pacote do curso no .ipynb baixado")
        docname = path.relative_to(sources).with_suffix("").as_posix()
        number = ".".join(map(str, app.env.toc_secnumbers.get(docname, {}).get("", ())))
        if number != chapters.get(docname, ""):   # o gerador do Binder numera pelo _toc.yml
            raise RuntimeError(f"{docname}: o Sphinx numera o capítulo como {number!r}, "
                               f"chapter_numbers (_toc.yml) como {chapters.get(docname, '')!r}")
        glue_file = Path(app.outdir).parent / "jupyter_execute" / f"{docname}.glue.json"
        ctx = PageContext(glue=glued_values(nb, glue_file), labels=labels, citations=citations,
                          number=number,
                          source_dir=(Path(app.srcdir) / docname).parent)
        nbformat.write(rewrite_download(nb, repo_url, ref, Path(app.confdir), ctx), path)


def chapter_numbers(root: Path) -> dict[str, str]:
    """docname -> número do capítulo, como o Jupyter Book numera o _toc.yml.

    Cada parte com `numbered: true` continua a contagem da anterior (o
    sphinx-multitoc-numbering do JB1); as partes sem numeração (apêndices)
    ficam sem número.
    """
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    out, n = {}, 0
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            if part.get("numbered"):
                n += 1
                out[chapter["file"]] = str(n)
            else:
                out[chapter["file"]] = ""
    return out


def book_citations(root: Path) -> dict[str, str]:
    """chave -> "Sobrenome et al., ano", de book/references.bib."""
    from pybtex.database import parse_file

    out = {}
    for key, entry in parse_file(root / "book" / "references.bib").entries.items():
        people = entry.persons.get("author", [])
        last = " ".join(people[0].last_names) if people else entry.fields.get("title", key)
        who = last if len(people) <= 1 else (f"{last} e {' '.join(people[1].last_names)}"
                                            if len(people) == 2 else f"{last} et al.")
        out[key] = f"{who}, {entry.fields.get('year', 's.d.')}"
    return out


def _offer_notebook(app, pagename, templatename, context, doctree):
    """Põe o caderno executado da página em _sources/ e o oferece no botão de download."""
    if doctree is None or app.builder.format != "html":
        return
    if not context.get("sourcename", "").endswith((".md", ".md.txt")):
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.exists():   # página sem código (não é um caderno)
        return
    dest = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(executed, dest)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app):
    # Antes dos botões do cabeçalho do sphinx-book-theme (prioridade 501).
    app.connect("html-page-context", _offer_notebook, priority=500)
    app.connect("build-finished", _rewrite_all)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
