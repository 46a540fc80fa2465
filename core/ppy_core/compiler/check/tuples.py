"""Named tuples as the call checks see them: a class whose `__new__` takes its fields
in order (the last ones with defaults), whose `_make(iterable)` is a classmethod and
whose `_replace` takes its fields as keywords only.

Three spellings make one: `class P(NamedTuple)` with annotated fields (the members
are put on a class of their own, P's base, since P's body may not define them),
`P = collections.namedtuple("P", "x y", defaults=(0,), rename=False)`, and
`P = typing.NamedTuple("P", [("x", int), ("y", int)])`. Whatever is not a literal
(the field names, `defaults`, `rename`, a splatted argument) leaves it unknown, as
does a spelling Python refuses when it makes the class."""

from __future__ import annotations

import ast
import keyword

#: where each constructor comes from, as an import names it
NAMEDTUPLE = "collections.namedtuple"
TYPING_NAMEDTUPLE = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})


def synthesized(name: str, fields: list[str], defaults: int, at: ast.AST) -> ast.ClassDef:
    """The class holding a named tuple's members, placed at `at`'s line."""

    def function(
        title: str, params: list[str], kwonly: list[str], n_defaults: int, decorator: str = ""
    ) -> ast.FunctionDef:
        args = ast.arguments(
            posonlyargs=[],
            args=[ast.arg(p) for p in params],
            vararg=None,
            kwonlyargs=[ast.arg(k) for k in kwonly],
            kw_defaults=[ast.Constant(None) for _ in kwonly],
            kwarg=None,
            defaults=[ast.Constant(None) for _ in range(n_defaults)],
        )
        decorators: list[ast.expr] = [ast.Name(decorator, ast.Load())] if decorator else []
        return ast.FunctionDef(title, args, [ast.Pass()], decorators, None, None)

    body: list[ast.stmt] = [
        function("__new__", ["_cls", *fields], [], defaults),
        function("_make", ["cls", "iterable"], [], 0, "classmethod"),
        function("_replace", ["self"], fields, 0),
    ]
    cls = ast.ClassDef(name, [], [], body, [])
    for node in ast.walk(cls):
        ast.copy_location(node, at)
    return cls


def class_fields(cls: ast.ClassDef) -> tuple[list[str], int] | None:
    """The fields of `class P(NamedTuple)` and how many (last ones) have defaults;
    None where Python refuses the class (a field without a default after one with)."""
    fields: list[str] = []
    defaults = 0
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            fields.append(stmt.target.id)
            if stmt.value is not None:
                defaults += 1
            elif defaults:
                return None
    return fields, defaults


def call_fields(call: ast.Call, origin: str) -> tuple[str, list[str], int] | None:
    """The name, fields and number of defaults of a functional named tuple made by
    `call` (`origin`: the constructor's dotted name); None when not all literal."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return None
    if not call.args or not _string(call.args[0]):
        return None
    typename: str = call.args[0].value  # type: ignore[attr-defined]
    if origin == NAMEDTUPLE:
        return _collections(typename, call)
    if origin in TYPING_NAMEDTUPLE:
        return _typing(typename, call)
    return None


def _collections(typename: str, call: ast.Call) -> tuple[str, list[str], int] | None:
    options = {k.arg: k.value for k in call.keywords}
    if len(call.args) > 2 or set(options) - {"field_names", "rename", "defaults", "module"}:
        return None  # (Python refuses the call itself)
    names = call.args[1] if len(call.args) == 2 else options.get("field_names")
    if names is None:
        return None
    if _string(names):
        fields = names.value.replace(",", " ").split()  # type: ignore[attr-defined]
    elif isinstance(names, ast.List | ast.Tuple) and all(_string(e) for e in names.elts):
        fields = [e.value for e in names.elts]  # type: ignore[attr-defined]
    else:
        return None
    rename = options.get("rename")
    if rename is not None and not (isinstance(rename, ast.Constant) and rename.value in (0, 1)):
        return None
    if rename is not None and rename.value:  # type: ignore[attr-defined]
        seen: set[str] = set()
        for index, field in enumerate(fields):  # as collections.namedtuple renames
            if _bad(field) or field.startswith("_") or field in seen:
                fields[index] = f"_{index}"
            seen.add(field)
    elif any(_bad(f) or f.startswith("_") for f in fields) or len(set(fields)) != len(fields):
        return None  # a ValueError when the line runs: another error than a call's
    given = options.get("defaults")
    defaults = 0
    if isinstance(given, ast.List | ast.Tuple) and not any(
        isinstance(e, ast.Starred) for e in given.elts
    ):
        defaults = len(given.elts)
    elif given is not None and not (isinstance(given, ast.Constant) and given.value is None):
        return None
    if defaults > len(fields):
        return None  # (a TypeError when the class is made)
    return typename, fields, defaults


def _typing(typename: str, call: ast.Call) -> tuple[str, list[str], int] | None:
    if len(call.args) == 1:  # `NamedTuple("P", x=int, y=str)`
        fields = [k.arg for k in call.keywords if k.arg is not None]
    elif len(call.args) == 2 and not call.keywords:
        pairs = call.args[1]
        if not isinstance(pairs, ast.List | ast.Tuple):
            return None
        fields = []
        for pair in pairs.elts:
            if not (isinstance(pair, ast.Tuple) and len(pair.elts) == 2 and _string(pair.elts[0])):
                return None
            fields.append(pair.elts[0].value)  # type: ignore[attr-defined]
    else:
        return None
    if any(_bad(f) or f.startswith("_") for f in fields) or len(set(fields)) != len(fields):
        return None
    return typename, fields, 0


def _string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _bad(name: str) -> bool:
    return not name.isidentifier() or keyword.iskeyword(name)


__all__ = ["NAMEDTUPLE", "TYPING_NAMEDTUPLE", "call_fields", "class_fields", "synthesized"]
