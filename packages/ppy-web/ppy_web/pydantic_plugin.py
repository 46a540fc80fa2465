"""The `pydantic` plugin: what the compiler knows of pydantic models.

This module imports no pydantic; `fingerprint()` and `detected()` do, once. Models
are read from source (`ppy_web.models`, never run) into two typings pydantic keeps
apart: the constructor (`Order(...)`: keywords, aliases, required fields, strict or
lax) and the validated output (`order.count`: its type, an `int` with `Field`
constraints refined to a `RangeType`). A model built with constants its constructor
refuses is reported where it is built (E1050-E1053), which no stock checker does.
"""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Mapping
from typing import Any, ClassVar

from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.plugin import (
    NOT_CONSTANT,
    AttributeContext,
    CallAnswer,
    CallContext,
    ClassContext,
    Plugin,
)
from ppy_core.ir.types import OpaqueType, RangeType, Type
from ppy_web.models import STR, Model, read_models

BASE_MODEL = OpaqueType("pydantic.BaseModel")
DICT = OpaqueType("builtins.dict")
#: a model's methods and what they return (None: the model itself); each may run the
#: user's validators or serializers
MODEL_METHODS: dict[str, Type | None] = {
    "model_validate": None,
    "model_validate_json": None,
    "model_validate_strings": None,
    "model_copy": None,
    "model_dump": DICT,
    "model_json_schema": DICT,
    "model_dump_json": STR,
}
#: building a model runs its validators, which may be the user's own code
CONSTRUCT = frozenset({"Callback"})


@functools.cache
def probe() -> tuple[str, str, str] | None:
    """(pydantic's version, pydantic-core's version, pydantic's place), or None."""
    try:
        pydantic = importlib.import_module("pydantic")
        core = importlib.import_module("pydantic_core")
    except ImportError:
        return None
    return str(pydantic.VERSION), str(core.__version__), str(getattr(pydantic, "__file__", "?"))


class PydanticPlugin(Plugin):
    """Teaches the compiler pydantic (claims the top-level module `pydantic`)."""

    name: ClassVar[str] = "pydantic"
    modules: ClassVar[tuple[str, ...]] = ("pydantic",)
    version: ClassVar[str] = "1"

    def fingerprint(self) -> str:
        """`v1:pydantic=V:core=V` (validation lives in pydantic-core)."""
        found = probe()
        if found is None:
            return f"v{self.version}:pydantic=none"
        return f"v{self.version}:pydantic={found[0]}:core={found[1]}"

    def __init__(self) -> None:
        self.models: dict[str, Model] = {}

    def learn(self, tree: ast.Module, module: str, imports: Mapping[str, str]) -> dict[str, Model]:
        """Read the models `tree` (module `module`, with its resolved `imports`) defines;
        from then on the hooks answer for them. Returns them by qualified name."""
        found = read_models(tree, module, imports)
        self.models.update(found)
        return found

    def class_type(self, ctx: ClassContext) -> Type | None:
        """A model the module defines (asked by the core in source order): read from
        source on first sight of its module, never run."""
        if ctx.qualname not in self.models:
            self.learn(ctx.tree, ctx.module.module, ctx.module.imports)
        model = self.models.get(ctx.qualname)
        return None if model is None else model.type

    def external_types(self) -> Mapping[str, Type]:
        return {"pydantic.BaseModel": BASE_MODEL, **{q: m.type for q, m in self.models.items()}}

    def call(self, ctx: CallContext) -> CallAnswer | None:
        """`Model(...)` is a validated instance; its constant arguments are checked against
        the constructor (E1050-E1053). `Model.model_validate(...)` is one too."""
        owner, _, method = ctx.callee.rpartition(".")
        if owner in self.models and method in MODEL_METHODS:
            result = MODEL_METHODS[method]
            return CallAnswer(result or self.models[owner].type, CONSTRUCT)
        model = self.models.get(ctx.callee)
        if model is None:
            return None
        for diagnostic in check_construction(model, ctx):
            ctx.report(diagnostic)
        return CallAnswer(model.type, CONSTRUCT)

    def instance_attribute(self, ctx: AttributeContext) -> Type | None:
        """`order.count`: the field's validated type (refined by its constraints)."""
        if not isinstance(ctx.owner_type, OpaqueType):
            return None
        model = self.models.get(ctx.owner_type.name)
        return None if model is None else model.output().get(ctx.name)

    def detected(self) -> Mapping[str, str]:
        """pydantic's and pydantic-core's versions."""
        found = probe()
        if found is None:
            return {"pydantic": "not installed"}
        return {"pydantic": f"{found[0]} ({found[2]})", "pydantic-core": found[1]}


