"""A test-only plugin and backend: `vecmath` converges onto tensor ops, `pyloop`
compiles tensor kernels to Python loops. Proves the pipeline without NumPy/LLVM."""

from __future__ import annotations

from ppy_testkit.backend import PyLoopBackend
from ppy_testkit.plugin import VecmathPlugin


def create_plugin() -> VecmathPlugin:
    return VecmathPlugin()


def create_backend() -> PyLoopBackend:
    return PyLoopBackend()
