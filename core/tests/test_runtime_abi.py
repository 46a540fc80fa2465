"""The kernel ABI and runtime adapters, with no array library: a C kernel written to
the ABI, a throwaway distribution registering an adapter over `array.array('d')`,
and the binder joining them by registered name only.

Each test compiles its kernel with the system C compiler (skipped without one) and
compares the fast path with the site's Python, bit for bit, reading the counters.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import warnings
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ppy_core.interface.backend import CompiledUnit
from ppy_core.runtime import abi, adapter, dispatch, integrity
from ppy_core.runtime.module import ArtifactWarning, Binder, bound

CC = next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
needs_cc = pytest.mark.skipif(CC is None, reason="no C compiler")

KERNEL_C = """\
#include <stdint.h>
int {cpu_check}(void) {{ return {cpu_ok}; }}
/* map kernel of the ABI: out[i] = a[i] * b[i] + a[i] */
void k_fma_like(const double **arrays, const double *scalars, void *out,
                int64_t begin, int64_t end, const void *loops) {{
    double *o = (double *)out;
    for (int64_t i = begin; i < end; i++) {{
        double p = arrays[0][i] * arrays[1][i];
        o[i] = p + arrays[0][i];
    }}
}}
"""

ADAPTER = """\
import ctypes
from array import array

from ppy_core.runtime.adapter import RuntimeAdapter

MAP = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                       ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)


class DoubleArrays(RuntimeAdapter):
    name = "dblarray"

    def accepts(self, signature):
        return None if signature.kind == "map" and not signature.loops else "maps only"

    def kernel_site(self, kernel, fallback, site_id):
        fn, leaves = MAP(kernel.address), kernel.signature.leaves
        counts = {"fast": 0, "fallback": {}}

        def site(*args):
            if (len(args) != len(leaves)
                    or not all(type(a) is array and a.typecode == "d" for a in args)
                    or len({len(a) for a in args}) != 1):
                counts["fallback"]["guard"] = counts["fallback"].get("guard", 0) + 1
                return fallback(*args)
            n = len(args[0])
            out = array("d", bytes(8 * n))
            ptrs = (ctypes.c_void_p * len(args))(*[a.buffer_info()[0] for a in args])
            fn(ptrs, None, out.buffer_info()[0], 0, n, None)
            counts["fast"] += 1
            return out

        site.ppy_stats = lambda: counts
        site.keepalive = kernel.keepalive
        return site


def create_adapter():
    return DoubleArrays()


def create_broken():
    raise RuntimeError("this adapter cannot start")
