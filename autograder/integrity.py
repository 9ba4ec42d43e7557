"""Integridade de uma entrega: células travadas restauradas e trapaças sinalizadas.

Três verificações, cada uma com mensagens em português para o relatório:

- `restore_locked_cells`: compara a entrega com a versão distribuída aos alunos
  (a pasta `release/` do workspace, gerada pelo nbgrader) célula a célula pelo
  `grade_id`. Célula travada apagada volta ao lugar; célula travada editada
  volta ao texto original; metadados do nbgrader mexidos (pontos, `grade`,
  `locked`) voltam ao original; células com `grade_id` inventado perdem os
  metadados. Editar ou apagar uma célula de *código* travada (testes,
  preparação) marca a linha como `tampered`. Comparar com a versão
  distribuída (e não com a fonte, que tem os testes ocultos) evita o falso
  alarme de "checksum changed" que o nbgrader dá para todo aluno.
- `static_flags`: lê (AST) o código que o aluno pode editar e sinaliza
  redefinições das funções de conferência: atributos de numpy/torch/builtins
  (`np.allclose = ...`, `setattr(torch, ...)`), nomes definidos pelas células
  travadas (`def conferir(...)`) e builtins usados por elas
  (`isinstance = ...`).
- `PROBE_CODE`: um trecho que o executor roda no kernel antes de cada célula
  de teste e no fim; ele encontra funções de numpy/torch/builtins trocadas
  por funções definidas no próprio notebook e devolve identidades (`id`) que o
  executor compara com as de depois das células travadas. Pega o que a AST
  não vê (`exec("np.isclose = ...")`). Não é à prova de quem conhece o
  corretor por dentro: é uma segunda rede, e a linha só é sinalizada
  (`flagged`) para o professor olhar; a nota calculada é mantida.
"""

from __future__ import annotations

import ast
import builtins
import copy
import json
from dataclasses import dataclass

import nbformat

# Módulos cujas funções os testes usam para conferir resultados.
WATCHED_MODULES = ("builtins", "numpy", "numpy.testing", "torch", "torch.testing", "math",
                   "operator")
_DEFAULT_ALIASES = {
    "np": "numpy", "numpy": "numpy", "_np": "numpy", "torch": "torch", "_torch": "torch",
    "builtins": "builtins", "__builtins__": "builtins", "math": "math", "npt": "numpy.testing",
    "operator": "operator", "sys": "sys",
}
# Funções de conferência cuja identidade (`id`) é comparada antes de cada teste;
# builtins entram todos (menos os voláteis abaixo).
CHECKED_FUNCTIONS = {
    "numpy": ["allclose", "isclose", "array_equal", "array_equiv", "asarray", "array", "isnan",
              "isinf", "isfinite", "abs", "absolute", "argmax", "argwhere", "unravel_index",
              "nan_to_num", "all", "any", "max", "min", "sum", "shape", "ndim", "issubdtype"],
    "numpy.testing": ["assert_allclose", "assert_array_equal", "assert_array_almost_equal",
                      "assert_equal", "assert_almost_equal", "assert_array_less"],
    "torch": ["allclose", "isclose", "equal", "is_tensor", "as_tensor", "tensor", "is_floating_point"],
    "torch.testing": ["assert_close", "assert_allclose"],
    "math": ["isclose", "isnan", "isinf", "isfinite", "fabs"],
    "operator": ["eq", "ne", "lt", "le", "gt", "ge", "not_", "truth"],
}
# Builtins que mudam a cada execução no ipykernel (input/getpass são trocados por ele).
_VOLATILE_BUILTINS = {"input", "raw_input", "display", "get_ipython", "exit", "quit", "help",
                      "_", "__", "___", "__IPYTHON__", "copyright", "credits", "license"}


@dataclass(frozen=True)
class Issue:
    kind: str        # "tampered" (conta para a situação) ou "note" (só informa)
    message: str


