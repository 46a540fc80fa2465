"""One module checked: every annotated function typed statement by statement with the
checker's typer, and what contradicts what reported.

The core finds what needs no library knowledge — returns and assignments that
contradict their annotations (E1005), operands no plugin accepts and Python refuses
(E1004), and, under strict, every Unknown with the reason nothing knows it (E1001).
What needs library knowledge — a call that does not fit a modelled signature (E1006),
an attribute a library object lacks (E1003), a shape or dtype contradiction (E1007),
a constant outside a pydantic `Field` constraint (E1050) — the plugins report from the same
hooks the compiler asks, through the contexts' `report`.

A *checked* function is one with at least one annotation (as mypy's default): an
unannotated function is typed for its calls' sake, but its Unknowns are never errors.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ppy_core.compiler.check.typer import BYTES, STR, CheckTyper
from ppy_core.diagnostics import Diagnostic, Location
from ppy_core.ir.types import (
    F64,
    I1,
    I64,
    NONE,
    UNKNOWN,
    OpaqueType,
    ScalarType,
    TensorType,
    Type,
)

#: expression kinds whose Unknown is worth naming (the rest inherit a child's)
_ROOTS = (ast.Name, ast.Attribute, ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Compare)
_SCALARS = (F64, I64, I1)


@dataclass(slots=True)
class FunctionCheck:
    """Checks one function (or a module body, which is typed but never strict)."""

    typer: CheckTyper
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Module
    strict: bool
    claimed: Callable[[str], str | None]  # module -> plugin claiming it
    findings: list[Diagnostic] = field(default_factory=list)
    returns: Type = UNKNOWN

    @property
    def checked(self) -> bool:
        node = self.node
        if isinstance(node, ast.Module):
            return False
        args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        return node.returns is not None or any(a.annotation is not None for a in args)

    def run(self) -> list[Diagnostic]:
        if not isinstance(self.node, ast.Module):
            self._parameters(self.node)
            self.returns = self.typer.annotation(self.node.returns)
        self._block(self.node.body)
        return self.findings

    def _parameters(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            self.typer.env[arg.arg] = self.typer.annotation(arg.annotation)
        for arg in (args.vararg, args.kwarg):
            if arg is not None:
                self.typer.env[arg.arg] = OpaqueType(
                    "builtins.tuple" if arg is args.vararg else "builtins.dict"
                )

    # -- statements -------------------------------------------------------------------
    def _block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self._statement(stmt)

    def _statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return  # checked on their own
        for expr in _expressions(stmt):
            self._expression(expr)
        if isinstance(stmt, ast.Assign):
            value = self._type(stmt.value)
            for target in stmt.targets:
                self._bind(target, value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            declared = self.typer.annotation(stmt.annotation)
            if stmt.value is not None:
                self._contradiction(stmt.value, declared, "assigned to", stmt.target.id, "E1009")
            self.typer.env[stmt.target.id] = (
                declared
                if declared is not UNKNOWN
                else (self._type(stmt.value) if stmt.value is not None else UNKNOWN)
            )
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            pass  # the operator's type is checked as an expression; the name keeps its type
        elif isinstance(stmt, ast.For | ast.AsyncFor):
            self._bind(stmt.target, self._iterated(stmt.iter))
            self._block(stmt.body)
            self._block(stmt.orelse)
        elif isinstance(stmt, ast.While | ast.If):
            self._block(stmt.body)
            self._block(stmt.orelse)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, UNKNOWN)
            self._block(stmt.body)
        elif isinstance(stmt, ast.Try):
            for part in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                self._block(part)
        elif isinstance(stmt, ast.Return) and self.checked and self.node.returns is not None:
            if stmt.value is None:
                if self.returns not in (NONE, UNKNOWN):
                    self._find(
                        stmt,
                        "E1005",
                        f"a bare `return` in a function annotated to return {_name(self.returns)}",
                        "return a value of that type",
                    )
            else:
                self._contradiction(stmt.value, self.returns, "returned from", "", "E1005")

    def _bind(self, target: ast.expr, value: Type) -> None:
        if isinstance(target, ast.Name):
            self.typer.env[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._bind(element, UNKNOWN)

    def _iterated(self, iterable: ast.expr) -> Type:
        if (
            isinstance(iterable, ast.Call)
            and self.typer.qualname(iterable.func) == "builtins.range"
        ):
            return I64
        return UNKNOWN

    # -- expressions ------------------------------------------------------------------
    def _type(self, node: ast.expr) -> Type:
        return self.typer.expr(node, {})

    def _expression(self, expr: ast.expr) -> None:
        """Type `expr` (the plugins report what they find) and check what the core can."""
        types: dict[int, Type] = {}
        for node in self._postorder(expr):
            types[id(node)] = found = self._type(node)
            if isinstance(node, ast.BinOp) and self._operands(node, types):
                continue
            if found is UNKNOWN and self.strict and self.checked and isinstance(node, _ROOTS):
                # only where the Unknown starts: every part it is made from is known
                parts = self._typed_children(node)
                if all(types.get(id(c), F64) is not UNKNOWN for c in parts):
                    self._unknown(node)

    def _typed_children(self, node: ast.expr) -> list[ast.expr]:
        """The sub-expressions `node`'s type is made from: not a callee's name, and not
        the module in `np.sin` or `time.perf_counter` (a module is not a value here)."""
        if isinstance(node, ast.Call):
            func = node.func
            owner = [func.value] if isinstance(func, ast.Attribute) else []
            if owner and self.typer.module_name(func):
                owner = []
            return [*owner, *node.args, *(k.value for k in node.keywords)]
        if isinstance(node, ast.Attribute):
            return [] if self.typer.module_name(node) else [node.value]
        return [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]

    def _postorder(self, expr: ast.expr) -> Iterator[ast.expr]:
        """Sub-expressions before the expressions they are in; not into nested scopes."""
        if not isinstance(
            expr, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
        ):
            for child in self._typed_children(expr):
                yield from self._postorder(child)
        yield expr

    def _operands(self, node: ast.BinOp, types: dict[int, Type]) -> bool:
        """Operands Python itself refuses (`array + "s"`, `None * x`): no plugin accepted
        them, and no Python rule makes them valid. True when reported."""
        left, right = types.get(id(node.left), UNKNOWN), types.get(id(node.right), UNKNOWN)
        if UNKNOWN in (left, right) or types.get(id(node)) is not UNKNOWN:
            return False
        op = type(node.op).__name__
        texts = (STR, BYTES)
        refused = NONE in (left, right) or (
            (left in texts or right in texts)
            and not (op == "Mod" and left in texts)
            and not (op == "Mult" and I64 in (left, right))
            and not (left == right and op == "Add")
            and any(t in _SCALARS or isinstance(t, TensorType) for t in (left, right))
        )
        if refused:
            self._find(
                node,
                "E1004",
                f"operator {_symbol(op)} does not take {_name(left)} and {_name(right)}",
                "convert one operand (float(...), str(...), np.asarray(...)) or fix the names",
            )
        return refused

    def _contradiction(
        self, value: ast.expr, declared: Type, verb: str, name: str, code: str
    ) -> None:
        found = self._type(value)
        why = _contradicts(found, declared)
        if why is None:
            return
        where = f"`{name}`" if name else "this function"
        self._find(
            value,
            code if "dtype" not in why and "shape" not in why else "E1007",
            f"{_name(found)} {verb} {where}, annotated {_name(declared)}: {why}",
            "fix the annotation or the value; PPy trusts annotations when it compiles",
        )

    def _unknown(self, node: ast.expr) -> None:
        text = ast.unparse(node)
        self._find(
            node,
            "E1001",
            f"`{text if len(text) <= 60 else text[:57] + '...'}` has no known type: "
            f"{self._why(node)}",
            "annotate it, or install/enable the plugin of its library; strict = false "
            "allows Unknown",
        )

    def _why(self, node: ast.expr) -> str:
        typer = self.typer
        if isinstance(node, ast.Name):
            if node.id in typer.env:
                return "it is bound to something untyped (annotate the parameter or variable)"
            return f"nothing binds `{node.id}` that the checker can type"
        if isinstance(node, ast.Call | ast.Attribute):
            target = node.func if isinstance(node, ast.Call) else node
            qualname = typer.qualname(target)
            if qualname is not None:
                plugin = self.claimed(qualname)
                if plugin is None:
                    return f"no plugin claims module `{qualname.partition('.')[0]}`"
                return f"plugin `{plugin}` does not model `{qualname}`"
            if isinstance(target, ast.Attribute):
                owner = self._type(target.value)
                return f"`{target.attr}` of {_name(owner)} is not modelled"
        return "no plugin types this expression"

    def _find(self, node: ast.AST, code: str, message: str, hint: str) -> None:
        self.findings.append(Diagnostic(code, message, hint, self.typer.location(node)))


def _expressions(stmt: ast.stmt) -> Iterator[ast.expr]:
    """The expressions a statement evaluates itself (not those of nested blocks)."""
    if isinstance(stmt, ast.For | ast.AsyncFor):
        yield stmt.iter
    elif isinstance(stmt, ast.While | ast.If):
        yield stmt.test
    elif isinstance(stmt, ast.With | ast.AsyncWith):
        yield from (item.context_expr for item in stmt.items)
    elif isinstance(stmt, ast.Try | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return
    elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
        if stmt.value is not None:
            yield stmt.value
    else:
        yield from (c for c in ast.iter_child_nodes(stmt) if isinstance(c, ast.expr))


def _contradicts(found: Type, declared: Type) -> str | None:
    """Why a value of type `found` cannot be of `declared` (None: it can, or unknown)."""
    if UNKNOWN in (found, declared):
        return None
    if isinstance(declared, TensorType):
        if not isinstance(found, TensorType):
            return "not an array" if found not in (NONE,) else "None is not an array"
        if declared.library and found.library and declared.library != found.library:
            return f"a {found.library} array is not a {declared.library} array"
        if found.element != declared.element and "?" not in (found.element.kind,):
            return f"dtype {found.element.kind} is not {declared.element.kind}"
        if found.shape is not None and declared.shape is not None:
            if len(found.shape) != len(declared.shape):
                return f"shape has rank {len(found.shape)}, not {len(declared.shape)}"
            for a, b in zip(found.shape, declared.shape, strict=True):
                if isinstance(a, int) and isinstance(b, int) and a != b:
                    return f"shape {found.shape} is not {declared.shape}"
        return None
    if isinstance(found, TensorType):
        return (
            "an array is not a scalar"
            if isinstance(declared, ScalarType)
            else ("an array is not None" if declared == NONE else None)
        )
    if declared == F64:
        return None if found in _SCALARS else _mismatch(found, declared)
    if declared == I64:
        return None if found in (I64, I1) else _mismatch(found, declared)
    if declared == I1:
        return None if found == I1 else _mismatch(found, declared)
    if declared == NONE:
        return None if found == NONE else "the function is annotated to return None"
    if isinstance(declared, OpaqueType) and declared.name.startswith("builtins."):
        if found in _SCALARS or found == NONE:
            return _mismatch(found, declared)
        if isinstance(found, OpaqueType) and found.name.startswith("builtins."):
            return None if found == declared else _mismatch(found, declared)
    return None


def _mismatch(found: Type, declared: Type) -> str:
    return f"{_name(found)} is not {_name(declared)}"


def _name(t: Type) -> str:
    names = {F64: "float", I64: "int", I1: "bool", NONE: "None", UNKNOWN: "Unknown"}
    if t in names:
        return names[t]
    if isinstance(t, OpaqueType):
        return t.name.removeprefix("builtins.")
    if isinstance(t, TensorType):
        return f"{t.library or 'tensor'} array of {t.element.kind}"
    return t.text()


def _symbol(op: str) -> str:
    return {
        "Add": "+",
        "Sub": "-",
        "Mult": "*",
        "Div": "/",
        "FloorDiv": "//",
        "Mod": "%",
        "Pow": "**",
        "MatMult": "@",
    }.get(op, op)


__all__ = ["FunctionCheck", "Location"]
