"""Random small typed-loop programs over NumPy's small ints (source text).

Each program is `f(a, u, w, n)`: an int32, a uint8 and an int64 1-D array and an
int. Its locals keep one type each, as the compiler requires: `h` a Python int kept
in range by masks and shifts (a hash, a CRC), `m` an np.int32 whose `+ - *` wrap at
32 bits with NumPy's warning, `c` an np.uint8 of `& | ^ >>`. The loops count up and
down (negative steps), iterate the uint8 array itself, call builtin max / min, and
store into all three arrays; some index past the end, so the error path and the
stores made before it are compared too. Every program returns a Python int.
"""

from __future__ import annotations

import random

HEADER = "import numpy as np\nimport numpy.typing as npt\n\n\ndef bit(x, y):\n"
HEADER += "    if (x & 1) == y:\n        return 1\n    return 0\n\n"


def _i32(r: random.Random) -> str:
    """An np.int32 expression (an element, or arithmetic on one)."""
    leaf = r.choice(["a[i]", "a[j]", "m", "a[i - 1]", "a[n % 5]"])
    pick = r.randrange(6)
    if pick == 0:
        return f"{leaf} + {r.randrange(-3, 4)}"
    if pick == 1:
        return f"{leaf} * {r.choice(['m', 'a[j]', '7', '65537'])}"
    if pick == 2:
        return f"{leaf} - {r.choice(['m', 'a[i]', '2147483647'])}"
    if pick == 3:
        return f"max({leaf}, {r.choice(['m', 'a[j]'])})"
    if pick == 4:
        return f"min({leaf}, {r.choice(['m', 'a[i] + bit(i, 1)'])})"
    return f"{leaf} ^ {r.choice(['m', '255', 'a[j]'])}"


def _u8(r: random.Random) -> str:
    """An np.uint8 expression."""
    return r.choice(
        [
            "0xFF & u[i]",
            "c >> 1",
            f"c >> {r.randrange(0, 8)}",
            "c ^ u[j]",
            "c | (h & 0x0F)",
            "(h & 0xFF) & c",
            "u[i] ^ 0x80",
        ]
    )


def _hash(r: random.Random) -> str:
    """A Python int expression proven to stay within 64 bits."""
    return r.choice(
        [
            "((h << 5) ^ int(u[i])) & 0xFFFF",
            "(h >> 1) ^ 0x8408",
            "(h * 31 + int(a[i])) & 0xFFFFFFFF",
            "(h ^ int(c)) * 3 % 65521",
            "~h & 0xFFFF",
            "(h & 0xFFFF) // 3 - int(m) % 7",
            "max(h, int(a[j]))",
        ]
    )


def _stmt(r: random.Random, depth: int) -> list[str]:
    pick = r.randrange(12)
    if pick == 0:
        return [f"m = {_i32(r)}"]
    if pick == 1:
        return [f"c = {_u8(r)}"]
    if pick == 2:
        return [f"h = {_hash(r)}"]
    if pick == 3:
        return [f"a[{r.choice(['i', 'j', 'i - 1'])}] = {_i32(r)}"]
    if pick == 4:
        return [f"u[i] = {_u8(r)}"]
    if pick == 5:
        return [f"w[i % len(w)] = {r.choice(['m', 'c', 'a[i]', 'h'])}"]
    if pick == 6:
        return ["if (h & 0x0001) ^ (c & 0x0001):", f"    h = {_hash(r)}", "else:", "    h >>= 1"]
    if pick == 7:
        return [f"if {_i32(r)} > {r.choice(['m', '0', 'a[j]'])}:", f"    m = {_i32(r)}"]
    if pick == 8:
        return ["if c:", "    continue"]
    if pick == 9 and depth == 0:
        inner = [line for _ in range(2) for line in _stmt(r, 1)]
        loop = r.choice(["range(i, -1, -1)", "range(n - 1, i, -2)", "range(len(a) - 1, -1, -1)"])
        return [f"for j in {loop}:", *("    " + line for line in inner)]
    if pick == 10 and depth == 0:
        inner = [line for _ in range(2) for line in _stmt(r, 1)]
        return ["for x in u:", "    c = x & c", *("    " + line for line in inner)]
    return [f"j = (i * {r.randrange(1, 4)}) % {r.choice(['3', '(n + 1)', 'len(a)'])}"]


def program(seed: int, name: str) -> str:
    r = random.Random(seed)
    body = [line for _ in range(r.randrange(2, 6)) for line in _stmt(r, 0)]
    outer = r.choice(
        ["range(n)", "range(len(a))", "range(n - 1, -1, -1)", "range(len(u) - 1, 0, -1)"]
    )
    ret = r.choice(["h", "h & 0xFFFF", "int(m) + h", "int(c)", "(h << 8) | (h >> 8) & 0xFF"])
    lines = [
        f"def {name}(a: npt.NDArray[np.int32], u: npt.NDArray[np.uint8], "
        "w: npt.NDArray[np.int64], n: int):",
        "    h = 0xFFFF",
        "    m = a[0]",
        "    c = u[0]",
        "    j = 0",
        f"    for i in {outer}:",
        *("        " + line for line in body),
        "    h = ~h & 0xFFFF",
        f"    return {ret}",
        "",
    ]
    return "\n".join(lines)


def module(count: int, seed: int = 0) -> str:
    return HEADER + "\n\n".join(program(seed * 1000 + k, f"q{k}") for k in range(count))
