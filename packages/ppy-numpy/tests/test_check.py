"""What `ppy check` learns from the NumPy plugin: attributes an ndarray lacks (E1003) and
reduction axes an array of known rank does not have (E1007) — and that the build, which
asks the same hooks, does not report them (Python decides at run time)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppy_core.compiler.check import check_paths

SOURCE = """
from typing import Annotated

import numpy as np
import ppy


def f(a: Annotated[np.ndarray, ppy.Shape("n", 3)], b: np.ndarray) -> float:
    print(a.shapee, a.shape, a.T, b.mT, b.ptp, a.__len__)
    total = np.sum(a, axis=2) + a.sum(axis=-3) + a.sum(axis=1) + np.mean(a, axis=-2)
    return float(b.sum(axis=7))  # rank unknown: nothing to say
"""


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def test_attribute_and_axis_findings(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(SOURCE))
    report = check_paths([str(path)])
    found = [(f.location.line, f.location.column, f.code) for f in report.findings if f.location]
    assert found == [(9, 11, "E1003"), (10, 13, "E1007"), (10, 33, "E1007")]
    messages = [f.message for f in report.findings]
    assert "no attribute 'shapee'" in messages[0]
    assert "rank 2" in messages[1]
    assert "no axis 2" in messages[1]


def test_the_build_does_not_report_what_only_the_checker_does(tmp_path: Path) -> None:
    from ppy_core.compiler.cached import compile_file

    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(SOURCE))
    compiled = compile_file(path)
    codes = {d.code for d in compiled.diagnostics}
    assert not codes & {"E1003", "E1007"}


# -- dtypes named as values, and indexing --------------------------------------------------

TYPED = """
from typing import Annotated

import numpy as np
import numpy.typing as npt
import ppy


def f(a: npt.NDArray[np.float64], m: Annotated[npt.NDArray[np.float64], ppy.Shape("n", 3)]):
    i1: npt.NDArray[np.int64] = a.astype(np.float32)  # expect: f32
    i2: npt.NDArray[np.int64] = a.astype("f4")  # expect: f32
    i3: npt.NDArray[np.int64] = a.astype(dtype=np.dtype(np.float32))  # expect: f32
    i4: npt.NDArray[np.int64] = np.zeros(3, dtype=np.float32)  # expect: f32
    i5: npt.NDArray[np.int64] = np.zeros(3, np.float32)  # expect: f32
    i6: npt.NDArray[np.int64] = np.full(3, 1.0, "float32")  # expect: f32
    i7: npt.NDArray[np.int64] = np.asarray(a.astype(np.float32))  # expect: f32
    i8: npt.NDArray[np.int64] = np.ones_like(m.astype(np.float32))  # expect: f32
    i9: npt.NDArray[np.int64] = m.astype(m.astype(np.float32).dtype)  # expect: f32
    i10: npt.NDArray[np.int64] = np.float32(m)  # expect: f32
    i11: npt.NDArray[np.int64] = m[:, 0]  # expect: f64
    i12: npt.NDArray[np.int64] = a[1:]  # expect: f64
    i13: npt.NDArray[np.int64] = a[a > 0.5]  # expect: f64
    s1: str = m[0, 1]  # expect: float
    s2: str = np.float64(2)  # expect: float
    r: Annotated[npt.NDArray[np.float64], ppy.Shape(3)] = m[..., None, 1]  # expect: rank 2
    t: Annotated[npt.NDArray[np.float64], ppy.Shape(2, "n", 3)] = m[None]  # expect: shape
    u: npt.NDArray[np.float64] = m[0, 0, 0]  # expect: too many
    k: npt.NDArray[np.int64] = a.astype(np.int64) + m[:, :1].astype("int64")[0]
    print(i1, i2, i3, i4, i5, i6, i7, i8, i9, i10, i11, i12, i13, s1, s2, r, t, u, k)


def g(x: np.ndarray, y: npt.NDArray[np.float32]) -> np.ndarray:
    z: np.ndarray = x.astype(np.int32)
    w: npt.NDArray[np.float32] = y[1:] + np.zeros_like(y) * 2.0
    t = np.float32
    print(z, w, np.dtype("float32"), y.dtype, y[np.newaxis, ...], np.float32(1.5) == t(3))
    return y
