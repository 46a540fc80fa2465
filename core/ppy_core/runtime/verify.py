"""PPY_VERIFY=1: every call a site answers without falling back also runs the site's
Python and the two answers are compared; a difference raises `ppy.VerifyError`.

What "the same answer" means, for any library, without importing one (the runtime
imports no library; arrays and tensors are read through the buffer protocol or
their own methods):

* the same type (`type(a) is type(b)`: a NumPy scalar is not a 0-d array);
* for arrays and tensors: the same shape, dtype, device and `requires_grad`, and
  the same bits (NaNs of any payload equal each other; -0.0 is not 0.0);
* floats bit for bit, tuples and lists element by element, anything else by `==`;
* the IEEE-flags rule: the floating-point warnings a call reports (NumPy's
  "overflow encountered in multiply" under the current `np.errstate`) are the same
  on both paths; the fast path's are re-emitted so the program sees them as usual;
* if Python raises where the fast path answered, that is a difference too.

A store site (``stateful``: `B[1:-1] = expr`, `a += expr`) writes its target, so its
Python cannot run after it: before the fast call, the statement's Python runs on a
copy of the target the site makes (`shadow_target`), reading the right side from
the untouched operands (NumPy's "whole right side first", overlaps included); after
it, the target and the value are compared with the copy's. A site that makes no
copy (a target it never writes) is not verified.

Verified calls are counted per site (`ppy.stats()[site]["verified"]`).
"""

from __future__ import annotations

import math
import struct
import sys
import warnings

TYPE_CHECKING = False  # `typing` costs a launcher ~3 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

VERIFIED: dict[str, int] = {}
_TENSOR_ATTRS = ("shape", "dtype", "device", "requires_grad")


