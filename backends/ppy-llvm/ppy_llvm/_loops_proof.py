"""Typed loops: element accesses of an innermost `for` loop proven in bounds on entry.

An index that is affine in the loop's counter and in locals the loop never writes
(`L[i, j]`, `T[k + 1, j]`, `x[j - 1]`, `a[2 * j + off]`) takes its extreme values
at the ends of the counter's range, so testing those two values once, before the
loop, proves every iteration's access in bounds. The emitter then runs a copy of
the loop whose proven accesses carry no bounds check (nor the negative-index wrap:
a proven index is never negative); when the test fails it runs the checked copy,
which raises IndexError at exactly the access and iteration Python would.

The test is computed in 128-bit integers: a sum of a few 64-bit terms with 32-bit
coefficients cannot overflow there, so the proof never wraps into a false "yes".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: the most terms an index's affine form may have (keeps the 128-bit sum exact)
MAX_TERMS = 6
#: |coefficient| and |constant| limit: with variables below 2**63, each term stays
#: below 2**95 and their sum far inside 128 bits
MAX_COEFF = 2**32

#: a term's variable: ("iv",) the loop counter, ("slot", name) a local the loop
#: never writes, ("dim", id(array value), axis) an array's length
Key = tuple[Any, ...]


@dataclass(slots=True)
class Affine:
    """sum(coeff * var) + const over the keys above."""

    terms: dict[Key, int] = field(default_factory=dict)
    const: int = 0

    def plus(self, other: Affine, sign: int = 1) -> Affine | None:
        terms = dict(self.terms)
        for key, c in other.terms.items():
            terms[key] = terms.get(key, 0) + sign * c
        terms = {k: c for k, c in terms.items() if c}
        return _checked(Affine(terms, self.const + sign * other.const))

    def times(self, k: int) -> Affine | None:
        return _checked(
            Affine({key: c * k for key, c in self.terms.items() if c * k}, self.const * k)
        )


def _checked(form: Affine) -> Affine | None:
    if len(form.terms) > MAX_TERMS or abs(form.const) >= MAX_COEFF:
        return None
    if any(abs(c) >= MAX_COEFF for c in form.terms.values()):
        return None
    return form


@dataclass(slots=True)
class Access:
    """One load or store of the loop body and the affine form of each index."""

    op: Any
    array: Any
    forms: list[Affine]


def innermost(op: Any) -> bool:
    """Whether the loop's body holds no other loop (only those are versioned: a copy
    per nesting level would grow the code exponentially)."""
    return not any(
        inner.name in ("loops.for", "loops.while")
        for top in op.regions[0].block.ops
        for inner in top.walk()
    )


def written(op: Any) -> set[str]:
    """Every local slot the loop body writes (a nested loop's counter included)."""
    return {
        inner.attributes["slot"]
        for inner in op.walk()
        if inner is not op and inner.name in ("loops.set", "loops.for")
    }


def affine(value: Any, counter: str, writes: set[str]) -> Affine | None:
    """The index `value` as an affine form over the loop counter `counter`, locals
    outside `writes` and array lengths; None when it is not one (a loaded index,
    a product of two variables, a local the loop writes)."""
    owner = getattr(value, "owner", None)
    name = getattr(owner, "name", "")
    attrs = getattr(owner, "attributes", {})
    if name == "loops.const" and attrs.get("py") == "int":
        return _checked(Affine({}, int(attrs["value"])))
    if name == "loops.get" and attrs.get("py") == "int":
        slot = attrs["slot"]
        if slot == counter and counter not in writes:
            return Affine({("iv",): 1})
        if slot != counter and slot not in writes:
            return Affine({("slot", slot): 1})
        return None
    if name == "loops.dim":
        return Affine({("dim", id(owner.operands[0]), attrs["axis"]): 1})
    if name == "loops.unary" and attrs.get("op") == "neg" and attrs.get("py") == "int":
        inner = affine(owner.operands[0], counter, writes)
        return inner.times(-1) if inner is not None else None
    if name == "loops.binop" and attrs.get("py") == "int":
        a = affine(owner.operands[0], counter, writes)
        b = affine(owner.operands[1], counter, writes)
        if a is None or b is None:
            return None
        how = attrs["op"]
        if how == "add":
            return a.plus(b)
        if how == "sub":
            return a.plus(b, -1)
        if how == "mul" and not a.terms:
            return b.times(a.const)
        if how == "mul" and not b.terms:
            return a.times(b.const)
    return None


def provable(op: Any) -> list[Access]:
    """The accesses of the innermost `for` loop `op` whose every index is affine;
    empty when the loop is not innermost or its counter is reassigned."""
    if not innermost(op):
        return []
    counter, writes = op.attributes["slot"], written(op)
    out = []
    for inner in op.walk():
        if inner.name == "loops.load":
            indices = inner.operands[1:]
        elif inner.name == "loops.store":
            indices = inner.operands[2:]
        else:
            continue
        forms = [affine(index, counter, writes) for index in indices]
        if all(f is not None for f in forms):
            out.append(Access(inner, inner.operands[0], forms))  # type: ignore[arg-type]
    return out


__all__ = ["Access", "Affine", "affine", "innermost", "provable", "written"]