def nbgrader_meta(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_id(cell) -> str | None:
    return nbgrader_meta(cell).get("grade_id")


def _is_locked(cell) -> bool:
    m = nbgrader_meta(cell)
    return bool(m.get("locked") or (m.get("grade") and not m.get("solution")))


def _norm(src: str) -> str:
    return "\n".join(line.rstrip() for line in src.strip().splitlines())


def _describe(cell) -> str:
    m = nbgrader_meta(cell)
    if m.get("grade") and not m.get("solution"):
        return "de teste"
    if cell.get("cell_type") == "code":
        return "de código travada"
    return "de texto travada"


def restore_locked_cells(nb, release) -> tuple[object, list[Issue]]:
    """Devolve (notebook restaurado, problemas encontrados). Não altera `nb`."""
    nb = copy.deepcopy(nb)
    issues: list[Issue] = []
    rel_cells = [c for c in release.cells if grade_id(c)]
    rel_by_id = {grade_id(c): c for c in rel_cells}
    code_or_test = lambda c: c.cell_type == "code" or (nbgrader_meta(c).get("grade") and not nbgrader_meta(c).get("solution"))  # noqa: E731

    # 1. grade_id desconhecido ou repetido: a célula vira uma célula comum do aluno.
    seen: dict[str, int] = {}
    for i, cell in enumerate(nb.cells):
        gid = grade_id(cell)
        if gid is None:
            if "nbgrader" in cell.get("metadata", {}):
                del cell.metadata["nbgrader"]
            continue
        if gid not in rel_by_id:
            m = nbgrader_meta(cell)
            if m.get("grade") or m.get("locked"):
                issues.append(Issue("tampered", f"célula com grade_id desconhecido '{gid}' "
                                                 "(metadados do nbgrader removidos)"))
            del cell.metadata["nbgrader"]
            continue
        if gid in seen:
            rel = rel_by_id[gid]
            first = nb.cells[seen[gid]]
            keep_this = (_norm(cell.source) == _norm(rel.source)
                         and _norm(first.source) != _norm(rel.source))
            drop = first if keep_this else cell
            if keep_this:
                seen[gid] = i
            del drop.metadata["nbgrader"]
            issues.append(Issue("note", f"célula '{gid}' duplicada: a cópia virou célula comum"))
            continue
        seen[gid] = i

    # 2. células travadas e de nota: no lugar, com o texto e os metadados originais.
    present = {grade_id(c): c for c in nb.cells if grade_id(c)}
    for pos, rel in enumerate(rel_cells):
        gid = grade_id(rel)
        rm = nbgrader_meta(rel)
        if not (_is_locked(rel) or rm.get("grade") or rm.get("task")):
            continue
        cell = present.get(gid)
        if cell is None:
            new = copy.deepcopy(rel)
            if new.cell_type == "code":
                new.outputs, new.execution_count = [], None
            idx = 0
            for prev in reversed(rel_cells[:pos]):
                p = present.get(grade_id(prev))
                if p is not None:
                    idx = next(j for j, c in enumerate(nb.cells) if c is p) + 1
                    break
            nb.cells.insert(idx, new)
            present[gid] = new
            if _is_locked(rel) and code_or_test(rel):
                issues.append(Issue("tampered", f"célula {_describe(rel)} '{gid}' apagada (restaurada)"))
            else:
                issues.append(Issue("note", f"célula '{gid}' apagada (restaurada em branco)"))
            continue
        if cell.cell_type != rel.cell_type:
            issues.append(Issue("tampered" if code_or_test(rel) else "note",
                                f"célula '{gid}' mudou de tipo (restaurada)"))
            cell.cell_type = rel.cell_type
            if rel.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
            else:
                cell.pop("outputs", None)
                cell.pop("execution_count", None)
        old_meta = nbgrader_meta(cell)
        for key in ("grade", "solution", "locked", "points", "task"):
            if old_meta.get(key) != rm.get(key) and (key in rm or key in old_meta):
                issues.append(Issue("tampered" if code_or_test(rel) else "note",
                                    f"metadados da célula '{gid}' alterados ({key}: "
                                    f"{rm.get(key)!r} → {old_meta.get(key)!r}; restaurados)"))
                break
        cell.metadata["nbgrader"] = copy.deepcopy(dict(rm))
        if _is_locked(rel) and _norm(cell.source) != _norm(rel.source):
            kind = "tampered" if code_or_test(rel) else "note"
            issues.append(Issue(kind, f"célula {_describe(rel)} '{gid}' editada (restaurada)"))
        if _is_locked(rel):
            cell.source = rel.source
    return nb, issues


# ----------------------------------------------------------------------------- AST

def _to_python(src: str) -> str:
    """Converte mágicas do IPython (%timeit, !ls) em Python para a AST."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        return TransformerManager().transform_cell(src)
    except Exception:  # noqa: BLE001 - sem IPython, a célula vai como está
        return src


def _parse(src: str):
    try:
        return ast.parse(_to_python(src))
    except (SyntaxError, ValueError):
        return None


def _dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _module_bindings(tree) -> dict[str, str]:
    """alias -> módulo para `import x as y` e `from x import y` (submódulos)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _top_level_names(tree) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names.add(n.id)
    return names


def _watched(module: str | None) -> bool:
    return module is not None and any(module == m or module.startswith(m + ".")
                                      for m in WATCHED_MODULES + ("sys",))


class _Scanner(ast.NodeVisitor):
    def __init__(self, aliases, protected, protected_imports, builtin_names, where):
        self.aliases = aliases
        self.protected = protected
        self.protected_imports = protected_imports
        self.builtin_names = builtin_names
        self.where = where
        self.found: list[str] = []
        self.scopes: list[set[str]] = []   # nomes declarados `global` em cada função

    def _say(self, msg):
        self.found.append(f"{msg} ({self.where})")

    def _module_of(self, dotted: str) -> str | None:
        root, _, rest = dotted.partition(".")
        mod = self.aliases.get(root)
        if mod is None:
            return None
        return f"{mod}.{rest}" if rest else mod

    def _global_name(self, name: str) -> bool:
        return not self.scopes or name in self.scopes[-1]

    def _target(self, t, value=None):
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self._target(e)
        elif isinstance(t, ast.Starred):
            self._target(t.value)
        elif isinstance(t, ast.Attribute):
            d = _dotted(t)
            if d:
                base = self._module_of(d.rsplit(".", 1)[0])
                if _watched(base):
                    self._say(f"redefine `{d}`" + (f" ({base}.{t.attr})" if d != f"{base}.{t.attr}" else ""))
                elif d.split(".")[0] in self.protected and self._global_name(d.split(".")[0]):
                    self._say(f"altera `{d}`, definido por uma célula travada")
        elif isinstance(t, ast.Subscript):
            d = _dotted(t.value) or ""
            key = t.slice.value if isinstance(t.slice, ast.Constant) else None
            if d.endswith("__dict__") or d in ("__builtins__",) or d.endswith("sys.modules") \
                    or self._module_of(d) == "sys.modules":
                self._say(f"altera `{d}[{key!r}]`")
            elif isinstance(t.value, ast.Call) and isinstance(t.value.func, ast.Name) \
                    and t.value.func.id in ("vars", "globals") and (key in self.protected or key is None
                                                                    or t.value.func.id == "vars"):
                self._say(f"altera `{t.value.func.id}()[{key!r}]`")
        elif isinstance(t, ast.Name):
            if not self._global_name(t.id):
                return
            if t.id in self.protected:
                self._say(f"redefine `{t.id}`, definido por uma célula travada")
            elif t.id in self.builtin_names:
                self._say(f"redefine o builtin `{t.id}`, usado pelos testes")

    def visit_Assign(self, node):
        for t in node.targets:
            self._target(t)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self._target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node):
        for t in node.targets:
            self._target(t)
        self.generic_visit(node)

    def visit_NamedExpr(self, node):
        self._target(node.target)
        self.generic_visit(node)

    def visit_For(self, node):
        self._target(node.target)
        self.generic_visit(node)

    def visit_With(self, node):
        for item in node.items:
            if item.optional_vars is not None:
                self._target(item.optional_vars)
        self.generic_visit(node)

    def _def(self, node):
        if self._global_name(node.name) and (node.name in self.protected or node.name in self.builtin_names):
            what = "definido por uma célula travada" if node.name in self.protected else "builtin usado pelos testes"
            self._say(f"redefine `{node.name}` ({what})")

    def visit_FunctionDef(self, node):
        self._def(node)
        for d in node.decorator_list:
            self.visit(d)
        self.scopes.append(set())
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self._def(node)
        self.scopes.append(set())
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def visit_Lambda(self, node):
        self.scopes.append(set())
        self.visit(node.body)
        self.scopes.pop()

    def visit_Global(self, node):
        if self.scopes:
            self.scopes[-1].update(node.names)

    def _import(self, node, pairs):
        for bound, module in pairs:
            if not self._global_name(bound):
                continue
            if bound in self.protected and self.protected_imports.get(bound) != module:
                self._say(f"troca `{bound}` (definido por uma célula travada) por `{module}`")
            elif bound in self.builtin_names:
                self._say(f"troca o builtin `{bound}` por `{module}`")

    def visit_Import(self, node):
        self._import(node, [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0])
                            for a in node.names])

    def visit_ImportFrom(self, node):
        mod = "." * node.level + (node.module or "")
        self._import(node, [(a.asname or a.name, f"{mod}.{a.name}") for a in node.names])

    def visit_Call(self, node):
        f = node.func
        fname = f.id if isinstance(f, ast.Name) else (_dotted(f) or "")
        if fname in ("setattr", "delattr", "builtins.setattr", "object.__setattr__") and node.args:
            d = _dotted(node.args[0])
            mod = self._module_of(d) if d else None
            if _watched(mod) or (d in self.protected):
                self._say(f"chama `{fname}` em `{d}`")
        self.generic_visit(node)


