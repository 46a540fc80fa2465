"""Plugin interface 2: the contract between the core and a library's plugin.

A plugin teaches the compiler one library: its types, its effects, what its calls
converge onto, and how they lower (as typed specs, never code). Every hook has a
no-op default that answers None ("not mine"), so the compiler calls every hook
without probing. Hooks are pure: the compiler may cache their answers. Importing
a plugin module must not import its library; `fingerprint()` may.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ppy_core.diagnostics import Diagnostic, Location
from ppy_core.interface.specs import LoweringSpec
from ppy_core.ir.types import Type

if TYPE_CHECKING:
    from ppy_core.ir.core import Dialect
    from ppy_core.ir.passes import Pass
    from ppy_core.ir.rewrite import RewritePattern

INTERFACE: int = 2

Report = Callable[[Diagnostic], None]


def _ignore(_diagnostic: Diagnostic) -> None:
    return None


class NotConstant:
    """Marks an argument whose value is not a compile-time constant."""

    def __repr__(self) -> str:
        return "NOT_CONSTANT"


NOT_CONSTANT = NotConstant()


@dataclass(frozen=True, slots=True)
class ModuleContext:
    """The module being compiled: its path, its imports, the plugin's own options."""

    path: str
    module: str
    imports: Mapping[str, str]  # local name -> qualified name ("np" -> "numpy")
    options: Mapping[str, Any] = field(default_factory=dict)
    report: Report = _ignore


@dataclass(frozen=True, slots=True)
class CallContext:
    """A call whose callee resolved to the qualified name `callee` ("numpy.sin").

    `args`/`kwargs` are the argument types; `constants` holds each positional
    argument's compile-time value or NOT_CONSTANT; `receiver` is the type of the
    object a method is called on (then `callee` is "numpy.ndarray.sum")."""

    callee: str
    args: tuple[Type, ...]
    kwargs: Mapping[str, Type]
    constants: tuple[Any, ...] = ()
    kw_constants: Mapping[str, Any] = field(default_factory=dict)
    receiver: Type | None = None
    location: Location | None = None
    report: Report = _ignore
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class OperatorContext:
    """A Python operator: `op` is the ast class name ("Add", "Mult", "USub", "Gt").

    `in_place`: the question is `target OP= value` (operands: the target's type, the
    value's), answered with the type `target` is left with. A plugin whose arrays are
    updated in place (`ndarray.__iadd__`) answers the target's type; one that ignores
    the flag answers `target OP value`'s, which is Python's rule for a type with no
    in-place operator (immutable arrays: `x += y` rebinds `x` to `x + y`)."""

    op: str
    operands: tuple[Type, ...]
    constants: tuple[Any, ...] = ()
    location: Location | None = None
    report: Report = _ignore
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)
    in_place: bool = False


@dataclass(frozen=True, slots=True)
class AttributeContext:
    """`owner.name`: `owner` is a qualified module name for module attributes,
    else None and `owner_type` is the instance's type."""

    name: str
    owner: str | None = None
    owner_type: Type | None = None
    location: Location | None = None
    report: Report = _ignore
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class SubscriptContext:
    """`value[index]`, in an expression or an annotation (`npt.NDArray[np.float64]`).

    For an annotation, `qualname` is the subscripted name and `index_names` the
    qualified names or constants inside the brackets."""

    value: Type | None
    index: tuple[Type, ...] = ()
    qualname: str | None = None
    index_names: tuple[Any, ...] = ()
    in_annotation: bool = False
    location: Location | None = None
    report: Report = _ignore
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class DecoratorContext:
    """A decorator applied to the function `function`.

    `qualname` is what the decorator resolves to through the module's imports
    ("torch.no_grad"), or, for a method of a module-level object, its class's name
    and the method ("fastapi.FastAPI.get" for `@app.get(...)` where `app = FastAPI()`;
    `receiver` is then that object's type). `text` is the decorator as written,
    `called` whether it is called (`@torch.no_grad()`, not `@torch.no_grad`)."""

    qualname: str
    function: str
    text: str = ""
    called: bool = False
    receiver: Type | None = None
    location: Location | None = None
    report: Report = _ignore
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class FunctionContext:
    """A whole function offered to a plugin (`stage`): its syntax, its resolved
    imports, its parameter and return types, and the opt level in force."""

    node: ast.FunctionDef
    module: ModuleContext
    params: Mapping[str, Type]
    returns: Type | None
    opt: int
    decorators: tuple[str, ...] = ()
    pure: bool = False
    fastmath: bool = False
    location: Location | None = None
    report: Report = _ignore
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)
    # transparent decorators: applied at run time around whatever is compiled
    outer: tuple[str, ...] = ()
    # what the calls of the body may do (CallAnswer.effects), e.g. {"WriteMemory"}
    effects: frozenset[str] = frozenset()
    # a specialization's parameters (and a method's `self.X`) as the runtime described
    # the call (`runtime/observed.py`); empty outside a specialization
    described: Mapping[str, tuple[Any, ...]] = field(default_factory=dict, compare=False)

    def resolve(self, node: ast.expr) -> str | None:
        """The qualified name a Name/Attribute chain refers to, via the module's imports."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.module.imports:
            return None
        return ".".join([self.module.imports[node.id], *reversed(parts)])


@dataclass(frozen=True, slots=True)
class ClassContext:
    """A class the module defines at its top level, asked before any function is typed,
    in source order. `qualname` is "module.Class", `bases` the qualified names its bases
    resolve to ("pydantic.BaseModel", or an earlier class's qualname), `node` its
    definition and `tree` the whole module: a plugin reads a class from source (fields,
    config, decorators) and never runs it."""

    qualname: str
    bases: tuple[str, ...]
    node: ast.ClassDef = field(compare=False, hash=False)
    tree: ast.Module = field(compare=False, hash=False)
    module: ModuleContext = field(compare=False, hash=False)
    location: Location | None = None
    report: Report = _ignore
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class Converge:
    """The shared IR operation a call or operator converges onto.

    `op` is an operation name ("tensor.unary"), `attributes` its attributes
    ({"op": "sin"}), `result` the type of the value it produces. `operands` picks,
    by position, which of the call's operands the op takes (None: all of them; e.g.
    `a ** 2` converging onto `tensor.unary {op = "square"}` takes only (0,)).

    `views`, one per operand taken (None: that operand itself), is a basic index the op
    reads the operand through, each item a slice's `(lower, upper, step)`, an int, or
    None (a new axis): `np.outer(u, v)` of two vectors is `tensor.mul` of `u[:, None]`
    and `v[None, :]`, `views=(((None, None, None), None), (None, (None, None, None)))`.
    The core takes it only for an operand whose type the call's guard proves (a
    specialization's parameter, `compiler/frontend/implied.py`); else the call is the
    library's."""

    op: str
    result: Type
    attributes: Mapping[str, Any] = field(default_factory=dict)
    operands: tuple[int, ...] | None = None
    views: tuple[tuple[Any, ...] | None, ...] | None = None


