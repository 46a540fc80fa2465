"""Fused float64 arithmetic over torch tensors: converged by the torch plugin,
compiled by ppy-llvm, bound by the `torch` runtime adapter (`ppy_torch.fused`,
registered in `ppy.runtimes`); bit for bit with torch eager.

Every end-to-end test compiles through the real pipeline (`compile_file` +
`exec_artifact`), compares each call with the same source run as plain Python
(bitwise, NaN-aware, dtype/shape/strides/requires_grad too), and reads the
fast-path counters (`ppy.stats()`).
"""

from __future__ import annotations

import math
import os
import struct
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from _fusedharness import load_pair, project, same_bits
from _torchtrees import TREES, fully_fused, module_source
from hypothesis import HealthCheck, Phase, given, settings

import ppy

pytestmark = [pytest.mark.needs_cc, pytest.mark.needs_llvm]

COUNT = int(os.environ.get("PPY_TORCH_TREES", "24"))
F64 = torch.float64


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return project(tmp_path_factory.mktemp("fused"))


def counts(module: str, manifest: dict[str, Any], function: str) -> tuple[int, dict[str, int]]:
    """(fast calls, {fallback reason: calls}) over `function`'s compiled sites."""
    stats = ppy.stats()
    fast, fallback = 0, {}
    for record in manifest["expr_sites"]:
        if record["function"] != function or record["unit"] is None:
            continue
        data = stats[f"{module}:{record['id']}"]
        fast += int(data["fast"])
        for reason, n in data["fallback"].items():
            fallback[reason] = fallback.get(reason, 0) + int(n)
    return fast, fallback