"""


def _findings(tmp_path: Path, source: str, strict: bool) -> list[tuple[int, str, str]]:
    path = tmp_path / "typed.py"
    path.write_text(textwrap.dedent(source))
    report = check_paths([str(path)], strict=strict)
    return [(f.location.line, f.code, f.message) for f in report.findings if f.location]


def test_dtype_values_astype_creation_and_indexing_are_typed(tmp_path: Path) -> None:
    """Each `# expect:` line's value is typed as NumPy makes it (its dtype, its rank or
    shape, or a scalar), seen through the annotation it contradicts; the rest of the
    file, strict, has nothing Unknown and nothing contradicting."""
    found = _findings(tmp_path, TYPED, strict=True)
    lines = TYPED.splitlines()
    expected = {n: text.rpartition("# expect: ")[2] for n, text in enumerate(lines, 1)}
    expected = {n: want for n, want in expected.items() if "# expect: " in lines[n - 1]}
    assert {line for line, _code, _message in found} == set(expected), found
    for line, code, message in found:
        want = expected[line]
        if want in ("f32", "f64"):
            assert (code, f"dtype {want} is not i64") == ("E1007", message.rpartition(": ")[2])
        elif want == "float":
            assert (code, message.partition(" ")[0]) == ("E1009", "float")
        elif want == "too many":
            assert code == "E1007"
            assert "rank 2 indexed with 3 indices" in message
        else:
            assert code == "E1007"
            assert want in message, message


def test_a_bare_ndarray_annotation_takes_any_dtype(tmp_path: Path) -> None:
    """`np.ndarray` (and `Annotated[np.ndarray, ppy.Shape(...)]`) states no dtype: a
    float32 or int array is no contradiction; `ppy.DType` states one."""
    source = """
    from typing import Annotated

    import numpy as np
    import ppy


    def f(x: np.ndarray) -> np.ndarray:
        y: Annotated[np.ndarray, ppy.Shape(None)] = x.astype(np.int64)
        z: Annotated[np.ndarray, ppy.DType("float64")] = x.astype(np.float32)
        return y + z
    """
    found = _findings(tmp_path, source, strict=False)
    assert [(line, code) for line, code, _ in found] == [(10, "E1007")]


def test_unknown_rank_or_dtype_stays_unknown_under_strict(tmp_path: Path) -> None:
    """What NumPy decides by a rank or a dtype no one knows is not guessed: `a[0]` of an
    array of unknown rank (a row or a scalar), a dtype given as a builtins class."""
    source = """
    import numpy as np
    import numpy.typing as npt


    def f(a: npt.NDArray[np.float64]) -> None:
        print(a[0], np.zeros(3, dtype=int))
    """
    found = _findings(tmp_path, source, strict=True)
    assert [(line, code) for line, code, _ in found] == [(7, "E1001"), (7, "E1001")]
    assert "indexing a numpy array of f64 by int is not modelled" in found[0][2]


@pytest.mark.parametrize(
    "spec",
    ["np.float64", "np.double", "np.float32", "np.single", "np.int64", "np.int32", "np.bool_"]
    + [repr(s) for s in ("float64", "f8", "float", "double", "float32", "f4", "single")]
    + [repr(s) for s in ("int64", "i8", "int32", "i4", "bool", "?")],
)
def test_a_named_dtype_is_numpys(spec: str) -> None:
    """Every dtype the plugin reads (a class, its `np.dtype`, a string) is the one NumPy
    makes of it."""
    import numpy as np

    from ppy_core.interface.plugin import NOT_CONSTANT, AttributeContext, CallContext
    from ppy_numpy import NumpyPlugin
    from ppy_numpy import tables as T

    plugin = NumpyPlugin()
    if spec.startswith("np."):
        value = plugin.attribute_type(AttributeContext(spec[3:], owner="numpy"))
        assert value is not None
        constant: object = NOT_CONSTANT
    else:
        value, constant = plugin.call(CallContext("numpy.zeros", (), {})).result, eval(spec)  # type: ignore[union-attr]
    made = plugin.call(CallContext("numpy.dtype", (value,), {}, constants=(constant,)))
    assert made is not None
    want = np.dtype(eval(spec, {"np": np}))
    assert made.result.name == f"numpy.dtype[{want.name}]"  # type: ignore[attr-defined]
    array = plugin.call(
        CallContext(
            "numpy.ndarray.astype",
            (T.ARRAY, made.result),
            {},
            (NOT_CONSTANT,) * 2,
            receiver=T.ARRAY,
        )
    )
    assert array is not None
    assert T.DTYPE_NAMES[array.result.element.kind] == want.name  # type: ignore[attr-defined]


COMPILED = """
import numpy as np
import numpy.typing as npt


def astype32(a: npt.NDArray[np.float64], s: float):
    b = a.astype(np.float32)
    return b * s - 0.25


def like32(a: npt.NDArray[np.float32]):
    z = np.ones_like(a)
    return (z + a) * 0.5
