"""A forma do pacote do corretor: as pastas por papel, quem importa quem e o tamanho das classes.

A tabela de imports permitidos é uma só (`autograder/layers.py`); este arquivo a lê e
confere todo import do pacote (inclusive os de dentro de funções). No lugar do antigo
teto de 600 linhas por módulo, um teto por classe (uma classe grande é um papel a mais)
e por função.
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

from autograder.layers import ALIASES, ALLOWED

PKG = Path(__file__).resolve().parents[2] / "autograder"
CLASS_CAP = 250          # linhas por classe
FUNCTION_CAP = 100       # linhas por função
# classes que já passam do teto e têm divisão marcada (só podem encolher)
KNOWN_BIG: dict[str, int] = {}
# o que o código injetado nos kernels pode importar além da biblioteca padrão
WIRE_THIRD_PARTY = {"IPython", "numpy", "torch"}


def _modules() -> dict[str, Path]:
    """'worker.executor' -> caminho; as fontes dos exercícios (fontes/*/) são texto de notebook."""
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG).with_suffix("")
        if rel.parts[0] == "fontes" and rel.parts != ("fontes", "__init__"):
            continue
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        out[".".join(parts) or "__init__"] = p
    return out


MODULES = _modules()


def _role(module: str) -> str:
    head = module.split(".")[0]
    return ALIASES.get(head, head)


@cache
def _imports(module: str) -> frozenset[str]:
    """Os módulos do pacote que `module` importa, em qualquer lugar do arquivo; os de
    `if TYPE_CHECKING:` não contam."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
            and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    pkg = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    if module == "__init__":
        pkg = []
    out = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[:len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                target = base + (node.module.split(".") if node.module else [])
            elif (node.module or "").split(".")[0] == "autograder":
                target = node.module.split(".")[1:]
            else:
                continue
            for a in node.names:
                full = ".".join(target + [a.name])
                out.add(full if full in MODULES else ".".join(target))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "autograder":
                    out.add(".".join(a.name.split(".")[1:]))
    return frozenset(m for m in out if m in MODULES and m != module)


def _allowed(module: str, target: str) -> bool:
    role, to = _role(module), _role(target)
    if role == to:
        return True
    rules = ALLOWED[role]
    return to in rules or any(target == r or target.startswith(r + ".") for r in rules)


def test_every_module_has_a_row_in_the_table():
    roles = {_role(m) for m in MODULES if m != "__init__"}
    assert roles == set(ALLOWED), (sorted(roles - set(ALLOWED)), sorted(set(ALLOWED) - roles))
    folders = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders - set(ALIASES) <= set(ALLOWED), sorted(folders)
    assert len(MODULES) > 40


def test_imports_follow_the_table_in_autograder_layers():
    wrong = [f"{m} -> {t}" for m in MODULES if m != "__init__" for t in sorted(_imports(m))
             if not _allowed(m, t)]
    assert not wrong, "imports fora da tabela de autograder/layers.py:\n" + "\n".join(wrong)


def test_the_injected_wire_code_needs_only_the_standard_library():
    stdlib = set(sys.stdlib_module_names)
    for m in MODULES:
        if _role(m) != "wire":
            continue
        for node in ast.walk(ast.parse(MODULES[m].read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            for n in names:
                top = n.split(".")[0]
                assert top in stdlib or top in WIRE_THIRD_PARTY or top == "__future__", (m, n)


def test_no_import_cycle_in_the_package():
    def reach(start):
        seen, todo = set(), list(_imports(start))
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo += sorted(_imports(m))
        return seen
    cycles = [m for m in MODULES if m in reach(m)]
    assert not cycles, cycles


def test_no_class_nor_function_over_the_cap():
    long = []
    for m, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            n = (node.end_lineno - node.lineno + 1) if hasattr(node, "end_lineno") else 0
            if isinstance(node, ast.ClassDef):
                cap = KNOWN_BIG.get(f"{m}.{node.name}", CLASS_CAP)
                if n > cap:
                    long.append(f"classe {m}.{node.name}: {n} linhas (teto {cap})")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and n > FUNCTION_CAP:
                long.append(f"função {m}.{node.name}: {n} linhas (teto {FUNCTION_CAP})")
    assert not long, long


def test_the_map_names_every_folder():
    """`autograder/__init__.py` é o mapa: cada pasta aparece nele, e as duas perguntas de quem
    chega ("onde se decide uma nota?", "onde roda o notebook do aluno?") têm resposta lá."""
    doc = ast.get_docstring(ast.parse((PKG / "__init__.py").read_text(encoding="utf-8")))
    for role in ALLOWED:
        if (PKG / role).is_dir():
            assert f"{role}/" in doc, role
    assert "Onde se decide uma nota" in doc and "Onde roda o notebook do aluno" in doc
