"""Random pyarrow.compute expression trees over float64 and boolean arrays, written
as a module of functions `t0 ... tN(a, b, c, m, x)` for the fusion tests.

Every op node has a column operand (scalars appear only beside one), so each tree
converges whole; the seed makes the module the same on every run (its kernels are
built once and cached).
"""

from __future__ import annotations

import random

FLOAT_BINARY = ("add", "subtract", "multiply", "divide", "add_checked", "divide_checked")
COMPARE = ("greater", "greater_equal", "less", "less_equal", "equal", "not_equal")
LOGIC = ("and_", "or_", "xor", "and_kleene", "or_kleene")
LITERALS = ("0.0", "-0.0", "2.5", "1e300", "-3", "7")


class TreeGen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def scalar(self) -> str:
        return self.rng.choice(("x", *LITERALS))

    def f(self, depth: int) -> str:
        """A float64 column expression."""
        r = self.rng
        if depth <= 0 or r.random() < 0.25:
            return r.choice("abc")
        pick = r.random()
        if pick < 0.45:
            op = r.choice(FLOAT_BINARY[:4] * 3 + FLOAT_BINARY[4:])
            lhs = self.f(depth - 1)
            rhs = self.scalar() if r.random() < 0.25 else self.f(depth - 1)
            return f"pc.{op}({lhs}, {rhs})" if r.random() < 0.8 else f"pc.{op}({rhs}, {lhs})"
        if pick < 0.55:
            return f"pc.{r.choice(('negate', 'abs'))}({self.f(depth - 1)})"
        if pick < 0.75:
            other = self.scalar() if r.random() < 0.3 else self.f(depth - 1)
            return f"pc.if_else({self.b(depth - 1)}, {self.f(depth - 1)}, {other})"
        if pick < 0.9:
            fill = self.scalar() if r.random() < 0.6 else self.f(depth - 1)
            return f"pc.fill_null({self.f(depth - 1)}, {fill})"
        return f"pc.coalesce({self.f(depth - 1)}, {self.f(depth - 1)}, {self.scalar()})"

    def b(self, depth: int) -> str:
        """A boolean column expression."""
        r = self.rng
        if depth <= 0 or r.random() < 0.2:
            return "m"
        pick = r.random()
        if pick < 0.4:
            other = self.scalar() if r.random() < 0.3 else self.f(depth - 1)
            return f"pc.{r.choice(COMPARE)}({self.f(depth - 1)}, {other})"
        if pick < 0.7:
            return f"pc.{r.choice(LOGIC)}({self.b(depth - 1)}, {self.b(depth - 1)})"
        if pick < 0.8:
            return f"pc.invert({self.b(depth - 1)})"
        if pick < 0.9:
            return f"pc.if_else({self.b(depth - 1)}, {self.b(depth - 1)}, {self.b(depth - 1)})"
        test = r.choice(("is_null", "is_valid"))
        return f"pc.{test}({self.f(depth - 1) if r.random() < 0.6 else self.b(depth - 1)})"


def module_source(count: int, seed: int = 1234) -> tuple[str, list[str]]:
    """(the module's text, each function's expression)."""
    gen = TreeGen(seed)
    lines = ["import pyarrow as pa", "import pyarrow.compute as pc", ""]
    exprs: list[str] = []
    for k in range(count):
        expr = gen.f(3) if k % 3 else gen.b(3)
        if expr in "abcm":  # a bare leaf: no site
            expr = f"pc.add({expr}, b)" if expr != "m" else "pc.invert(m)"
        exprs.append(expr)
        lines += [
            "",
            f"def t{k}(a: pa.Array, b: pa.Array, c: pa.Array, m: pa.BooleanArray, x: float):",
            f"    return {expr}",
            "",
        ]
    return "\n".join(lines), exprs
