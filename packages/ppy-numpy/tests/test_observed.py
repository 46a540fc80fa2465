"""Types from the calls (issue 27): an unannotated function compiles for the
signatures it is called with (`ppy_core.runtime.observed`).

One function is called with arguments of many signatures in one process: NumPy
arrays of five dtypes, ranks 0-3, C, F and strided layouts, Python scalars, lists,
None, an ndarray subclass. Every answer, warning and exception equals plain
Python's; where a specialization compiles (float64 and float32 arrays of one dtype),
its fast path is asserted. Then: a second process loads the specializations without
the compiler; `ppy run` records a signature it has not built and the next run takes
it fast; a function keeps at most 8 specializations (E1071 once, then Python)."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npharness import Pair, call, compile_pair, counting, outcome_difference, with_reasons
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppy_core.runtime.observed import LIMIT, RETIRE, SpecializationWarning, explain

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc]

SOURCE = """\
import numpy as np


def f(a, b):
    return a * 2.0 + b * b - a


def scaled(a, factor=2.0, *, shift=0.5):
    return a * factor + shift * a


def loop(A, n):
    s = 0.0
    for i in range(n):
        s += A[i] * 2.0
    return s


def many(a):
    return a * 3.0 + a * a


def trmm_like(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += np.dot(A[i + 1 :, i], B[i + 1 :, j])
    B *= alpha


def wrap(pos, offset, bound):
    return (pos + offset) % bound


def variadic(*args):
    return args[0] * 2.0 + args[0]


class Filter:
    reads = 0

    def __init__(self, P, alpha):
        self.P = P
        self._alpha_sq = alpha * alpha

    def predict(self, F, Q):
        self.P = self._alpha_sq * np.dot(np.dot(F, self.P), F.T) + Q
        return self.P

    def blend(self, x):
        return self.P * 2.0 + x * self._alpha_sq - x

    @property
    def doubled(self):
        Filter.reads += 1
        return self.P * 2.0

    def through_property(self, x):
        return self.doubled * x + x * x
"""

DTYPES = (np.float64, np.float32, np.int64, np.int32, np.bool_)


class Sub(np.ndarray):
    """A subclass: described by its class, so the generic function answers for it."""


@pytest.fixture(scope="module")
def pair(project: Path) -> Pair:
    return compile_pair(project, "observed_calls", SOURCE)


def _forget(function: Any) -> None:
    """Start a function's table afresh (each example resolves its signature again, from
    the cache after the first time), so the limit of 8 never cuts a test short."""
    state = function.__ppy_specializations__
    for table in (state.table, state.seen, state.by_typing, state.seen_typing):
        table.clear()
    state.warned = False
    state.countdown = RETIRE


@st.composite
def arrays(draw: Any, dtype: Any | None = None, shape: tuple[int, ...] | None = None) -> Any:
    dtype = dtype or draw(st.sampled_from(DTYPES))
    if shape is None:
        rank = draw(st.integers(0, 3))
        shape = tuple(draw(st.integers(0, 4)) for _ in range(rank))
    values = draw(
        st.lists(
            st.sampled_from([0.0, -0.0, 1.5, -2.25, np.nan, np.inf, -np.inf, 5e-324, 1e300, 3.0]),
            min_size=int(np.prod(shape)),
            max_size=int(np.prod(shape)),
        )
    )
    with np.errstate(all="ignore"):
        a = np.array(values, dtype=np.float64).reshape(shape).astype(dtype)
    layout = draw(st.sampled_from(["C", "F", "strided"]))
    if layout == "F":
        a = np.asfortranarray(a)
    elif layout == "strided" and a.ndim >= 1:
        a = np.repeat(a, 2, axis=-1)[..., ::2]
    return a


def _arguments() -> Any:
    scalars = st.sampled_from([2, -3, 10**30, 1.5, -0.0, float("nan"), True, None])
    same_dtype = arrays().flatmap(
        lambda a: st.tuples(st.just(a), arrays(dtype=a.dtype.type, shape=a.shape))
    )
    with_scalar = st.tuples(arrays(), scalars)
    others = st.sampled_from(
        [
            ([1.0, 2.0], [3.0, 4.0]),
            (None, None),
            (np.ones(3).view(Sub), np.ones(3)),
            (np.float64(2.0), np.float32(3.0)),
        ]
    )
    return st.one_of(same_dtype, with_scalar, others)


def _fast_expected(a: Any, b: Any) -> bool:
    """A signature whose specialization takes the fast path: two exact ndarrays of
    float64 (or both float32), one shape, not empty, C-contiguous (a 0-d array is
    NumPy's scalar path: the site refuses it, as the annotated one does)."""
    return (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and a.dtype == b.dtype
        and a.dtype in (np.float64, np.float32)
        and a.shape == b.shape
        and a.ndim >= 1
        and a.size > 0
        and a.flags.c_contiguous
        and b.flags.c_contiguous
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(args=_arguments())
def test_one_function_many_signatures_answers_as_python(pair: Pair, args: Any) -> None:
    _forget(pair.fast.f)
    with counting(pair, "f") as c:
        got = call(pair.fast.f, args, all="ignore")
    want = call(pair.plain.f, args, all="ignore")
    assert outcome_difference(got, want) is None, outcome_difference(got, want)
    if _fast_expected(*args):  # the kernel ran (a NaN result is NumPy's to redo: counted)
        redone = all(reason.startswith("result:") for reason in c["fallback"])
        assert c["fast"] == 1 or (c["fallback"] and redone), with_reasons(c)


def test_float32_arrays_specialize_where_the_speculative_site_refuses(pair: Pair) -> None:
    x = np.linspace(-3.0, 3.0, 1001, dtype=np.float32)
    _forget(pair.fast.f)
    with counting(pair, "f") as c:
        got = call(pair.fast.f, (x, x[::-1].copy()))
    want = call(pair.plain.f, (x, x[::-1].copy()))
    assert outcome_difference(got, want) is None
    assert c == {"fast": 1, "fallback": {}}, with_reasons(c)
    (line,) = explain(pair.fast.f)
    assert line.startswith("numpy f32[1-D, C], numpy f32[1-D, C]: specialized"), line


def test_keywords_and_defaults_are_part_of_the_signature(pair: Pair) -> None:
    x = np.arange(1.0, 65.0, dtype=np.float32)
    for args, kwargs in [((x,), {}), ((x, 3.0), {}), ((x,), {"factor": 4.0, "shift": -1.0})]:
        want = pair.plain.scaled(*args, **kwargs)
        got = pair.fast.scaled(*args, **kwargs)
        assert outcome_difference(call(lambda g=got: g, ()), call(lambda w=want: w, ())) is None
    seen = explain(pair.fast.scaled)
    assert any("numpy f32[1-D, C], float, float: specialized" in s for s in seen), seen
    with pytest.raises(TypeError) as fast_error:
        pair.fast.scaled(x, bogus=1)
    with pytest.raises(TypeError) as plain_error:
        pair.plain.scaled(x, bogus=1)
    assert str(fast_error.value) == str(plain_error.value)


def test_typed_loops_compile_from_observed_types(pair: Pair) -> None:
    a = np.linspace(0.0, 1.0, 50)
    site_ids = set(pair.site_ids("loop"))
    before = {k: v.get("fast", 0) for k, v in __import__("ppy").stats().items()}
    assert pair.fast.loop(a, 50) == pair.plain.loop(a, 50)
    after = __import__("ppy").stats()
    loops = [k for k in after if k.startswith("observed_calls:loop.") and k not in site_ids]
    assert any(after[k]["fast"] > before.get(k, 0) for k in loops), after
    assert pair.fast.loop(a, 10**30 % 7) == pair.plain.loop(a, 10**30 % 7)


def test_varargs_and_plain_python_modules_get_no_dispatcher(pair: Pair, project: Path) -> None:
    assert not hasattr(pair.fast.variadic, "__ppy_specializations__")
    plain = project / "no_library.py"
    plain.write_text("def g(a, b):\n    return a * 2 + b * b - a\n")
    import ppy

    module = ppy.load(plain, "no_library")
    assert not hasattr(module.g, "__ppy_specializations__")
    assert module.g(3, 4) == 19


def test_at_most_eight_specializations_then_python_with_one_warning(pair: Pair) -> None:
    _forget(pair.fast.many)
    inputs = [
        np.ones(s, dtype=d)
        for d in (np.float32, np.int64, np.int32, np.int16, np.uint8, np.int8)
        for s in ((4,), (2, 3), (2, 2, 2))
    ]
    # another layout of a typing already resolved shares its specialization
    inputs.insert(2, np.ones((2, 3), dtype=np.float32, order="F"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for a in inputs:
            value = pair.fast.many(a)  # its warnings are `caught`'s, compared below
            got, want = call(lambda v=value: v, ()), call(pair.plain.many, (a,))
            assert outcome_difference(got, want) is None
    mine = [w for w in caught if issubclass(w.category, SpecializationWarning)]
    assert len(mine) == 1, [str(w.message) for w in caught]
    assert "[E1071]" in str(mine[0].message)
    seen = explain(pair.fast.many)
    assert sum("specialized" in s for s in seen) == LIMIT + 1, seen  # the F layout too
    past = [s for s in seen if "past the limit" in s]
    assert len(past) == len(inputs) - LIMIT - 1, seen  # every later one: the generic function


PROGRAM = """\
import sys

import numpy as np

import ppy

from {module} import f

x = np.linspace(-1.0, 1.0, 999, dtype=np.float32)
print(repr(float(f(x, x).sum())))
stats = ppy.stats()
print("fast", sum(v.get("fast", 0) for k, v in stats.items() if k.startswith("{module}:f.")))
loaded = [m for m in sys.modules if m.startswith(("llvmlite", "ppy_core.compiler.frontend"))]
print("compiler", bool(loaded))
"""


def _program(tmp_path: Path, name: str) -> Path:
    (tmp_path / f"{name}.py").write_text(SOURCE)
    main = tmp_path / f"main_{name}.py"
    main.write_text(PROGRAM.format(module=name))
    return main


def _ppy(*args: str, cache: Path, cwd: Path) -> list[str]:
    env = {**os.environ, "PPY_CACHE_DIR": str(cache)}
    env.pop("PPY_VERIFY", None)
    done = subprocess.run(
        [sys.executable, "-m", "ppy_core.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_second_process_loads_the_specialization_without_compiling(tmp_path: Path) -> None:
    main = _program(tmp_path, "observed_second")
    cache = tmp_path / "cache"
    first = _ppy(str(main), cache=cache, cwd=tmp_path)
    second = _ppy(str(main), cache=cache, cwd=tmp_path)
    assert first[0] == second[0]
    assert first[1:] == ["fast 1", "compiler True"]
    assert second[1:] == ["fast 1", "compiler False"]


def test_ppy_run_records_a_new_signature_and_the_next_run_takes_it(tmp_path: Path) -> None:
    main = _program(tmp_path, "observed_run")
    cache = tmp_path / "cache"
    first = _ppy("run", str(main), cache=cache, cwd=tmp_path)
    second = _ppy("run", str(main), cache=cache, cwd=tmp_path)
    plain = subprocess.run(
        [sys.executable, str(main)], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert first[0] == second[0] == plain[0]
    assert first[1] == "fast 0"  # the artifact carried no float32 specialization yet
    assert second[1] == "fast 1"  # rebuilt with the signature the first run recorded
    assert first[2] == second[2] == "compiler False"


def test_explain_lists_observed_signatures(tmp_path: Path) -> None:
    main = _program(tmp_path, "observed_explain")
    cache = tmp_path / "cache"
    _ppy(str(main), cache=cache, cwd=tmp_path)
    module = str(tmp_path / "observed_explain.py")
    text = "\n".join(_ppy("explain", module, cache=cache, cwd=tmp_path))
    assert "function f (line 4): specializing dispatcher" in text, text
    assert "numpy f32[1-D], numpy f32[1-D]: compiled" in text, text


def _method_fast(before: dict[str, Any], method: str) -> int:
    """Fast calls of a method's specialized sites since `before` (`ppy.stats()`)."""
    import ppy

    now = ppy.stats()
    prefix = f"observed_calls:{method}."
    return sum(
        v.get("fast", 0) - before.get(k, {}).get("fast", 0)
        for k, v in now.items()
        if k.startswith(prefix)
    )


def test_methods_type_self_attributes_by_observation(pair: Pair) -> None:
    import ppy

    rng = np.random.default_rng(3)
    P, F, Q = rng.random((4, 4)), rng.random((4, 4)), rng.random((4, 4))
    fast, plain = pair.fast.Filter(P.copy(), 1.5), pair.plain.Filter(P.copy(), 1.5)
    before = ppy.stats()
    for _ in range(3):
        got, want = fast.predict(F, Q), plain.predict(F, Q)
        assert outcome_difference(call(lambda g=got: g, ()), call(lambda w=want: w, ())) is None
    assert _method_fast(before, "predict") == 3
    assert any("specialized" in s for s in explain(pair.fast.Filter.predict))


def test_methods_whose_attributes_change_type_between_calls(pair: Pair) -> None:
    fast = pair.fast.Filter(np.eye(3, dtype=np.float32), 1.5)
    plain = pair.plain.Filter(np.eye(3, dtype=np.float32), 1.5)
    x32 = np.linspace(-1.0, 1.0, 9, dtype=np.float32).reshape(3, 3)
    cases = [x32, x32.astype(np.float64), x32.astype(np.int64), 2.5, [[1.0]]]
    import ppy

    for P, x in [(x32, x32), (np.eye(3), cases[1]), (np.eye(3, dtype=np.int64), cases[2])]:
        fast.P, plain.P = P.copy(), P.copy()
        before = ppy.stats()
        got, want = call(fast.blend, (x,)), call(plain.blend, (x,))
        assert outcome_difference(got, want) is None, outcome_difference(got, want)
        if P.dtype == np.float64:  # float64 `self.P` beside float64 `x`: specialized, fast
            assert _method_fast(before, "blend") == 1
    # (float32 specializes too; its site refuses the float `_alpha_sq` beside float32
    # arrays at run time, `guard: dtype`, and NumPy answers)
    seen = [s for s in explain(pair.fast.Filter.blend) if "specialized" in s]
    assert any("numpy f64[2-D, C], numpy f64[2-D, C], float" in s for s in seen), seen
    for P in (2.5, [[1.0]], None):  # an attribute that is no array: Python's answer
        fast.P, plain.P = P, P
        got, want = call(fast.blend, (x32,)), call(plain.blend, (x32,))
        assert outcome_difference(got, want) is None, outcome_difference(got, want)
    del fast.P, plain.P  # missing: Python's AttributeError
    assert outcome_difference(call(fast.blend, (x32,)), call(plain.blend, (x32,))) is None


def test_a_property_a_method_reads_runs_once_as_in_python(pair: Pair) -> None:
    x = np.linspace(0.0, 1.0, 16)
    fast = pair.fast.Filter(np.ones(16), 1.0)
    plain = pair.plain.Filter(np.ones(16), 1.0)
    for obj, cls in ((fast, pair.fast.Filter), (plain, pair.plain.Filter)):
        cls.reads = 0
        for _ in range(3):
            obj.through_property(x)
        assert cls.reads == 3
    got, want = call(fast.through_property, (x,)), call(plain.through_property, (x,))
    assert outcome_difference(got, want) is None


def test_a_helper_called_with_scalars_alone_becomes_the_generic_function(pair: Pair) -> None:
    """NumPy code calls small helpers with ints in its loops (numpy-benchmarks'
    local_maxima): after `RETIRE` calls with nothing specialized, the dispatcher
    runs the generic function's own code, for every holder of it alike."""
    helper, plain = pair.fast.wrap, pair.plain.wrap
    held = {"mode": helper}  # a reference taken before it retires
    for i in range(RETIRE + 5):
        assert held["mode"](i, -3, 7) == plain(i, -3, 7)
    assert helper.__code__ is helper.__wrapped__.__code__
    assert helper(10**30, 1, -7) == plain(10**30, 1, -7)
    with pytest.raises(ZeroDivisionError):
        helper(1, 2, 0)


def test_a_function_with_a_specialization_never_retires(pair: Pair) -> None:
    x = np.ones(16, dtype=np.float32)
    _forget(pair.fast.f)
    pair.fast.f(x, x)
    state = pair.fast.f.__ppy_specializations__
    state.countdown = 2
    for _ in range(5):
        assert pair.fast.f(1.5, 2.5) == pair.plain.f(1.5, 2.5)
    assert not state.retired
    assert pair.fast.f.__code__ is not pair.fast.f.__wrapped__.__code__


def test_a_numpy_scalar_argument_is_typed_as_the_plugin_types_it(pair: Pair) -> None:
    """NPBench passes trmm's alpha as an np.float64: described by its class, typed as
    an annotation `np.float64` would be, and the typed loops compile."""
    import ppy

    rng = np.random.default_rng(4)
    A, B = rng.random((12, 12)), rng.random((12, 9))
    before = ppy.stats()
    fast_B, plain_B = B.copy(), B.copy()
    pair.fast.trmm_like(np.float64(1.5), A, fast_B)
    pair.plain.trmm_like(np.float64(1.5), A, plain_B)
    assert fast_B.tobytes() == plain_B.tobytes()
    assert _method_fast(before, "trmm_like") == 1
    seen = explain(pair.fast.trmm_like)
    assert seen[0].startswith("instance numpy numpy.float64, numpy f64[2-D, C]"), seen
