"""PPY_VERIFY=1 through the core's dispatcher (`runtime.dispatch.wrap`), with no library:
every call not counted as a fallback is compared with the Python path (sites that
count nothing included), verified calls are counted in `ppy.stats()`, keywords reach
both paths, and the IEEE-flags rule compares the floating-point warnings."""

from __future__ import annotations

import array
import math
import warnings
from typing import Any

import pytest

import ppy
from ppy_core.runtime import dispatch


class CountingSite:
    """A site with counters: `fast` unless `fail` asks it to fall back."""

    def __init__(self, fast: Any, fallback: Any) -> None:
        self.fast, self.fallback, self.fail = fast, fallback, False
        self.counts = {"fast": 0, "fallback": {}}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fail:
            self.counts["fallback"]["type"] = self.counts["fallback"].get("type", 0) + 1
            return self.fallback(*args, **kwargs)
        self.counts["fast"] += 1
        return self.fast(*args, **kwargs)

    def ppy_stats(self) -> dict[str, Any]:
        return {"fast": self.counts["fast"], "fallback": dict(self.counts["fallback"])}


def python(a: float, b: float = 2.0) -> float:
    return a * b


@pytest.fixture(autouse=True)
def _clean() -> Any:
    yield
    for site_id in [s for s in dispatch._SITES if s.startswith("m:")]:
        del dispatch._SITES[site_id]
    dispatch.reset_stats()


def _bind(site_id: str, site: Any, fallback: Any = python) -> Any:
    dispatch.register(site_id, site)
    return dispatch.wrap(site_id, site, fallback)