def locked_code_facts(nb) -> tuple[set[str], dict[str, str], set[str]]:
    """(nomes definidos por células travadas, imports delas, builtins que elas usam)."""
    protected: set[str] = set()
    imports: dict[str, str] = {}
    used_builtins: set[str] = set()
    all_builtins = set(dir(builtins)) - _VOLATILE_BUILTINS
    for cell in nb.cells:
        if cell.cell_type != "code" or not _is_locked(cell):
            continue
        tree = _parse(cell.source)
        if tree is None:
            continue
        protected |= _top_level_names(tree)
        for node in tree.body:
            if isinstance(node, ast.Import):
                for a in node.names:
                    imports[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    imports[a.asname or a.name] = "." * node.level + f"{node.module}.{a.name}"
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in all_builtins:
                used_builtins.add(n.id)
    return protected, imports, used_builtins


def static_flags(nb) -> list[str]:
    """Redefinições suspeitas no código que o aluno pode editar (já restaurado)."""
    protected, protected_imports, used_builtins = locked_code_facts(nb)
    aliases = dict(_DEFAULT_ALIASES)
    trees = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tree = _parse(cell.source)
        if tree is None:
            continue
        aliases.update({k: v for k, v in _module_bindings(tree).items()})
        if not _is_locked(cell):
            trees.append((i, tree))
    found: list[str] = []
    for i, tree in trees:
        s = _Scanner(aliases, protected, protected_imports, used_builtins, f"célula {i + 1}")
        s.visit(tree)
        found += s.found
    return list(dict.fromkeys(found))


# ----------------------------------------------------------------------------- runtime

def probe_code(watch_names: list[str]) -> str:
    """Código que o executor roda no kernel; o resultado vem em `user_expressions`."""
    return PROBE_TEMPLATE.replace("@WATCHED@", json.dumps(list(WATCHED_MODULES))) \
                         .replace("@CHECKED@", json.dumps(CHECKED_FUNCTIONS)) \
                         .replace("@VOLATILE@", json.dumps(sorted(_VOLATILE_BUILTINS))) \
                         .replace("@NAMES@", json.dumps(sorted(watch_names)))


PROBE_VAR = "__autograder_probe__"
PROBE_TEMPLATE = r'''
def __autograder_probe_fn__():
    import sys, types, re, json
    cell_file = re.compile(r"(ipykernel_\d+[/\\]\d+\.py|<ipython-input-)")
    def from_notebook(o):
        for cand in (o, getattr(o, "__func__", None), getattr(o, "__wrapped__", None)):
            code = getattr(cand, "__code__", None)
            if code is not None and cell_file.search(code.co_filename or ""):
                return True
            if getattr(cand, "__module__", None) == "__main__":
                return True
        return type(o).__module__ in ("unittest.mock",)
    patched, ids = [], {}
    volatile = set(@VOLATILE@)
    checked = @CHECKED@
    for modname in @WATCHED@:
        mod = sys.modules.get(modname)
        if mod is None:
            continue
        for k, v in list(vars(mod).items()):
            if modname == "builtins" and k in volatile:
                continue
            if callable(v) and not isinstance(v, type(sys)):
                if from_notebook(v):
                    patched.append(modname + "." + k)
                if modname == "builtins" or k in checked.get(modname, ()):
                    ids[modname + "." + k] = id(v)
    ns = get_ipython().user_ns
    for k in @NAMES@:
        if k in ns:
            v = ns[k]
            if callable(v) or isinstance(v, types.ModuleType):
                code = getattr(v, "__code__", None)
                ids["ns." + k] = [id(v), id(code) if code is not None else 0]
            else:
                ids["ns." + k] = [0, 0]
    return json.dumps({"patched": sorted(patched), "ids": ids})
__autograder_probe__ = __autograder_probe_fn__()
del __autograder_probe_fn__
'''


def compare_probe(before: dict | None, now: dict, used_builtins: set[str]) -> list[str]:
    """Diferenças entre o estado depois das células travadas e o de agora."""
    out = [f"`{name}` foi trocado por uma função do notebook" for name in now.get("patched", [])]
    if before is None:
        return out
    for key in before["ids"]:
        if key.startswith("ns.") and key not in now["ids"] and before["ids"][key] != [0, 0]:
            out.append(f"`{key[3:]}` foi apagado durante a execução")
    for key, val in now["ids"].items():
        if key not in before["ids"]:
            if key.startswith("ns.") and key[3:] in used_builtins:
                out.append(f"o builtin `{key[3:]}` foi redefinido no notebook")
            continue
        if before["ids"][key] != val and before["ids"][key] != [0, 0]:
            name = key[3:] if key.startswith("ns.") else key
            out.append(f"`{name}` foi redefinido durante a execução")
    return out
