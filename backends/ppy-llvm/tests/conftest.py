"""Shared fixtures: one kernel library per test session, sites by name."""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ppy_llvm import KernelBuilder, KernelSpec
from ppy_llvm._spec import EXACT_UNARY, LOOP_BINARY, LOOP_UNARY

HAVE_LLVM = importlib.util.find_spec("llvmlite") is not None
HAVE_CC = any(shutil.which(c) for c in ("cc", "gcc", "clang"))
try:
    from ppy_numpy._runtime import make_site
except ImportError:  # the C extension is not built
    make_site = None  # type: ignore[assignment]


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """Skip needs_llvm / needs_cc tests where the tool is missing."""
    for item in items:
        if "needs_llvm" in item.keywords and (not HAVE_LLVM or make_site is None):
            item.add_marker(
                pytest.mark.skip(reason="llvmlite or ppy_numpy._runtime._dispatch missing")
            )
        if "needs_cc" in item.keywords and not HAVE_CC:
            item.add_marker(pytest.mark.skip(reason="no C compiler"))


def _unary(op: str) -> Callable[[KernelBuilder, list[int]], int]:
    return lambda b, x: b.op("unary", x[0], op=op)


def _bin(op: str) -> Callable[[KernelBuilder, list[int]], int]:
    return lambda b, x: b.op(op, x[0], x[1])


def _cmp(pred: str) -> Callable[[KernelBuilder, list[int]], int]:
    return lambda b, x: b.op("compare", x[0], x[1], pred=pred)


def _pow_fast(e: float) -> Callable[[KernelBuilder, list[int]], int]:
    return lambda b, x: b.op("pow", x[0], b.const(e), scalar_fast_path=True)


#: name -> (leaves, build(b, leaf ids) -> result id, reduce, NumPy reference)
EXPRS: dict[str, tuple[str, Callable[..., int], str | None, Callable[..., Any]]] = {
    "a*b+c": (
        "aaa",
        lambda b, x: b.op("add", b.op("mul", x[0], x[1]), x[2]),
        None,
        lambda a, b, c: a * b + c,
    ),
    "2a+3bc-a/b": (
        "aaa",
        lambda b, x: b.op(
            "sub",
            b.op(
                "add",
                b.op("mul", b.const(2.0), x[0]),
                b.op("mul", b.op("mul", b.const(3.0), x[1]), x[2]),
            ),
            b.op("div", x[0], x[1]),
        ),
        None,
        lambda a, b, c: 2.0 * a + 3.0 * b * c - a / b,
    ),
    "sin*2+exp": (
        "aa",
        lambda b, x: b.op(
            "add",
            b.op("mul", b.op("unary", x[0], op="sin"), b.const(2.0)),
            b.op("unary", x[1], op="exp"),
        ),
        None,
        lambda a, b: np.sin(a) * 2.0 + np.exp(b),
    ),
    "where": (
        "aaa",
        lambda b, x: b.op(
            "select",
            b.op("compare", x[0], x[1], pred="gt"),
            b.op("mul", x[0], x[2]),
            b.op("sub", x[1], x[2]),
        ),
        None,
        lambda a, b, c: np.where(a > b, a * c, b - c),
    ),
    "a*s+t": (
        "asa",
        lambda b, x: b.op("add", b.op("mul", x[0], x[1]), x[2]),
        None,
        lambda a, s, c: a * s + c,
    ),
    "a**2": ("a", _pow_fast(2.0), None, lambda a: a**2),
    "a**0.5": ("a", _pow_fast(0.5), None, lambda a: a**0.5),
    "a**-1": ("a", _pow_fast(-1.0), None, lambda a: a**-1),
    "a**3.0": ("a", _pow_fast(3.0), None, lambda a: a**3.0),
    "power(a,b)": ("aa", _bin("pow"), None, np.power),
    "neg": ("a", lambda b, x: b.op("neg", x[0]), None, np.negative),
    "abs": ("a", lambda b, x: b.op("abs", x[0]), None, np.abs),
    "sum(a*b)": ("aa", _bin("mul"), "add", lambda a, b: np.sum(a * b)),
    "sum": ("a", lambda b, x: x[0], "add", np.sum),
    "prod": ("a", lambda b, x: x[0], "mul", np.prod),
    "mean": ("a", lambda b, x: x[0], "mean", np.mean),
    "max": ("a", lambda b, x: x[0], "max", np.max),
    "min": ("a", lambda b, x: x[0], "min", np.min),
    "max(a-b)": ("aa", _bin("sub"), "max", lambda a, b: np.max(a - b)),
    "prod(a*b)": ("aa", _bin("mul"), "mul", lambda a, b: np.prod(a * b)),
    "sum(sin(a))": ("a", _unary("sin"), "add", lambda a: np.sum(np.sin(a))),
    "min(exp(a))": ("a", _unary("exp"), "min", lambda a: np.min(np.exp(a))),
}
for _op, _f in (
    ("add", np.add),
    ("sub", np.subtract),
    ("mul", np.multiply),
    ("div", np.divide),
    ("maximum", np.maximum),
    ("minimum", np.minimum),
):
    EXPRS[_op] = ("aa", _bin(_op), None, _f)
