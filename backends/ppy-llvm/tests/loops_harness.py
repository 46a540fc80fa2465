"""Shared by the typed-loops tests: load a module both ways, what a call does, and
generated programs (`loops_programs`) run against Python on random inputs."""

from __future__ import annotations

import random
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ppy_numpy.testing import layout_copies

#: any float64: NaNs, infinities, subnormals
FLOATS = st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True, width=64)


def nan_bits(bits: int) -> float:
    """The float64 of these bits (a NaN of a chosen payload and sign)."""
    return float(np.array([bits], np.uint64).view(np.float64)[0])


#: NaNs of distinct payloads and signs (a signalling one too), infinities, -0.0, subnormals
SPECIALS = [
    nan_bits(0x7FF8000000000001),
    nan_bits(0xFFF8000000000002),
    nan_bits(0x7FF0000000000003),
    np.inf,
    -np.inf,
    -0.0,
    5e-324,
    -1e-310,
    1e300,
]


def layout_as(x: np.ndarray, how: int) -> np.ndarray:
    """The same values as a C-order, Fortran-order (2-D) or strided array."""
    if how == 1 and x.ndim == 2:
        return np.asfortranarray(x)
    if how == 2:
        return np.repeat(x, 2, axis=-1)[..., ::2]
    return x


def load_both(tmp: Path, name: str, source: str) -> tuple[types.ModuleType, types.ModuleType]:
    """(compiled module, the same source run as plain Python)."""
    import ppy

    path = tmp / f"{name}.py"
    path.write_text(source)
    plain = types.ModuleType(name + "_plain")
    exec(compile(source, str(path), "exec"), plain.__dict__)
    return ppy.load(path), plain


def outcome(fn: Any, *args: Any) -> tuple[Any, ...]:
    """What a call does: ("ok", value bits, type) or ("raise", type, message),
    plus the arrays' bytes afterwards (their whole buffers' too: a write outside a view
    shows) and the warnings' messages. Each call gets its own copies of the arrays,
    laid out as given (`layouts`: F order, strides, offsets, aliasing, read-only)."""
    copies, layouts = layout_copies(args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(*copies)
            what: tuple[Any, ...] = ("ok", type(value), repr(value), np.asarray(value).tobytes())
        except Exception as exc:  # compared, never swallowed
            what = ("raise", type(exc), str(exc))
    arrays = [a.tobytes() for a in copies if isinstance(a, np.ndarray)]
    return (*what, arrays, layouts.buffer_bytes(), sorted({str(w.message) for w in caught}))


def fast_calls(fn: Any) -> int:
    return int(fn.ppy_stats()["fast"])


@dataclass(frozen=True, slots=True)
class Programs:
    """Generated functions ``{prefix}0 .. {prefix}{count - 1}(a, b, n, x)``, compiled
    (`mod`) and plain (`plain`)."""

    mod: types.ModuleType
    plain: types.ModuleType
    prefix: str
    count: int

    def same_as_python(self, k: int, a: np.ndarray, b: np.ndarray, n: int, x: Any) -> None:
        """Program `k` does on (a, b, n, float(x)) what Python does."""
        name = f"{self.prefix}{k}"
        args = (a, b, n, float(x))
        assert outcome(getattr(self.mod, name), *args) == outcome(getattr(self.plain, name), *args)


def load_programs(
    factory: pytest.TempPathFactory, name: str, source: str, prefix: str, count: int
) -> Programs:
    """`count` generated programs of `source` loaded both ways (a module fixture's body)."""
    mod, plain = load_both(factory.mktemp(name), name, source)
    return Programs(mod, plain, prefix, count)


def random_programs(
    factory: pytest.TempPathFactory,
    name: str,
    seed: int,
    count: int,
    program: Callable[[random.Random, int], str],
) -> tuple[types.ModuleType, types.ModuleType]:
    """One module of the `count` functions `program(rng, k)` writes from one seed, loaded
    both ways (a module fixture's body)."""
    rng = random.Random(seed)
    source = "import numpy as np\n\n\n" + "\n\n\n".join(program(rng, k) for k in range(count))
    return load_both(factory.mktemp(name), name, source)


def program_inputs(elements: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    """`given` keywords of a program's (a, b, n, x): arrays of up to 6 and of 7 floats."""
    return {
        "a": hnp.arrays(np.float64, st.integers(0, 6), elements=elements),
        "b": hnp.arrays(np.float64, 7, elements=elements),
        "n": st.integers(-2, 8),
        "x": elements,
    }
