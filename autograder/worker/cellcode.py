"""O código das células lido como texto (árvore sintática), sem executar nada.

- que células rodam no kernel do corretor: só as travadas da versão distribuída
  (`instructor_cells`, `is_instructor_code`, `is_test`);
- as partes de uma célula de teste (`split_hidden`, pelos marcadores do nbgrader);
- os nomes que um trecho liga e lê (`bound_names`, `loaded_names`; `instructor_names` para
  o texto da versão distribuída, guardado);
- as definições do aluno que as regras de texto leem (`student_definitions`).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from ..core import nbmeta

BEGIN_HIDDEN = "BEGIN HIDDEN TESTS"
END_HIDDEN = "END HIDDEN TESTS"


def split_hidden(source: str) -> list[tuple[bool, str]]:
    """Divide o código em partes (oculta?, texto), pelos marcadores do nbgrader."""
    parts: list[tuple[bool, list[str]]] = [(False, [])]
    for line in source.splitlines(keepends=True):
        if BEGIN_HIDDEN in line and not parts[-1][0]:
            parts.append((True, [line]))
        elif END_HIDDEN in line and parts[-1][0]:
            parts[-1][1].append(line)
            parts.append((False, []))
        else:
            parts[-1][1].append(line)
    out = [(h, "".join(lines)) for h, lines in parts]
    return [(h, t) for h, t in out if t.strip()]


def compiles(src: str) -> bool:
    return nbmeta.parse_cached(src) is not None


def is_test(cell, instructor: dict[str, str]) -> bool:
    m = nbmeta.nbgrader_meta(cell)
    return bool(m.get("grade") and not m.get("solution") and is_instructor_code(cell, instructor))


def instructor_cells(release_nb) -> dict[str, str]:
    """grade_id -> texto das células de código travadas da versão DISTRIBUÍDA (preparação e
    testes): só elas rodam no kernel do corretor. Nada do notebook entregue entra nesta
    decisão (metadados do aluno dizendo `locked` não bastam: revisão C1)."""
    out = {}
    for c in release_nb.cells:
        gid = nbmeta.grade_id(c)
        if gid and c.cell_type == "code" and nbmeta.is_locked(c):
            out[gid] = c.source
    return out


def _visible(src: str) -> str:
    return nbmeta.norm_source("".join(t for hidden, t in split_hidden(src) if not hidden))


def is_instructor_code(cell, instructor: dict[str, str]) -> bool:
    """Célula de código igual (grade_id e texto) a uma célula travada da versão distribuída.

    O texto comparado é o visível: uma célula de teste chega aqui com os testes ocultos que o
    nbgrader (OverwriteCells) trouxe da fonte, e a versão distribuída não os tem."""
    if cell.cell_type != "code":
        return False
    gid = nbmeta.grade_id(cell)
    return gid is not None and gid in instructor and _visible(cell.source) == _visible(instructor[gid])


def bound_names(tree) -> set[str]:
    """Nomes que um trecho liga no escopo global (def, class, import, atribuições, for, with)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
    return out


def loaded_names(tree) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


@dataclass(frozen=True)
class CodeNames:
    """Os nomes globais que um trecho liga (`bound`) e os que ele lê (`loaded`)."""

    bound: frozenset[str]
    loaded: frozenset[str]


@functools.lru_cache(maxsize=2048)
def instructor_names(src: str) -> CodeNames | None:
    """`bound_names` e `loaded_names` de uma célula do professor (None se não compila).

    Guardado por texto, como `integrity._parse`, e pelo mesmo motivo: as mesmas células de
    preparação e de teste eram percorridas de novo em todo notebook (a maior tem 29 mil
    caracteres). Só texto da versão distribuída chega aqui (o executor só chama isto para as
    células que `is_instructor_code` reconhece): o cache não cresce com o que o aluno escreve."""
    tree = nbmeta.parse_cached(src)
    if tree is None:
        return None
    return CodeNames(frozenset(bound_names(tree)), frozenset(loaded_names(tree)))