for _p, _f in (
    ("lt", np.less),
    ("le", np.less_equal),
    ("gt", np.greater),
    ("ge", np.greater_equal),
    ("eq", np.equal),
    ("ne", np.not_equal),
):
    EXPRS[f"cmp_{_p}"] = ("aa", _cmp(_p), None, _f)
for _u in (*sorted(EXACT_UNARY - {"neg", "abs"}), *LOOP_UNARY):
    EXPRS[_u] = ("a", _unary(_u), None, getattr(np, _u))
for _bn in LOOP_BINARY:  # two-input NumPy loops (arctan2, fmax, ...)
    EXPRS[_bn] = (
        "aa",
        lambda b, x, _o=_bn: b.op("binary", x[0], x[1], op=_o),
        None,
        getattr(np, _bn),
    )
EXPRS["clip"] = ("aaa", lambda b, x: b.op("clip", x[0], x[1], x[2]), None, np.clip)


def spec_of(name: str) -> KernelSpec:
    """The KernelSpec of EXPRS[name]."""
    leaves, build, reduce, _ = EXPRS[name]
    b = KernelBuilder()
    ids = [b.leaf("array" if c == "a" else "scalar") for c in leaves]
    return b.build(build(b, ids), reduce=reduce)  # type: ignore[arg-type]


class Sites:
    """Compiles every EXPRS kernel once (one .so) and hands out dispatcher sites."""

    def __init__(self) -> None:
        from ppy_core.runtime.abi import kernel_address
        from ppy_llvm import compile_specs

        names = list(EXPRS)
        kernels = compile_specs([spec_of(n) for n in names], "tests")
        self.sites: dict[str, Any] = {}
        for name, k in zip(names, kernels, strict=True):
            addr, lib = kernel_address(k)  # type: ignore[misc]
            sig = k.signature
            with contextlib.suppress(LookupError):
                self.sites[name] = make_site(
                    addr, sig.kind, sig.leaves, sig.loops, EXPRS[name][3], name, lib
                )

    def __getitem__(self, name: str) -> Any:
        site = self.sites[name]
        site.reset_stats()
        return site


@pytest.fixture(scope="session")
def sites() -> Sites:
    """All test kernels, compiled once per session (and cached on disk)."""
    if not HAVE_LLVM or not HAVE_CC or make_site is None:
        pytest.skip("needs llvmlite, a C compiler and the _dispatch extension")
    return Sites()


SPECIALS = np.array(
    [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        -np.nan,
        5e-324,
        -5e-324,
        1e-310,
        2.2e-308,
        1.0,
        -1.0,
        0.5,
        2.0,
        1e300,
        -1e300,
        709.8,
        -745.5,
        np.pi,
        1e-20,
        3.0,
        -3.0,
    ]
)


def make_inputs(rng: np.random.Generator, n: int, k: int, special: float = 0.2) -> list[np.ndarray]:
    """k float64 arrays of length n: random magnitudes with special values mixed in."""
    out = []
    for _ in range(k):
        x = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)
        mask = rng.random(n) < special
        x[mask] = SPECIALS[rng.integers(0, len(SPECIALS), int(mask.sum()))]
        out.append(x)
    return out


def same_bits(got: Any, want: Any) -> bool:
    """Bitwise equality (dtype, shape, every bit pattern, NaN signs included)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    view = np.uint8 if got.dtype == np.bool_ else np.uint64
    return bool(np.array_equal(got.view(view), want.view(view)))
