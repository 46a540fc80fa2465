"""A test-only plugin and backend: `vecmath` converges onto tensor ops, `pyloop`
compiles tensor kernels to Python loops. Proves the pipeline without NumPy/LLVM.

Importing the package imports neither the plugin nor the backend (as a real plugin
distribution): a program running its kernels loads `ppy_testkit.loader` alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ppy_testkit.backend import PyLoopBackend
    from ppy_testkit.plugin import VecmathPlugin


def create_plugin() -> VecmathPlugin:
    from ppy_testkit.plugin import VecmathPlugin

    return VecmathPlugin()


def create_backend() -> PyLoopBackend:
    from ppy_testkit.backend import PyLoopBackend

    return PyLoopBackend()
