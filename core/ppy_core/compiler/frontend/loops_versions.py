"""Typed loops: a local reassigned in the function's straight-line code is a new local.

A slot's int bound is the largest of every value assigned to it, wherever: in

    crc = 0xFFFF
    for b in data: ...  crc = (crc >> 1) ^ poly ...
    crc = ~crc & 0xFFFF
    crc = (crc << 8) | ((crc >> 8) & 0xFF)

the last line's `<< 8` would feed the loop's bound and grow it on every pass of the
fixpoint. But an assignment in the function's own body (under no loop or `if`)
replaces the value for everything after it, and nothing after it reads the old one:
so each such assignment starts a new version of the name (`crc$1`, `crc$2`), its own
slot with its own type and bound, and the later reads name it. Python's meaning is
unchanged (locals are not observable), and a name whose type changes at such a point
(`x = 1` ... `x = 0.5`) is two locals of one type each, as Python runs it.
"""

from __future__ import annotations

import ast
import copy


def split_versions(
    body: list[ast.stmt], keep: set[str], params: set[str]
) -> tuple[list[ast.stmt], set[str]]:
    """(a renamed copy of `body`, the new names); names in `keep` (arrays) stay, and a
    name's first binding keeps its name unless it is a parameter."""
    if any(
        isinstance(n, ast.Global | ast.Nonlocal | ast.Delete) for s in body for n in ast.walk(s)
    ):
        return body, set()
    current: dict[str, str] = {}
    counts: dict[str, int] = {}
    made: set[str] = set()
    out: list[ast.stmt] = []
    for stmt in body:
        targets = _rebinds(stmt, keep)
        stmt = copy.deepcopy(stmt)
        if targets is None:  # compound, or not plain names: every name as it stands
            out.append(_Rename(current).visit(stmt))
            continue
        stmt.value = _Rename(current).visit(stmt.value)  # type: ignore[attr-defined]
        for name in targets:
            if name not in current and name not in params:
                current[name] = name  # its first binding: the name itself
                continue
            counts[name] = counts.get(name, 0) + 1
            current[name] = f"{name}${counts[name]}"
            made.add(current[name])
        for target in _target_names(stmt):
            target.id = current[target.id]
        out.append(stmt)
    return (out, made) if made else (body, set())  # nothing rebound: the body itself


def _rebinds(stmt: ast.stmt, keep: set[str]) -> list[str] | None:
    """The names a straight-line assignment of plain names binds, or None."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        names = target.elts if isinstance(target, ast.Tuple) else [target]
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        names = [stmt.target]  # (not `x += v`: in place where x is an array or a view)
    else:
        return None
    if not all(isinstance(n, ast.Name) and n.id not in keep for n in names):
        return None
    ids = [n.id for n in names]  # type: ignore[attr-defined]
    return ids if len(set(ids)) == len(ids) else None


def _target_names(stmt: ast.stmt) -> list[ast.Name]:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]  # type: ignore[attr-defined]
    out: list[ast.Name] = []
    for t in targets:
        out.extend(t.elts if isinstance(t, ast.Tuple) else [t])  # type: ignore[arg-type]
    return out


class _Rename(ast.NodeTransformer):
    def __init__(self, current: dict[str, str]) -> None:
        self.current = current

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.current:
            node.id = self.current[node.id]
        return node


__all__ = ["split_versions"]
