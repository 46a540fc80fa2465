"""The checker's typer: the compiler's `Typer`, asking the same plugins, plus what a
checker must also see — builtins and the standard library from typeshed (overloads
resolved by argument types, generics through their type arguments), the core's own
`ppy` API from its annotated source, and the expression kinds the compiler never
needs typed (strings, displays, comprehensions, comparisons, subscripts, `not`).
Compilation keeps its own narrower typer; what the plugins answer is the same in both,
because both ask them through one `Oracle`. Where nothing knows a type, `reasons`
keeps why, for strict mode's message."""

from __future__ import annotations

import ast
import builtins
from collections.abc import Mapping
from dataclasses import dataclass, field

from ppy_core.compiler.check import hints, local, modules, signatures, stdlib
from ppy_core.compiler.check.scopes import Fact, Scopes, narrowing
from ppy_core.compiler.check.signatures import Args
from ppy_core.compiler.check.types import (
    ANY,
    BYTES,
    FUNCTION,
    STR,
    class_of,
    generic,
    members,
    name,
    union,
    without_none,
)
from ppy_core.compiler.frontend.arithmetic import python_arithmetic
from ppy_core.compiler.frontend.typer import Typer, _constant
from ppy_core.interface.plugin import NOT_CONSTANT, AttributeContext, CallContext, Converge
from ppy_core.ir.types import (
    F64,
    I1,
    I64,
    NONE,
    UNKNOWN,
    OpaqueType,
    TensorType,
    TupleType,
    Type,
)

_BUILTINS = frozenset(dir(builtins))
SLICE = OpaqueType("builtins.slice")
#: literals' classes (`...` is the index item NumPy reads as "the other dimensions")
_CONSTANTS: Mapping[type, Type] = {
    str: STR,
    bytes: BYTES,
    type(None): NONE,
    type(...): OpaqueType("types.EllipsisType"),
}
_CLASSES = frozenset(n for n in _BUILTINS if isinstance(getattr(builtins, n), type))
_DUNDERS = {
    "Add": "add",
    "Sub": "sub",
    "Mult": "mul",
    "Div": "truediv",
    "FloorDiv": "floordiv",
    "Mod": "mod",
    "Pow": "pow",
    "MatMult": "matmul",
    "BitAnd": "and",
    "BitOr": "or",
    "BitXor": "xor",
    "LShift": "lshift",
    "RShift": "rshift",
}


#: the expression kinds whose types are memoised while one expression is typed
_MEMOISED = (ast.BinOp, ast.UnaryOp, ast.Call, ast.Attribute, ast.Subscript, ast.BoolOp,
             ast.Compare)  # fmt: skip