def special(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Random doubles over the whole exponent range, with inf, nan, -0.0, subnormals."""
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    x = torch.randn(n, generator=g, dtype=F64) * torch.pow(
        10.0, torch.randint(-300, 300, (n,), generator=g).to(F64)
    )
    values = torch.tensor(
        [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -1e308, 1.0], dtype=F64
    )
    picks = torch.randint(0, n + 1, (n // 5,), generator=g)
    picks = picks[picks < n]
    x[picks] = values[torch.randint(0, len(values), (len(picks),), generator=g)]
    return x.reshape(shape)


def outcome(fn: Any, *args: Any) -> tuple[Any, type | None]:
    try:
        return fn(*args), None
    except Exception as exc:  # the fast path must raise what Python raises
        return None, type(exc)


def draw_trees(count: int) -> list[Any]:
    trees: list[Any] = []

    @settings(
        max_examples=count * 3,
        database=None,
        derandomize=True,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(TREES)
    def collect(tree: Any) -> None:
        if len(trees) < count and tree not in trees and tree[0] != "t":
            trees.append(tree)

    collect()
    return trees


SHAPES = [(), (0,), (7,), (3, 1, 4), (1000,), (40_000,)]


def test_random_trees_are_bitwise_torch(folder: Path) -> None:
    trees = draw_trees(COUNT)
    fast, plain, manifest = load_pair(folder, "trees", module_source(trees))
    scalars = [0.5, -3.0, 1e-310, math.inf, 0.0, -0.0, 7.0, 1e300, math.nan, 3]
    for i, tree in enumerate(trees):
        name = f"f{i}"
        sites = [r for r in manifest["expr_sites"] if r["function"] == name]
        assert all(r["unit"] is not None for r in sites), sites
        before = counts("trees", manifest, name)
        calls = 0
        for k, shape in enumerate(SHAPES):
            a, b, c = (special(shape, 100 * i + 10 * k + j) for j in range(3))
            s = scalars[(i + k) % len(scalars)]
            got, got_exc = outcome(getattr(fast, name), a, b, c, s)
            want, want_exc = outcome(getattr(plain, name), a, b, c, s)
            assert got_exc is want_exc, (name, shape)
            if want_exc is None:
                problem = same_bits(got, want)
                assert problem is None, f"{name} = {manifest['expr_sites']}: {problem}"
                calls += 1
        after = counts("trees", manifest, name)
        assert after[1] == before[1], f"{name} fell back: {after[1]}"
        if fully_fused(tree):
            assert sites, f"{name}: no site"
            assert after[0] - before[0] >= calls, f"{name}: fast path not taken"


GUARDS = """
import torch

def f(a: torch.Tensor, b: torch.Tensor, s: float) -> torch.Tensor:
    return (a * b - s) / torch.abs(b) + a.neg()
"""


class Sub(torch.Tensor):
    pass


class Counting(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class Dispatching(torch.utils._python_dispatch.TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _nested() -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "nested tensors are a prototype"
        return torch.nested.nested_tensor([torch.randn(2, dtype=F64), torch.randn(3, dtype=F64)])


def _cases() -> dict[str, tuple[Any, str]]:
    a, b = torch.randn(6, 5, dtype=F64), torch.randn(6, 5, dtype=F64)
    nested = _nested()
    return {
        "nested": ((nested, nested, 0.5), "guard: layout"),
        "float32": ((a.float(), b, 0.5), "guard: dtype"),
        "int64": ((a.long(), b, 0.5), "guard: dtype"),
        "requires_grad": ((a.clone().requires_grad_(), b, 0.5), "guard: grad"),
        "non-contiguous": ((a.t(), b.t(), 0.5), "guard: layout"),
        "sliced": ((a[:, ::2], b[:, ::2], 0.5), "guard: layout"),
        "subclass": ((a.as_subclass(Sub), b, 0.5), "guard: type"),
        "parameter": ((torch.nn.Parameter(a, requires_grad=False), b, 0.5), "guard: type"),
        "broadcast": ((a, b[0], 0.5), "guard: shape"),
        "numpy scalar": ((a, b, torch.tensor(0.5, dtype=F64).numpy()[()]), "guard: scalar"),
        "tensor scalar": ((a, b, torch.tensor(0.5, dtype=F64)), "guard: scalar"),
        "bool scalar": ((a, b, True), "guard: scalar"),
        "huge int": ((a, b, 2**60 + 1), "guard: scalar"),
        "list": (([1.0] * 5, b, 0.5), "guard: type"),
    }


@pytest.mark.parametrize("case", sorted(_cases()))
def test_guard_failures_fall_back(folder: Path, case: str) -> None:
    fast, plain, manifest = load_pair(folder, "guards", GUARDS)
    args, reason = _cases()[case]
    before = counts("guards", manifest, "f")
    got, got_exc = outcome(fast.f, *args)
    want, want_exc = outcome(plain.f, *args)
    after = counts("guards", manifest, "f")
    assert got_exc is want_exc
    if want_exc is None:
        assert same_bits(got, want) is None
    assert after[0] == before[0], "a guard failure took the fast path"
    assert after[1].get(reason, 0) == before[1].get(reason, 0) + 1, after


def test_autograd_and_modes(folder: Path) -> None:
    fast, plain, manifest = load_pair(folder, "guards", GUARDS)
    a, b = torch.randn(6, 5, dtype=F64), torch.randn(6, 5, dtype=F64)
    tracked = a.clone().requires_grad_()
    before = counts("guards", manifest, "f")
    fast.f(tracked, b, 0.5).sum().backward()
    grad_fast = tracked.grad.clone()
    tracked.grad = None
    plain.f(tracked, b, 0.5).sum().backward()
    assert torch.equal(grad_fast, tracked.grad)  # the Python path ran: autograd intact
    with torch.no_grad():
        assert same_bits(fast.f(tracked, b, 0.5), plain.f(tracked, b, 0.5)) is None
    with torch.inference_mode():
        got, want = fast.f(a, b, 0.5), plain.f(a, b, 0.5)
        assert same_bits(got, want) is None
        assert got.is_inference() == want.is_inference()
    with Counting():
        assert same_bits(fast.f(a, b, 0.5), plain.f(a, b, 0.5)) is None
    with Dispatching():
        assert same_bits(fast.f(a, b, 0.5), plain.f(a, b, 0.5)) is None
    after = counts("guards", manifest, "f")
    assert after[1].get("guard: grad", 0) - before[1].get("guard: grad", 0) == 1
    assert after[1].get("guard: mode", 0) - before[1].get("guard: mode", 0) == 2
    assert after[0] - before[0] >= 1  # no_grad with a tracked input is fast


REFUSED = """
import torch

def rdiv(a: torch.Tensor, s: float) -> torch.Tensor:
    return s / a

def power(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a ** b

def square(a: torch.Tensor) -> torch.Tensor:
    return torch.pow(a, 2.0)

def total(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.sum(a * b)

def mean(a: torch.Tensor) -> torch.Tensor:
    return (a + 1.0).mean()

def number_first(a: torch.Tensor) -> torch.Tensor:
    return torch.add(2.0, a)

def keyword(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.add(a, b, alpha=2)
"""


def test_what_does_not_fuse_stays_python(folder: Path) -> None:
    fast, plain, manifest = load_pair(folder, "refused", REFUSED)
    texts = {r["function"]: r["text"] for r in manifest["expr_sites"]}
    for name in ("rdiv", "power", "square", "number_first", "keyword"):
        assert name not in texts, f"{name} converged: {texts[name]}"
    assert texts["total"] == "a * b"  # the elementwise part fuses, the sum stays torch's
    assert texts["mean"] == "a + 1.0"
    a, b = torch.randn(100, dtype=F64), torch.randn(100, dtype=F64)
    for name, args in [
        ("rdiv", (a, 0.3)),
        ("power", (a.abs(), b)),
        ("square", (a,)),
        ("total", (a, b)),
        ("mean", (a,)),
        ("keyword", (a, b)),
    ]:
        assert same_bits(getattr(fast, name)(*args), getattr(plain, name)(*args)) is None


def test_reciprocal_division_is_two_roundings() -> None:
    """Why `s / t` does not converge: torch computes `t.reciprocal() * s`."""
    x = special((10_000,), 7)
    assert same_bits(0.3 / x, x.reciprocal() * 0.3) is None
    assert same_bits(0.3 / x, torch.full_like(x, 0.3) / x) is not None


def test_torch_pow_is_not_numpys_loop() -> None:
    """Why `**` does not converge: the kernel's pow is NumPy's loop, torch's differs."""
    np = pytest.importorskip("numpy")
    g = torch.Generator().manual_seed(3)
    base = torch.rand(100_000, generator=g, dtype=F64) * 10
    exp = torch.randn(100_000, generator=g, dtype=F64) * 5
    ours = torch.from_numpy(np.power(base.numpy(), exp.numpy()))
    assert same_bits(torch.pow(base, exp), ours) is not None
    assert same_bits(torch.pow(base, 3.0), torch.from_numpy(base.numpy() ** 3.0)) is not None


def _llvm_sum(x: torch.Tensor) -> float:
    """The ppy-llvm sum kernel (NumPy's pairwise order) run on `x`'s data."""
    import ctypes

    from ppy_core.runtime.abi import kernel_address
    from ppy_llvm import KernelBuilder, compile_specs

    builder = KernelBuilder()
    leaf = builder.leaf()
    kernel = compile_specs([builder.build(leaf, reduce="add")], "torch_sum_proof")[0]
    address, _lib = kernel_address(kernel)
    fn = ctypes.CFUNCTYPE(
        ctypes.c_double,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_int64,
        ctypes.c_int64,
        ctypes.c_void_p,
    )(address)
    arrays = (ctypes.c_void_p * 1)(x.data_ptr())
    scalars = (ctypes.c_double * 1)(0.0)
    return 0.0 + fn(arrays, scalars, 0, x.numel(), None)


def test_torch_sum_order_is_not_the_kernels() -> None:
    """Why reductions do not converge: torch.sum's cascade order is not the pairwise
    order ppy-llvm's sum kernel implements (and NumPy uses); some inputs differ."""
    np = pytest.importorskip("numpy")
    differ = 0
    for seed in range(5):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(100_003, generator=g, dtype=F64)
        kernel = _llvm_sum(x)
        assert struct.pack("<d", kernel) == struct.pack("<d", float(np.sum(x.numpy())))
        differ += struct.pack("<d", kernel) != struct.pack("<d", float(torch.sum(x)))
    assert differ > 0


def test_artifact_runs_the_fused_site_without_the_compiler(folder: Path) -> None:
    import subprocess
    import sys

    from ppy_core.cli.commands import build_artifact

    program = folder / "fused_program.py"
    program.write_text(
        "import torch\nimport ppy\n\n"
        "def f(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:\n"
        "    return a * b + a / 3.0\n\n"
        "a = torch.arange(1.0, 9.0, dtype=torch.float64)\n"
        "print(f(a, a).tolist())\n"
        "print(sorted((k, v['fast']) for k, v in ppy.stats().items()))\n"
        "import sys\n"
        "print(sorted(m for m in sys.modules if m.startswith(('ppy_core.compiler.frontend', "
        "'ppy_core.compiler.driver', 'llvmlite', 'ppy_torch.build', 'ppy_torch.fused_build'))))\n"
    )
    out = build_artifact(str(program), str(folder / "fused_program.ppyapp"))
    run = subprocess.run(
        [sys.executable, str(out / "fused_program")],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    a = torch.arange(1.0, 9.0, dtype=F64)
    lines = run.stdout.splitlines()
    assert lines[0] == str((a * a + a / 3.0).tolist())
    assert "('fused_program:f.1', 1)" in lines[1], lines
    assert lines[2] == "[]", "the artifact imported compiler code"
