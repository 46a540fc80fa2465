"""pydantic models read from source: the constructor apart from the validated output.

A model is a class whose bases reach `pydantic.BaseModel` (directly or through
another model of the same module). From its body, read as written and never run,
this module derives two things pydantic keeps apart:

* the constructor (`Model(...)`): the keywords it accepts (an alias replaces the
  field's name unless `populate_by_name`/`validate_by_name`), which are required,
  whether it coerces (lax: `"5"` and `5.0` become `5`) or is strict, and whether an
  unknown keyword is refused (`extra="forbid"`) or ignored;
* the validated output (`model.count`): each attribute's type after validation,
  with `Field` constraints on an `int` as a `RangeType` refinement, in every
  spelling pydantic accepts: `Annotated[int, Field(ge=0)]`, `int = Field(ge=0)`,
  `Annotated[int, annotated_types.Ge(0)]`, `conint(ge=0)`, `PositiveInt` and kin.

Only literal constants are read; anything else leaves that part unknown (a bound
not known is no bound), so the answers are never stronger than pydantic's.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ppy_core.ir.types import F64, I1, I64, UNKNOWN, OpaqueType, RangeType, ScalarType, Type

STR: Final = OpaqueType("builtins.str")
_BUILTINS: Final[Mapping[str, Type]] = {
    "builtins.int": I64,
    "builtins.float": F64,
    "builtins.bool": I1,
    "builtins.str": STR,
}
#: pydantic's named constrained ints: (lo, hi) inclusive
_NAMED_INTS: Final[Mapping[str, tuple[int | None, int | None]]] = {
    "pydantic.PositiveInt": (1, None),
    "pydantic.NegativeInt": (None, -1),
    "pydantic.NonNegativeInt": (0, None),
    "pydantic.NonPositiveInt": (None, 0),
    "pydantic.StrictInt": (None, None),
}
_BOUNDS: Final = ("ge", "gt", "le", "lt")
_ANNOTATED: Final = ("typing.Annotated", "typing_extensions.Annotated")


@dataclass(frozen=True, slots=True)
class ModelField:
    """One field: its output type (refined) and how the constructor fills it."""

    name: str
    type: Type
    alias: str | None = None
    required: bool = True
    strict: bool = False


@dataclass(frozen=True, slots=True)
class Param:
    """One keyword the constructor accepts, the field it fills, and how."""

    keyword: str
    field: str
    type: Type  # the type the field holds once validated
    required: bool
    strict: bool  # only that exact type; lax coerces int-valued floats and numeric text


@dataclass(frozen=True, slots=True)
class Model:
    """A pydantic model as written: fields in order, and its `model_config`."""

    qualname: str
    fields: tuple[ModelField, ...]
    strict: bool = False
    extra: str = "ignore"
    populate_by_name: bool = False

    @property
    def type(self) -> OpaqueType:
        return OpaqueType(self.qualname)

    def constructor(self) -> tuple[Param, ...]:
        """What `Model(...)` accepts: keywords only (BaseModel takes no positionals)."""
        params: list[Param] = []
        for f in self.fields:
            strict = self.strict or f.strict
            names = [f.alias] if f.alias else [f.name]
            if f.alias and self.populate_by_name:
                names.append(f.name)
            params += [Param(n, f.name, f.type, f.required, strict) for n in names]
        return tuple(params)

    def output(self) -> dict[str, Type]:
        """The attributes of a validated instance and their types."""
        return {f.name: f.type for f in self.fields}


class _Reader:
    """Reads one module's models; `imports` maps local names to qualified ones."""

    def __init__(self, module: str, imports: Mapping[str, str]) -> None:
        self.module = module
        self.imports = imports
        self.models: dict[str, Model] = {}

    def qualname(self, node: ast.expr) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        if node.id in self.imports:
            return ".".join([self.imports[node.id], *reversed(parts)])
        if not parts and f"{self.module}.{node.id}" in self.models:
            return f"{self.module}.{node.id}"
        if not parts and f"builtins.{node.id}" in _BUILTINS:
            return f"builtins.{node.id}"
        return None

    def read(self, tree: ast.Module) -> dict[str, Model]:
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef):
                inherited = self._inherited(stmt)
                if inherited is not None:
                    model = self._model(stmt, inherited)
                    self.models[model.qualname] = model
        return self.models

    def _inherited(self, cls: ast.ClassDef) -> Model | None:
        """The model fields and config come from (an empty one for BaseModel itself)."""
        for base in cls.bases:
            name = self.qualname(base)
            if name == "pydantic.BaseModel":
                return Model("pydantic.BaseModel", ())
            if name in self.models:
                return self.models[name]
        return None

    def _model(self, cls: ast.ClassDef, base: Model) -> Model:
        config: dict[str, Any] = {
            "strict": base.strict,
            "extra": base.extra,
            "populate_by_name": base.populate_by_name,
        }
        for kw in cls.keywords:  # class M(BaseModel, strict=True)
            if kw.arg and isinstance(kw.value, ast.Constant):
                config[kw.arg] = kw.value.value
        fields = {f.name: f for f in base.fields}
        for stmt in cls.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == "model_config"
            ):
                config.update(self._config(stmt.value))
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                name = stmt.target.id
                if name.startswith("_") or self._is_classvar(stmt.annotation):
                    continue
                fields[name] = self._field(name, stmt.annotation, stmt.value)
        by_name = bool(config.get("populate_by_name") or config.get("validate_by_name"))
        return Model(
            f"{self.module}.{cls.name}",
            tuple(fields.values()),
            strict=bool(config.get("strict")),
            extra=str(config.get("extra") or "ignore"),
            populate_by_name=by_name,
        )

    def _is_classvar(self, ann: ast.expr) -> bool:
        target = ann.value if isinstance(ann, ast.Subscript) else ann
        return self.qualname(target) in ("typing.ClassVar", "typing_extensions.ClassVar")

    def _config(self, node: ast.expr) -> dict[str, Any]:
        """`ConfigDict(strict=True, ...)` or a dict literal with constant values."""
        if isinstance(node, ast.Call) and self.qualname(node.func) == "pydantic.ConfigDict":
            return {k.arg: _const(k.value) for k in node.keywords if k.arg}
        if isinstance(node, ast.Dict):
            return {
                _const(k): _const(v)
                for k, v in zip(node.keys, node.values, strict=True)
                if k is not None
            }
        return {}

    def _field(self, name: str, annotation: ast.expr, value: ast.expr | None) -> ModelField:
        base, bounds, strict = self._annotation(annotation)
        required, alias = value is None, None
        if isinstance(value, ast.Call) and self.qualname(value.func) == "pydantic.Field":
            info = self._field_call(value)
            bounds = _tighten(bounds, info["bounds"])
            strict = strict or info["strict"]
            required, alias = info["required"], info["alias"]
        return ModelField(name, _refined(base, bounds), alias, required, strict)

    def _field_call(self, call: ast.Call) -> dict[str, Any]:
        kws = {k.arg: k.value for k in call.keywords if k.arg}
        default = call.args[0] if call.args else kws.get("default")
        has_default = default is not None and not (
            isinstance(default, ast.Constant) and default.value is Ellipsis
        )
        alias = _const(kws["validation_alias"]) if "validation_alias" in kws else None
        if alias is None and "alias" in kws:
            alias = _const(kws["alias"])
        return {
            "bounds": _bounds_of(kws),
            "strict": _const(kws["strict"]) is True if "strict" in kws else False,
            "required": not (has_default or "default_factory" in kws),
            "alias": alias if isinstance(alias, str) else None,
        }

    def _annotation(self, node: ast.expr) -> tuple[Type, Bounds, bool]:
        """The declared type, the bounds its annotation carries, and strictness."""
        if isinstance(node, ast.Subscript) and self.qualname(node.value) in _ANNOTATED:
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            base, bounds, strict = self._annotation(items[0])
            for extra in items[1:]:
                if not isinstance(extra, ast.Call):
                    continue
                callee = self.qualname(extra.func) or ""
                kws = {k.arg: k.value for k in extra.keywords if k.arg}
                if callee == "pydantic.Field":
                    info = self._field_call(extra)
                    bounds, strict = _tighten(bounds, info["bounds"]), strict or info["strict"]
                elif callee in ("pydantic.Strict", "pydantic.types.Strict"):
                    strict = True
                elif callee.startswith("annotated_types."):
                    bounds = _tighten(bounds, _annotated_types(callee, extra, kws))
            return base, bounds, strict
        if isinstance(node, ast.Call) and self.qualname(node.func) == "pydantic.conint":
            kws = {k.arg: k.value for k in node.keywords if k.arg}
            strict = _const(kws["strict"]) is True if "strict" in kws else False
            return I64, _bounds_of(kws), strict
        name = self.qualname(node) or ""
        if name in _NAMED_INTS:
            return I64, _NAMED_INTS[name], name == "pydantic.StrictInt"
        if name in self.models:
            return self.models[name].type, (None, None), False
        return _BUILTINS.get(name, UNKNOWN), (None, None), False


