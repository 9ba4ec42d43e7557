"""Constrói notebooks-fonte do nbgrader (solutions/) com os metadados certos.

Uso (num script ou no terminal):

    from autograder.nbbuild import Notebook
    nb = Notebook("01-pontuacoes", titulo="Capítulo 1 — Pontuações")
    nb.md("Texto de abertura ...")
    nb.setup("import numpy as np\\nimport torch")      # + a função conferir
    nb.solution("def scores(q, k):\\n    ### BEGIN SOLUTION\\n    ...\\n    ### END SOLUTION",
                grade_id="scores")
    nb.tests("conferir(...)\\n### BEGIN HIDDEN TESTS\\n...\\n### END HIDDEN TESTS",
             grade_id="test_scores_forma", points=2)
    nb.written("Explique por que ...", grade_id="explique_escala", points=2)
    nb.save()   # -> solutions/01-pontuacoes/01-pontuacoes.ipynb

Cada célula de teste é travada (locked) e vale pontos; a célula de preparação
é travada e inclui `autograder/conferir.py` inteiro.

A experiência é a mesma nos 12 cadernos (montada aqui, não em cada fonte):
- a célula de preparação vem recolhida (`jupyter.source_hidden` no JupyterLab
  e no Notebook 7; `cellView: form` com uma linha `# @title` no Colab);
- toda célula de testes termina a parte visível com
  `print("Tarefa N: testes visíveis passaram.")` (inserido se faltar) e leva a
  etiqueta `raises-exception`: no JupyterLab/Notebook 7 e no nbclient, "Run
  All" não para na primeira tarefa que falha, e o nbgrader continua dando
  nota pelo erro na saída da célula (a etiqueta não muda a correção);
- a última célula (`entrega()`) diz que arquivo entregar e como.
"""

from __future__ import annotations

from pathlib import Path

import re

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CONFERIR = (Path(__file__).parent / "conferir.py").read_text(encoding="utf-8")


TITULO_PREPARACAO = "# @title Preparação: rode esta célula (não precisa ler nem mudar)"
HIDDEN = "### BEGIN HIDDEN TESTS"


def _meta(grade_id, *, solution=False, grade=False, locked=False, points=None, task=False):
    m = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
         "solution": solution, "task": task}
    if points is not None:
        m["points"] = points
    return {"nbgrader": m}


