"""The run-time side without a GPU: the guard (contiguous float CUDA tensors of the
kernel's dtype, one shape, outside autograd), the launch it would make (torch's
current stream, output from empty_like, module loaded once per device, no launch for
n == 0), and the fallbacks (no driver, a failed launch: one warning each)."""

from __future__ import annotations

import ctypes
import warnings
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from ppy_cuda import runtime  # noqa: E402
from ppy_cuda.driver import _SIGNATURES, Driver, DriverError  # noqa: E402
from ppy_cuda.runtime import CudaSite, TorchOps, load_site  # noqa: E402

DATA = {"entry": "ppy_k", "dtype": "f32", "leaves": "aas", "bool": False, "site": "m:f.0"}


def python(a: Any, b: Any, s: float) -> Any:
    return a * b + s


class FakeDevice(TorchOps):
    """CPU tensors play CUDA ones: the guard and launch logic run as on a GPU."""

    def on_device(self, t: Any) -> bool:
        return t.device.type == "cpu"

    def stream(self, device: int) -> int:
        return 0xC0FFEE


class FakeDriver:
    def __init__(self, fail: bool = False) -> None:
        self.loads: list[tuple[int, str]] = []
        self.launches: list[tuple[int, int, int, int, list[Any]]] = []
        self.fail = fail

    def load_function(self, device: int, ptx: str, name: str) -> str:
        self.loads.append((device, name))
        return f"fn{device}"

    def launch(
        self, device: int, fn: Any, grid: int, block: int, stream: int, args: list[Any]
    ) -> None:
        if self.fail:
            raise DriverError("cuLaunchKernel: CUresult 700 (an illegal memory access)")
        self.launches.append((device, grid, block, stream, args))


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "_WARNED", set())


def site(driver: Any = None, **data: Any) -> CudaSite:
    return CudaSite({**DATA, **data}, "// ptx", python, ops=FakeDevice(), driver=lambda: driver)


def test_cpu_tensors_run_torch_and_are_counted() -> None:
    real = CudaSite(DATA, "// ptx", python, driver=lambda: pytest.fail("no driver for CPU"))
    a, b = torch.randn(5), torch.randn(5)
    assert torch.equal(real(a, b, 2.0), python(a, b, 2.0))
    assert real.ppy_stats() == {"fast": 0, "launches": 0, "fallback": {"device": 1}}


def test_launch_uses_current_stream_fresh_output_and_one_module_per_device() -> None:
    driver = FakeDriver()
    s = site(driver)
    a, b = torch.randn(1000), torch.randn(1000)
    out = s(a, b, 0.5)
    s(a, b, 0.5)
    assert driver.loads == [(0, "ppy_k")]  # loaded once, reused
    device, grid, block, stream, args = driver.launches[0]
    assert (device, grid, block, stream) == (0, 4, 256, 0xC0FFEE)
    assert args[0].value == 1000
    assert args[1].value == out.data_ptr()
    assert [args[2].value, args[3].value] == [a.data_ptr(), b.data_ptr()]
    assert isinstance(args[4], ctypes.c_double)
    assert args[4].value == 0.5
    assert out.dtype == torch.float32
    assert out.shape == a.shape
    assert out.data_ptr() not in (a.data_ptr(), b.data_ptr())
    assert s.ppy_stats() == {"fast": 2, "launches": 2, "fallback": {}}


def test_bool_result_is_a_bool_tensor() -> None:
    driver = FakeDriver()
    out = site(driver, bool=True)(torch.randn(3), torch.randn(3), 1)
    assert out.dtype == torch.bool
    assert len(driver.launches) == 1