"""


def python_path(a: array, b: array) -> array:
    return array("d", [x * y + x for x, y in zip(a, b, strict=True)])


@pytest.fixture
def site_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path holding a distribution that registers `dblarray` (and a
    broken adapter `broken`), plus an unregistered module `strayloader`."""
    info = tmp_path / "fake_arrays-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-arrays\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[ppy.runtimes]\n"
        "dblarray = fake_arrays:create_adapter\n"
        "broken = fake_arrays:create_broken\n"
    )
    (tmp_path / "fake_arrays.py").write_text(ADAPTER)
    (tmp_path / "strayloader.py").write_text("def load(*args):\n    return print\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for stale in ("fake_arrays", "strayloader"):  # a previous test's copies
        monkeypatch.delitem(sys.modules, stale, raising=False)
    adapter.registry(refresh=True)
    yield tmp_path
    monkeypatch.undo()
    adapter.registry(refresh=True)  # later tests see the real installation again


def build_kernel(folder: Path, *, cpu_ok: int = 1) -> abi.CompiledKernel:
    source = folder / "kernel.c"
    source.write_text(KERNEL_C.format(cpu_check=abi.CPU_CHECK_SYMBOL, cpu_ok=cpu_ok))
    library = folder / "kernel.so"
    cmd = [str(CC), "-shared", "-fPIC", "-O1", "-ffp-contract=off", "-o", str(library)]
    subprocess.run([*cmd, str(source)], check=True)
    signature = abi.KernelSignature("map", "aa")
    return abi.CompiledKernel(str(library), "k_fma_like", signature, "v1:test")


def bind(folder: Path, unit: CompiledUnit, fallback: Callable[..., Any]) -> Any:
    """The site the binder makes for one expression site compiled into `unit`."""
    record = {
        "index": 0,
        "id": "f.1",
        "text": "a * b + a",
        "unit": {
            "backend": unit.backend,
            "loader": unit.loader,
            "runtime": unit.runtime,
            "files": list(unit.files),
            "data": dict(unit.data),
        },
    }
    manifest = {"module": {"name": "abi_test"}, "function_sites": [], "expr_sites": [record]}
    namespace: dict[str, Any] = {}
    integrity.mark(folder, set(unit.files))  # as the loaders' check of the folder does
    Binder(folder, manifest, namespace).bind({0: fallback})
    return bound(namespace["__ppy_site_0"])  # bound now (a site binds at its first call)


def kernel_unit(kernel: abi.CompiledKernel, runtime: str) -> CompiledUnit:
    return CompiledUnit("test", "", (Path(kernel.path).name,), kernel.unit_data(), runtime=runtime)


def test_signature_and_kernel_round_trip_through_the_manifest() -> None:
    sig = abi.KernelSignature("sum", "as", (("sin", "d->d"), ("power", "dd->d")), nan_ok=True)
    assert abi.KernelSignature.from_json(sig.to_json()) == sig
    assert abi.KernelSignature.from_dict(sig.to_dict()) == sig
    kernel = abi.CompiledKernel("/x/k.so", "k", sig, "v1:x")
    assert abi.CompiledKernel.from_unit(kernel.unit_data(), "/x/k.so") == kernel
    with pytest.raises(ValueError, match="kernel ABI 0"):
        abi.CompiledKernel.from_unit({**kernel.unit_data(), "abi": 0}, "/x/k.so")
    for bad in (("cumsum", "a", ()), ("map", "ax", ()), ("map", "a", (("sin", "f->f"),))):
        with pytest.raises(ValueError):
            abi.KernelSignature(*bad)  # type: ignore[arg-type]


def test_a_unit_has_exactly_one_route() -> None:
    with pytest.raises(ValueError, match="neither"):
        CompiledUnit("b", "", ("k.so",), {})
    with pytest.raises(ValueError, match="both"):
        CompiledUnit("b", "m:f", ("k.so",), {}, runtime="numpy")


@needs_cc
def test_a_kernel_runs_through_the_registered_adapter(site_dir: Path) -> None:
    assert adapter.registered("dblarray")
    kernel = build_kernel(site_dir)
    site = bind(site_dir, kernel_unit(kernel, "dblarray"), python_path)
    a = array("d", [1.5, -0.0, float("inf"), 1e308, 5e-324, float("nan"), 3.0])
    b = array("d", [2.0, 7.0, -1.0, 10.0, 0.5, 1.0, 1 / 3])
    got = site(a, b)
    assert type(got) is array
    assert got.tobytes() == python_path(a, b).tobytes()
    assert site([1.0], [2.0]) == python_path(array("d", [1.0]), array("d", [2.0]))  # guard
    assert dispatch.stats()["abi_test:f.1"] == {"fast": 1, "fallback": {"guard": 1}}


@needs_cc
@pytest.mark.parametrize(
    ("runtime", "why", "code", "reason"),
    [
        ("nope", "no runtime adapter 'nope' is registered", "E3007", "unregistered loader"),
        (
            "broken",
            "runtime adapter 'broken' (fake_arrays:create_broken) failed to load",
            "E3004",
            "load failed",
        ),
    ],
)
def test_an_unusable_adapter_leaves_the_site_python(
    site_dir: Path, runtime: str, why: str, code: str, reason: str
) -> None:
    kernel = build_kernel(site_dir)
    with pytest.warns(ArtifactWarning) as caught:
        site = bind(site_dir, kernel_unit(kernel, runtime), python_path)
    assert len(caught) == 1
    assert why in str(caught[0].message)
    assert f"[{code}]" in str(caught[0].message)
    a = array("d", [1.0, 2.0])
    assert site(a, a).tobytes() == python_path(a, a).tobytes()
    assert dispatch.stats()["abi_test:f.1"] == {"fast": 0, "fallback": {reason: 1}}


@needs_cc
def test_a_kernel_for_another_cpu_runs_python_with_one_warning(site_dir: Path) -> None:
    kernel = build_kernel(site_dir, cpu_ok=0)
    with pytest.warns(abi.KernelWarning, match=r"E2004") as caught:
        site = bind(site_dir, kernel_unit(kernel, "dblarray"), python_path)
    assert len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bind(site_dir, kernel_unit(kernel, "dblarray"), python_path)  # no second warning
    a = array("d", [1.0, 2.0])
    assert site(a, a).tobytes() == python_path(a, a).tobytes()
    assert dispatch.stats()["abi_test:f.1"]["fast"] == 0


def test_an_unregistered_loader_is_never_imported(site_dir: Path) -> None:
    unit = CompiledUnit("test", "strayloader:load", (), {"x": 1})
    with pytest.warns(ArtifactWarning, match=r"not a registered entry point.*\[E3007\]"):
        site = bind(site_dir, unit, lambda a: a + 1)
    assert "strayloader" not in sys.modules
    assert site(1) == 2


def test_the_registry_reads_metadata_and_imports_nothing(site_dir: Path) -> None:
    found = adapter.registry()
    assert found.runtimes["dblarray"].value == "fake_arrays:create_adapter"
    assert found.runtimes["dblarray"].distribution == "fake-arrays"
    assert "fake_arrays" in found.packages
    assert "strayloader" not in found.packages
    assert "fake_arrays" not in sys.modules
    made = adapter.adapter("dblarray")
    assert made.name == "dblarray"
    assert made.accepts(abi.KernelSignature("sum", "a")) == "maps only"
    with pytest.raises(LookupError, match="no runtime adapter 'nope'"):
        adapter.adapter("nope")


def test_the_base_adapter_proves_nothing_and_says_so() -> None:
    kernel = abi.CompiledKernel("/x/k.so", "k", abi.KernelSignature("map", "a"), "v1")
    cases = [abi.ProofCase("sin", ("sin", 0), kernel)]
    verdict = adapter.RuntimeAdapter().prove(cases)
    assert verdict == {"sin": "the runtime adapter runs no proofs"}
