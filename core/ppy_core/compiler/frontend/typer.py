"""Types of names and expressions inside one function, from annotations and the
plugins' hooks. What no plugin knows is UNKNOWN; typing never fails."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ppy_core.compiler.frontend.arithmetic import python_arithmetic
from ppy_core.compiler.frontend.bound import binding_counts
from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.diagnostics import Location
from ppy_core.interface.plugin import (
    NOT_CONSTANT,
    AttributeContext,
    CallContext,
    Converge,
    OperatorContext,
    SubscriptContext,
)
from ppy_core.ir.types import F64, I1, I64, NONE, UNKNOWN, TensorType, TupleType, Type

BUILTIN_TYPES: Mapping[str, Type] = {
    "builtins.float": F64,
    "builtins.int": I64,
    "builtins.bool": I1,
    "builtins.None": NONE,
}
T = TypeVar("T")
_COMPOUND = (ast.BinOp, ast.UnaryOp, ast.Call, ast.Attribute, ast.Subscript)
_DTYPE_NAMES = {
    "float64": "f64",
    "f64": "f64",
    "float32": "f32",
    "f32": "f32",
    "int64": "i64",
    "i64": "i64",
    "int32": "i32",
    "bool": "i1",
}


@dataclass(slots=True)
class Typer:
    """Resolves names through the module's imports and asks the plugins the rest."""

    oracle: Oracle
    imports: Mapping[str, str]
    path: str
    env: dict[str, Type] = field(default_factory=dict)
    globals: dict[str, Type] = field(default_factory=dict)  # module names bound once
    # the module's own classes: name -> "module.Class", and the types plugins gave them
    local_names: Mapping[str, str] = field(default_factory=dict)
    local_types: Mapping[str, Type] = field(default_factory=dict)
    # unannotated parameters typed by a call's signature (a specialization)
    observed: Mapping[str, Type] = field(default_factory=dict)
    # id(node) -> (node, conv, len(conv), type): the types of operator, call, attribute
    # and subscript nodes no site took, while `conv` is the same and has not grown. A
    # parent asks its children's types again (the hook's context, then Python's
    # rule); unmemoised that is exponential in the depth of an untyped tree.
    memo: dict[int, tuple[ast.expr, Mapping[int, Converge], int, Type]] | None = None

    def location(self, node: ast.AST) -> Location:
        return Location(self.path, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)

    def qualname(self, node: ast.expr) -> str | None:
        """The qualified name a Name/Attribute chain denotes, if it starts at an import."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.env:
            return None
        if node.id in self.imports:
            return ".".join([self.imports[node.id], *reversed(parts)])
        if node.id in self.local_names:
            return ".".join([self.local_names[node.id], *reversed(parts)])
        if node.id in ("float", "int", "bool", "abs") and not parts:
            return f"builtins.{node.id}"
        return None

    # -- annotations ----------------------------------------------------------
    def parameter(self, arg: ast.arg) -> Type:
        """A parameter's type, the one place it is decided: its annotation's, else
        (a specialization) what the call's signature said of it, else Unknown. An
        annotation that types nothing (`f32 array | f64 array`: no one type) leaves the
        parameter to its signature as if unannotated (the function is specializable)."""
        annotated = UNKNOWN if arg.annotation is None else self.annotation(arg.annotation)
        if annotated is UNKNOWN:
            return self.observed.get(arg.arg, UNKNOWN)
        return annotated

    def python_float(self, arg: ast.arg, described: tuple[Any, ...] | None = None) -> bool:
        """Whether the parameter is a float for the number leaves of
        `speculate.number_leaf` (`2 * dx` read before the tree's operations), the one
        place it is decided: annotated `float`, as the typed sites already read it
        (they evaluate such a leaf of an annotated `dx: float` early too), else, a
        specialization, the call gave a Python float (`described`, which the dispatcher
        checks per call; a NumPy float64 there is no number). An annotated float may be
        NumPy's float64 at run time (NPBench passes gemm's alpha so): its leaf warns or
        raises under `np.errstate` as Python's statement does, once (the division and
        power tests, `safe_tests`, send a zero divisor or a huge base to Python)."""
        if arg.annotation is None:
            return described is not None and described[:1] == ("float",)
        return self.in_module_scope(self.qualname, arg.annotation) == "builtins.float"

    def in_module_scope(self, read: Callable[[ast.expr], T], node: ast.expr) -> T:
        """`read(node)` with the names of the module, not the function's: Python
        evaluates a parameter's annotation where the `def` runs (`def f(data:
        npt.NDArray[np.float64], npt: int)`: `npt` there is the module's)."""
        env, self.env = self.env, {}
        try:
            return read(node)
        finally:
            self.env = env

    def annotation(self, node: ast.expr | None) -> Type:
        """The type an annotation names, its names read in the module's scope."""
        if node is None:
            return UNKNOWN
        return self.in_module_scope(self._annotation, node)

    def _annotation(self, node: ast.expr) -> Type:
        if isinstance(node, ast.Constant) and node.value is None:
            return NONE
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                return self.annotation(ast.parse(node.value, mode="eval").body)
            except SyntaxError:
                return UNKNOWN
        if isinstance(node, ast.Subscript):
            return self._subscripted(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return _either(self._annotation(node.left), self._annotation(node.right))
        name = self.qualname(node)
        if name is None:
            return UNKNOWN
        known = BUILTIN_TYPES.get(name) or self.oracle.external_types().get(name)
        return known or self.local_types.get(name) or UNKNOWN

    def _subscripted(self, node: ast.Subscript) -> Type:
        name = self.qualname(node.value)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if name in ("typing.Annotated", "typing_extensions.Annotated") and items:
            return self._annotated(self.annotation(items[0]), items[1:])
        if name is None:
            return UNKNOWN
        index_names = tuple(self.qualname(i) or _constant(i) for i in items)
        ctx = SubscriptContext(
            value=None,
            qualname=name,
            index_names=index_names,
            index=tuple(self.annotation(i) for i in items),
            in_annotation=True,
            location=self.location(node),
            report=self.oracle.report,
        )
        return self.oracle.subscript(ctx) or UNKNOWN

    def _annotated(self, base: Type, extras: list[ast.expr]) -> Type:
        """`Annotated[T, ppy.Shape(...), ppy.DType(...)]` refines a tensor type."""
        if not isinstance(base, TensorType):
            return base
        element, shape = base.element, base.shape
        for extra in extras:
            if not isinstance(extra, ast.Call):
                continue
            callee = self.qualname(extra.func) or ""
            args = [_constant(a) for a in extra.args]
            if callee.endswith("ppy.Shape") or callee == "ppy.Shape":
                shape = tuple(a if isinstance(a, int | str) else None for a in args)
            elif (
                callee.endswith("ppy.DType")
                and args
                and isinstance(args[0], str)
                and args[0] in _DTYPE_NAMES
            ):
                element = type(element)(_DTYPE_NAMES[args[0]])
        return TensorType(element, shape, base.library)

    # -- expressions ----------------------------------------------------------
    def expr(self, node: ast.expr, conv: Mapping[int, Converge]) -> Type:
        """The type of `node`, using already-computed convergences."""
        if id(node) in conv:
            return conv[id(node)].result
        memo = self.memo
        if memo is None or not isinstance(node, _COMPOUND):
            return self._expr(node, conv)
        entry = memo.get(id(node))
        if entry is not None and entry[0] is node and entry[1] is conv and entry[2] == len(conv):
            return entry[3]
        found = self._expr(node, conv)
        memo[id(node)] = (node, conv, len(conv), found)
        return found

    def _expr(self, node: ast.expr, conv: Mapping[int, Converge]) -> Type:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool):
                return I1
            return F64 if isinstance(value, float) else I64 if isinstance(value, int) else UNKNOWN
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            return self.globals.get(node.id, UNKNOWN)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, conv)
        if isinstance(node, ast.Call):
            return self._call_type(node, conv)
        if isinstance(node, ast.BinOp | ast.UnaryOp):
            return self._operator_type(node, conv)
        if isinstance(node, ast.Subscript):  # `df["a"]`: what a plugin says it is
            return self._value_subscript(node, conv)
        return UNKNOWN

    def _value_subscript(self, node: ast.Subscript, conv: Mapping[int, Converge]) -> Type:
        value = self.expr(node.value, conv)
        if value is UNKNOWN:
            return UNKNOWN
        if isinstance(value, TupleType):  # `np.histogram(r, n)[0]`: the item at a literal
            at = node.slice.value if isinstance(node.slice, ast.Constant) else None
            ok = isinstance(at, int) and not isinstance(at, bool)
            ok = ok and -len(value.elements) <= at < len(value.elements)  # type: ignore[operator]
            return value.elements[at] if ok else UNKNOWN  # type: ignore[index]
        ctx = SubscriptContext(
            value=value,
            index=(self.expr(node.slice, conv),),
            location=self.location(node),
            report=self.oracle.report,
        )
        return self.oracle.subscript(ctx) or UNKNOWN

    def _operator_type(self, node: ast.BinOp | ast.UnaryOp, conv: Mapping[int, Converge]) -> Type:
        """An operator no site took: Python's own rules on Python numbers (the core's,
        whatever plugins are active), else the plugins' answer."""
        operands = [node.left, node.right] if isinstance(node, ast.BinOp) else [node.operand]
        ctx = self.operator_context(node, operands, conv)  # operands typed once
        number = python_arithmetic(ctx.op, ctx.operands)
        if number is not None:
            return number
        reply = self.oracle.operator(ctx)
        if isinstance(reply, Type):
            return reply
        return reply.result if isinstance(reply, Converge) else UNKNOWN

    def _attribute(self, node: ast.Attribute, conv: Mapping[int, Converge]) -> Type:
        if isinstance(node.value, ast.Name) and self.observed:  # `self.P`, observed
            found = self.observed.get(f"{node.value.id}.{node.attr}")
            if found is not None:
                return found
        owner = self.qualname(node.value)
        if owner is not None:
            ctx = AttributeContext(
                node.attr, owner=owner, location=self.location(node), report=self.oracle.report
            )
            return self.oracle.attribute_type(ctx) or UNKNOWN
        owner_type = self.expr(node.value, conv)
        ctx = AttributeContext(
            node.attr,
            owner_type=owner_type,
            location=self.location(node),
            report=self.oracle.report,
        )
        return self.oracle.instance_attribute(ctx) or UNKNOWN

    def _call_type(self, node: ast.Call, conv: Mapping[int, Converge]) -> Type:
        ctx = self.call_context(node, conv)
        if ctx is None:
            return UNKNOWN
        answer = self.oracle.call(ctx)
        return answer.result if answer is not None else UNKNOWN

    def call_context(self, node: ast.Call, conv: Mapping[int, Converge]) -> CallContext | None:
        """The plugins' view of a call, with methods aliased to functions
        (`x.sum()` -> `numpy.sum(x)`), or None if the callee is not resolvable."""
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        if len(args) != len(node.args) or any(k.arg is None for k in node.keywords):
            return None
        callee = self.qualname(node.func)
        receiver: Type | None = None
        operands = list(args)
        if callee is None and isinstance(node.func, ast.Attribute):
            receiver = self.expr(node.func.value, conv)
            if receiver is UNKNOWN:
                return None
            callee = f"{self._owner_class(receiver)}.{node.func.attr}"
            operands = [node.func.value, *args]
        if callee is None:
            return None
        ctx = CallContext(
            callee=callee,
            args=tuple(self.expr(a, conv) for a in operands),
            kwargs={k.arg: self.expr(k.value, conv) for k in node.keywords if k.arg},
            constants=tuple(_constant(a) for a in operands),
            kw_constants={k.arg: _constant(k.value) for k in node.keywords if k.arg},
            receiver=receiver,
            location=self.location(node),
            report=self.oracle.report,
        )
        alias = self.oracle.call_alias(ctx)
        if alias:
            ctx = CallContext(
                callee=alias,
                args=ctx.args,
                kwargs=ctx.kwargs,
                constants=ctx.constants,
                kw_constants=ctx.kw_constants,
                receiver=receiver,
                location=ctx.location,
                report=ctx.report,
            )
        return self.oracle.adjust_call(ctx) or ctx  # defaults and keywords normalised

    def owner_class(self, t: Type) -> str:
        """The class name a method of a value of type `t` is asked under."""
        return self._owner_class(t)

    def _owner_class(self, t: Type) -> str:
        """Method calls are asked as `<class>.<method>`: the class a plugin named for the
        receiver's type (`numpy.ndarray`), else the type's text."""
        for name, known in self.oracle.external_types().items():
            if known == t or (
                isinstance(known, TensorType)
                and isinstance(t, TensorType)
                and known.library
                and known.library == t.library
            ):
                return name
        return "!" + t.text()

    def operator_context(
        self,
        node: ast.expr,
        operands: list[ast.expr],
        conv: Mapping[int, Converge],
        in_place: bool = False,
    ) -> OperatorContext:
        op = type(node.ops[0] if isinstance(node, ast.Compare) else node.op).__name__
        return OperatorContext(
            op,
            tuple(self.expr(o, conv) for o in operands),
            tuple(_constant(o) for o in operands),
            self.location(node),
            report=self.oracle.report,
            in_place=in_place,
        )

    def in_place(self, node: ast.BinOp, conv: Mapping[int, Converge]) -> Type:
        """The type `target OP= value` leaves in `target`, for `node` = `target OP value`
        (its nodes converged in `conv`): the plugins' in-place answer (an ndarray stays
        itself), else `target OP value`'s type, Python's rule without `__iadd__`."""
        ctx = self.operator_context(node, [node.left, node.right], conv, in_place=True)
        reply = self.oracle.operator(ctx)
        if isinstance(reply, Type):
            return reply
        return reply.result if isinstance(reply, Converge) else self.expr(node, conv)


def _either(left: Type, right: Type) -> Type:
    """`A | B` as an annotation: one type if both are, arrays of one element and library
    of either rank an array of unknown rank (lenet's relu takes rank 4 and rank 2:
    what its sites assume, the element, each call's guard checks), else Unknown."""
    if left == right:
        return left
    if (
        isinstance(left, TensorType)
        and isinstance(right, TensorType)
        and left.element == right.element
        and left.library == right.library
    ):
        return TensorType(left.element, None, left.library)
    return UNKNOWN


def _constant(node: ast.expr) -> Any:
    """A literal's value (with unary minus), else NOT_CONSTANT."""
    if isinstance(node, ast.Constant):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int | float)
        and not isinstance(node.operand.value, bool)
    ):
        return -node.operand.value
    return NOT_CONSTANT


def single_assignments(func: ast.FunctionDef | ast.Module) -> dict[str, ast.expr]:
    """Names assigned exactly once, by a plain `name = value` (or a chained
    `a = b = value`: Python evaluates the value once and binds it to each name) at the
    top level of a function (or module), and never otherwise bound (`bound.py`)."""
    counts = binding_counts(func)
    found: dict[str, ast.expr] = {}
    for stmt in func.body:
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            for target in stmt.targets:
                if counts[target.id] == 1:  # type: ignore[attr-defined]
                    found[target.id] = stmt.value  # type: ignore[attr-defined]
        elif (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.value is not None
            and counts[stmt.target.id] == 1
        ):
            found[stmt.target.id] = stmt.value
    return found


__all__ = ["Typer", "single_assignments", "BUILTIN_TYPES"]
