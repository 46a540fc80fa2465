"""Typed loops, expressions: each Python expression as loops ops of its Python type.

The mixin of `loops.LoopsBuilder` (which supplies `emit`, `region`, the arrays,
the slots' kinds and their int bounds). Types follow Python and NumPy exactly:
`a[i] * 2` is an np.float64, `x * 2` with `x: float` a float, int arithmetic is
kept only where its proven bound stays below INT_LIMIT, a comparison of an int
with a float only where the int is exactly a double.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from ppy_core.ir.core import Value
from ppy_core.ir.dialects import loops as L
from ppy_core.ir.types import ScalarType, TensorType

#: |int parameter| and every array dimension are guarded below this at run time
ARG_BOUND = 2**32
INT_LIMIT = 2**63  # an int expression's proven bound must stay below this (int64)
EXACT_FLOAT_INT = 2**53  # ints compared with floats must be exactly representable
LOGICAL = {"int": ScalarType("i64"), "i64": ScalarType("i64"), "bool": ScalarType("i1")}
LOGICAL |= {"i32": ScalarType("i64"), "u8": ScalarType("i64")}  # widened when loaded
FLOAT = ScalarType("f64")
_BINOPS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "truediv",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
    ast.LShift: "lshift",
    ast.RShift: "rshift",
    ast.BitAnd: "and",
    ast.BitOr: "or",
    ast.BitXor: "xor",
}
_COMPARES = {
    ast.Lt: "lt",
    ast.LtE: "le",
    ast.Gt: "gt",
    ast.GtE: "ge",
    ast.Eq: "eq",
    ast.NotEq: "ne",
}
_MATH = {"math.sqrt": "sqrt", "math.fabs": "fabs", "math.copysign": "copysign"}
_ELEMENT_KIND = {"f64": "f64", "i64": "i64", "i32": "i32", "u8": "u8"}  # dtype -> its scalar
#: np.int32 / np.uint8 scalars: their |value| at most this; their own arithmetic is
#: NumPy's (`loops_ints`), elsewhere they compile as an index, a bound or `int(...)`
NARROW = {"i32": 2**31, "u8": 255}
#: np.uint32 elements (NPBench's spmv takes its CSR indices so): as np.int32's, an int
_ELEMENT_KIND["u32"] = "u32"
NARROW["u32"] = 2**32
LOGICAL["u32"] = ScalarType("i64")
_FLOATS = {"float", "f64", "fnum"}


class Refused(Exception):
    """The function stays Python: `node` is the statement or expression that stopped it."""

    def __init__(self, node: ast.AST, message: str, code: str = "E1060") -> None:
        super().__init__(message)
        self.node, self.message, self.code = node, message, code


def ir_type(py: str) -> ScalarType:
    return LOGICAL.get(py, FLOAT)


@dataclass(slots=True)
class Typed:
    value: Value
    py: str
    bound: int = 0  # for "int": |value| <= bound, proven


@dataclass(slots=True)
class Param:
    name: str
    kind: str  # "int", "float" or "array"
    tensor: TensorType | None = None


class LoopExpressions:
    """Expressions; mixed into LoopsBuilder."""

    arrays: dict[str, Param]
    args: dict[str, Value]
    kinds: dict[str, str]
    bounds: dict[str, int]
    local_names: set[str]
    compared: dict[int, Typed]
    emit: Any
    region: Any
    vector_view: Any
    gathered: Any
    gather_dot: Any
    # np.int32 / np.uint8 rules (loops_ints); conditionals and helpers (loops_inline)
    narrow_binop: Any
    as_int: Any
    truth: Any
    extreme_operand: Any
    conditional: Any
    inline_call: Any
    masked_reduce: Any

    def expr(self, node: ast.expr, assigned: set[str]) -> Typed:
        if isinstance(node, ast.Constant):
            v = node.value
            if type(v) is bool:
                return self.const(v, "bool")
            if type(v) is int and abs(v) < INT_LIMIT:
                return self.const(v, "int")
            if type(v) is float:
                return self.const(v, "float")
            raise Refused(node, f"line {node.lineno}: constant {v!r} does not compile")
        if isinstance(node, ast.Name):
            if node.id in self.arrays:
                raise Refused(node, f"line {node.lineno}: the array `{node.id}` is used whole")
            if node.id not in assigned:
                if node.id not in self.local_names:  # a global or a builtin
                    raise Refused(
                        node,
                        f"line {node.lineno}: `{node.id}` is not a parameter or local "
                        "(typed loops read no globals: pass it as a parameter)",
                    )
                raise Refused(node, f"line {node.lineno}: `{node.id}` may be unbound here")
            py = self.kinds[node.id]
            op = self.emit(L.GetOp, [], ir_type(py), slot=node.id, py=py)
            return Typed(op.results[0], py, self.bounds.get(node.id, 0))
        if isinstance(node, ast.Subscript):
            shape = _shape_axis(node)
            if shape is not None:
                return self._dim(node, *shape)
            array, indices, axes = self._element(node, assigned)
            kind = _ELEMENT_KIND[array.tensor.element.kind]  # type: ignore[union-attr]
            op = self.emit(
                L.LoadOp, [self.args[array.name], *indices], ir_type(kind), py=kind, axes=axes
            )
            return Typed(op.results[0], kind)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            return self.dot(node, [node.left, node.right], "matmul", assigned)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return self.binop(node, _BINOPS[type(node.op)], assigned)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node, assigned)
        if isinstance(node, ast.Compare | ast.BoolOp):
            return self.condition(node, assigned)
        if isinstance(node, ast.Call):
            return self.call(node, assigned)
        if isinstance(node, ast.IfExp):
            return self.conditional(node, assigned)
        if isinstance(node, ast.Attribute) and node.attr == "size" and self._vector(node.value):
            return self._dim(node, node.value, 0)  # a 1-D array's size: its length
        if isinstance(node, ast.Attribute):
            raise Refused(
                node, f"line {node.lineno}: attribute `{ast.unparse(node)}` does not compile"
            )
        raise Refused(node, f"line {node.lineno}: `{ast.unparse(node)}` does not compile")

    def const(self, value: Any, py: str) -> Typed:
        op = self.emit(L.ConstOp, [], ir_type(py), value=value, py=py)
        return Typed(op.results[0], py, abs(value) if py == "int" else 0)

    def cast(self, t: Typed, py: str) -> Typed:
        if t.py == py:
            return t
        op = self.emit(L.CastOp, [t.value], ir_type(py), py=py)
        return Typed(op.results[0], py, t.bound if py == "int" else 0)

    def integer(self, node: ast.expr, assigned: set[str]) -> Typed:
        t = self.expr(node, assigned)
        if t.py in NARROW:  # an np.int32 element: its value, exactly
            return Typed(self.cast(t, "int").value, "int", NARROW[t.py])
        if t.py == "i64":
            # any int64 element: a bound of 2**63 - 1, so arithmetic on it is refused
            # (its Python int would not wrap) while it may still index or bound a range
            return Typed(self.cast(t, "int").value, "int", INT_LIMIT - 1)
        if t.py != "int":
            raise Refused(
                node, f"line {node.lineno}: `{ast.unparse(node)}` is a {t.py}, not an int"
            )
        return t

    def _element(
        self, node: ast.Subscript, assigned: set[str]
    ) -> tuple[Param, list[Value], tuple[int, ...]]:
        """(the array, its indices, the axis each one's IndexError names): `a[i, j]`
        names axes 0 and 1, `a[i][j]` axis 0 twice (the row is its own array)."""
        base, levels = subscript_chain(node)
        if not (isinstance(base, ast.Name) and base.id in self.arrays):
            raise Refused(
                node, f"line {node.lineno}: `{ast.unparse(node)}` indexes no array parameter"
            )
        items = [item for level in levels for item in level]
        if any(isinstance(item, ast.Slice) for item in items):
            raise Refused(
                node,
                f"line {node.lineno}: `{ast.unparse(node)}`: a slice compiles in typed loops "
                "only as an operand of np.dot or @",
            )
        if len(levels) > 1 and not all(_cannot_raise(i) for i in items):
            # Python checks a[i] before it evaluates j: keep that order only where j is plain
            raise Refused(node, f"line {node.lineno}: `{ast.unparse(node)}`: index it as a[i, j]")
        axes = tuple(k for level in levels for k in range(len(level)))
        return self.arrays[base.id], [self.integer(i, assigned).value for i in items], axes

    def binop(self, node: ast.BinOp, op: str, assigned: set[str]) -> Typed:
        a, b = self.expr(node.left, assigned), self.expr(node.right, assigned)
        narrow = self.narrow_binop(node, op, a, b)
        if narrow is not None:  # np.int32 / np.uint8 (loops_ints)
            return narrow
        self.wide(node, a, b)
        where = f"line {node.lineno}: `{ast.unparse(node)}`"
        if "bool" in (a.py, b.py):
            raise Refused(node, f"{where}: arithmetic on bools does not compile")
        if a.py == b.py == "int":
            return self._int_binop(node, op, a, b, where)
        if {a.py, b.py} <= {"i64", "int"}:  # NumPy int64 scalars: they wrap, and warn
            if op not in ("add", "sub", "mul"):
                raise Refused(node, f"{where}: int64 scalar `{op}` does not compile yet")
            a, b = self.cast(a, "i64"), self.cast(b, "i64")
            out = self.emit(L.BinOp, [a.value, b.value], ir_type("i64"), op=op, py="i64")
            return Typed(out.results[0], "i64")
        if op not in ("add", "sub", "mul", "truediv"):
            raise Refused(node, f"{where}: `{op}` on floats does not compile yet")
        py = "f64" if "f64" in (a.py, b.py) or "i64" in (a.py, b.py) else "float"
        if py == "float" and "fnum" in (a.py, b.py):  # NumPy's only if the tag says so
            a = a if a.py == "fnum" else self.cast(a, "float")
            b = b if b.py == "fnum" else self.cast(b, "float")
            out = self.emit(L.BinOp, [a.value, b.value], FLOAT, op=op, py="fnum")
            return Typed(out.results[0], "fnum")
        if py == "f64":
            a, b = self.cast(a, "float"), self.cast(b, "float")  # same bits: np.float64 is a double
            out = self.emit(L.BinOp, [a.value, b.value], FLOAT, op=op, py="f64")
            return Typed(out.results[0], "f64")
        a, b = self.cast(a, "float"), self.cast(b, "float")
        out = self.emit(L.BinOp, [a.value, b.value], FLOAT, op=op, py="float")
        return Typed(out.results[0], "float")

    def _int_binop(self, node: ast.BinOp, op: str, a: Typed, b: Typed, where: str) -> Typed:
        if op == "truediv":
            if max(a.bound, b.bound) > EXACT_FLOAT_INT:
                raise Refused(node, f"{where}: int true division beyond 2**53 stays Python")
            fa, fb = self.cast(a, "float"), self.cast(b, "float")
            out = self.emit(L.BinOp, [fa.value, fb.value], FLOAT, op="truediv", py="float")
            out.attributes["ints"] = True  # ZeroDivisionError says "division by zero"
            return Typed(out.results[0], "float")
        if op in ("lshift", "rshift"):
            shift = node.right
            if not (
                isinstance(shift, ast.Constant)
                and type(shift.value) is int
                and 0 <= shift.value < 63
            ):
                raise Refused(node, f"{where}: a shift count must be an int constant in 0..62")
            bound = a.bound << shift.value if op == "lshift" else a.bound
        elif op == "add" or op == "sub":
            bound = a.bound + b.bound
        elif op == "mul":
            bound = a.bound * b.bound
        elif op == "floordiv":
            bound = a.bound
        elif op == "mod":
            bound = b.bound
        elif op == "and":
            bound = (
                min(a.bound, b.bound)
                if _nonneg(node.left) or _nonneg(node.right)
                else _pow2(max(a.bound, b.bound))
            )
        else:
            bound = _pow2(max(a.bound, b.bound))
        if bound >= INT_LIMIT:
            raise Refused(node, f"{where}: int arithmetic not proven to fit 64 bits", "E1061")
        out = self.emit(L.BinOp, [a.value, b.value], ir_type("int"), op=op, py="int")
        return Typed(out.results[0], "int", bound)

    def unary(self, node: ast.UnaryOp, assigned: set[str]) -> Typed:
        if isinstance(node.op, ast.Not):
            c = self.condition(node.operand, assigned)
            return Typed(
                self.emit(L.UnaryOp, [c.value], ir_type("bool"), op="not", py="bool").results[0],
                "bool",
            )
        t = self.expr(node.operand, assigned)
        self.wide(node, t)
        if t.py in ("bool", "i64"):
            raise Refused(
                node, f"line {node.lineno}: `{ast.unparse(node)}` on a {t.py} stays Python"
            )
        name = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert"}[type(node.op)]
        if name == "invert" and t.py != "int":
            raise Refused(node, f"line {node.lineno}: `~` on a float")
        out = self.emit(L.UnaryOp, [t.value], ir_type(t.py), op=name, py=t.py)
        return Typed(out.results[0], t.py, t.bound + 1)

    def condition(self, node: ast.expr, assigned: set[str]) -> Typed:
        if isinstance(node, ast.BoolOp):
            first = self.condition(node.values[0], assigned)
            for rest in node.values[1:]:
                inner = set(assigned)  # names bound on the right may stay unbound
                rhs = self.region(
                    lambda r=rest, s=inner: self.emit(L.YieldOp, [self.condition(r, s).value])
                )
                op = "and" if isinstance(node.op, ast.And) else "or"
                first = Typed(
                    self.emit(
                        L.ShortCircuitOp, [first.value], ir_type("bool"), [rhs], op=op
                    ).results[0],
                    "bool",
                )
            return first
        if isinstance(node, ast.Compare):
            left = self.expr(node.left, assigned)
            return self._chain(node, left, list(node.ops), list(node.comparators), assigned)
        return self.truth(node, self.expr(node, assigned))

    def _chain(
        self,
        node: ast.Compare,
        left: Typed,
        ops: list[Any],
        rest: list[ast.expr],
        assigned: set[str],
    ) -> Typed:
        """`a < b < c`: `a < b and b < c` with b evaluated once and c only if needed."""
        right = self.expr(rest[0], assigned)
        self.compared[id(node)] = right  # a while loop's counter limit
        first = self._compare(node, ops[0], left, right)
        if len(ops) == 1:
            return first
        inner = set(assigned)
        rhs = self.region(
            lambda: self.emit(L.YieldOp, [self._chain(node, right, ops[1:], rest[1:], inner).value])
        )
        out = self.emit(L.ShortCircuitOp, [first.value], ir_type("bool"), [rhs], op="and")
        return Typed(out.results[0], "bool")

    def _compare(self, node: ast.Compare, how: Any, a: Typed, b: Typed) -> Typed:
        a, b = self.as_int(a), self.as_int(b)  # exact values
        self.wide(node, a, b)
        name = _COMPARES.get(type(how))
        if name is None or "bool" in (a.py, b.py):
            raise Refused(node, f"line {node.lineno}: `{ast.unparse(node)}` does not compile")
        if {a.py, b.py} <= {"int", "i64"}:
            a, b = self.cast(a, "int"), self.cast(b, "int")
        else:
            for t in (a, b):
                if t.py == "i64" or (t.py == "int" and t.bound > EXACT_FLOAT_INT):
                    raise Refused(node, f"line {node.lineno}: int/float comparison beyond 2**53")
            a, b = self.cast(a, "float"), self.cast(b, "float")
        out = self.emit(L.CompareOp, [a.value, b.value], ir_type("bool"), op=name)
        return Typed(out.results[0], "bool")

    def _builtin(self, func: ast.expr) -> str | None:
        if isinstance(func, ast.Name) and func.id not in self.kinds and func.id not in self.args:
            return func.id
        return None

    def call(self, node: ast.Call, assigned: set[str]) -> Typed:
        where = f"line {node.lineno}: `{ast.unparse(node)}`"
        if node.keywords:
            raise Refused(node, f"{where}: keyword arguments")
        name = self.typer.qualname(node.func) or self._builtin(node.func)
        name = (name or "").removeprefix("builtins.")
        if name == "len" and len(node.args) == 1:
            return self._dim(node, node.args[0], 0)
        if name in _MATH:
            args = [self.cast(self._number(a, assigned), "float") for a in node.args]
            if len(args) != (2 if name == "math.copysign" else 1):
                raise Refused(node, f"{where}: wrong argument count")
            out = self.emit(L.CallOp, [a.value for a in args], FLOAT, fn=_MATH[name], py="float")
            return Typed(out.results[0], "float")
        if name == "numpy.dot" and len(node.args) == 2:
            return self.dot(node, list(node.args), "dot", assigned)
        if name == "numpy.sqrt" and len(node.args) == 1:
            # np.sqrt of a scalar: an np.float64 (NaN and a warning below 0, no error)
            t = self.cast(self._number(node.args[0], assigned), "float")
            out = self.emit(L.CallOp, [t.value], FLOAT, fn="np_sqrt", py="f64")
            return Typed(out.results[0], "f64")
        if name == "float" and len(node.args) == 1:
            return self.cast(self._number(node.args[0], assigned), "float")
        if name == "int" and len(node.args) == 1:
            return self.integer(node.args[0], assigned)
        if name == "abs" and len(node.args) == 1:
            t = self._number(node.args[0], assigned)
            if t.py == "i64":
                raise Refused(node, f"{where}: abs of an int64 scalar stays Python")
            return Typed(
                self.emit(L.CallOp, [t.value], ir_type(t.py), fn="abs", py=t.py).results[0],
                t.py,
                t.bound,
            )
        if name in ("min", "max") and len(node.args) == 2:
            a, b = (self.extreme_operand(x, assigned) for x in node.args)
            if a.py != b.py or a.py in ("i64", "fnum"):
                raise Refused(
                    node,
                    f"{where}: {name} of a {a.py} and a {b.py} (its type depends on the values)",
                )
            out = self.emit(L.CallOp, [a.value, b.value], ir_type(a.py), fn=name, py=a.py)
            return Typed(out.results[0], a.py, max(a.bound, b.bound))
        masked = self.masked_reduce(node, assigned)
        if masked is not None:  # `X[m].mean()` of a mask m (loops_masked)
            return masked
        inlined = self.inline_call(node, assigned)
        if inlined is not None:  # a module helper, built in place (loops_inline)
            return inlined
        raise Refused(node, f"{where} is not a call typed loops compile")

    def dot(self, node: ast.expr, operands: list[ast.expr], kind: str, assigned: set[str]) -> Typed:
        """`np.dot(u, v)` / `u @ v` of two float64 vector views: one `loops.dot`."""
        if any(self.gathered(o) for o in operands):  # `vals @ x[cols]` (loops_gather)
            return self.gather_dot(node, operands, kind, assigned)  # type: ignore[no-any-return]
        views, arrays, bounds = [], [], []
        for operand in operands:
            # Python checks an earlier view's indices before it evaluates this one's
            raising = not any("i" in v for v in views)
            array, view, values = self.vector_view(operand, assigned, raising)  # np.flip too
            views.append(view)
            arrays.append(self.args[array.name])
            bounds.extend(values)
        out = self.emit(L.DotOp, [*arrays, *bounds], FLOAT, kind=kind, views=tuple(views), py="f64")
        return Typed(out.results[0], "f64")

    def is_view(self, node: ast.expr) -> bool:
        """A whole array parameter or a subscript of one holding a slice."""
        if isinstance(node, ast.Name):
            return node.id in self.arrays
        if isinstance(node, ast.Subscript):
            base, levels = subscript_chain(node)
            return (
                isinstance(base, ast.Name)
                and base.id in self.arrays
                and any(isinstance(item, ast.Slice) for level in levels for item in level)
            )
        return False

    def inplace(self, stmt: ast.AugAssign, assigned: set[str]) -> None:
        """`X op= s`: NumPy's in-place ufunc over a float64 array or view, s a scalar."""
        where = f"line {stmt.lineno}: `{ast.unparse(stmt).splitlines()[0]}`"
        op = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv"}.get(
            type(stmt.op)
        )
        if op is None:
            raise Refused(stmt, f"{where}: only += -= *= /= of arrays compile")
        whole = isinstance(stmt.target, ast.Name)
        indexed = {id(n.value) for n in ast.walk(stmt.value) if isinstance(n, ast.Subscript)}
        if any(
            self.is_view(n)
            for n in ast.walk(stmt.value)
            if isinstance(n, ast.Name | ast.Subscript) and id(n) not in indexed
        ):
            raise Refused(
                stmt,
                f"{where}: an array expression on the right of an in-place update does not "
                "compile yet (a scalar does)",
            )
        if not whole and not _cannot_raise(stmt.value):
            # Python checks the view's indices before it evaluates the right side
            raise Refused(stmt, f"{where}: the right side of a view's update may raise")
        array, view, bounds = self._view(stmt.target, assigned, rank_any=whole, raising=True)
        value = self._number(stmt.value, assigned)
        if value.py not in ("float", "f64", "fnum", "int") or (
            value.py == "int" and value.bound > EXACT_FLOAT_INT
        ):
            raise Refused(stmt, f"{where}: the right side is a {value.py}, not a float")
        value = self.cast(value, "float")
        self.writes.add(array.name)  # type: ignore[attr-defined]
        self.emit(L.InplaceOp, [self.args[array.name], value.value, *bounds], op=op, views=view)

    def _view(
        self, node: ast.expr, assigned: set[str], rank_any: bool = False, raising: bool = False
    ) -> tuple[Param, str, list[Value]]:
        """A float64 vector view of an array parameter: the array itself (1-D) or a
        subscript giving every axis, one of them a slice with no step (`A[i, :j]`,
        `x[k + 1:]`). Its index and bound expressions are evaluated before any view's
        checks: unless `raising` (no earlier check to keep ahead of them), they must
        be ones that cannot raise (`i + 1`, names)."""
        where = f"line {getattr(node, 'lineno', 0)}: `{ast.unparse(node)}`"
        base, items = node, None
        if isinstance(node, ast.Subscript):
            base, levels = subscript_chain(node)
            if len(levels) != 1:
                raise Refused(node, f"{where}: index a vector view as a[i, lo:hi]")
            items = levels[0]
        if not (isinstance(base, ast.Name) and base.id in self.arrays):
            raise Refused(node, f"{where}: np.dot / @ compile only of array parameters' views")
        array = self.arrays[base.id]
        tensor = array.tensor
        if tensor.element.kind != "f64":  # type: ignore[union-attr]
            raise Refused(node, f"{where}: np.dot / @ compile only of float64 arrays")
        rank = len(tensor.shape)  # type: ignore[union-attr,arg-type]
        if items is None:  # the array itself: every axis whole
            items = [ast.Slice() for _ in range(rank)]
        slices = [item for item in items if isinstance(item, ast.Slice)]
        if len(items) != rank or not slices or (len(slices) != 1 and not rank_any):
            raise Refused(node, f"{where}: a vector view gives every axis, one of them a slice")
        view, values = "", []
        for axis, item in enumerate(items):
            if isinstance(item, ast.Slice):
                if item.step is not None:
                    raise Refused(node, f"{where}: a slice with a step does not compile yet")
                view += "s"
                for bound in (item.lower, item.upper):
                    if bound is not None and not raising and not _cannot_raise(bound):
                        raise Refused(node, f"{where}: a slice bound that may raise")
                lo = (
                    self.integer(item.lower, assigned)
                    if item.lower is not None
                    else self.const(0, "int")
                )
                hi = (
                    self.integer(item.upper, assigned)
                    if item.upper is not None
                    else self._dim(node, base, axis)
                )
                values += [lo.value, hi.value]
            else:
                if not raising and not _cannot_raise(item):
                    raise Refused(node, f"{where}: an index that may raise")
                view += "i"
                values.append(self.integer(item, assigned).value)
        return array, view, values

    def wide(self, node: ast.AST, *values: Typed) -> None:
        """Refuse an np.int32 value anywhere but where it is an int."""
        for t in values:
            if t.py in NARROW:
                raise Refused(
                    node,
                    f"line {getattr(node, 'lineno', 0)}: `{ast.unparse(node)}`: an np.int32 "
                    "element compiles only as an index, a bound or int(...)",
                )

    def _number(self, node: ast.expr, assigned: set[str]) -> Typed:
        t = self.expr(node, assigned)
        self.wide(node, t)
        if t.py == "bool":
            raise Refused(node, f"line {node.lineno}: a bool where a number is needed")
        return t

    def _vector(self, node: ast.expr) -> bool:
        """Whether `node` names a 1-D array parameter."""
        array = self.arrays.get(node.id) if isinstance(node, ast.Name) else None
        return array is not None and len(array.tensor.shape) == 1  # type: ignore[union-attr,arg-type]

    def _dim(self, node: ast.expr, array: ast.expr, axis: int) -> Typed:
        if not (isinstance(array, ast.Name) and array.id in self.arrays):
            raise Refused(
                node, f"line {node.lineno}: `{ast.unparse(node)}` is not an array's length"
            )
        rank = len(self.arrays[array.id].tensor.shape)  # type: ignore[union-attr,arg-type]
        if axis >= rank:
            raise Refused(node, f"line {node.lineno}: axis {axis} of a rank-{rank} array")
        out = self.emit(L.DimOp, [self.args[array.id]], ir_type("int"), axis=axis)
        return Typed(out.results[0], "int", ARG_BOUND)


def _shape_axis(node: ast.expr) -> tuple[ast.expr, int] | None:
    """`a.shape[k]` -> (a, k)."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "shape"
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
    ):
        return node.value.value, node.slice.value
    return None


def subscript_chain(node: ast.Subscript) -> tuple[ast.expr, list[list[ast.expr]]]:
    """`a[i][j, k]` -> (a, [[i], [j, k]])."""
    levels: list[list[ast.expr]] = []
    cur: ast.expr = node
    while isinstance(cur, ast.Subscript):
        levels.insert(0, list(cur.slice.elts) if isinstance(cur.slice, ast.Tuple) else [cur.slice])
        cur = cur.value
    return cur, levels


def _cannot_raise(node: ast.expr) -> bool:
    """Names, constants and + - * of them: evaluating one raises nothing."""
    if isinstance(node, ast.Name | ast.Constant):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
        return _cannot_raise(node.left) and _cannot_raise(node.right)
    return isinstance(node, ast.UnaryOp) and _cannot_raise(node.operand)


def _nonneg(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0


def _pow2(bound: int) -> int:
    return (1 << max(bound, 1).bit_length()) - 1
