"""Harness of the fused float64 tests: compile a generated module through the real
pipeline (the `llvm` backend writes the kernel, the `torch` runtime adapter that
ppy-torch registers binds it), and compare with the same source run as Python.

Imported by the tests as a plain module (conftest puts this folder on sys.path).
"""

from __future__ import annotations

import importlib.util
import math
import struct
import types
from pathlib import Path
from typing import Any


def project(tmp: Path) -> Path:
    """A throwaway project whose compiled entries live in its own cache folder."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "pyproject.toml").write_text(
        '[project]\nname = "torch-fused-tests"\n\n[tool.ppy]\ncache-dir = ".ppy-cache"\n'
    )
    return tmp


def load_pair(
    folder: Path, name: str, source: str
) -> tuple[types.ModuleType, types.ModuleType, dict[str, Any]]:
    """`source` compiled by ppy (with its manifest) and the same source as plain Python."""
    from ppy_core.compiler.cached import compile_file, load_manifest
    from ppy_core.runtime.module import exec_artifact

    path = folder / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    compiled = compile_file(path)
    fast = types.ModuleType(name)
    fast.__file__ = str(path)
    exec_artifact(compiled.entry.path, fast)
    spec = importlib.util.spec_from_file_location(f"{name}_plain", path)
    assert spec is not None
    assert spec.loader is not None
    plain = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    return fast, plain, load_manifest(compiled.entry)


def same_bits(got: Any, want: Any) -> str | None:
    """None when `got` equals `want` bit for bit (NaNs equal whatever their payload),
    with the same type, dtype, shape, strides and requires_grad; else what differs."""
    import torch

    if type(got) is not type(want):
        return f"type {type(got).__name__} != {type(want).__name__}"
    if not isinstance(got, torch.Tensor):
        return None if got == want else f"{got!r} != {want!r}"
    if got.is_nested or want.is_nested:
        if not (got.is_nested and want.is_nested):
            return "one result is nested, the other not"
        pairs = zip(got.unbind(), want.unbind(), strict=True)
        return next((p for p in (same_bits(g, w) for g, w in pairs) if p), None)
    for attr in ("dtype", "shape", "device", "requires_grad", "is_leaf"):
        if getattr(got, attr) != getattr(want, attr):
            return f"{attr} {getattr(got, attr)} != {getattr(want, attr)}"
    if got.stride() != want.stride():
        return f"strides {got.stride()} != {want.stride()}"
    g = got.detach().reshape(-1).tolist()
    w = want.detach().reshape(-1).tolist()
    for i, (a, b) in enumerate(zip(g, w, strict=True)):
        if not (math.isnan(a) and math.isnan(b)) and struct.pack("<d", a) != struct.pack("<d", b):
            return f"first difference at flat index {i}: {a!r} != {b!r}"
    return None
