"""A function's front-end record moved to where the function now starts.

A function's key leaves out where it starts (`function_keys`): lines inserted or
deleted above it keep its key, and its record, made `delta` lines higher or lower,
is reused. Everything in the record that names a line is moved by `delta` here, so
that what a reused record reports is what typing the function where it now is
would report: the positions of its AST (the module code compiled from it, so
tracebacks and warnings), its remarks' lines, its diagnostics' locations, the
"line N" its messages cite, and the lines a typed loop's site keeps for its run
time (its prologue's and rest's first lines, and its inlined helpers' first lines,
which the site checks against the helpers' code). The functions a key covers move
together (their starts relative to the function's are keyed), so one delta is
right for all of them.

The "line N" of a message are the compiler's own, outside the backquotes in which
messages quote the program's code (a quoted `print("line 3")` stays as written).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Any

#: the typed-loops function attributes that hold (first line, *lines) (`loops_prologue`)
_STARTS = ("scalars", "rest")
_LINE = re.compile(r"\bline (\d+)")


def rebase_record(record: dict[str, Any], delta: int) -> None:
    """Move every line `record` (a loaded `function_records` record) names by `delta`."""
    seen: set[int] = set()
    nodes: list[ast.AST] = []
    roots = [record["node"], record["expr_sites"], record["operands"], record["rejects"]]
    roots += [site.node for site in record["function_sites"]]
    roots += [s.node for s in record["specializable"]]
    for root in roots:
        _collect(root, seen, nodes)
    for node in nodes:
        if "lineno" in node._attributes and hasattr(node, "lineno"):
            node.lineno += delta  # type: ignore[attr-defined]
            if getattr(node, "end_lineno", None) is not None:
                node.end_lineno += delta  # type: ignore[attr-defined]
    for remark in record["remarks"]:
        remark.line += delta
        remark.message = rebase_text(remark.message, delta)
    record["rejects"] = [
        (node, _texts_moved(spec, delta, ("message", "hint"))) for node, spec in record["rejects"]
    ]
    record["diagnostics"] = [rebase_diagnostic(d, delta) for d in record["diagnostics"]]
    for site in record["function_sites"]:
        attributes = getattr(site.spec.graph, "attributes", None)
        if isinstance(attributes, dict):
            _rebase_attributes(attributes, delta)


def rebase_prepared(record: dict[str, Any], delta: int) -> None:
    """An expression site's prepared record (`FunctionMemo.prepared`), moved."""
    if isinstance(record.get("line"), int):
        record["line"] += delta
    record["reasons"] = [rebase_text(r, delta) for r in record.get("reasons", [])]


def rebase_text(text: str, delta: int) -> str:
    """`text` with each "line N" outside backquotes moved by `delta`."""
    if "line " not in text:
        return text
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # even parts: outside a quote
        parts[i] = _LINE.sub(lambda m: f"line {int(m.group(1)) + delta}", parts[i])
    return "`".join(parts)


def rebase_diagnostic(diagnostic: Any, delta: int) -> Any:
    moved = _texts_moved(diagnostic, delta, ("message", "hint"))
    where = moved.location
    if where is not None and where.line > 0:
        moved = dataclasses.replace(
            moved, location=dataclasses.replace(where, line=where.line + delta)
        )
    return moved


def _texts_moved(obj: Any, delta: int, names: tuple[str, ...]) -> Any:
    """A frozen dataclass with its text fields `names` rebased (others as they are)."""
    if not dataclasses.is_dataclass(obj):
        return obj
    changes = {
        n: rebase_text(getattr(obj, n), delta)
        for n in names
        if isinstance(getattr(obj, n, None), str)
    }
    return dataclasses.replace(obj, **changes) if changes else obj  # type: ignore[type-var]


def _rebase_attributes(attributes: dict[str, Any], delta: int) -> None:
    for name in _STARTS:
        value = attributes.get(name)
        if isinstance(value, tuple) and value and isinstance(value[0], int):
            attributes[name] = (value[0] + delta, *value[1:])
    helpers = attributes.get("helpers")
    if isinstance(helpers, tuple):  # (name, its first line), checked at run time
        attributes["helpers"] = tuple((name, line + delta) for name, line in helpers)


def _collect(obj: Any, seen: set[int], out: list[ast.AST]) -> None:
    """Every AST node under `obj` once: in nodes, containers and dataclass fields (a
    site's node, leaves, arguments, tests, store, views)."""
    if isinstance(obj, ast.AST):
        for node in ast.walk(obj):
            if id(node) not in seen:
                seen.add(id(node))
                out.append(node)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for item in obj:
            _collect(item, seen, out)
    elif isinstance(obj, dict):
        for item in obj.values():
            _collect(item, seen, out)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        for f in dataclasses.fields(obj):
            _collect(getattr(obj, f.name, None), seen, out)


__all__ = ["rebase_diagnostic", "rebase_prepared", "rebase_record", "rebase_text"]