"""


@pytest.mark.needs_llvm
@pytest.mark.needs_cc
def test_the_compiler_uses_the_same_dtypes_soundly(project: Path) -> None:
    """The build asks the same hooks: `a.astype(np.float32)` and `np.ones_like(a)` of a
    float32 array are float32 arrays, so the sites over them are float32 kernels (before,
    a float64 guess the guard always refused). NumPy's bits, dtype and layout on
    ordinary, special and Fortran-ordered data; the fast path ran where NumPy's answer
    holds no NaN (a float32 NaN's bits are NumPy's to choose)."""
    import numpy as np
    from _npharness import SPECIALS, compile_pair, run_both, with_reasons

    pair = compile_pair(project, "check_dtypes", COMPILED)
    rng = np.random.default_rng(15)
    ordinary = rng.standard_normal((7, 9)) * 100.0
    inputs = [ordinary, np.asfortranarray(ordinary), SPECIALS, np.empty(0)]
    for name in ("astype32", "like32"):
        assert pair.compiled(name), pair.records(name)
        fast = 0
        for data in inputs:
            with np.errstate(all="ignore"):  # (the huge specials overflow float32)
                a = data if name == "astype32" else data.astype(np.float32)
            args = (a, 1.5) if name == "astype32" else (a,)
            for errstate in ({"all": "ignore"}, {}):
                problem, counts, want = run_both(pair, name, args, **errstate)
                assert problem is None, (name, data.shape, problem)
                assert want.value.dtype == np.float32
                fast += counts["fast"]
                if data is ordinary:
                    assert counts["fast"] == 1, (name, with_reasons(counts))
        assert fast >= 2


_ITEMS = st.sampled_from([0, -1, slice(None), slice(1, None), None, ..., "ints", "mask"])


@settings(max_examples=400, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), max_size=3).map(tuple),
    items=st.lists(_ITEMS, max_size=4),
    as_tuple=st.booleans(),
    rank_known=st.booleans(),
)
def test_indexing_types_what_numpy_gives(
    shape: tuple[int, ...], items: list[Any], as_tuple: bool, rank_known: bool
) -> None:
    """`a[index]` as the checker asks it, against NumPy's own answer: a scalar exactly
    when NumPy gives one, else an array of the dtype with NumPy's rank and every known
    dimension NumPy's; an index NumPy refuses gets no type (too many: E1007). With the
    rank unknown, only what no rank changes is answered."""
    import numpy as np

    from ppy_core.interface.plugin import NOT_CONSTANT, CallContext
    from ppy_core.ir.types import F64, I1, I64, NONE, TensorType, TupleType
    from ppy_numpy import NumpyPlugin, surface

    arrays = {"ints": np.array([0]), "mask": np.array([True, False])}
    values = [arrays.get(i, i) if isinstance(i, str) else i for i in items]
    index = tuple(values) if as_tuple or len(values) != 1 else values[0]
    kinds = {
        "ints": TensorType(I64, (1,), "numpy"),
        "mask": TensorType(I1, (2,), "numpy"),
        None: NONE,
        ...: surface.ELLIPSIS,
    }
    types = [
        I64 if isinstance(i, int) else surface.SLICE if isinstance(i, slice) else kinds[i]
        for i in items
    ]
    index_type = TupleType(tuple(types)) if isinstance(index, tuple) else types[0]
    array = TensorType(F64, shape if rank_known else None, "numpy")
    reported: list[object] = []
    answer = NumpyPlugin().call(
        CallContext(
            "numpy.ndarray.__getitem__",
            (array, index_type),
            {},
            (NOT_CONSTANT, NOT_CONSTANT),
            receiver=array,
            report=reported.append,
        )
    )
    try:
        got, refused = np.zeros(shape)[index], ""
    except IndexError as exc:
        got, refused = None, str(exc)
    if refused:
        if rank_known and ("too many" in refused or "mask" not in items):
            assert answer is None  # (a mask's length against a dimension is not known)
            assert bool(reported) == ("too many" in refused), (shape, index, reported)
        return
    assert not reported
    if answer is None:
        assert not rank_known, (shape, index)
        return
    result = answer.result
    if isinstance(got, np.ndarray):
        assert isinstance(result, TensorType), (shape, index, result)
        assert result.element == F64
        if result.shape is not None:
            assert len(result.shape) == got.ndim, (shape, index, result)
            for dim, size in zip(result.shape, got.shape, strict=True):
                assert dim is None or dim == size, (shape, index, result)
    else:
        assert isinstance(got, np.float64)
        assert result == F64, (shape, index, result)