def check_construction(model: Model, ctx: CallContext) -> list[Diagnostic]:
    """What pydantic would refuse in `Model(...)`, judged from the call as written:
    positionals, unknown keywords under `extra="forbid"`, missing required fields, and
    constants outside a field's range or of another type under strict mode."""
    name = model.qualname.rpartition(".")[2]
    out: list[Diagnostic] = []
    if ctx.args:
        out.append(
            _diag(
                "E1051",
                ctx,
                f"{name}() takes keywords only, not positional arguments",
                "name each field: Model(field=value)",
            )
        )
    params = {p.keyword: p for p in model.constructor()}
    filled = set()
    for keyword in ctx.kwargs:
        param = params.get(keyword)
        if param is None:
            if model.extra == "forbid":
                accepted = ", ".join(params) or "nothing"
                out.append(
                    _diag(
                        "E1051",
                        ctx,
                        f"{name}() does not accept {keyword!r} (extra='forbid')",
                        f"it accepts {accepted}",
                    )
                )
            continue
        filled.add(param.field)
        value = ctx.kw_constants.get(keyword, NOT_CONSTANT)
        if value is not NOT_CONSTANT:
            problem = _refused(param.type, value, param.strict)
            if problem:
                out.append(_diag(problem[0], ctx, problem[1], name, keyword))
    missing = [p.keyword for p in model.constructor() if p.required and p.field not in filled]
    missing = list(dict.fromkeys(m for m in missing if not _alias_filled(model, m, filled)))
    if missing:
        out.append(
            _diag(
                "E1052",
                ctx,
                f"{name}() is missing required field(s) {', '.join(missing)}",
                "pass them, or give the fields defaults",
            )
        )
    return out


def _alias_filled(model: Model, keyword: str, filled: set[str]) -> bool:
    return any(p.keyword == keyword and p.field in filled for p in model.constructor())


def _refused(field: Type, value: Any, strict: bool) -> tuple[str, str] | None:
    """(code, what) when pydantic refuses `value` for a field of type `field`."""
    if not isinstance(field, RangeType) and field != STR and not _is_int(field):
        return None
    if field == STR:
        return ("E1053", "a str") if strict and not isinstance(value, str) else None
    as_int = _as_int(value, strict)
    if as_int is None:
        return ("E1053", "an int") if strict else None
    if isinstance(field, RangeType) and not field.contains(as_int):
        return ("E1050", f"in {field.text()}")
    return None


def _is_int(t: Type) -> bool:
    return getattr(t, "kind", None) == "i64"


def _as_int(value: Any, strict: bool) -> int | None:
    """The int pydantic validates `value` to, or None when it is not one it takes
    (lax: bools, int-valued floats and integer text too; strict: ints only)."""
    if isinstance(value, bool):
        return None if strict else int(value)
    if isinstance(value, int):
        return value
    if strict:
        return None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _diag(code: str, ctx: CallContext, *what: str) -> Diagnostic:
    if code in ("E1050", "E1053"):
        want, name, keyword = what
        value = ctx.kw_constants[keyword]
        message = f"{name}({keyword}={value!r}): pydantic refuses it, the field wants {want}"
        hint = "pydantic raises ValidationError here; pass a value the field accepts"
    else:
        message, hint = what
    return Diagnostic(code, message, hint, ctx.location)


__all__ = ["PydanticPlugin", "check_construction", "probe"]
