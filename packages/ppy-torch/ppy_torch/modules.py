"""Stage an `nn.Module` method (its `forward`) as one ATen region.

A method of a module-level `nn.Module` subclass is specialized on the instance it is
called on (`ppy_torch.describe`: the module tree, its parameters' dtypes, devices and
shapes, its flags and scalar attributes). With that description, calls of its
submodules resolve: a curated module (`Linear`, `LayerNorm`, `Embedding`, `Dropout`,
`GELU`, `ReLU`, `Tanh`, `Sigmoid`, `SiLU`, `Identity`, `Sequential`) is the ATen call
its own forward makes, a user's module of the same source file has its `forward`
staged in place, and `for block in self.blocks:` over a `ModuleList` unrolls
(`forward_steps.py`: the rest of a forward as nanoGPT writes it). The parameters and
buffers read become region inputs, read from the instance at every call by the
region's C++ entry (`RegionGraph.sources`); scalar attributes are constants. Every
fact of the tree the stager read (`modtree.ModRef`) is a guard the entry checks
(`RegionGraph.guards`, `codegen._walk`). What a region cannot be is a reason
(`StageRefusal`): a forward hook, `Dropout` training with p > 0, a tensor subclass, a
module of another class.
"""

from __future__ import annotations

import ast
import operator
from typing import Any

from ppy_core.interface.plugin import FunctionContext
from ppy_core.interface.specs import FallbackSpec, GraphRegionSpec, LoweringSpec
from ppy_torch import ops
from ppy_torch.forward_steps import ForwardSteps
from ppy_torch.graph import (
    NONE,
    SCALAR_TYPES,
    TENSOR,
    Arg,
    Const,
    RegionGraph,
    Value,
    device_parts,
)
from ppy_torch.modtree import ModRef, module_description
from ppy_torch.stage import StageInput, StageRefusal, _refuse, _Stager

_NN = "torch.nn.modules."
LINEAR = f"{_NN}linear.Linear"
IDENTITY = f"{_NN}linear.Identity"
LAYER_NORM = f"{_NN}normalization.LayerNorm"
EMBEDDING = f"{_NN}sparse.Embedding"
DROPOUT = f"{_NN}dropout.Dropout"
SEQUENTIAL = f"{_NN}container.Sequential"
MODULE_LIST = f"{_NN}container.ModuleList"
_ACTIVATIONS = {
    f"{_NN}activation.GELU": "gelu",
    f"{_NN}activation.ReLU": "relu",
    f"{_NN}activation.Tanh": "tanh",
    f"{_NN}activation.Sigmoid": "sigmoid",
    f"{_NN}activation.SiLU": "silu",
}
_MAX_DEPTH = 32