# atributos que trocam o código (ou o comportamento) de uma função depois do `def` (revisão H1)
_ESCAPES = {"__code__", "__globals__", "__defaults__", "__kwdefaults__", "__call__", "__class__",
            "__dict__", "__wrapped__", "__closure__", "__get__", "__getattribute__"}
# chamadas que religam nomes sem dizer quais
_REBINDERS = {"exec", "eval", "compile", "globals", "vars", "locals", "setattr", "delattr", "__import__"}


def _escapes(tree) -> set[str] | None:
    """Nomes cujo código pode ter sido trocado (`f.__code__ = ...`, `setattr(f, ...)`); None se
    não dá para saber quais (alvo que não é um nome, exec, globals(), sys.modules...)."""
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
            if isinstance(n.value, ast.Name):
                if n.attr in _ESCAPES:
                    out.add(n.value.id)
            elif n.attr in _ESCAPES:
                return None
        elif isinstance(n, ast.Call):
            fn = n.func.id if isinstance(n.func, ast.Name) else (
                n.func.attr if isinstance(n.func, ast.Attribute) else None)
            if fn in _REBINDERS:
                if fn in ("setattr", "delattr") and n.args and isinstance(n.args[0], ast.Name):
                    out.add(n.args[0].id)
                else:
                    return None
        elif isinstance(n, ast.Attribute) and n.attr == "modules" and isinstance(n.value, ast.Name) \
                and n.value.id == "sys":
            return None
    return out


def _as_assignment(node) -> str | None:
    """Um import como a atribuição equivalente (`from numpy import matmul as mm` -> `mm = numpy.matmul`),
    para que a regra de texto veja o nome importado."""
    if isinstance(node, ast.ImportFrom):
        mod = "." * node.level + (node.module or "")
        return "\n".join(f"{a.asname or a.name} = {mod or '_'}.{a.name}" for a in node.names if a.name != "*")
    if isinstance(node, ast.Import):
        return "\n".join(f"{a.asname or a.name.split('.')[0]} = {a.name}" for a in node.names)
    return None


def student_definitions(sources: list[str]) -> dict[str, str]:
    """nome -> texto do `def`/`class` de nível de módulo que o define, nas células do aluno,
    seguido do texto de todo comando de nível de módulo do aluno que liga um nome que ele lê
    (apelidos como `_h = np.matmul`, imports, outras funções; fechado por transitividade).

    Um nome religado depois por outra coisa (atribuição, import...) ou cujo código pode ter
    sido trocado (`f.__code__ = ...`, `setattr`) sai do mapa; exec/eval/globals()/sys.modules
    em qualquer célula esvaziam o mapa: as regras de texto não podem ler uma definição que
    não é a que roda (e, sem definição, a regra falha em vez de aprovar)."""
    defs: dict[str, str] = {}
    top: list[tuple[set[str], str, set[str]]] = []      # (nomes ligados, texto, nomes lidos)
    gone: set[str] = set()
    unknown = False
    for src in sources:
        text = nbmeta.to_python(src)
        tree = nbmeta.parse_or_none(text)
        if tree is None:
            continue
        esc = _escapes(tree)
        if esc is None:
            unknown = True
        else:
            gone |= esc
        for node in tree.body:
            seg = _as_assignment(node) or ast.get_source_segment(text, node) or ""
            bound = bound_names(node) if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                ast.ClassDef)) else {node.name}
            top.append((bound, seg, loaded_names(node)))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and not node.decorator_list:
                defs[node.name] = seg
                if esc is not None and node.name not in esc:
                    gone.discard(node.name)     # redefinida depois da troca, numa célula sem troca
            else:
                for name in bound:
                    defs.pop(name, None)
    if unknown:
        return {}
    out = {}
    for name, seg in defs.items():
        if name in gone:
            continue
        want, seen, extra = set(loaded_names(ast.parse(seg))) - {name}, {name}, []
        while want - seen:
            n = (want - seen).pop()
            seen.add(n)
            for bound, text, reads in top:
                if n in bound and text != seg and text not in extra:
                    extra.append(text)
                    want |= reads
        out[name] = "\n".join([seg, *extra])
    return out