def recorded(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    keep_errors: bool = False,
) -> tuple[Any, list[warnings.WarningMessage]]:
    """`fn(*args, **kwargs)` and the warnings it raised (every one, not once per place);
    if it raises, its warnings are reported as usual before the exception goes on.
    With `keep_errors` a warning the program's filters make an error still raises
    (a store site reads the filters: under such a one, NumPy raises before it stores)."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:  # type: ignore[assignment]
            _record_every(keep_errors)
            value = fn(*args, **kwargs)
    except BaseException:
        reemit(caught)
        raise
    return value, list(caught)


def _record_every(keep_errors: bool) -> None:
    """Inside `catch_warnings(record=True)`: every warning is recorded, each time (but,
    with `keep_errors`, where the program's filters make it an error)."""
    program = list(warnings.filters) if keep_errors else []
    warnings.resetwarnings()
    warnings.simplefilter("always")  # what no filter of the program takes
    for action, message, category, module, lineno in reversed(program):
        pattern, where = getattr(message, "pattern", ""), getattr(module, "pattern", "")
        mode = "error" if action == "error" else "always"
        warnings.filterwarnings(mode, pattern, category, where, lineno)  # type: ignore[arg-type]


def reemit(caught: list[warnings.WarningMessage]) -> None:
    """Report recorded warnings again, under the program's own filters."""
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def _shadow(
    fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[Any, list[warnings.WarningMessage], Exception | None]:
    """`fn(*args, **kwargs)` with its warnings recorded, never shown, and its exception
    kept: (value, warnings, exception)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return fn(*args, **kwargs), list(caught or ()), None
        except Exception as exc:
            return None, list(caught or ()), exc


class StoreShadow:
    """A store statement's Python run on a copy of its target (`shadow_store`)."""

    __slots__ = ("caught", "error", "target", "value")

    def __init__(self, target: Any, run: tuple[Any, list[Any], Exception | None]) -> None:
        self.target = target
        self.value, self.caught, self.error = run


def shadow_store(
    site: Any, fallback: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> StoreShadow | None:
    """Before store site `site` runs on `args` (``obj, key, *leaves``): its Python on
    the copy of ``obj`` the site makes, or None where it makes none."""
    copy = getattr(site, "shadow_target", None)
    target = copy(args[0]) if args and callable(copy) else None
    if target is None:
        return None
    return StoreShadow(target, _shadow(fallback, (target, *args[1:]), kwargs))


def shadow_writes(
    fallback: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> StoreShadow:
    """Before a function site that writes its arguments (typed loops: `B[i, j] += ...`)
    runs: its Python on deep copies of them (an object passed twice is copied once, so
    it stays one object), so the writes happen once on each side, never twice."""
    import copy

    copied_args, copied_kwargs = copy.deepcopy((args, dict(kwargs)))
    return StoreShadow(copied_args, _shadow(fallback, copied_args, copied_kwargs))


def check_writes(
    site_id: str,
    shadow: StoreShadow,
    args: tuple[Any, ...],
    result: Any,
    caught: list[warnings.WarningMessage],
) -> None:
    """After a fast call of a writing function site: its value, and every argument as
    the call left it, against Python's run on the copies."""
    problem = _judge(result, caught, shadow.value, shadow.caught, shadow.error, distinct=True)
    for i, (got, want) in enumerate(zip(args, shadow.target, strict=True)):
        if problem is None and (why := compare(got, want)):
            problem = f"argument {i} after the call: {why}"
    _verdict(site_id, problem)


def check_store(
    site_id: str,
    shadow: StoreShadow | None,
    args: tuple[Any, ...],
    result: Any,
    caught: list[warnings.WarningMessage],
) -> None:
    """After a fast store call: its value and its target against the shadow's."""
    if shadow is None:
        return
    problem = _judge(result, caught, shadow.value, shadow.caught, shadow.error)
    if problem is None:
        problem = compare(args[0], shadow.target)
        problem = f"the target: {problem}" if problem else None
    _verdict(site_id, problem)


def _flags(caught: list[warnings.WarningMessage]) -> list[str]:
    """The floating-point reports among `caught` (NumPy's are RuntimeWarnings)."""
    return [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]


def check(
    site_id: str,
    fallback: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    result: Any,
    caught: list[warnings.WarningMessage],
) -> None:
    """Run the Python path beside a fast call's `result` and raise VerifyError on any
    difference; count the call as verified otherwise."""
    _verdict(site_id, _judge(result, caught, *_shadow(fallback, args, kwargs)))


def _judge(
    result: Any,
    caught: list[warnings.WarningMessage],
    expected: Any,
    python_caught: list[warnings.WarningMessage],
    error: Exception | None,
    distinct: bool = False,
) -> str | None:
    """What differs between a fast call and Python's run of it (None: nothing).
    `distinct`: compare which warnings, not how often (a loop's kernel reports each
    once per call, as Python's default filter shows it; Python's run repeats it)."""
    if error is not None:
        return f"the fast path answered, Python raised {error!r}"
    problem = compare(result, expected)
    got, want = _flags(caught), _flags(python_caught)
    if distinct:
        got, want = sorted(set(got)), sorted(set(want))
    if problem is None and got != want:
        problem = f"floating-point warnings {got} != Python's {want}"
    return problem


def _verdict(site_id: str, problem: str | None) -> None:
    """VerifyError naming the site for a `problem`; else the call counts as verified."""
    if problem:
        from ppy_core.diagnostics import VerifyError

        raise VerifyError(
            f"site {site_id}: fast path and Python differ: {problem}",
            hint="please report this: the fast path is wrong here",
        )
    VERIFIED[site_id] = VERIFIED.get(site_id, 0) + 1


def compare(got: Any, want: Any) -> str | None:
    """None if `got` is `want` bit for bit (NaNs of any payload equal), else where not."""
    if type(got) is not type(want):
        return f"type {type(got).__name__} != {type(want).__name__}"
    if isinstance(got, float):
        return None if _same_float(got, want) else f"{got!r} != {want!r}"
    if isinstance(got, tuple | list):
        if len(got) != len(want):
            return f"length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            problem = compare(g, w)
            if problem:
                return f"[{i}]: {problem}"
        return None
    for attribute in _TENSOR_ATTRS:
        g, w = getattr(got, attribute, None), getattr(want, attribute, None)
        if str(g) != str(w):
            return f"{attribute} {g} != {w}"
    gview, wview = _buffer(got), _buffer(want)
    if gview is not None and wview is not None:
        return _compare_buffers(gview, wview)
    if callable(getattr(got, "tolist", None)) and callable(getattr(want, "tolist", None)):
        return compare(_listed(got), _listed(want))  # object arrays, other exotic dtypes
    try:
        same = bool(got == want)
    except Exception:  # an `==` that does not answer a bool: only identity is safe
        same = got is want
    return None if same else f"{got!r} != {want!r}"


def _listed(value: Any) -> list[Any]:
    items = value.tolist()
    return items if isinstance(items, list) else [items]


def _buffer(value: Any) -> memoryview | None:
    """The bytes of an array (the buffer protocol) or of a tensor's CPU copy; None for
    what has neither (or holds object pointers, whose bytes say nothing)."""
    if getattr(getattr(value, "dtype", None), "kind", "") == "O":
        return None
    try:
        return memoryview(value)
    except (TypeError, ValueError, BufferError):
        pass
    if not (callable(getattr(value, "detach", None)) and callable(getattr(value, "numpy", None))):
        return None
    tensor = value.detach().cpu().contiguous()
    try:
        return memoryview(tensor.numpy())
    except (TypeError, RuntimeError):  # bfloat16, float16 ...: exact in float64
        try:
            return memoryview(tensor.double().numpy())
        except (TypeError, RuntimeError):
            return None


def _native_format(view: memoryview) -> str:
    """The buffer's format with a prefix meaning native byte order dropped: an unaligned
    array's view says '=d' (or ctypes' '<d' here), its copy 'd', the same bytes (the
    item sizes are compared beside it, so '=l' is not taken for 'l')."""
    native = "<" if sys.byteorder == "little" else ">"
    fmt = view.format
    return fmt[1:] if len(fmt) > 1 and fmt[0] in ("@", "=", native) else fmt


def _compare_buffers(got: memoryview, want: memoryview) -> str | None:
    if (
        got.shape != want.shape
        or got.itemsize != want.itemsize
        or _native_format(got) != _native_format(want)
    ):
        return f"shape/format {got.shape} {got.format} != {want.shape} {want.format}"
    if got.tobytes() == want.tobytes():
        return None
    try:  # element by element, in C order, whatever the layout
        flat_g = memoryview(got.tobytes()).cast(_native_format(got)).tolist()
        flat_w = memoryview(want.tobytes()).cast(_native_format(want)).tolist()
    except (TypeError, ValueError, NotImplementedError):  # a format `cast` cannot read
        return f"the bytes differ (format {got.format})"
    for i, (g, w) in enumerate(zip(flat_g, flat_w, strict=True)):
        same = _same_float(g, w) if isinstance(g, float) else g == w
        if not same:
            return f"first difference at flat index {i}: {g!r} != {w!r}"
    return None


def _same_float(a: float, b: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    return struct.pack("<d", a) == struct.pack("<d", b)


__all__ = [
    "VERIFIED",
    "StoreShadow",
    "check",
    "check_store",
    "compare",
    "recorded",
    "reemit",
    "shadow_store",
]