class _MethodStager(ForwardSteps, _Stager):
    """Stages a method whose `self` is a described module; submodule calls inline."""

    def __init__(
        self,
        src: StageInput,
        tree: tuple[Any, ...],
        classes: dict[str, Any],
        described: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(src)
        self.described = described or {}
        self.devices: dict[str, Value] = {}  # `device = idx.device`: the tensor it is of
        self.root = ModRef(tree, ())
        self.classes = classes  # "module.Class" -> its ClassDef, from the same source
        self.mods: dict[str, ModRef] = {}
        self.inputs: dict[tuple[str, ...], Value] = {}
        self.values: list[Value] = []
        self.sources: list[tuple[str | int, ...]] = []
        self.depth = 0

    # -- inputs ---------------------------------------------------------------
    def input(self, path: tuple[str, ...], node: ast.AST, described: tuple[Any, ...]) -> Arg:
        if len(described) == 1:
            return Const(None)  # `bias=False`: the parameter is None
        if not described[5]:
            raise _refuse(node, f"`{ast.unparse(node)}` is a tensor subclass; it stays Python")
        found = self.inputs.get(path)
        if found is None:
            found = self.inputs[path] = Value(f"ppy_in{len(self.values)}", TENSOR)
            self.values.append(found)
            self.sources.append(("self", *path))
        return found

    def params(self) -> tuple[Value, ...]:
        args = self.src.node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise _refuse(self.src.node, "a region takes plain positional parameters")
        first, *rest = args.args
        self.mods[first.arg] = self.root
        required = len(rest) - len(args.defaults)
        for arg, default in zip(rest[required:], args.defaults, strict=True):
            # `targets=None`, called without it: None in this specialization (a call that
            # passes it has other arguments than the region takes: Python answers)
            if not (
                isinstance(default, ast.Constant)
                and default.value is None
                and tuple(self.described.get(arg.arg, ())) == ("None",)
            ):
                raise _refuse(arg, f"parameter `{arg.arg}`: only a None default left out")
            self.env[arg.arg] = Const(None)  # type: ignore[assignment]
            # the specialized function passes it on: the region checks it is None
            self.root.log.append(("nonearg", (), rest.index(arg) + 1))
        for index, arg in enumerate(rest[:required], start=1):
            kind = (
                TENSOR
                if arg.annotation is None
                else self.annotation_kind(arg.annotation, f"parameter `{arg.arg}`")
            )
            value = Value(arg.arg, kind)
            self.env[arg.arg] = value
            self.values.append(value)
            self.sources.append(("arg", index))
        return ()

    # -- modules --------------------------------------------------------------
    def module_of(self, node: ast.expr) -> ModRef | None:
        if isinstance(node, ast.Name):
            return self.mods.get(node.id)
        if isinstance(node, ast.Attribute):
            owner = self.module_of(node.value)
            return owner.child(node.attr) if owner is not None else None
        return None

    def expr_Name(self, node: ast.Name) -> Arg:
        if node.id in self.mods:
            raise _refuse(node, f"module `{node.id}` used as a value")
        return super().expr_Name(node)

    def expr_Attribute(self, node: ast.Attribute) -> Arg:
        if isinstance(node.value, ast.Attribute):  # `self.config.block_size`
            owner = self.module_of(node.value.value)
            if owner is not None and owner.child(node.value.attr) is None:
                found = owner.object_scalar(node.value.attr, node.attr)
                if found is not None:
                    return Const(found[0])
        if node.attr == "shape" and isinstance(node.value, ast.Attribute):
            owner = self.module_of(node.value.value)
            found = owner.tensor(node.value.attr) if owner is not None else None
            if found is not None and len(found[1]) > 1:
                if not found[1][5]:
                    raise _refuse(node, f"`{ast.unparse(node)}`: a tensor subclass stays Python")
                return Const(tuple(int(n) for n in found[1][3]))
        owner = self.module_of(node.value)
        if owner is None:
            raise _refuse(node, f"`{ast.unparse(node)}` is not a region operation")
        found = owner.tensor(node.attr)
        if found is not None:
            return self.input((*owner.path, found[0], node.attr), node, found[1])
        known, value = owner.scalar(node.attr)
        if known:
            return Const(value)
        if owner.child(node.attr) is not None:
            raise _refuse(node, f"submodule `{ast.unparse(node)}` used as a value")
        raise _refuse(node, f"`{ast.unparse(node)}` is not a parameter, buffer or scalar")

    def expr_BinOp(self, node: ast.BinOp) -> Arg:
        """Arithmetic of constants (a module's scalars) is Python's, done once here:
        eager computes `1.0 / self.n_embd` in Python too."""
        lhs, rhs = self.expr(node.left), self.expr(node.right)
        fold = _FOLD.get(type(node.op))
        if fold is not None and _number(lhs) and _number(rhs):
            try:
                return Const(fold(lhs.value, rhs.value))  # type: ignore[union-attr]
            except (ArithmeticError, ValueError) as exc:
                raise _refuse(node, f"`{ast.unparse(node)}` raises {exc!r}") from None
        return self.binop(node, lhs, rhs)

    def expr_Call(self, node: ast.Call) -> Arg:
        if self.src.resolve(node.func) == "torch.arange":
            return self.arange(node)
        module = self.module_of(node.func)
        if module is not None:
            return self.call_module(module, node)
        if isinstance(node.func, ast.Attribute) and self.module_of(node.func.value) is not None:
            raise _refuse(node, f"`{ast.unparse(node.func)}`: a module's method stays Python")
        return super().expr_Call(node)

    def call_module(self, module: ModRef, node: ast.Call) -> Arg:
        if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            raise _refuse(node, "a submodule is called with positional arguments only")
        args = [self.expr(a) for a in node.args]
        return self.apply(module, args, node)

    def apply(self, module: ModRef, args: list[Arg], node: ast.AST) -> Arg:
        name = ast.unparse(node.func) if isinstance(node, ast.Call) else module.cls
        if module.tree[2]:
            raise _refuse(node, f"`{name}` has a forward hook or pre-hook; it stays Python")
        cls = module.cls
        user = self.classes.get(cls)
        if user is not None:
            return self.inline(module, user, args, node)
        if len(args) != 1:
            raise _refuse(node, f"`{name}` ({cls}) takes one argument")
        (x,) = args
        if cls in (IDENTITY,):
            return x
        if cls == DROPOUT:
            p = module.scalar("p")[1]
            if module.tree[1] and p:
                raise _refuse(node, f"`{name}`: Dropout in training mode with p > 0 stays Python")
            return x
        if cls == SEQUENTIAL:
            for child in module.children():
                x = self.apply(child, [x], node)
            return x
        if cls in _ACTIVATIONS:
            op = _ACTIVATIONS[cls]
            if module.scalar("inplace")[1]:
                raise _refuse(node, f"`{name}`: an in-place activation stays Python")
            kwargs: dict[str, Arg] = {}
            if op == "gelu":
                kwargs["approximate"] = Const(module.scalar("approximate")[1])
            return self.aten(node, ops.CURATED_OPS[f"torch.nn.functional.{op}"], [x], kwargs)
        if cls == LINEAR:
            return self.aten(
                node,
                "linear",
                [x, self.weight(module, "weight", node), self.weight(module, "bias", node)],
                {},
            )
        if cls == LAYER_NORM:
            shape = module.scalar("normalized_shape")[1]
            eps = module.scalar("eps")[1]
            return self.aten(
                node,
                "layer_norm",
                [
                    x,
                    Const(tuple(shape)),
                    self.weight(module, "weight", node),
                    self.weight(module, "bias", node),
                    Const(float(eps)),
                ],
                {},
            )
        if cls == EMBEDDING:
            if module.scalar("max_norm")[1] is not None:
                raise _refuse(node, f"`{name}`: an Embedding with max_norm stays Python")
            padding = module.scalar("padding_idx")[1]
            return self.aten(
                node,
                "embedding",
                [
                    self.weight(module, "weight", node),
                    x,
                    Const(-1 if padding is None else int(padding)),
                    Const(bool(module.scalar("scale_grad_by_freq")[1])),
                    Const(bool(module.scalar("sparse")[1])),
                ],
                {},
            )
        raise _refuse(node, f"`{name}` is a {cls}, not a curated module; it stays Python")

    def weight(self, module: ModRef, attr: str, node: ast.AST) -> Arg:
        found = module.tensor(attr)
        if found is None:
            return Const(None)
        return self.input((*module.path, found[0], attr), node, found[1])

    def inline(self, module: ModRef, cls: ast.ClassDef, args: list[Arg], node: ast.AST) -> Arg:
        """A user's module: its `forward` staged in place of the call."""
        forward = next(
            (s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "forward"),
            None,
        )
        if forward is None or forward.decorator_list:
            raise _refuse(node, f"{module.cls} has no plain `forward` of its own")
        fargs = forward.args
        if fargs.vararg or fargs.kwarg or fargs.kwonlyargs or len(fargs.args) != len(args) + 1:
            raise _refuse(node, f"{module.cls}.forward does not take these arguments")
        if self.depth >= _MAX_DEPTH:
            raise _refuse(node, "submodules nest too deep")
        saved = dict(self.env), dict(self.mods)
        self.depth += 1
        try:
            self.env = {}
            self.mods = {fargs.args[0].arg: module}
            for arg, value in zip(fargs.args[1:], args, strict=True):
                self.bind(arg.arg, value, node)
            return self.body_value(forward)
        finally:
            self.depth -= 1
            self.env, self.mods = saved

    def bind(self, name: str, value: Arg, node: ast.AST) -> None:
        if not isinstance(value, Value):
            raise _refuse(node, f"`{name}` must be bound to a tensor or a size")
        self.env[name] = value

    def body_value(self, func: ast.FunctionDef) -> Arg:
        """The value a forward's body returns (a single tensor)."""
        body = _without_docstring(func.body)
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            raise _refuse(func, f"{func.name} must end in `return` of a tensor")
        for stmt in body[:-1]:
            self.statement(stmt)
        value = self.expr(body[-1].value)
        if not (isinstance(value, Value) and value.kind == TENSOR):
            raise _refuse(body[-1], "a submodule's forward returns one tensor")
        return value

    # -- statements -----------------------------------------------------------
    def assign(self, target: ast.expr, value: Arg, node: ast.AST) -> None:
        if isinstance(target, ast.Name):
            self.mods.pop(target.id, None)
            if isinstance(value, Const):  # `hs = self.n_embd // self.n_head`
                self.env[target.id] = value  # type: ignore[assignment]
                return
        super().assign(target, value, node)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.Assert):
            self.check(stmt)
            return
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Attribute)
            and stmt.value.attr == "device"
        ):
            x = self.expr(stmt.value.value)
            if not (isinstance(x, Value) and x.kind == TENSOR):
                raise _refuse(stmt, f"`{ast.unparse(stmt.value)}` is not a tensor's device")
            self.devices[stmt.targets[0].id] = x
            self.env.pop(stmt.targets[0].id, None)
            return
        if isinstance(stmt, ast.If):
            for inner in stmt.body if self.constant_test(stmt.test) else stmt.orelse:
                self.statement(inner)
            return
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Tuple)
            and all(isinstance(t, ast.Name) for t in stmt.targets[0].elts)
            and self.unpack(stmt, list(stmt.targets[0].elts))
        ):
            return
        if isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name) and not stmt.orelse:
            blocks = self.module_of(stmt.iter)
            if blocks is None or blocks.cls not in (MODULE_LIST, SEQUENTIAL):
                raise _refuse(stmt, "a loop stays Python unless it iterates over a ModuleList")
            for child in blocks.children():  # unrolled: the blocks are known
                self.env.pop(stmt.target.id, None)
                self.mods[stmt.target.id] = child
                for inner in stmt.body:
                    self.statement(inner)
            self.mods.pop(stmt.target.id, None)
            return
        super().statement(stmt)

    def run(self) -> RegionGraph:
        fn = self.src.node
        if self.root.tree[2]:  # torch's __call__ runs them around forward: kept as written
            raise _refuse(fn, "the module has a forward hook or pre-hook; it stays Python")
        self.params()
        body = _without_docstring(fn.body)
        if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            raise _refuse(fn, "the method must end in `return`")
        for stmt in body[:-1]:
            self.statement(stmt)
        ret = body[-1].value
        is_tuple = isinstance(ret, ast.Tuple)
        exprs = ret.elts if isinstance(ret, ast.Tuple) else [ret]
        results = [self.expr(e) for e in exprs]
        if is_tuple:  # `return logits, loss` with loss None
            results = [_NONE if isinstance(v, Const) and v.value is None else v for v in results]
        if not all(isinstance(v, Value) and v.kind in (TENSOR, NONE) for v in results):
            raise _refuse(ret, "a region returns tensors only")
        if all(v is _NONE for v in results):
            raise _refuse(ret, "a region returns a tensor")
        if not self.nodes:
            raise _refuse(fn, "nothing for a region to compute")
        guards = tuple(dict.fromkeys(self.root.log))
        for fact in guards:
            if fact[0] == "tensor" and (fact[4] not in SCALAR_TYPES or not device_parts(fact[5])):
                raise _refuse(fn, f"a parameter of dtype {fact[4]} on {fact[5]} stays Python")
            if fact[0] == "scalar" and not _guardable(fact[3]):
                raise _refuse(fn, f"attribute `{fact[2]}` = {fact[3]!r} stays Python")
            if fact[0] == "objscalar" and not _guardable(fact[5]):
                raise _refuse(fn, f"`{fact[2]}.{fact[4]}` = {fact[5]!r} stays Python")
        return RegionGraph(
            fn.name,
            tuple(self.values),
            tuple(self.nodes),
            tuple(results),  # type: ignore[arg-type]
            is_tuple,
            frozenset(self.effects),
            self.src.path,
            tuple(self.sources),
            guards,
        )


