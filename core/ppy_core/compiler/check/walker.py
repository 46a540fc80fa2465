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

from ppy_core.compiler.check import local, signatures
from ppy_core.compiler.check.contradictions import contradicts
from ppy_core.compiler.check.flow import Env, join, stored
from ppy_core.compiler.check.hints import names_dtype
from ppy_core.compiler.check.statements import bound_names, expressions, instance
from ppy_core.compiler.check.typer import CheckTyper, Fact, narrowing
from ppy_core.compiler.check.types import (
    ANY,
    BYTES,
    STR,
    Generic,
    class_of,
    generic,
    members,
    without_none,
)
from ppy_core.compiler.check.types import name as _name
from ppy_core.diagnostics import Diagnostic, Location, Severity
from ppy_core.ir.types import (
    F64,
    I1,
    I64,
    NONE,
    UNKNOWN,
    TensorType,
    TupleType,
    Type,
)

#: the standard library's calls that never return
_EXITS = frozenset(("sys.exit", "os._exit", "os.abort", "typing.assert_never"))
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
    #: names bound to an Unknown already reported where it started: not reported again
    reported: set[str] = field(default_factory=set)
    _grew: bool = False  # whether the statement being checked reported anything
    #: whether the statement being checked is reached (no return, raise, break or
    #: continue before it on this path): a path that left joins nothing after it
    _live: bool = True
    #: per loop being checked: the names' types at each `break`, and at each `continue`
    _loops: list[tuple[list[Env], list[Env]]] = field(default_factory=list)

    @property
    def _generator(self) -> bool:
        return isinstance(self.node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            isinstance(n, ast.Yield | ast.YieldFrom) for n in _own_nodes(self.node)
        )

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
            if arg.annotation is None and arg.arg in self.typer.env:
                continue  # `self`, typed as its class by the caller
            self.typer.env[arg.arg] = self.typer.parameter(arg)
        if args.vararg is not None:  # `*args: int` is a tuple[int, ...]
            item = self.typer.annotation(args.vararg.annotation)
            self.typer.env[args.vararg.arg] = generic("builtins.tuple", [item])
        if args.kwarg is not None:  # `**kwargs: str` is a dict[str, str]
            value = self.typer.annotation(args.kwarg.annotation)
            self.typer.env[args.kwarg.arg] = generic("builtins.dict", [STR, value])

    # -- statements -------------------------------------------------------------------
    def _block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self._statement(stmt)

    def _statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            # checked on their own; a call of it here returns what it is annotated to
            self.typer.functions = {**self.typer.functions, stmt.name: stmt}
            self.typer.env.pop(stmt.name, None)
            return
        if isinstance(stmt, ast.ClassDef):
            return  # checked on their own
        before = len(self.findings)
        for expr in expressions(stmt):
            self._expression(expr)
        self._grew = len(self.findings) > before
        self._bind_statement(stmt)
        self._mark(stmt)
        if isinstance(stmt, ast.Break | ast.Continue) and self._loops and self._live:
            self._loops[-1][isinstance(stmt, ast.Continue)].append(dict(self.typer.env))
        if isinstance(stmt, ast.Return | ast.Raise | ast.Break | ast.Continue):
            self._live = False
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._live = self._live and not self._no_return(stmt.value)

    def _mark(self, stmt: ast.stmt) -> None:
        """Names `stmt` bound to an Unknown it reported are not reported again."""
        for name in bound_names(stmt):
            if self.typer.env.get(name, NONE) is UNKNOWN and self._grew:
                self.reported.add(name)
            else:
                self.reported.discard(name)

    def _bind_statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assign):
            value = self._type(stmt.value)
            for target in stmt.targets:
                self._bind(target, value)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            declared = self.typer.annotation(stmt.annotation)
            if stmt.value is not None:
                self._contradiction(stmt.value, declared, stmt.annotation, stmt.target.id, "E1009")
            self.typer.env[stmt.target.id] = (
                declared
                if declared is not UNKNOWN
                else (self._type(stmt.value) if stmt.value is not None else UNKNOWN)
            )
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            pass  # the operator's type is checked as an expression; the name keeps its type
        elif isinstance(stmt, ast.For | ast.AsyncFor | ast.While):
            self._loop(stmt)
        elif isinstance(stmt, ast.If):
            self._if(stmt)
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            for item in stmt.items:
                if item.optional_vars is not None:
                    entered = self._entered(self._type(item.context_expr), stmt)
                    self._bind(item.optional_vars, entered)
            self._mark(stmt)
            points = [self._state()]
            for inner in stmt.body:
                self._statement(inner)
                points.append(self._state())
            if not self._live:  # a manager may swallow what left (`suppress(KeyError)`)
                self._meet(points)
        elif isinstance(stmt, ast.Assert):  # what follows runs only if the test held
            self._narrow(narrowing(stmt.test)[0])
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            self._import(stmt)
        elif isinstance(stmt, ast.Try | ast.TryStar):
            self._try(stmt)
        elif (
            isinstance(stmt, ast.Return)
            and self.checked
            and self.node.returns is not None
            and not self._generator
        ):  # (a generator's `return` ends it: its annotation is of what it yields)
            if stmt.value is None:
                if self.returns not in (NONE, UNKNOWN):
                    self._find(
                        stmt,
                        "E1005",
                        f"a bare `return` in a function annotated to return {_name(self.returns)}",
                        "return a value of that type",
                    )
            else:
                annotation = getattr(self.node, "returns", None)  # (a module has none)
                self._contradiction(stmt.value, self.returns, annotation, "", "E1005")

    def _no_return(self, call: ast.Call) -> bool:
        """Whether a call never returns (`sys.exit()`, `self.fail(...)` of a method
        annotated `NoReturn`): what follows it on its path is not reached."""
        func = call.func
        if self.typer.qualname(func) in _EXITS:
            return True
        node: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        if isinstance(func, ast.Name) and func.id not in self.typer.env:
            node = self.typer.functions.get(func.id)
        elif isinstance(func, ast.Attribute):
            owner = class_of(self._type(func.value))
            if owner is not None:
                node = local.method(self.typer, owner[0], func.attr)
        if node is None or node.returns is None:
            return False
        text = ast.unparse(node.returns).strip("'\"")
        return text.rpartition(".")[2] in ("NoReturn", "Never")

    def _import(self, stmt: ast.Import | ast.ImportFrom) -> None:
        """An import inside a function binds its names there, as at the top."""
        imports = dict(self.typer.imports)
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                bound = alias.asname or alias.name.partition(".")[0]
                imports[bound] = alias.name if alias.asname else bound
        elif stmt.module is not None and stmt.level == 0:
            for alias in stmt.names:
                imports[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
        self.typer.imports = imports
        for bound in imports:
            self.typer.env.pop(bound, None)

    def _bind(self, target: ast.expr, value: Type) -> None:
        self.typer.bind(target, value)

    def _entered(self, manager: Type, stmt: ast.With | ast.AsyncWith) -> Type:
        """What `with manager as x` binds: `__enter__`'s (`__aenter__`'s) result."""
        if class_of(manager) is None or isinstance(stmt, ast.AsyncWith):
            return UNKNOWN  # (what an awaitable gives is not read from stubs)
        found = signatures.method(manager, "__enter__", signatures.Args((), {}))
        return found if found is not None else UNKNOWN

    def _if(self, stmt: ast.If) -> None:
        """The branches, each with the names its test narrows (`if x:`, `if x is not
        None:` drop None from x's type in the body, `if x is None:` in the else); what
        follows sees the branches joined, of those that did not leave (return, raise,
        ...): after `if x is None: return`, x is not None."""
        yes, no = narrowing(stmt.test)
        entry = self._state()
        self._narrow(yes)
        self._block(stmt.body)
        body = self._state()
        self._restore(entry)
        self._narrow(no)
        self._block(stmt.orelse)
        self._meet([body, self._state()])

    def _loop(self, stmt: ast.For | ast.AsyncFor | ast.While) -> None:
        """A loop's body runs with the names as they are on entry joined with what
        its own iterations leave (typed once first, its findings dropped, when it
        rebinds a name: `found = None; break` on one iteration is seen on the next);
        what follows sees the entry, each iteration's end and each `break` joined."""
        head = self._state()
        if stored(stmt.body) & head[0].keys():
            kept, reported = len(self.findings), set(self.reported)
            head = self._iterations(stmt, head)[0]
            del self.findings[kept:]  # (found again, from the joined names)
            self.reported = reported
        normal, breaks = self._iterations(stmt, head)
        self._restore(normal)
        if isinstance(stmt, ast.While):
            if isinstance(stmt.test, ast.Constant) and stmt.test.value:
                self._live = False  # `while True:` ends only by a `break`
            self._narrow(narrowing(stmt.test)[1])
        self._block(stmt.orelse)  # (it runs when the loop ends without a `break`)
        self._meet([self._state(), *((b, True) for b in breaks)])

    def _iterations(
        self, stmt: ast.For | ast.AsyncFor | ast.While, head: tuple[Env, bool]
    ) -> tuple[tuple[Env, bool], list[Env]]:
        """The body typed once from `head`: the names joined over the head, the body's
        end and each `continue` (where the next iteration starts, or the loop ends
        normally), and the names at each `break`."""
        self._restore(head)
        self._loops.append(([], []))
        if isinstance(stmt, ast.While):  # `while tb is not None:` narrows the body
            self._narrow(narrowing(stmt.test)[0])
        else:
            self._bind(stmt.target, signatures.iterate(self._type(stmt.iter)))
            self._mark(stmt)  # before the body, which uses the target
        self._block(stmt.body)
        breaks, continues = self._loops.pop()
        self._meet([head, self._state(), *((c, True) for c in continues)])
        return self._state(), breaks

    def _try(self, stmt: ast.Try | ast.TryStar) -> None:
        """A handler runs from any point of the body: the names joined over the body's
        statements; what follows joins the body's end (and `else`) with each handler's."""
        points = [self._state()]
        for inner in stmt.body:
            self._statement(inner)
            points.append(self._state())
        ends = []
        self._block(stmt.orelse)
        ends.append(self._state())
        for handler in stmt.handlers:
            self._meet(points)
            self._live = points[0][1]  # (reached if the `try` is, whatever its body did)
            if handler.name is not None:
                caught = self._type(handler.type) if handler.type is not None else UNKNOWN
                self.typer.env[handler.name] = instance(caught, handler.type)
            self._block(handler.body)
            ends.append(self._state())
        self._meet(ends)
        live = self._live
        self._block(stmt.finalbody)
        self._live = self._live and live

    def _state(self) -> tuple[Env, bool]:
        return dict(self.typer.env), self._live

    def _restore(self, state: tuple[Env, bool]) -> None:
        self.typer.env.clear()
        self.typer.env.update(state[0])
        self._live = state[1]

    def _meet(self, paths: list[tuple[Env, bool]]) -> None:
        """The names where `paths` meet: those that reach it joined (all, if none
        does: what follows is never reached, and types as before)."""
        reached = [env for env, live in paths if live]
        self.typer.env.clear()
        self.typer.env.update(join(reached or [env for env, _ in paths]))
        self._live = bool(reached)

    def _narrow(self, facts: list[Fact]) -> dict[str, Type]:
        return self.typer.narrow(facts)

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
            if isinstance(node, ast.Name) and node.id in self.reported:
                continue  # its Unknown was reported where it was bound
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
        if isinstance(node, ast.NamedExpr):
            return [node.value]  # the target is what it binds
        return [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]

    def _postorder(self, expr: ast.expr) -> Iterator[ast.expr]:
        """Sub-expressions before the expressions they are in; not into nested scopes.
        In `a and b` (`a or b`, `x if a else y`) what `a` proves (disproves) narrows
        the names while the rest is typed: `isinstance(t, C) and t.attr`."""
        if isinstance(expr, ast.BoolOp | ast.IfExp):
            yield from self._guarded(expr)
        elif not isinstance(
            expr, ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp
        ):
            for child in self._typed_children(expr):
                yield from self._postorder(child)
        yield expr

    def _guarded(self, expr: ast.BoolOp | ast.IfExp) -> Iterator[ast.expr]:
        env = self.typer.env
        saved = dict(env)
        try:
            if isinstance(expr, ast.IfExp):
                yield from self._postorder(expr.test)
                yes, no = narrowing(expr.test)
                self._narrow(yes)
                yield from self._postorder(expr.body)
                env.clear()
                env.update(saved)
                self._narrow(no)
                yield from self._postorder(expr.orelse)
                return
            side = 0 if isinstance(expr.op, ast.And) else 1
            for value in expr.values:
                yield from self._postorder(value)
                self._narrow(narrowing(value)[side])
        finally:
            env.clear()
            env.update(saved)

    def _operands(self, node: ast.BinOp, types: dict[int, Type]) -> bool:
        """Operands Python itself refuses (`array + "s"`, `None * x`): no plugin accepted
        them, and no Python rule makes them valid. True when reported."""
        left, right = types.get(id(node.left), UNKNOWN), types.get(id(node.right), UNKNOWN)
        if {left, right} & {UNKNOWN, ANY} or types.get(id(node)) is not UNKNOWN:
            return False
        op = type(node.op).__name__
        texts = (STR, BYTES)
        nones = [n for n, t in ((node.left, left), (node.right, right)) if t == NONE]
        if nones and not self.checked and not all(_is_none(n) for n in nones):
            return False  # unannotated: a None inferred from a default or one branch
        refused = bool(nones) or (
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
        self, value: ast.expr, declared: Type, annotation: ast.expr | None, name: str, code: str
    ) -> None:
        """`value` against what `annotation` declares: assigned to `name` (E1009), or
        returned (E1005, no name)."""
        found = self._type(value)
        dtype = names_dtype(annotation, self.typer.qualname)
        why = contradicts(found, declared, dtype=dtype)
        if why is None:
            return
        severity: Severity = "error"
        if (
            found != NONE
            and NONE in members(found)
            and self._from_stub(value)
            and contradicts(without_none(found), declared, dtype=dtype) is None
        ):  # a stub's "or None" (`tzinfo.tzname(dt)`): whether this call's can be, no
            if not self.strict:  # one knows: not an error; strict mode names it
                return
            severity, why = "note", f"{why} (a stub says it may be None)"
        if not self.checked and not isinstance(self.node, ast.Module):
            if not self.strict:  # (a function with no annotation is not checked, as
                return  # mypy's default: its annotated variable, under strict only)
            severity, why = "note", f"{why} (in a function with no annotation)"
        verb, where = ("assigned to", f"`{name}`") if name else ("returned from", "this function")
        self._find(
            value,
            code if "dtype" not in why and "shape" not in why else "E1007",
            f"{_name(found)} {verb} {where}, annotated {_name(declared)}: {why}",
            "fix the annotation or the value; PPy trusts annotations when it compiles",
            severity,
        )

    def _from_stub(self, value: ast.expr) -> bool:
        """Whether `value` is what a stub's call or member gives (not this project's
        own function, method or attribute, whose annotation is the project's word)."""
        if not isinstance(value, ast.Call | ast.Attribute | ast.Subscript):
            return False
        given = [value.slice] if isinstance(value, ast.Subscript) else []
        given += [value.value] if isinstance(value, ast.Attribute | ast.Subscript) else []
        if isinstance(value, ast.Call):
            given += [*value.args, *(k.value for k in value.keywords)]
            given += [value.func.value] if isinstance(value.func, ast.Attribute) else []
        if any(_holds_none(self._type(g)) for g in given if not self.typer.module_name(g)):
            return False  # (`names[0]` of a list[str | None]: the None is the project's)
        target = value.func if isinstance(value, ast.Call) else value
        if isinstance(target, ast.Name):
            return target.id not in self.typer.functions and target.id not in self.typer.env
        owner = target.value if isinstance(target, ast.Attribute | ast.Subscript) else None
        if owner is None:
            return False
        if self.typer.module_name(owner):
            qualname = self.typer.qualname(target)
            return qualname is not None and self.typer.typed(qualname)
        found = class_of(self._type(owner))
        return found is not None and found[0] not in self.typer.class_nodes

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
        if id(node) in typer.reasons:
            return typer.reasons[id(node)]
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

    def _find(
        self, node: ast.AST, code: str, message: str, hint: str, severity: Severity = "error"
    ) -> None:
        location = self.typer.location(node)
        self.findings.append(Diagnostic(code, message, hint, location, severity))


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not of the functions and classes it defines."""
    for child in ast.iter_child_nodes(function):
        if not isinstance(
            child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
        ):
            yield child
            yield from _own_nodes(child)


def _holds_none(t: Type) -> bool:
    """Whether None is `t` or one of its members' type arguments (`list[str | None]`)."""
    return any(
        m == NONE
        or (isinstance(m, Generic) and any(_holds_none(a) for a in m.args))
        or (isinstance(m, TupleType) and any(_holds_none(e) for e in m.elements))
        for m in members(t)
    )


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


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