class Notebook:
    def __init__(self, slug: str, titulo: str):
        self.slug = slug
        self.nb = nbformat.v4.new_notebook()
        self.nb.metadata.update({
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        })
        self._ids: set[str] = set()
        self._tarefas = 0  # células de teste de código vistas até agora
        self.md(f"# {titulo}", grade_id="titulo")

    def _id(self, grade_id):
        if grade_id in self._ids:
            raise ValueError(f"grade_id repetido: {grade_id}")
        self._ids.add(grade_id)
        return grade_id

    def md(self, text: str, grade_id: str | None = None):
        """Texto travado (enunciado)."""
        gid = self._id(grade_id or f"texto_{len(self.nb.cells)}")
        self.nb.cells.append(nbformat.v4.new_markdown_cell(text, metadata=_meta(gid, locked=True)))

    def code(self, src: str, grade_id: str | None = None):
        """Código de demonstração, travado e sem nota."""
        gid = self._id(grade_id or f"codigo_{len(self.nb.cells)}")
        self.nb.cells.append(nbformat.v4.new_code_cell(src, metadata=_meta(gid, locked=True)))

    def setup(self, imports: str):
        """Imports do aluno + funções de conferência (travado e recolhido)."""
        self.code(f"{TITULO_PREPARACAO}\n{imports.rstrip()}\n\n{CONFERIR}", grade_id="preparacao")
        cell = self.nb.cells[-1]
        cell.metadata["jupyter"] = {"source_hidden": True}  # JupyterLab, Notebook 7
        cell.metadata["cellView"] = "form"  # Colab: mostra só a linha `# @title`

    def solution(self, src: str, grade_id: str):
        """Célula que o aluno completa (### BEGIN/END SOLUTION no código)."""
        if "### BEGIN SOLUTION" not in src:
            raise ValueError(f"{grade_id}: célula de solução sem ### BEGIN SOLUTION")
        self.nb.cells.append(nbformat.v4.new_code_cell(
            src, metadata=_meta(self._id(grade_id), solution=True)))

    def tests(self, src: str, grade_id: str, points: int):
        """Célula de testes com pontos (visíveis + ### BEGIN/END HIDDEN TESTS).

        A parte visível termina com `print("Tarefa N: testes visíveis passaram.")`
        (N = a ordem desta célula de testes no caderno); se a fonte não o traz,
        ele é inserido antes dos testes ocultos.
        """
        self._tarefas += 1
        aviso = f'print("Tarefa {self._tarefas}: testes visíveis passaram.")'
        outros = set(re.findall(r"Tarefa \d+: testes visíveis passaram", src)) - {aviso[7:-3]}
        if outros:
            raise ValueError(f"{grade_id}: é a célula de testes {self._tarefas}, mas diz {sorted(outros)}")
        if aviso not in src:
            visivel, oculto, resto = src.partition(HIDDEN)
            src = f"{visivel.rstrip()}\n{aviso}\n{oculto}{resto}"
        meta = _meta(self._id(grade_id), grade=True, locked=True, points=points)
        meta["tags"] = ["raises-exception"]
        self.nb.cells.append(nbformat.v4.new_code_cell(src, metadata=meta))

    def written(self, pergunta: str, resposta_modelo: str, grade_id: str, points: int):
        """Pergunta aberta, corrigida à mão: enunciado travado + célula de resposta."""
        self.md(pergunta, grade_id=f"{grade_id}_enunciado")
        src = f"### BEGIN SOLUTION\n{resposta_modelo}\n### END SOLUTION"
        self.nb.cells.append(nbformat.v4.new_markdown_cell(
            src, metadata=_meta(self._id(grade_id), solution=True, grade=True, points=points)))

    def entrega(self, extra: str = ""):
        """Última célula: que arquivo entregar e como, em cada ambiente."""
        arquivo = f"{self.slug}.ipynb"
        self.md(
            "## Entrega\n\n"
            "Antes de entregar, reinicie o kernel e rode tudo (*Kernel → Restart Kernel and Run All "
            "Cells*; no Colab, *Ambiente de execução → Reiniciar e executar tudo*) e veja quais células "
            "de testes dizem \"testes visíveis passaram\". Uma tarefa que falha não impede as outras de "
            "rodar nem de valer pontos.\n\n"
            f"Entregue **este caderno**, o arquivo `{arquivo}`, com o nome que ele já tem:\n\n"
            "- **JupyterHub do curso** (aba *Assignments*): salve (*File → Save Notebook*) e clique em "
            "*Submit* na tarefa;\n"
            "- **JupyterLab ou Jupyter Notebook no seu computador**: salve e envie o arquivo "
            f"`{arquivo}` da pasta onde você o abriu (ou *File → Download*) pelo sistema da disciplina;\n"
            "- **Google Colab**: *Arquivo → Fazer download → Baixar o .ipynb* (em inglês, *File → Download "
            f"→ Download .ipynb*) e envie o arquivo baixado, renomeado para `{arquivo}` se o Colab "
            "tiver mudado o nome.\n\n"
            "Não apague nem edite as células de teste: na correção elas são restauradas, e os testes "
            "ocultos rodam sobre as suas funções." + (f"\n\n{extra}" if extra else ""),
            grade_id="entrega",
        )

    @property
    def path(self) -> Path:
        return ROOT / "solutions" / self.slug / f"{self.slug}.ipynb"

    def save(self) -> Path:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.validate(self.nb)
        nbformat.write(self.nb, self.path)
        return self.path
