"""Random small typed-loop programs (source text), for the differential tests.

Each program is a function `f(a, b, n, x)` over two float64 1-D arrays, an int and
a float: loops, ifs, break/continue, element loads and stores, float and int
arithmetic, `math.sqrt`; some index past the end or divide a Python float by zero
midway, so the error path and the stores made before it are compared too.
"""

from __future__ import annotations

import random

HEADER = "import math\nimport numpy as np\n\n"


def _fexpr(r: random.Random, depth: int = 0) -> str:
    # affine indices (`a[j - 1]`: negative at j = 0, NumPy's wrap) exercise the loops
    # whose accesses are proven in bounds on entry, and their checked copies
    leaves = ["a[i]", "b[i]", "x", "s", "1.5", "float(i)", "a[j]", "a[j - 1]", "b[2 * j + 1]"]
    if depth > 1 or r.random() < 0.4:
        return r.choice(leaves)
    op = r.choice(["+", "-", "*", "/"])
    left, right = _fexpr(r, depth + 1), _fexpr(r, depth + 1)
    if op == "/" and r.random() < 0.5:
        right = f"({right} - {right})"  # zero: ZeroDivisionError or NumPy's inf/nan
    return f"({left} {op} {right})"


def _stmt(r: random.Random, depth: int) -> list[str]:
    pick = r.randrange(10)
    if pick == 9 and depth == 0:  # a while counter, an IndexError where n > len(a)
        return ["k = 0", "while k < n and a[k] < x:", "    k += 1", "s += float(k)"]
    if pick == 0:
        return [f"s += {_fexpr(r)}"]
    if pick == 1:
        return [f"a[i] = {_fexpr(r)}"]
    if pick == 2:
        return [f"if {_fexpr(r)} > {_fexpr(r)}:", "    break"]
    if pick == 3:
        return [f"if {_fexpr(r)} <= x:", "    continue"]
    if pick == 4:
        return [f"t = (t + i * {r.randrange(-3, 4)}) % {r.randrange(1, 1000)}"]
    if pick == 5:
        return [f"b[(i + {r.randrange(0, 3)}) % (n + 1)] = {_fexpr(r)}"]
    if pick == 6:
        return ["if s >= 0.0:", "    s = math.sqrt(s)", "else:", f"    s = {_fexpr(r)}"]
    if pick == 7 and depth == 0:
        inner = [line for _ in range(2) for line in _stmt(r, 1)]
        loop = r.choice(["range(i)", "range(i, -1, -1)", "range(1, n, 2)"])
        return [f"for j in {loop}:", *("    " + line for line in inner)]
    return [f"j = (i * {r.randrange(1, 4)}) // {r.choice(['2', '(n - i)', '3'])}"]


def program(seed: int, name: str) -> str:
    r = random.Random(seed)
    body = [line for _ in range(r.randrange(2, 6)) for line in _stmt(r, 0)]
    ret = r.choice(["s", "t", "s * x", "a[0] + s", "x"])
    lines = [
        f"def {name}(a: np.ndarray, b: np.ndarray, n: int, x: float):",
        "    s = x",
        "    t = 0",
        "    j = 0",
        f"    for i in range({r.choice(['n', 'len(a)', '1, n', 'n - 1, -1, -1'])}):",
        *("        " + line for line in body),
        f"    return {ret}",
        "",
    ]
    return "\n".join(lines)


def module(count: int, seed: int = 0) -> str:
    return HEADER + "\n\n".join(program(seed * 1000 + k, f"p{k}") for k in range(count))


def _rexpr(r: random.Random, depth: int = 0) -> str:
    """A float expression that does not read the accumulator `s`."""
    leaves = ["a[i]", "b[i]", "x", "1.5", "float(i)", "a[j]", "b[2 * j + 1]", "u"]
    if depth > 1 or r.random() < 0.4:
        return r.choice(leaves)
    op = r.choice(["+", "-", "*", "/"])
    return f"({_rexpr(r, depth + 1)} {op} {_rexpr(r, depth + 1)})"


def reduction(seed: int, name: str) -> str:
    """`f(a, b, n, x)` whose loops only accumulate into `s` (and locals of the
    iteration): the loops that speculate, run untested and rerun when inf/NaN shows
    up, an index runs out or a Python float divides by zero."""
    r = random.Random(seed)

    def body() -> list[str]:
        lines = []
        for _ in range(r.randrange(1, 4)):
            pick = r.randrange(6)
            if pick == 5:  # an overwrite: s no longer accumulates (this loop stays tested)
                lines.append(f"s = {_rexpr(r)} * 1e300")
            elif pick == 0:
                lines.append(f"s {r.choice(['+=', '-='])} {_rexpr(r)}")
            elif pick == 1:
                lines += [f"u = {_rexpr(r)}", f"s += u * {_rexpr(r)}"]
            elif pick == 2:
                lines.append(f"s = s * {_rexpr(r)} + {_rexpr(r)}")
            elif pick == 3:
                lines += [f"if {_rexpr(r)} > x:", "    break"]
            else:
                lines += [f"u = {_rexpr(r)} * 1e300", f"s -= u / {_rexpr(r)}"]
        return lines

    outer = r.choice(["range(n)", "range(len(a))", "range(1, n)"])
    inner = r.random() < 0.5
    lines = [
        f"def {name}(a: np.ndarray, b: np.ndarray, n: int, x: float):",
        "    s = x",
        "    u = 0.5",
        "    j = 0",
        f"    for i in {outer}:",
    ]
    if inner:
        lines += ["        for j in range(i):", *("            " + ln for ln in body())]
    else:
        lines += ["        " + ln for ln in body()]
    lines += ["    return s", ""]
    return "\n".join(lines)


def reductions(count: int, seed: int = 0) -> str:
    return HEADER + "\n\n".join(reduction(seed * 1000 + k, f"r{k}") for k in range(count))