@dataclass(slots=True)
class CheckTyper(Typer, Scopes):
    """`Typer` with the standard library and every expression kind typed."""

    classes: Mapping[str, str] = field(default_factory=dict)  # local class -> qualname
    class_nodes: Mapping[str, ast.ClassDef] = field(default_factory=dict)  # qualname -> def
    functions: Mapping[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    module_names: Mapping[str, Type] = field(default_factory=dict)  # __doc__, __file__, ...
    reasons: dict[int, str] = field(default_factory=dict)  # id(node) -> why it is Unknown
    claimed: frozenset[str] = frozenset()  # top-level modules a plugin claims
    module: str = ""  # this module's own name
    # id(node) -> (node, conv, len(conv), type), as `Typer.memo` but of this typer's
    # answer: an operator's operands are asked again by its reader (`_expr_BinOp`), so
    # unmemoised a chain `a + b + c + ...` of untyped names is exponential in its length
    check_memo: dict[int, tuple[ast.expr, Mapping[int, Converge], int, Type]] = field(
        default_factory=dict
    )

    def qualname(self, node: ast.expr) -> str | None:
        found = Typer.qualname(self, node)
        if found is not None:
            return found
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if (
            isinstance(node, ast.Name)
            and node.id in _BUILTINS
            and node.id not in self.env
            and node.id not in self.globals
            and node.id not in self.module_names
        ):
            return ".".join([f"builtins.{node.id}", *reversed(parts)])
        return None

    def annotation(self, node: ast.expr | None) -> Type:
        found = Typer.annotation(self, node)
        if found is not UNKNOWN or node is None:
            return found
        if isinstance(node, ast.Constant):
            return UNKNOWN  # a string annotation Typer parsed and found nothing in
        name = self.qualname(node.value if isinstance(node, ast.Subscript) else node)
        if name in self.classes.values() and not isinstance(node, ast.Subscript):
            return OpaqueType(name)
        return hints.read(node, self.qualname, self.annotation)

    def module_name(self, node: ast.expr) -> bool:
        """Whether `node` names an imported module (or a name inside one)."""
        return isinstance(node, ast.Name | ast.Attribute) and Typer.qualname(self, node) is not None

    # -- expressions --------------------------------------------------------------------
    def expr(self, node: ast.expr, conv: Mapping[int, Converge]) -> Type:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            narrowed = self.env.get(f"{node.value.id}.{node.attr}")  # `scopes.subject`
            if narrowed is not None:
                return narrowed
        entry = self.check_memo.get(id(node))
        if entry is not None and entry[0] is node and entry[1] is conv and entry[2] == len(conv):
            return entry[3]
        found = Typer.expr(self, node, conv)
        if found is UNKNOWN:
            reader = getattr(self, f"_expr_{type(node).__name__}", None)
            found = reader(node, conv) if reader is not None else UNKNOWN
        if isinstance(node, _MEMOISED):
            self.check_memo[id(node)] = (node, conv, len(conv), found)
        return found

    def _expr_Constant(self, node: ast.Constant, conv: Mapping[int, Converge]) -> Type:
        return _CONSTANTS.get(type(node.value), UNKNOWN)

    def _expr_Slice(self, node: ast.Slice, conv: Mapping[int, Converge]) -> Type:
        return SLICE  # `a[1:n]`, `a[:, 0]`: an index item a plugin's `__getitem__` reads

    def _expr_JoinedStr(self, node: ast.expr, conv: Mapping[int, Converge]) -> Type:
        return STR

    def _expr_Lambda(self, node: ast.expr, conv: Mapping[int, Converge]) -> Type:
        return FUNCTION

    def _expr_Name(self, node: ast.Name, conv: Mapping[int, Converge]) -> Type:
        if node.id in self.env or node.id in self.globals:
            return UNKNOWN
        if node.id in self.functions:
            return FUNCTION  # a function of this module, as a value
        if node.id in self.classes or node.id in _CLASSES:
            return OpaqueType("builtins.type")
        if node.id in self.module_names:
            return self.module_names[node.id]
        imported = self.imports.get(node.id)
        if imported is not None and "." in imported and self.typed(imported):
            return modules.module_attribute(imported) or UNKNOWN  # `from m import X`
        if node.id in _BUILTINS:
            return modules.module_attribute(f"builtins.{node.id}") or UNKNOWN
        return UNKNOWN

    def _expr_NamedExpr(self, node: ast.NamedExpr, conv: Mapping[int, Converge]) -> Type:
        value = self.expr(node.value, conv)
        if isinstance(node.target, ast.Name):
            self.env[node.target.id] = value
        return value

    def _expr_UnaryOp(self, node: ast.UnaryOp, conv: Mapping[int, Converge]) -> Type:
        if isinstance(node.op, ast.Not):
            return I1  # `not x` is a bool whatever x is
        operand = self.expr(node.operand, conv)
        if isinstance(node.op, ast.Invert) and operand in (I64, I1):
            return I64
        return python_arithmetic(type(node.op).__name__, (operand,), bools=True) or UNKNOWN

    def _expr_BoolOp(self, node: ast.BoolOp, conv: Mapping[int, Converge]) -> Type:
        """Each part typed with what the parts before it proved (`x and x.name`)."""
        side, parts = 0 if isinstance(node.op, ast.And) else 1, []
        undo: dict[str, tuple[Type, Type | None]] = {}
        try:
            for value in node.values:
                parts.append(self.expr(value, conv))
                self._narrow_for(narrowing(value)[side], undo)
        finally:
            self._unnarrow(undo)
        if isinstance(node.op, ast.Or):  # every part but the last is taken only if truthy
            return union([*(without_none(p) for p in parts[:-1]), parts[-1]])
        return union(parts)

    def _expr_IfExp(self, node: ast.IfExp, conv: Mapping[int, Converge]) -> Type:
        """The branches typed with what the test proves (`[m] if m else []`)."""
        yes, no = narrowing(node.test)
        undo: dict[str, tuple[Type, Type | None]] = {}
        try:
            self._narrow_for(yes, undo)
            body = self.expr(node.body, conv)
            self._unnarrow(undo)
            self._narrow_for(no, undo)
            orelse = self.expr(node.orelse, conv)
        finally:
            self._unnarrow(undo)
        return union([body, orelse])

    def _narrow_for(self, facts: list[Fact], undo: dict[str, tuple[Type, Type | None]]) -> None:
        """Narrow for part of an expression, keeping in `undo` how to go back."""
        before = {n: self.env.get(n) for n, _, _ in facts}
        for n, t in self.narrow(facts).items():
            undo[n] = (t, undo[n][1] if n in undo else before.get(n))

    def _unnarrow(self, undo: dict[str, tuple[Type, Type | None]]) -> None:
        """The names narrowed for part of an expression as they were before (unless
        rebound since: what a walrus in it bound stays bound)."""
        for n, (t, old) in undo.items():
            if self.env.get(n) is t:
                if old is None:
                    self.env.pop(n, None)
                else:
                    self.env[n] = old
        undo.clear()

    def _expr_Compare(self, node: ast.Compare, conv: Mapping[int, Converge]) -> Type:
        if len(node.ops) == 1:
            reply = self.oracle.operator(
                self.operator_context(node, [node.left, node.comparators[0]], conv)
            )
            if isinstance(reply, Converge):
                return reply.result
            if isinstance(reply, Type):
                return reply
        operands = [self.expr(o, conv) for o in (node.left, *node.comparators)]
        if any(isinstance(t, TensorType) for t in operands):
            self.reasons[id(node)] = "no plugin types this array comparison"
            return UNKNOWN
        return I1

    def _expr_Subscript(self, node: ast.Subscript, conv: Mapping[int, Converge]) -> Type:
        value = self.expr(node.value, conv)
        index = self.expr(node.slice, conv)
        if value is UNKNOWN or value == ANY:
            return value  # (a plugin's subscript was asked by `Typer.expr`)
        if isinstance(value, TupleType):
            position = _constant(node.slice)
            if isinstance(position, int) and -len(value.elements) <= position < len(value.elements):
                return value.elements[position]
            if isinstance(node.slice, ast.Slice):
                return generic("builtins.tuple", [union(value.elements)])
        args = Args((index,), {}, (_constant(node.slice),))
        return self._method(node, value, "__getitem__", args)

    def _expr_Call(self, node: ast.Call, conv: Mapping[int, Converge]) -> Type:
        func = node.func
        if isinstance(func, ast.Name) and func.id not in self.env:
            local = self.local_call(func.id)
            if local is not None:
                return local
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            self.reasons[id(node)] = "a call with *args or **kwargs is not typed"
            return UNKNOWN
        args = Args(
            tuple(self.expr(a, conv) for a in node.args),
            {k.arg: self.expr(k.value, conv) for k in node.keywords if k.arg},
            tuple(_constant(a) for a in node.args),
            {k.arg: _constant(k.value) for k in node.keywords if k.arg},
        )
        callee = self.qualname(func)
        if callee is not None:
            if callee in self.classes.values():
                return OpaqueType(callee)  # a class of this project: its instance
            if callee == "builtins.abs" and args.positional and args.positional[0] in (F64, I64):
                return args.positional[0]
            if self.typed(callee):
                found = modules.module_call(callee, args)
                if found is None and isinstance(func, ast.Attribute):
                    owner = modules.module_attribute(callee.rpartition(".")[0])
                    if owner == ANY:  # `sys.stderr` is `TextIO | MaybeNone` (Any)
                        return ANY
                    if owner is not None and class_of(owner) is not None:  # `os.environ.get`
                        return self._method(node, owner, func.attr, args)
                if found is UNKNOWN:
                    self.reasons[id(node)] = _no_fit(callee, args)
                return found if found is not None else self._missing(node, callee)
            return UNKNOWN
        if isinstance(func, ast.Attribute):
            receiver = self.expr(func.value, conv)
            if receiver == ANY:
                return ANY
            if receiver is not UNKNOWN:
                return self._method(node, receiver, func.attr, args)
        else:
            return self._call_value(node, self.expr(func, conv), args)
        return UNKNOWN

    def _call_value(self, node: ast.Call, value: Type, args: Args) -> Type:
        """Calling an object (`nn.Dense(32)(x)`): its class's `__call__`, asked to the
        plugins as `Class.__call__` with the object as receiver, else from its stub."""
        if value == ANY or value is UNKNOWN:
            return value
        found = self._plugin_method(node, value, "__call__", args)
        if found is not None:
            return found
        if class_of(value) is not None and value != FUNCTION:
            return self._method(node, value, "__call__", args)
        self.reasons[id(node)] = f"what calling a {name(value)} returns is not known"
        return UNKNOWN

    def _method(self, node: ast.expr, receiver: Type, attr: str, args: Args) -> Type:
        """`receiver.attr(args)`: from stubs for a stub class, from the plugins for
        their types; a union's every member must have it (None first: the usual gap)."""
        answers = []
        for part in sorted(members(receiver), key=lambda m: m != NONE):
            if isinstance(part, OpaqueType) and part.name in self.class_nodes:
                found = local.member(self, part.name, attr, call=args)
            elif class_of(part) is None:
                found = self._plugin_method(node, part, attr, args)
            else:
                found = signatures.method(part, attr, args)
            if found is None or found is UNKNOWN:
                missing = class_of(part) is not None and signatures.member_type(part, attr) is None
                self.reasons[id(node)] = (
                    f"{name(part)} has no member `{attr}`"
                    if missing
                    else _unmodelled(part, attr, args)
                    if class_of(part) is None
                    else f"no signature of {name(part)}.{attr} fits ({_shown(args)})"
                )
                return UNKNOWN
            answers.append(found)
        return union(answers)

    def _plugin_method(self, node: ast.expr, part: Type, attr: str, args: Args) -> Type | None:
        answer = self.oracle.call(
            CallContext(
                callee=f"{self._owner_class(part)}.{attr}",
                args=(part, *args.positional),
                kwargs=dict(args.keywords),
                constants=(NOT_CONSTANT, *args.constants),
                kw_constants=dict(args.kw_constants or {}),
                receiver=part,
                location=self.location(node),
                report=self.oracle.report,
            )
        )
        return answer.result if answer is not None else None

    def _missing(self, node: ast.expr, qualname: str) -> Type:
        module, _, attr = qualname.rpartition(".")
        self.reasons[id(node)] = f"module `{module}` has no `{attr}` in its stubs"
        return UNKNOWN

    def _expr_Attribute(self, node: ast.Attribute, conv: Mapping[int, Converge]) -> Type:
        owner = self.qualname(node.value)
        if owner is not None and owner not in self.classes.values():
            if self.typed(owner):  # a name inside a module
                found = modules.module_attribute(f"{owner}.{node.attr}")
                return found if found is not None else self._missing(node, f"{owner}.{node.attr}")
            return UNKNOWN
        value = self.expr(node.value, conv)
        if value == ANY:
            return ANY
        found_types = []
        for part in sorted(members(value), key=lambda m: m != NONE):
            if isinstance(part, OpaqueType) and part.name in self.class_nodes:
                found = local.member(self, part.name, node.attr, call=None)
            elif class_of(part):
                found = signatures.member_type(part, node.attr)
            else:
                found = self.instance_attribute(part, node.attr, node) or None
            if found is None or found is UNKNOWN:
                self.reasons[id(node)] = (
                    f"{name(part)} has no member `{node.attr}`"
                    if found is None and self._known_class(part)
                    else f"`{node.attr}` of {name(part)} is not modelled"
                )
                return UNKNOWN
            found_types.append(found)
        return union(found_types) if found_types else UNKNOWN

    def _expr_BinOp(self, node: ast.BinOp, conv: Mapping[int, Converge]) -> Type:
        left, right = self.expr(node.left, conv), self.expr(node.right, conv)
        op = type(node.op).__name__
        found = python_arithmetic(op, (left, right), bools=True)  # bools, as ints
        if found is not None:
            return found
        numbers = {left, right} <= {F64, I64, I1}
        if numbers and op == "Pow" and F64 in (left, right):
            return F64  # float ** x is a float (or raises); int ** int may be either
        if UNKNOWN in (left, right) or op not in _DUNDERS or (numbers and op == "Pow"):
            return UNKNOWN
        dunder = _DUNDERS[op]
        answers = []
        for part in members(left):
            found = signatures.method(part, f"__{dunder}__", Args((right,), {}))
            if found is None or found is UNKNOWN or found == OpaqueType("types.NotImplementedType"):
                found = signatures.method(right, f"__r{dunder}__", Args((part,), {}))
            if found is None or found is UNKNOWN:
                return UNKNOWN
            answers.append(found)
        return union(answers)

    def local_call(self, callee: str) -> Type | None:
        """A call of a function defined in this module: its annotated return type."""
        node = self.functions.get(callee)
        if node is None:
            return None
        return self.annotation(node.returns) if node.returns is not None else UNKNOWN

    def _owner_class(self, t: Type) -> str:
        """A method of a builtins or stdlib instance is asked as `builtins.str.split`:
        no plugin claims `builtins`, so the call comes back to this typer."""
        if isinstance(t, OpaqueType):
            return t.name
        ref = class_of(t) if t in (F64, I64, I1) else None
        return ref[0] if ref is not None else Typer._owner_class(self, t)

    def _known_class(self, t: Type) -> bool:
        """Whether `t`'s class is read whole (a stub's, or this module's own), so a
        member it lacks is missing rather than unmodelled."""
        ref = class_of(t)
        if ref is None:
            return False
        if ref[0] in self.class_nodes:
            return True  # (what its methods set unannotated is found too: `check.local`)
        return stdlib.is_stdlib(ref[0]) and stdlib.class_info(ref[0]) is not None

    def typed(self, qualname: str) -> bool:
        """Whether names under `qualname` are read from stubs: the standard library's,
        or a self-typed package's that no plugin claims (a plugin models its library)."""
        top = qualname.partition(".")[0]
        return top not in self.claimed and top != self.module and stdlib.has_types(qualname)

    def instance_attribute(self, value: Type, name: str, node: ast.AST) -> Type:
        """`value.name` as the plugins answer it (for the checker's own questions)."""
        ctx = AttributeContext(
            name, owner_type=value, location=self.location(node), report=self.oracle.report
        )
        return self.oracle.instance_attribute(ctx) or UNKNOWN


def _shown(args: Args) -> str:
    shown = [name(a) for a in args.positional]
    shown += [f"{k}={name(v)}" for k, v in args.keywords.items()]
    return ", ".join(shown)


def _unmodelled(part: Type, attr: str, args: Args) -> str:
    if attr == "__getitem__":  # `a[i]`: the plugin did not say what it gives
        return f"indexing a {name(part)} by {_shown(args)} is not modelled"
    return f"`{attr}` of {name(part)} is not modelled"


def _no_fit(callee: str, args: Args) -> str:
    return f"no signature of {callee.removeprefix('builtins.')} fits ({_shown(args)})"


__all__ = ["CheckTyper", "Fact", "narrowing", "STR", "BYTES"]