_NONE = Value("none", NONE)


def _guardable(value: Any) -> bool:
    """A scalar the C++ guard compares: an int of 64 bits, a float, bool, ASCII str, or
    a tuple of such ints."""
    if type(value) is tuple:
        return all(type(v) is int and _guardable(v) for v in value)
    if type(value) is int:
        return -(2**63) <= value < 2**63
    return type(value) in (float, bool) or (type(value) is str and value.isascii())


_FOLD = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
}


def _number(arg: Arg) -> bool:
    return isinstance(arg, Const) and type(arg.value) in (int, float)


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[1:]
    return list(body)


def _classes(ctx: FunctionContext) -> dict[str, Any]:
    """The module's top-level classes by runtime qualname ("module.Class")."""
    from pathlib import Path

    try:
        tree = ast.parse(Path(ctx.module.path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    return {f"{ctx.module.module}.{s.name}": s for s in tree.body if isinstance(s, ast.ClassDef)}


def method_spec(ctx: FunctionContext) -> LoweringSpec | None:
    """The region of a method specialized on a described `nn.Module`, the reason it is
    not one, or None when the function is not such a method."""
    args = ctx.node.args.args
    if not args:
        return None
    tree = module_description(ctx.described.get(args[0].arg))
    if tree is None:
        return None
    src = StageInput(ctx.node, ctx.resolve, ctx.decorators, ctx.module.path)
    try:
        graph = _MethodStager(src, tree, _classes(ctx), dict(ctx.described)).run()
    except StageRefusal as refusal:
        return FallbackSpec(f"not an ATen region: {refusal}")
    return GraphRegionSpec(backend="aten", graph=graph, effects=graph.effects)


__all__ = ["ModRef", "method_spec", "module_description"]
