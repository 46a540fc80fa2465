"""What the checker's typer does with scopes: displays and comprehensions (their
element types; a comprehension's targets bound in a scope of its own), binding
assignment and loop targets (tuples unpacked), and narrowing a name by what a test
proves (`if x:`, `x is not None`, `isinstance(x, C)`). A mixin of `CheckTyper`."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ppy_core.compiler.check import signatures, stdlib
from ppy_core.compiler.check.types import ANY, class_of, generic, members, union, without_none
from ppy_core.interface.plugin import Converge
from ppy_core.ir.types import NONE, UNKNOWN, OpaqueType, TensorType, TupleType, Type

if TYPE_CHECKING:
    from ppy_core.compiler.check.typer import CheckTyper


class Scopes:
    """Displays, comprehensions, binding and narrowing (needs `CheckTyper`'s `expr`,
    `annotation` and `env`)."""

    __slots__ = ()

    def _elements(self: CheckTyper, nodes: list[ast.expr], conv: Mapping[int, Converge]) -> Type:
        found = []
        for n in nodes:
            if isinstance(n, ast.Starred):
                found.append(signatures.iterate(self.expr(n.value, conv)))
            else:
                found.append(self.expr(n, conv))
        return union(found) if found else UNKNOWN

    def _expr_List(self: CheckTyper, node: ast.List, conv: Mapping[int, Converge]) -> Type:
        return generic("builtins.list", [self._elements(node.elts, conv)])

    def _expr_Set(self: CheckTyper, node: ast.Set, conv: Mapping[int, Converge]) -> Type:
        return generic("builtins.set", [self._elements(node.elts, conv)])

    def _expr_Tuple(self: CheckTyper, node: ast.Tuple, conv: Mapping[int, Converge]) -> Type:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            return generic("builtins.tuple", [self._elements(node.elts, conv)])
        return TupleType(tuple(self.expr(e, conv) for e in node.elts))

    def _expr_Dict(self: CheckTyper, node: ast.Dict, conv: Mapping[int, Converge]) -> Type:
        keys, values = [], []
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # `{**other}`: other's keys and values
                args = signatures.view_as(self.expr(value, conv), "typing.Mapping") or ()
                keys.append(args[0] if len(args) == 2 else UNKNOWN)
                values.append(args[1] if len(args) == 2 else UNKNOWN)
            else:
                keys.append(self.expr(key, conv))
                values.append(self.expr(value, conv))
        if not keys:
            return OpaqueType("builtins.dict")
        return generic("builtins.dict", [union(keys), union(values)])

    def _expr_ListComp(self: CheckTyper, node: ast.ListComp, conv: Mapping[int, Converge]) -> Type:
        return generic("builtins.list", [self._scoped(node, node.elt, conv)])

    def _expr_SetComp(self: CheckTyper, node: ast.SetComp, conv: Mapping[int, Converge]) -> Type:
        return generic("builtins.set", [self._scoped(node, node.elt, conv)])

    def _expr_GeneratorExp(
        self: CheckTyper, node: ast.GeneratorExp, conv: Mapping[int, Converge]
    ) -> Type:
        return generic("typing.Generator", [self._scoped(node, node.elt, conv), NONE, NONE])

    def _expr_DictComp(self: CheckTyper, node: ast.DictComp, conv: Mapping[int, Converge]) -> Type:
        pair = ast.Tuple(elts=[node.key, node.value], ctx=ast.Load())
        kv = self._scoped(node, pair, conv)
        parts = kv.elements if isinstance(kv, TupleType) else (UNKNOWN, UNKNOWN)
        return generic("builtins.dict", parts)

    def _scoped(
        self: CheckTyper, node: ast.expr, elt: ast.expr, conv: Mapping[int, Converge]
    ) -> Type:
        """A comprehension's element, its targets bound in a scope of their own."""
        saved = dict(self.env)
        try:
            for gen in node.generators:  # type: ignore[attr-defined]
                self.bind(gen.target, signatures.iterate(self.expr(gen.iter, conv)))
                for test in gen.ifs:  # `for t in xs if isinstance(t, C)`
                    self.narrow(narrowing(test)[0])
            return self.expr(elt, conv)
        finally:
            self.env.clear()
            self.env.update(saved)

    def narrow(self: CheckTyper, facts: list[Fact]) -> dict[str, Type]:
        """Apply what a test proved to the names' types; the narrowed types."""
        done: dict[str, Type] = {}
        for n, cls, held in facts:
            if n not in self.env and "." in n:  # `self.x is not None`: x's type first
                owner, _, attr = n.partition(".")
                load = ast.Load()
                found = self.expr(ast.Attribute(ast.Name(owner, load), attr, load), {})
                if found is not UNKNOWN:
                    self.env[n] = found
            if n not in self.env:
                continue
            if cls is None:  # (a name only ever None, proved not None: the checker
                # followed a path no run takes, or lost one; it is not known)
                found = without_none(self.env[n]) if self.env[n] != NONE else UNKNOWN
            else:
                classes = cls.elts if isinstance(cls, ast.Tuple) else [cls]
                found = union([self.annotation(c) for c in classes])
                if found is UNKNOWN:
                    continue  # a class nothing types: the name keeps its type
                if not held:  # `not isinstance(x, C)`: x's members that may be no C
                    kept = [m for m in members(self.env[n]) if not _surely(m, found)]
                    found = union(kept) if kept else UNKNOWN
                else:
                    kept = [m for m in members(self.env[n]) if _instance_of(m, found)]
                    found = union(kept) if kept else found  # an f32 array stays f32
            self.env[n] = done[n] = found
        return done

    def bind(self: CheckTyper, target: ast.expr, value: Type) -> None:
        """Bind an assignment or loop target to `value`, unpacking tuples."""
        if isinstance(target, ast.Name):
            self.env[target.id] = value
            if any("." in n for n in self.env):  # what `self.x` was narrowed to is not
                prefix = f"{target.id}."  # the new value's
                for n in [n for n in self.env if n.startswith(prefix)]:
                    del self.env[n]
        elif (key := subject(target)) is not None:  # `self.x = value`: it holds value now
            if value is UNKNOWN:
                self.env.pop(key, None)
            else:
                self.env[key] = value
        elif isinstance(target, ast.Tuple | ast.List):
            plain = [e for e in target.elts if not isinstance(e, ast.Starred)]
            if isinstance(value, TupleType) and len(value.elements) == len(target.elts):
                for element, part in zip(target.elts, value.elements, strict=True):
                    self.bind(element, part)
                return
            item = signatures.iterate(value) if value is not UNKNOWN else UNKNOWN
            for element in target.elts:
                if isinstance(element, ast.Starred):
                    self.bind(element.value, generic("builtins.list", [item]))
                elif element in plain:
                    self.bind(element, item)


