"""The classes a module defines, offered to the plugins before any function is typed.

A class whose base a plugin's library provides (`class Order(BaseModel)`, `class
Mlp(nn.Module)`) gets its type from that plugin (`Plugin.class_type`), read from source;
every top-level class name then resolves to its qualified name ("module.Order") for the
module's typers, so `Order(count=1)` is a call the plugin answers (and checks) and
`def f(o: Order)` an annotation it knows. Classes are asked in source order, so a model
deriving from an earlier one sees it."""

from __future__ import annotations

import ast

from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.diagnostics import Location
from ppy_core.interface.plugin import ClassContext, ModuleContext
from ppy_core.ir.types import Type


def module_classes(
    oracle: Oracle, tree: ast.Module, module: ModuleContext
) -> tuple[dict[str, str], dict[str, Type]]:
    """(local class name -> qualified name, qualified name -> type a plugin gave)."""
    names: dict[str, str] = {}
    typed: dict[str, Type] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        qualname = f"{module.module}.{node.name}"
        bases = tuple(b for b in (_base(n, module, names) for n in node.bases) if b)
        answer = oracle.class_type(
            ClassContext(
                qualname,
                bases,
                node,
                tree,
                module,
                Location(module.path, node.lineno, node.col_offset + 1),
                report=oracle.report,
            )
        )
        names[node.name] = qualname
        if answer is not None:
            typed[qualname] = answer
    return names, typed


def _base(node: ast.expr, module: ModuleContext, local: dict[str, str]) -> str | None:
    """A base's qualified name through the module's imports or its earlier classes."""
    if isinstance(node, ast.Subscript):
        node = node.value  # Generic[T], a parametrised base
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = module.imports.get(node.id) or local.get(node.id)
    return ".".join([head, *reversed(parts)]) if head else None


__all__ = ["module_classes"]