# Nomes que só aparecem no código de quem mexe nas verificações que rodam no processo do aluno
# (revisão C4, H2): o corretor e o seu protocolo, os observadores das células travadas e as
# entranhas dos modos de despacho do torch (desligá-los, ler a pilha para só obedecer quando
# observado). Uma regra "como a função calcula" roda no processo do aluno e pode ser enganada;
# com um destes nomes no notebook, ela não passa em silêncio: o notebook vai para a revisão.
_TAMPER_NAMES = {
    "_python_dispatch", "_disable_current_modes", "_get_current_dispatch_mode",
    "_get_current_dispatch_mode_stack", "_pop_mode", "_push_mode", "_pop_mode_temporarily",
    "_len_torch_dispatch_stack", "TorchDispatchMode", "TorchFunctionMode", "__torch_dispatch__",
    "_DisableTorchDispatch", "DisableTorchFunction", "DisableTorchFunctionSubclass",
    "_get_current_function_mode_stack", "_Observador", "_ModoDeDespacho", "_sem_atalhos", "_SoBlocos",
    "_SemMatrizTxT", "relatorio_da_chamada", "observadores", "_encode_tensor", "_OPS",
    # as regras comuns de autograder/authoring/rules.py
    "_OperacoesUsadas", "_SoPermitidas", "_so_permitidas", "_ModoDeFuncoes", "_VigiaDeFuncoes",
    "_sem_atencao_pronta",
    "_ContaOperacoes", "_ContaContas", "_sem_norma_pronta", "ver_funcao",
}
_TAMPER_PREFIXES = ("_autograder",)


def _tamper_word(word: str) -> bool:
    return word in _TAMPER_NAMES or word.startswith(_TAMPER_PREFIXES)


def student_cells(nb, release_nb) -> list[tuple[int, str]]:
    """(número da célula no notebook, texto) de cada célula de código do aluno: as que não são
    iguais a uma célula travada da versão distribuída."""
    ins = instructor_cells(release_nb)
    return [(i + 1, c.source) for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and not is_instructor_code(c, ins)]


def tamper_evidence(cells: list[tuple[int, str]]) -> list[str]:
    """Evidências (em português, com célula e linha) de que o código do aluno mexe nas
    verificações que rodam no processo dele: um nome de `_TAMPER_NAMES` como nome, atributo,
    módulo importado ou texto. `cells`: (número da célula, texto), como `student_cells`."""
    out = []
    for number, src in cells:
        text = nbmeta.to_python(src)
        tree = nbmeta.parse_or_none(text)
        if tree is None:
            continue
        lines = text.splitlines()
        for n in ast.walk(tree):
            words: list[str] = []
            if isinstance(n, ast.Name):
                words = [n.id]
            elif isinstance(n, ast.Attribute):
                words = [n.attr]
            elif isinstance(n, (ast.Import, ast.ImportFrom)):
                words = [w for a in n.names for w in (a.name.split(".") + [a.asname or ""])]
                words += (n.module or "").split(".") if isinstance(n, ast.ImportFrom) else []
            elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                words = [w for w in n.value.replace(".", " ").replace("/", " ").split() if len(w) < 80]
            hit = next((w for w in words if w and _tamper_word(w)), None)
            if hit is None:
                continue
            line = lines[n.lineno - 1].strip() if 0 < n.lineno <= len(lines) else ""
            item = (f"possível contorno das verificações (`{hit}`) na célula {number}, linha "
                    f"{n.lineno}: {line[:160]}")
            if item not in out:
                out.append(item)
    return out


def syntax_error(src: str) -> str | None:
    """Mensagem em português se a célula não compila; None se compila."""
    try:
        ast.parse(nbmeta.to_python(src))
    except SyntaxError as e:
        return f"(linha {e.lineno}): {e.msg}"
    except ValueError as e:
        return str(e)[:200]
    except (MemoryError, RecursionError):
        return "(expressões aninhadas demais para o Python compilar)"
    return None
