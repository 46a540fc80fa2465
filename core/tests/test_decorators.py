"""`import ppy` under plain Python: inert decorators, Shape and DType values."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Annotated, get_type_hints

import pytest

import ppy

CORE = Path(__file__).resolve().parents[1]


def test_facade_exports() -> None:
    assert set(ppy.__all__) >= {
        "opt",
        "fastmath",
        "pure",
        "jax",
        "Shape",
        "DType",
        "Error",
        "VerifyError",
    }
    assert issubclass(ppy.VerifyError, ppy.Error)


def test_decorators_return_the_same_function_marked() -> None:
    def f(x: float) -> float:
        return x * 2

    assert ppy.opt(3)(f) is f
    assert ppy.fastmath(f) is f
    assert ppy.pure()(f) is f
    assert ppy.jax(f) is f
    assert f(2.0) == 4.0
    assert f.__ppy_opt__ == 3  # type: ignore[attr-defined]
    assert f.__ppy_fastmath__ is True  # type: ignore[attr-defined]
    assert f.__ppy_pure__ is True  # type: ignore[attr-defined]
    assert f.__ppy_jax__ is True  # type: ignore[attr-defined]
    assert f.__ppy_region__ is False  # type: ignore[attr-defined]


def test_bare_and_called_forms() -> None:
    @ppy.opt
    def a() -> int:
        return 1

    @ppy.pure
    @ppy.fastmath()
    def b() -> int:
        return 2

    assert a.__ppy_opt__ == 2  # type: ignore[attr-defined]
    assert (a(), b()) == (1, 2)
    assert b.__ppy_region__ is False  # type: ignore[attr-defined]
    assert ppy.fastmath.__name__ == "fastmath"
    assert "bit-exact" in (ppy.fastmath.__doc__ or "")


@pytest.mark.parametrize("level", [-1, 4, 2.0, True, "2"])
def test_bad_opt_level_is_E0020(level: object) -> None:
    with pytest.raises(ppy.Error) as raised:
        ppy.opt(level)  # type: ignore[arg-type]
    assert raised.value.code == "E0020"
    assert "0, 1, 2, 3" in str(raised.value)


def test_decorating_a_non_function_is_E0020() -> None:
    with pytest.raises(ppy.Error) as raised:
        ppy.pure(3)
    assert raised.value.code == "E0020"
    with pytest.raises(ppy.Error):
        ppy.opt(2)(len)  # a builtin cannot carry attributes


def test_shape_and_dtype_in_annotated() -> None:
    import typing

    def f(x: Annotated[list[float], ppy.Shape("n", 3, None), ppy.DType("float64")]) -> None:
        return None

    hints = get_type_hints(f, include_extras=True)
    shape, dtype = typing.get_args(hints["x"])[1:]
    assert shape == ppy.Shape("n", 3, None)
    assert shape.dims == ("n", 3, None)
    assert shape.rank == 3
    assert dtype == ppy.DType("float64")
    assert repr(shape) == "Shape('n', 3, None)"
    assert repr(dtype) == "DType('float64')"
    assert len({shape, ppy.Shape("n", 3, None), dtype, ppy.DType("float64")}) == 2
    assert ppy.Shape().rank == 0


@pytest.mark.parametrize("dims", [(-1,), (1.5,), ("not a name",), (True,)])
def test_bad_shape_is_E0020(dims: tuple[object, ...]) -> None:
    with pytest.raises(ppy.Error) as raised:
        ppy.Shape(*dims)  # type: ignore[arg-type]
    assert raised.value.code == "E0020"


def test_bad_dtype_is_E0020() -> None:
    with pytest.raises(ppy.Error) as raised:
        ppy.DType("double")
    assert raised.value.code == "E0020"
    assert "float64" in (raised.value.diagnostic.hint or "")


def test_import_ppy_imports_no_library_no_plugin_no_pluggy() -> None:
    code = (
        "import json, sys\nbefore = set(sys.modules)\nimport ppy\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(CORE)},
    )
    tops = {m.partition(".")[0] for m in json.loads(done.stdout)}
    forbidden = {
        "numpy",
        "torch",
        "jax",
        "pyarrow",
        "pandas",
        "scipy",
        "pydantic",
        "uvicorn",
        "fastapi",
        "llvmlite",
        "pluggy",
        "ppy_numpy",
        "ppy_torch",
        "ppy_jax",
        "ppy_arrow",
        "ppy_pandas",
        "ppy_scipy",
        "ppy_web",
        "ppy_llvm",
        "ppy_cuda",
    }
    assert not tops & forbidden, tops & forbidden
