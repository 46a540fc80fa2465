"""PPY_VERIFY's comparison: bitwise, NaN-aware, for floats, buffers and tensor-likes."""

from __future__ import annotations

import array
import math

from ppy_core.runtime.dispatch import compare


class FakeTensor:
    """Duck-types the part of a tensor the comparison reads (the runtime imports no torch)."""

    def __init__(self, values: list[float], dtype: str = "float64") -> None:
        self.values, self.dtype, self.requires_grad, self.device = values, dtype, False, "cpu"

    def detach(self) -> FakeTensor:
        return self

    def cpu(self) -> FakeTensor:
        return self

    def contiguous(self) -> FakeTensor:
        return self

    def numpy(self) -> array.array[float]:
        return array.array("d", self.values)


def test_floats_bitwise_and_nan_aware() -> None:
    assert compare(1.5, 1.5) is None
    assert compare(math.nan, -math.nan) is None
    assert compare(0.0, -0.0) is not None
    assert compare(1.0, 1) is not None  # type differs


def test_buffers_name_the_first_difference() -> None:
    got, want = array.array("d", [1.0, 2.0, -0.0]), array.array("d", [1.0, 2.0, 0.0])
    problem = compare(got, want)
    assert problem is not None
    assert "index 2" in problem
    assert compare(array.array("d", [math.nan]), array.array("d", [math.nan])) is None


def test_tensor_likes() -> None:
    assert compare(FakeTensor([1.0, 2.0]), FakeTensor([1.0, 2.0])) is None
    assert "index 1" in (compare(FakeTensor([1.0, 2.0]), FakeTensor([1.0, 3.0])) or "")
    assert "dtype" in (compare(FakeTensor([1.0]), FakeTensor([1.0], "float32")) or "")
