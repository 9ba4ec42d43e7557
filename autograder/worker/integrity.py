"""Integridade de uma entrega: células travadas restauradas a partir da versão distribuída.

`restore_locked_cells` compara a entrega com a versão distribuída aos alunos
(a pasta `release/` do workspace, gerada pelo nbgrader) célula a célula pelo
`grade_id`. Célula travada apagada volta ao lugar; célula travada editada
volta ao texto original; metadados do nbgrader mexidos (pontos, `grade`,
`locked`) voltam ao original; células com `grade_id` inventado perdem os
metadados. Editar ou apagar uma célula de *código* travada (testes,
preparação) marca a linha como `tampered`. Comparar com a versão distribuída
(e não com a fonte, que tem os testes ocultos) evita o falso alarme de
"checksum changed" que o nbgrader dá para todo aluno.

Trocar `np.allclose`, redefinir `conferir` ou um builtin no notebook não é
mais procurado aqui: os testes rodam num kernel separado (executor.py), onde
nada disso chega.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ..core.nbmeta import grade_id, is_locked, nbgrader_meta, norm_source


@dataclass(frozen=True)
class Issue:
    kind: str        # "tampered" (conta para a situação) ou "note" (só informa)
    message: str


def _describe(cell) -> str:
    m = nbgrader_meta(cell)
    if m.get("grade") and not m.get("solution"):
        return "de teste"
    if cell.get("cell_type") == "code":
        return "de código travada"
    return "de texto travada"


def restore_locked_cells(nb, release, earlier: dict | None = None) -> tuple[object, list[Issue]]:
    """Devolve (notebook restaurado, problemas encontrados). Não altera `nb`. `earlier`:
    grade_id -> textos da célula travada em versões anteriores da versão distribuída (um teste
    corrigido depois da entrega): com um deles, a célula é atualizada e só vira observação."""
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
            keep_this = (norm_source(cell.source) == norm_source(rel.source)
                         and norm_source(first.source) != norm_source(rel.source))
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
        if not (is_locked(rel) or rm.get("grade") or rm.get("task")):
            _restore_meta(present.get(gid), rel, issues)
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
            if is_locked(rel) and code_or_test(rel):
                issues.append(Issue("tampered", f"célula {_describe(rel)} '{gid}' apagada (restaurada)"))
            else:
                issues.append(Issue("note", f"célula '{gid}' apagada (restaurada em branco)"))
            continue
        if cell.cell_type != rel.cell_type:
            issues.append(Issue("tampered" if code_or_test(rel) else "note",
                                f"célula '{gid}' mudou de tipo (restaurada)"))
            _restore_type(cell, rel)
        old_meta = nbgrader_meta(cell)
        for key in ("grade", "solution", "locked", "points", "task"):
            if old_meta.get(key) != rm.get(key) and (key in rm or key in old_meta):
                issues.append(Issue("tampered" if code_or_test(rel) else "note",
                                    f"metadados da célula '{gid}' alterados ({key}: "
                                    f"{rm.get(key)!r} → {old_meta.get(key)!r}; restaurados)"))
                break
        cell.metadata["nbgrader"] = copy.deepcopy(dict(rm))
        if is_locked(rel) and norm_source(cell.source) != norm_source(rel.source):
            if norm_source(cell.source) in {norm_source(x) for x in (earlier or {}).get(gid, ())}:
                issues.append(Issue("note", f"célula {_describe(rel)} '{gid}' de uma versão anterior "
                                            "da tarefa (atualizada)"))
            else:
                kind = "tampered" if code_or_test(rel) else "note"
                issues.append(Issue(kind, f"célula {_describe(rel)} '{gid}' editada (restaurada)"))
        if is_locked(rel):
            cell.source = rel.source
    return nb, issues


def _restore_type(cell, rel) -> None:
    """A célula volta ao tipo da versão distribuída (código sem saídas, ou texto)."""
    cell.cell_type = rel.cell_type
    if rel.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)


def _restore_meta(cell, rel, issues: list[Issue]) -> None:
    """Célula de resposta (nem travada nem de nota): os metadados do nbgrader voltam aos da
    versão distribuída. Uma resposta que se diz travada, de nota ou de tarefa é adulteração:
    com `locked`, ela rodaria no kernel do corretor (revisão C1)."""
    if cell is None:
        return
    rm, old = nbgrader_meta(rel), nbgrader_meta(cell)
    claims = [k for k in ("locked", "grade", "task") if old.get(k) and not rm.get(k)]
    if claims or cell.cell_type != rel.cell_type:
        issues.append(Issue("tampered", f"célula de resposta '{grade_id(rel)}' com metadados de célula "
                                        f"do professor ({', '.join(claims) or 'tipo'}; restaurados)"))
    if cell.cell_type != rel.cell_type:
        _restore_type(cell, rel)
    cell.metadata["nbgrader"] = copy.deepcopy(dict(rm))