def test_off_the_site_itself_is_called(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PPY_VERIFY", raising=False)
    monkeypatch.delenv("PPY_FALLBACK", raising=False)
    site = CountingSite(python, python)
    assert dispatch.wrap("m:f.1", site, python) is site


def test_fast_calls_are_verified_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_VERIFY", "1")
    site = CountingSite(python, python)
    checked = _bind("m:f.1", site)
    values = [1.5, -0.0, math.inf, math.nan, 5e-324, 1e308]
    for v in values:
        checked(v)
    assert checked(3.0, b=-0.0) == -0.0  # keywords reach both paths
    site.fail = True
    checked(1.0)  # a fallback: Python ran, nothing to compare
    data = ppy.stats()["m:f.1"]
    assert data["fast"] == len(values) + 1
    assert data["verified"] == len(values) + 1
    assert data["fallback"] == {"type": 1}
    assert checked.ppy_stats() == site.ppy_stats()  # counters still answer through the check
    assert f"PPY_VERIFY: {len(values) + 1} verified" in dispatch.format_stats()  # PPY_STATS=1


def test_a_site_without_counters_is_verified_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_VERIFY", "1")
    checked = _bind("m:g.1", lambda a, b=2.0: a * b + (a == 7.0))  # wrong at 7.0 only
    assert checked(1.0) == 2.0
    with pytest.raises(ppy.VerifyError, match=r"m:g\.1"):
        checked(7.0)
    assert ppy.stats()["m:g.1"]["verified"] == 1


@pytest.mark.parametrize(
    ("fast", "named"),
    [
        (lambda a, b=2.0: -(a * b) if a * b == 0 else a * b, "-0.0 != 0.0"),
        (lambda a, b=2.0: int(a * b), "type"),
        (lambda a, b=2.0: array.array("d", [a * b]), "type"),
    ],
    ids=["signed-zero", "int-for-float", "buffer-for-float"],
)
def test_a_wrong_fast_path_raises(monkeypatch: pytest.MonkeyPatch, fast: Any, named: str) -> None:
    monkeypatch.setenv("PPY_VERIFY", "1")
    checked = _bind("m:h.1", CountingSite(fast, python))
    with pytest.raises(ppy.VerifyError, match=named):
        checked(0.0)


def test_python_raising_where_the_fast_path_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_VERIFY", "1")
    checked = _bind("m:k.1", CountingSite(lambda a: 0.0, lambda a: 1.0 / a), lambda a: 1.0 / a)
    with pytest.raises(ppy.VerifyError, match="ZeroDivisionError"):
        checked(0.0)


def _overflowing(a: float) -> float:
    warnings.warn("overflow encountered in multiply", RuntimeWarning, stacklevel=2)
    return a * 2.0


def test_ieee_flags_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fast path that stays silent where Python reports a floating-point flag is wrong;
    one that reports the same flags passes, and the program still sees the warning."""
    monkeypatch.setenv("PPY_VERIFY", "1")
    silent = _bind("m:w.1", CountingSite(lambda a: a * 2.0, _overflowing), _overflowing)
    with pytest.raises(ppy.VerifyError, match="floating-point warnings"):
        silent(1e308)
    same = _bind("m:w.2", CountingSite(_overflowing, _overflowing), _overflowing)
    with pytest.warns(RuntimeWarning, match="overflow"):
        assert same(1e308) == math.inf
    assert ppy.stats()["m:w.2"]["verified"] == 1


def test_a_raising_call_keeps_its_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under verify, a call that warns then raises still reports its warning, then raises."""
    monkeypatch.setenv("PPY_VERIFY", "1")

    def warns_then_raises(a: float) -> float:
        warnings.warn("divide by zero encountered", RuntimeWarning, stacklevel=2)
        raise FloatingPointError("divide by zero encountered in divide")

    checked = _bind("m:r.1", CountingSite(warns_then_raises, python))
    with pytest.warns(RuntimeWarning, match="divide"), pytest.raises(FloatingPointError):
        checked(1.0)
    assert "verified" not in ppy.stats()["m:r.1"]


class StoreSite(CountingSite):
    """A store site (`obj[key] += value`) over lists: `stateful`, and it copies its
    target for the check (`shadow_target`) only when `copies`."""

    stateful = True

    def __init__(self, fast: Any, copies: bool = True) -> None:
        super().__init__(fast, add_into)
        self.copies = copies

    def shadow_target(self, obj: Any) -> Any:
        return list(obj) if self.copies and type(obj) is list else None


def add_into(obj: list[float], key: int, value: float) -> None:
    obj[key] += value


def test_a_store_runs_once_and_is_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    """The statement's Python runs on the site's copy of the target, the fast path on
    the target itself: `+=` is applied once, and the two targets are compared."""
    monkeypatch.setenv("PPY_VERIFY", "1")
    checked = _bind("m:s.1", StoreSite(add_into), add_into)
    target = [1.0, -0.0, 2.0]
    checked(target, 1, 0.0)
    checked(target, 2, 0.5)
    assert target == [1.0, 0.0, 2.5]
    assert math.copysign(1.0, target[1]) == 1.0
    assert ppy.stats()["m:s.1"]["verified"] == 2


def test_a_wrong_store_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    def twice(obj: list[float], key: int, value: float) -> None:
        obj[key] += 2 * value

    monkeypatch.setenv("PPY_VERIFY", "1")
    checked = _bind("m:s.2", StoreSite(twice), add_into)
    with pytest.raises(ppy.VerifyError, match=r"m:s\.2.*the target: \[1\]: 3\.0 != 2\.0"):
        checked([0.0, 1.0], 1, 1.0)


def test_a_store_without_a_copy_is_not_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    """A target the site makes no copy of: the call runs once, unverified; a fallback
    runs Python once."""
    monkeypatch.setenv("PPY_VERIFY", "1")
    site = StoreSite(add_into, copies=False)
    checked = _bind("m:s.3", site, add_into)
    target = [1.0]
    checked(target, 0, 1.0)
    site.fail = True
    checked(target, 0, 1.0)
    assert target == [3.0]
    assert "verified" not in ppy.stats()["m:s.3"]


def test_a_buffer_format_spelling_native_order_is_the_same_format() -> None:
    """An unaligned float64 array's buffer says '=d' and its copy (what PPY_VERIFY's
    shadow_writes compares an argument with) says 'd': the same bytes, no difference.
    ctypes spells native order '<d' on this machine; the values still decide."""
    import ctypes
    import struct
    import sys

    from ppy_core.runtime.verify import compare

    order = "<" if sys.byteorder == "little" else ">"
    spelled = memoryview((ctypes.c_double * 3)(1.0, -0.0, 2.5))
    assert spelled.format == f"{order}d"
    assert compare(spelled, memoryview(array.array("d", [1.0, -0.0, 2.5]))) is None
    assert "flat index 1" in (compare(spelled, memoryview(array.array("d", [1.0, 0.0, 2.5]))) or "")
    quiet, payload = (
        struct.unpack("<d", struct.pack("<Q", q))[0] for q in (0x7FF8 << 48, 0x7FF4 << 48 | 1)
    )
    nans = memoryview((ctypes.c_double * 2)(quiet, 1.0))
    assert compare(nans, memoryview(array.array("d", [payload, 1.0]))) is None  # NaNs equal
    assert "shape/format" in (compare(spelled, memoryview(array.array("f", [1.0, 0.0, 2.5]))) or "")
