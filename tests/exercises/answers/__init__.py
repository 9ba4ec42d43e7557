"""Respostas plantadas e respostas justas, por caderno: o contrato de cada tarefa.

Cada caderno `NN-slug` tem aqui um arquivo `NN-slug.py` (carregado por `load(slug)`) com duas
listas:

- `PLANTED`: respostas que pulam a ideia da tarefa (o SDPA onde a tarefa é escrever a atenção,
  uma biblioteca fazendo a estabilização, um lançador em PyTorch sem Triton...). Cada uma troca
  as células de solução `cells` (grade_id -> código inteiro da célula) e tem de tirar **0** nas
  células de testes `zero`, e a nota cheia em todas as outras (um erro custa uma tarefa só).
- `FAIR`: respostas certas escritas de outro jeito (float64, laços onde são permitidos, visões
  ou cópias, outros tamanhos de bloco, prints, compreensões). Trocam as células `cells` e têm de
  tirar a nota cheia em todas as tarefas.

As células não citadas ficam com a solução de referência. As duas listas são conferidas em dois
lugares: sem kernel, como o Jupyter do aluno (tests/exercises/test_answers.py), e pela linha de
comando do corretor, numa turma só (tests/grader_e2e/authoring/test_all_solutions.py).
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Planted:
    """Uma resposta que não pode ganhar pontos nas células de testes `zero`."""

    why: str                          # o atalho, em uma linha (português)
    cells: dict                       # grade_id da célula de solução -> código inteiro
    zero: tuple                       # grade_ids das células de testes que têm de dar 0
    free: tuple = ()                  # outras células de testes que podem dar 0 (raro; diga por quê)


@dataclass(frozen=True)
class Fair:
    """Uma resposta certa, escrita de outro jeito, que tem de ganhar todos os pontos."""

    why: str
    cells: dict = field(default_factory=dict)


@functools.cache
def load(slug: str):
    """O módulo de respostas do caderno `slug` (ou None se ainda não há)."""
    path = HERE / f"{slug}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"answers_{slug.replace('-', '_')}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for a in getattr(mod, "PLANTED", []) + getattr(mod, "FAIR", []):
        assert isinstance(a, (Planted, Fair)), (slug, a)
    return mod


def slugs() -> list[str]:
    return sorted(p.stem for p in HERE.glob("[0-9][0-9]-*.py"))


def cases():
    """(slug, tipo, índice, resposta) para todas as respostas de todos os cadernos."""
    out = []
    for slug in slugs():
        mod = load(slug)
        out += [(slug, "planted", i, a) for i, a in enumerate(getattr(mod, "PLANTED", []))]
        out += [(slug, "fair", i, a) for i, a in enumerate(getattr(mod, "FAIR", []))]
    return out


def case_id(slug, kind, i) -> str:
    return f"{slug}-{kind}{i}"
