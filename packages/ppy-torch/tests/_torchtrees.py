"""Random torch float64 expression trees over the fused operations, as hypothesis
strategies, rendered to Python source.

A tree is a nested tuple, each node tagged with whether it is a tensor:

    ("t", "a")                       a tensor parameter (a, b, c)
    ("s", "s") | ("s", "2.0")        the float parameter, a literal
    ("bin", "+", x, y)               x + y, also - * /
    ("fn2", "torch.add", x, y)       torch.add/sub/mul/div (x a tensor)
    ("m2", "add", x, y)              (x).add(y), .sub .mul .div (x a tensor)
    ("fn1", "torch.abs", x)          torch.abs/neg/negative/absolute (x a tensor)
    ("m1", "abs", x)                 (x).abs(), .neg()
    ("neg", x)                       -x
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

TENSORS = ("a", "b", "c")
CONSTS = ("2.0", "0.5", "3", "1e300", "1e-300", "-2.5", "0.0", "7", "1e-320", "0.1")
BINOPS = ("+", "-", "*", "/")
FN2 = (
    "torch.add",
    "torch.sub",
    "torch.mul",
    "torch.div",
    "torch.subtract",
    "torch.multiply",
    "torch.true_divide",
)
M2 = ("add", "sub", "mul", "div")
FN1 = ("torch.abs", "torch.neg", "torch.negative", "torch.absolute")
M1 = ("abs", "neg")


def is_tensor(tree: Any) -> bool:
    """Whether the subtree's value is a tensor (it has a tensor leaf)."""
    if tree[0] == "t":
        return True
    if tree[0] == "s":
        return False
    return any(is_tensor(x) for x in tree[1:] if isinstance(x, tuple))


SCALARS = st.one_of(
    st.tuples(st.just("s"), st.just("s")), st.tuples(st.just("s"), st.sampled_from(CONSTS))
)


def _compose(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A tensor node over tensor subtrees; a number operand is a parameter or literal
    (an operator of Python numbers is a leaf the core does not type: it would be
    guarded as a tensor and always fall back)."""
    operand = st.one_of(children, SCALARS)
    return st.one_of(
        st.tuples(st.just("bin"), st.sampled_from(BINOPS), children, operand),
        st.tuples(st.just("bin"), st.sampled_from(BINOPS), operand, children),
        st.tuples(st.just("fn2"), st.sampled_from(FN2), children, operand),
        st.tuples(st.just("m2"), st.sampled_from(M2), children, operand),
        st.tuples(st.just("fn1"), st.sampled_from(FN1), children),
        st.tuples(st.just("m1"), st.sampled_from(M1), children),
        st.tuples(st.just("neg"), children),
    )


TREES = st.recursive(st.tuples(st.just("t"), st.sampled_from(TENSORS)), _compose, max_leaves=8)


def render(tree: Any) -> str:
    """Python source of `tree`."""
    kind = tree[0]
    if kind in ("t", "s"):
        return str(tree[1])
    if kind == "bin":
        return f"({render(tree[2])} {tree[1]} {render(tree[3])})"
    if kind == "fn2":
        return f"{tree[1]}({render(tree[2])}, {render(tree[3])})"
    if kind == "m2":
        return f"({render(tree[2])}).{tree[1]}({render(tree[3])})"
    if kind == "fn1":
        return f"{tree[1]}({render(tree[2])})"
    if kind == "m1":
        return f"({render(tree[2])}).{tree[1]}()"
    if kind == "neg":
        return f"(-{render(tree[1])})"
    raise ValueError(tree)


def fully_fused(tree: Any) -> bool:
    """Whether the whole tree converges (no `number / tensor`): then the function's
    value is one site's result and every guarded call takes the fast path."""
    kind = tree[0]
    if kind in ("t", "s"):
        return True
    if kind == "bin" and tree[1] == "/" and not is_tensor(tree[2]) and is_tensor(tree[3]):
        return False
    return all(fully_fused(x) for x in tree[1:] if isinstance(x, tuple))


def module_source(trees: list[Any]) -> str:
    """One function `f<i>(a, b, c, s)` per tree, returning it."""
    lines = ["import torch", ""]
    for i, tree in enumerate(trees):
        lines += [
            f"def f{i}(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, "
            "s: float) -> torch.Tensor:",
            f"    return {render(tree)}",
            "",
        ]
    return "\n".join(lines)