@dataclass(frozen=True, slots=True)
class CallAnswer:
    """What a plugin knows of a call: its result type, its effects, how it lowers.

    A call whose `effects` hold "WriteMemory", "IO" or "Callback" ends an expression
    site (the tree is split around it) and keeps its function from being a region
    unless the region's own spec declares the write. `lowering` (an IntrinsicSpec,
    DirectCallSpec or DialectOperationSpec) travels on the op a converged call becomes;
    a backend that cannot read it leaves the site alone."""

    result: Type
    effects: frozenset[str] = frozenset({"Pure"})
    lowering: LoweringSpec | None = None


TRANSPARENT = "transparent"
CALLS = "calls"
UNVOUCHED = "unvouched"
DECORATOR_KINDS: tuple[str, ...] = (TRANSPARENT, CALLS, UNVOUCHED)


@dataclass(frozen=True, slots=True)
class DecoratorSemantics:
    """What a decorator does to the function it decorates, as its plugin vouches.

    - TRANSPARENT (`@torch.no_grad()`): the function compiles as if undecorated;
      the decorator still applies at run time, around the compiled function or
      region (which must honour what it sets, e.g. grad mode).
    - CALLS (`@jax.jit`): it changes how the function is called; the body stays as
      written (no expression sites), and the function is offered whole to `stage`
      with the decorator among `FunctionContext.decorators`.
    - UNVOUCHED (`@app.get(...)`): a framework calls it; it is left exactly as
      written, `reason` shown in `ppy explain`.
    A decorator no plugin answers for is opaque: the function stays Python."""

    kind: str
    reason: str = ""