Bounds = tuple[int | None, int | None]


def _const(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, int | float)
    ):
        return -node.operand.value
    return None


def _int_bounds(ge: Any = None, gt: Any = None, le: Any = None, lt: Any = None) -> Bounds:
    """Closed integer bounds from ge/gt/le/lt (an int field: gt=0 is ge=1). pydantic
    refuses a bound on an int field that is no integer (`lt=2.5` fails to build the
    model), so only integers (and integral floats) bound; anything else is no bound."""
    lows, highs = [], []
    if (v := _integer(ge)) is not None:
        lows.append(v)
    if (v := _integer(gt)) is not None:
        lows.append(v + 1)
    if (v := _integer(le)) is not None:
        highs.append(v)
    if (v := _integer(lt)) is not None:
        highs.append(v - 1)
    return (max(lows) if lows else None, min(highs) if highs else None)


def _integer(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _bounds_of(kws: Mapping[str, ast.expr]) -> Bounds:
    return _int_bounds(**{k: _const(kws[k]) for k in _BOUNDS if k in kws})


def _annotated_types(callee: str, call: ast.Call, kws: Mapping[str, ast.expr]) -> Bounds:
    """`annotated_types.Ge(0)`, `Gt`, `Le`, `Lt`, `Interval(ge=..., lt=...)`."""
    kind = callee.rpartition(".")[2]
    if kind == "Interval":
        return _bounds_of(kws)
    if kind.lower() in _BOUNDS and call.args:
        return _int_bounds(**{kind.lower(): _const(call.args[0])})
    return (None, None)


def _tighten(a: Bounds, b: Bounds) -> Bounds:
    lo = max((x for x in (a[0], b[0]) if x is not None), default=None)
    hi = min((x for x in (a[1], b[1]) if x is not None), default=None)
    return (lo, hi)


def _refined(base: Type, bounds: Bounds) -> Type:
    """An int with a bound becomes a RangeType; other types carry no integer range."""
    if base == I64 and bounds != (None, None):
        assert isinstance(base, ScalarType)
        return RangeType(base, bounds[0], bounds[1])
    return base


def read_models(tree: ast.Module, module: str, imports: Mapping[str, str]) -> dict[str, Model]:
    """Every pydantic model defined at the top level of `tree`, by qualified name."""
    return _Reader(module, imports).read(tree)


__all__ = ["Model", "ModelField", "Param", "STR", "read_models"]