def _instance_of(value: Type, cls: Type) -> bool:
    """Whether a value of type `value` is already an instance of what `cls` types."""
    if value is UNKNOWN:
        return False
    if isinstance(value, TensorType) or isinstance(cls, TensorType):
        return any(
            isinstance(c, TensorType)
            and isinstance(value, TensorType)
            and c.library == value.library
            for c in members(cls)
        )
    return signatures.accepts(cls, value)


def _surely(value: Type, cls: Type) -> bool:
    """Whether a value of type `value` is certainly an instance of what `cls` types: its
    class is one of them, or a standard-library class deriving from one (a class read
    from a project's source, or Any, may be anything)."""
    for c in members(cls):
        if value == c:
            return True
        ref, target = class_of(value), class_of(c)
        if ref is None or target is None or value == ANY or not stdlib.is_stdlib(ref[0]):
            continue
        if signatures.view_as(value, target[0]) is not None:
            return True
    return False


#: what a test proves of a name: not None (class None), or whether (the bool) it is an
#: instance of a class (its node)
Fact = tuple[str, ast.expr | None, bool]


def narrowing(test: ast.expr) -> tuple[list[Fact], list[Fact]]:
    """What `test` proves when true, and when false: `x`, `x is not None` drop None
    from x's type; `isinstance(x, C)` makes x a C, and false drops x's C members; `not`
    and `is None` swap them; `a and b` proves both when true, `a or b` both false when
    false; `(m := f()) is not None` proves it of m."""
    test = _target(test)
    if (name := subject(test)) is not None:
        return [(name, None, True)], []
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        yes, no = narrowing(test.operand)
        return no, yes
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and (name := subject(test.left)) is not None
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        if isinstance(test.ops[0], ast.IsNot):
            return [(name, None, True)], []
        if isinstance(test.ops[0], ast.Is):
            return [], [(name, None, True)]
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "isinstance"
        and len(test.args) == 2
        and (name := subject(test.args[0])) is not None
    ):
        return [(name, test.args[1], True)], [(name, test.args[1], False)]
    if (  # `type(x) is C`: x is a C (exactly: what is not may still be one's subclass)
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is | ast.Eq)
        and isinstance(test.left, ast.Call)
        and isinstance(test.left.func, ast.Name)
        and test.left.func.id == "type"
        and len(test.left.args) == 1
        and (name := subject(test.left.args[0])) is not None
    ):
        return [(name, test.comparators[0], True)], []
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [f for v in test.values for f in narrowing(v)[0]], []
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return [], [f for v in test.values for f in narrowing(v)[1]]
    return [], []


def _target(node: ast.expr) -> ast.expr:
    """What a walrus binds stands for its value in a test: `(m := f())` is `m`."""
    return node.target if isinstance(node, ast.NamedExpr) else node


def subject(node: ast.expr) -> str | None:
    """The name a test may narrow: `x`, or `self.x` (an attribute of a name: its type
    is kept under that key until the name or the attribute is bound again)."""
    node = _target(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


__all__ = ["Fact", "Scopes", "narrowing", "subject"]