def test_empty_tensors_launch_nothing() -> None:
    driver = FakeDriver()
    s = site(driver)
    out = s(torch.empty(0, 3), torch.empty(0, 3), 1.0)
    assert out.shape == (0, 3)
    assert out.dtype == torch.float32
    assert driver.launches == []
    assert driver.loads == []
    assert s.ppy_stats()["fast"] == 1


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (
            lambda: (torch.randn(4, dtype=torch.float64), torch.randn(4, dtype=torch.float64), 1.0),
            "dtype",
        ),
        (lambda: (torch.randn(4), torch.randn(5), 1.0), "shape"),
        (lambda: (torch.randn(4, 4).t(), torch.randn(4, 4), 1.0), "layout"),
        (lambda: (torch.randn(4, requires_grad=True), torch.randn(4), 1.0), "grad"),
        (lambda: (torch.randn(4), torch.randn(4), True), "type"),
        (lambda: (torch.randn(4), torch.randn(4), torch.tensor(1.0)), "type"),
        (lambda: (torch.randn(4).as_subclass(torch.nn.Parameter), torch.randn(4), 1.0), "type"),
        (lambda: (torch.randn(4), torch.randn(4)), "arity"),
    ],
)
def test_guard_misses_run_python_with_their_reason(args: Any, reason: str) -> None:
    driver = FakeDriver()
    s = CudaSite(DATA, "", lambda *a: ("python", len(a)), ops=FakeDevice(), driver=lambda: driver)
    call = args()
    assert s(*call) == ("python", len(call))
    assert s.ppy_stats()["fallback"] == {reason: 1}
    assert driver.launches == []


def test_requires_grad_under_no_grad_takes_the_kernel() -> None:
    driver = FakeDriver()
    with torch.no_grad():
        site(driver)(torch.randn(4, requires_grad=True), torch.randn(4), 1.0)
    assert len(driver.launches) == 1


def test_no_driver_is_one_warning_then_torch() -> None:
    s = site(None)
    a, b = torch.randn(4), torch.randn(4)
    with pytest.warns(RuntimeWarning, match=r"E2035"):
        assert torch.equal(s(a, b, 1.0), python(a, b, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.equal(s(a, b, 1.0), python(a, b, 1.0))
    assert s.ppy_stats() == {"fast": 0, "launches": 0, "fallback": {"no driver": 2}}


def test_failed_launch_is_one_warning_then_torch_for_that_site() -> None:
    driver = FakeDriver(fail=True)
    s = site(driver)
    a, b = torch.randn(4), torch.randn(4)
    with pytest.warns(RuntimeWarning, match=r"illegal memory access.*E2036"):
        assert torch.equal(s(a, b, 1.0), python(a, b, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s(a, b, 1.0)
    assert s.ppy_stats() == {"fast": 0, "launches": 0, "fallback": {"launch failed": 2}}


def test_this_machine_without_libcuda_loads_no_driver() -> None:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        assert Driver.load() is None
    else:
        pytest.skip("a CUDA driver is installed here")


class FakeLib:
    """libcuda's shape: every function takes argtypes; cuInit fails with 100 (no device)."""

    def __init__(self, init_result: int) -> None:
        def make(name: str) -> Any:
            def fn(*args: Any) -> int:
                if name == "cuGetErrorString":
                    args[1]._obj.value = b"CUDA_ERROR_NO_DEVICE"
                    return 0
                return init_result if name == "cuInit" else 0

            return fn

        for name in _SIGNATURES:
            setattr(self, name, make(name))


def test_driver_declares_every_argtype_and_names_errors() -> None:
    lib = FakeLib(0)
    Driver(lib)
    assert all(getattr(lib, n).argtypes is not None for n in ("cuLaunchKernel", "cuModuleLoadData"))
    assert len(lib.cuLaunchKernel.argtypes) == 11
    with pytest.raises(DriverError, match=r"CUresult 100 .*NO_DEVICE"):
        Driver(FakeLib(100))


def test_load_site_with_missing_ptx_warns_and_runs_python(tmp_path: Any) -> None:
    with pytest.warns(RuntimeWarning, match="E2036"):
        got = load_site({**DATA, "file": "gone.ptx"}, tmp_path, python)
    assert got is python
    (tmp_path / "k.ptx").write_text("// ptx")
    assert isinstance(load_site({**DATA, "file": "k.ptx"}, tmp_path, python), CudaSite)
