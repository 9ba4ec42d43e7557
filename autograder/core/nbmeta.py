"""Os metadados do nbgrader e a análise das células, lidos por todo o corretor.

Uma célula do nbgrader traz em `metadata.nbgrader` o `grade_id`, os pontos e se
é travada (`locked`), de resposta (`solution`) ou de teste (`grade` sem
`solution`). Quem precisa saber isso (a coleta das notas, a restauração das
células travadas, as páginas de retorno) lê por aqui. `to_python` e
`parse_cached` convertem as mágicas do IPython e guardam a AST das células da
versão distribuída; `parse_or_none` analisa o texto do aluno sem guardar.
"""

from __future__ import annotations

import ast
import functools


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_id(cell) -> str | None:
    return nbgrader_meta(cell).get("grade_id")


def is_locked(cell) -> bool:
    m = nbgrader_meta(cell)
    return bool(m.get("locked") or (m.get("grade") and not m.get("solution")))


def norm_source(src: str) -> str:
    return "\n".join(line.rstrip() for line in src.strip().splitlines())


# ----------------------------------------------------------------------------- AST

_CACHED_TEXT = 32_768     # caracteres: acima disso, a conversão não fica guardada


def to_python(src: str) -> str:
    """Converte mágicas do IPython (%timeit, !ls) em Python para a AST.

    Guardada por texto: as mesmas células (as da versão distribuída em todo notebook, as do
    aluno em cada regra) passavam pelo tokenizador do IPython várias vezes. Só textos curtos
    ficam guardados (no máximo 4.096 de até 32 mil caracteres, entrada e saída: ~256 MiB no
    pior caso; as células do curso têm até 27 mil), porque o processo de correção atende
    muitos notebooks e o texto do aluno também passa por aqui."""
    return _to_python_cached(src) if len(src) <= _CACHED_TEXT else _transform(src)


@functools.lru_cache(maxsize=4096)
def _to_python_cached(src: str) -> str:
    return _transform(src)


def _transform(src: str) -> str:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(src)
    except Exception:  # noqa: BLE001 - sem IPython, a célula vai como está
        return src


@functools.lru_cache(maxsize=2048)
def parse_cached(src: str):
    """A AST da célula (None se não compila). Guardada por texto, como `to_python`: cada
    célula da versão distribuída era analisada de novo em todo notebook, até cinco vezes
    (0,2 núcleo·s por notebook nos capítulos 1 a 5). A árvore é compartilhada: só leitura.
    Só texto da versão distribuída chega aqui (células do professor, já restauradas; as do aluno
    passam por `parse_or_none`, sem guardar, em worker/cellcode.py): o cache não cresce com o que o aluno escreve
    (a AST ocupa ~40 vezes o texto; a maior célula do curso tem 29 mil caracteres)."""
    return parse_or_none(to_python(src))


def parse_or_none(text: str):
    """`ast.parse`, ou None se o texto não compila. Aninhamento fundo demais (`-` repetido cem
    mil vezes, parênteses em cadeia) faz o analisador do Python levantar MemoryError ou
    RecursionError sem ocupar memória: o kernel também não compilaria a célula."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
