"""Random NumPy expression trees over the fused operations, as hypothesis strategies,
rendered to Python source.

A tree is a nested tuple:

    ("arr", "a") | ("scalar", "s") | ("const", "2.0")
    ("bin", "+", x, y)            x + y, also - * /
    ("fn2", "np.maximum", x, y)   np.add ... np.power, np.maximum, np.minimum
    ("fn1", "np.sin", x)          unary functions, np.abs, np.negative
    ("neg", x)                    -x
    ("pow", x, "2")               x ** 2 (NumPy's square/sqrt/reciprocal shortcuts, power)
    ("where", (op, x, y), t, f)   np.where(x op y, t, f), op "<" ... or "np.less" ...
Roots: ("expr", x), ("cmp", op, x, y) (a bool array), ("reduce", "np.sum", x) or
("method", "sum", x) ((x).sum()).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

ARRAYS = ("a", "b", "c")
CONSTS = ("2.0", "0.5", "3", "1e300", "1e-300", "1.5", "0.0", "7", "1e-320", "-2.5")
BINOPS = ("+", "-", "*", "/")
FN2 = (
    "np.add",
    "np.subtract",
    "np.multiply",
    "np.divide",
    "np.true_divide",
    "np.maximum",
    "np.minimum",
    "np.power",
)
SIGN = ("np.abs", "np.absolute", "np.negative", "np.fabs")
EXACT_UNARY = ("np.sqrt", "np.floor", "np.ceil", "np.trunc", "np.square", "np.reciprocal")
POWERS = ("2", "0.5", "-1", "3", "1.5", "-2", "2.0")
CMPS = (
    "<",
    "<=",
    ">",
    ">=",
    "==",
    "!=",
    "np.less",
    "np.less_equal",
    "np.greater",
    "np.greater_equal",
    "np.equal",
    "np.not_equal",
)
REDUCTIONS = {
    "np.sum": "sum",
    "np.prod": "prod",
    "np.mean": "mean",
    "np.max": "max",
    "np.min": "min",
    "np.amax": "max",
    "np.amin": "min",
}
METHODS = ("sum", "prod", "mean", "max", "min")


def has_array(tree: Any) -> bool:
    """Whether an array leaf occurs in `tree`."""
    if not isinstance(tree, tuple):
        return False
    if tree[0] == "arr":
        return True
    return any(has_array(x) for x in tree[1:])


FLOAT_CONSTS = tuple(c for c in CONSTS if "." in c or "e" in c)


def _scalar_float(tree: Any) -> bool:
    """A subtree without arrays that the compiler types as a float: a float literal,
    the float parameter, or np.<fn> calls of those (Python numbers in, numpy.float64
    out). Operators of Python numbers (`-s`, `s * 2`) are not typed by the core yet:
    such a leaf is guarded as an array and always falls back."""
    kind = tree[0]
    if kind == "scalar" or (kind == "const" and tree[1] in FLOAT_CONSTS):
        return True
    if kind in ("fn1", "fn2"):
        args = tree[2:]
        return all(_scalar_ok(a) for a in args) and any(_scalar_float(a) for a in args)
    return False


def _scalar_ok(tree: Any) -> bool:
    return tree[0] in ("scalar", "const") or _scalar_float(tree)


def valid(tree: Any) -> bool:
    """Whether `tree` compiles to one site whose fast path takes every float64 input."""
    kind = tree[0]
    if kind in ("arr", "scalar", "const"):
        return True
    if not has_array(tree) and kind not in ("expr", "cmp", "reduce", "method"):
        return _scalar_ok(tree)
    if kind == "where":
        _op, x, y = tree[1]
        t, f = tree[2], tree[3]
        sure_float = any(has_array(b) or (b[0] == "const" and b[1] in FLOAT_CONSTS) for b in (t, f))
        return sure_float and all(map(valid, (x, y, t, f)))
    if kind == "cmp":
        return valid(tree[2]) and valid(tree[3])
    return all(valid(x) for x in tree[1:] if isinstance(x, tuple))


def expressions(unary: tuple[str, ...], max_leaves: int = 7) -> st.SearchStrategy[Any]:
    """float64-valued trees; `unary` are the np.* functions allowed (proven ones)."""
    leaf = st.one_of(
        st.sampled_from(ARRAYS).map(lambda n: ("arr", n)),
        st.just(("scalar", "s")),
        st.sampled_from(CONSTS).map(lambda c: ("const", c)),
    )
    fn1 = (*SIGN, *EXACT_UNARY, *unary)

    def extend(x: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        arrayish = x.filter(has_array)  # a compare needs an array to be an array
        return st.one_of(
            st.tuples(st.just("bin"), st.sampled_from(BINOPS), x, x),
            st.tuples(st.just("fn2"), st.sampled_from(FN2), x, x),
            st.tuples(st.just("fn1"), st.sampled_from(fn1), x),
            st.tuples(st.just("neg"), x),
            st.tuples(st.just("pow"), arrayish, st.sampled_from(POWERS)),
            st.tuples(st.just("where"), st.tuples(st.sampled_from(CMPS), arrayish, x), x, x),
        )

    return st.recursive(leaf, extend, max_leaves=max_leaves).filter(has_array)


def roots(unary: tuple[str, ...]) -> st.SearchStrategy[Any]:
    """A whole site: an elementwise tree, a comparison, or a reduction at the root."""
    x = expressions(unary)
    return st.one_of(
        x.map(lambda e: ("expr", e)),
        x.map(lambda e: ("expr", e)),
        st.tuples(st.just("cmp"), st.sampled_from(CMPS), x, x),
        st.tuples(st.just("reduce"), st.sampled_from(sorted(REDUCTIONS)), x),
        st.tuples(st.just("method"), st.sampled_from(METHODS), x),
    ).filter(valid)


def render(tree: Any) -> str:
    """Python source of a tree (fully parenthesised)."""
    kind = tree[0]
    if kind in ("arr", "scalar", "const"):
        return tree[1]
    if kind == "bin":
        return f"({render(tree[2])} {tree[1]} {render(tree[3])})"
    if kind == "fn2":
        return f"{tree[1]}({render(tree[2])}, {render(tree[3])})"
    if kind == "fn1":
        return f"{tree[1]}({render(tree[2])})"
    if kind == "neg":
        return f"(-{render(tree[1])})"
    if kind == "pow":
        return f"({render(tree[1])} ** {tree[2]})"
    if kind == "where":
        return f"np.where({_compare(*tree[1])}, {render(tree[2])}, {render(tree[3])})"
    if kind == "expr":
        return render(tree[1])
    if kind == "cmp":
        return _compare(tree[1], tree[2], tree[3])
    if kind == "reduce":
        return f"{tree[1]}({render(tree[2])})"
    if kind == "method":
        return f"({render(tree[2])}).{tree[1]}()"
    raise ValueError(f"unknown tree node {kind!r}")


def _compare(op: str, x: Any, y: Any) -> str:
    if op.startswith("np."):
        return f"{op}({render(x)}, {render(y)})"
    return f"({render(x)} {op} {render(y)})"


def reduction_kind(tree: Any) -> str | None:
    """`sum`/`prod`/`mean`/`max`/`min` for a reduction root, else None."""
    if tree[0] == "reduce":
        return REDUCTIONS[tree[1]]
    if tree[0] == "method":
        return str(tree[1])
    return None


ANNOTATIONS = ("np.ndarray", "npt.NDArray[np.float64]")


def module_source(trees: list[Any]) -> str:
    """A module with one function `f<i>(a, b, c, s)` per tree; array parameters are
    annotated `np.ndarray` or `npt.NDArray[np.float64]` in turn."""
    lines = ["import numpy as np", "import numpy.typing as npt", ""]
    for i, tree in enumerate(trees):
        t = ANNOTATIONS[i % 2]
        lines += [
            "",
            f"def f{i}(a: {t}, b: {t}, c: {t}, s: float):",
            f"    return {render(tree)}",
            "",
        ]
    return "\n".join(lines)


def draw_trees(unary: tuple[str, ...], count: int, seed: int | None = None) -> list[Any]:
    """`count` distinct trees from the `roots` strategy (hypothesis generates them)."""
    trees: list[Any] = []
    seen: set[str] = set()

    @settings(
        max_examples=count * 4,
        database=None,
        derandomize=seed is None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(roots(unary))
    def collect(tree: Any) -> None:
        text = render(tree)
        if len(trees) < count and text not in seen and _worth_a_site(tree):
            seen.add(text)
            trees.append(tree)

    if seed is not None:
        collect = hypothesis_seed(seed)(collect)
    collect()
    return trees


def _worth_a_site(tree: Any) -> bool:
    """A bare leaf is no site (`return a`)."""
    return not (tree[0] == "expr" and tree[1][0] in ("arr", "scalar", "const"))