class Plugin:
    """Base of every plugin. Every hook is a no-op; override what you know.

    Returning None from a hook means "not mine". Hooks are pure: their answers
    may be cached. Errors go through the context's `report`, not raised.

    A question about module M (a call of `M.f`, an operator on M's arrays) goes to
    the plugin claiming M first; the others hear it only when that one answers None,
    and a question about two claimed libraries at once goes to a plugin claiming both.
    Every context carries this plugin's own options (`ctx.options`)."""

    name: ClassVar[str] = ""
    interface: ClassVar[int] = INTERFACE
    modules: ClassVar[tuple[str, ...]] = ()  # top-level modules claimed ("numpy")
    version: ClassVar[str] = "0"

    def fingerprint(self) -> str:
        """Own version plus the library build found, e.g. `v1:numpy=2.4.6:simd=...`."""
        return f"v{self.version}"

    def detected(self) -> Mapping[str, str]:
        """What `ppy doctor` shows this plugin found (library build, toolchain)."""
        return {}

    def validate_options(self, options: Mapping[str, Any]) -> Mapping[str, str]:
        """Check the keys of `[tool.ppy.plugins.NAME]` other than `enabled`, once per
        activation: return `{key: what is wrong}` for each bad one (empty: all good).
        A plugin with a refused option is not used (E1907 names the key); the options
        it accepts reach every hook as `ctx.options`."""
        return {}

    # -- typing ---------------------------------------------------------------
    def external_types(self) -> Mapping[str, Type]:
        """Qualified class names this plugin types ("numpy.ndarray") -> IR type."""
        return {}

    def class_type(self, ctx: ClassContext) -> Type | None:
        """The type of instances of a class the module defines on a base this plugin's
        library provides (`class Order(BaseModel)`, `class Mlp(nn.Module)`), read from its
        source. From then on the class's name resolves to `ctx.qualname` in the module,
        and `call`/`instance_attribute`/`external_types` may answer for it."""
        return None

    def attribute_type(self, ctx: AttributeContext) -> Type | None:
        """The type of a module attribute (`numpy.pi`); None: not known here."""
        return None

    def instance_attribute(self, ctx: AttributeContext) -> Type | None:
        """The type of `value.name` for a value of a type this plugin owns."""
        return None

    def subscript(self, ctx: SubscriptContext) -> Type | None:
        """The type of `value[index]`, or of a subscripted annotation."""
        return None

    def call(self, ctx: CallContext) -> CallAnswer | None:
        """Result type, effects and lowering of a call to a name this plugin claims."""
        return None

    def operator(self, ctx: OperatorContext) -> Converge | Type | None:
        """An operator over this plugin's types: a Converge if it is a shared op."""
        return None

    def call_alias(self, ctx: CallContext) -> str | None:
        """Another qualified name this call means (`ndarray.sum` -> `numpy.sum`)."""
        return None

    def decorator_semantics(self, ctx: DecoratorContext) -> DecoratorSemantics | None:
        """What a decorator from this library does to a function (see
        DecoratorSemantics); None: not known here (opaque unless another knows)."""
        return None

    def adjust_call(self, ctx: CallContext) -> CallContext | None:
        """The call normalised before it is typed: e.g. keywords whose constant value
        is the default dropped (`np.sum(a, axis=None)` is `np.sum(a)`). Only keywords
        with literal values (`kw_constants`) may be dropped for a call to converge: the
        core evaluates every expression the user wrote. None: nothing to normalise."""
        return None

    def stage(self, ctx: FunctionContext) -> LoweringSpec | None:
        """Take a whole function (GraphRegionSpec) or say why not (FallbackSpec)."""
        return None

    def tensor_operation(self, ctx: CallContext) -> Converge | None:
        """The shared tensor operation a call converges onto (`numpy.sin` ->
        `tensor.unary {op = "sin"}`), whatever its own lowering is."""
        return None

    def speculative_array(self) -> Type | None:
        """The array type an unannotated leaf may be assumed to be in a module that
        imports this library (`numpy.ndarray` of float64), or None: never assume.

        A tree over such leaves that converges only under the assumption becomes a
        *speculative* site: the run-time guard checks each assumed leaf is exactly that
        array, and anything else (floats, lists, other libraries' tensors) runs the
        Python path. Offer it only when the runtime adapter's guard can check the type."""
        return None

    # -- IR -------------------------------------------------------------------
    def register_dialects(self) -> Sequence[Dialect]:
        """Dialects this plugin adds; a plugin's dialect is named after it."""
        return ()

    def register_passes(self) -> Sequence[Pass]:
        """Passes run on every expression site, before the patterns and the core's
        passes, under the verifier: one that leaves the IR invalid is E1902 naming
        this plugin (whatever the pass's own `owner` says)."""
        return ()

    def register_patterns(self) -> Sequence[RewritePattern]:
        """Rewrite patterns applied greedily to every expression site, as one pass
        after the plugins' passes, under the verifier (E1902 names this plugin). Each
        pattern guards first, so it touches only the ops it knows."""
        return ()

    def register_lowerings(self) -> Mapping[str, LoweringSpec]:
        """How this plugin's own dialect ops lower, by op name (IntrinsicSpec,
        DirectCallSpec or DialectOperationSpec): the driver puts each on the ops it
        names, as their `lowering` attribute, and a backend must read it (`read_spec`)."""
        return {}


HOOK_NAMES: tuple[str, ...] = (
    "external_types",
    "class_type",
    "attribute_type",
    "instance_attribute",
    "subscript",
    "call",
    "operator",
    "call_alias",
    "decorator_semantics",
    "adjust_call",
    "stage",
    "tensor_operation",
    "speculative_array",
    "register_dialects",
    "register_passes",
    "register_patterns",
    "register_lowerings",
)

__all__ = [
    "INTERFACE",
    "HOOK_NAMES",
    "Plugin",
    "ModuleContext",
    "CallContext",
    "ClassContext",
    "OperatorContext",
    "AttributeContext",
    "SubscriptContext",
    "DecoratorContext",
    "FunctionContext",
    "Converge",
    "CallAnswer",
    "DecoratorSemantics",
    "DECORATOR_KINDS",
    "TRANSPARENT",
    "CALLS",
    "UNVOUCHED",
    "NOT_CONSTANT",
    "NotConstant",
    "Report",
]
