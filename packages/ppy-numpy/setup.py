"""Build of the C extensions ``ppy_numpy._runtime._dispatch`` and ``._loopcall``
(metadata lives in pyproject.toml)."""

from __future__ import annotations

import numpy
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "ppy_numpy._runtime._dispatch",
            sources=["ppy_numpy/_runtime/_dispatch.c", "ppy_numpy/_runtime/_pool.c"],
            depends=[
                "ppy_numpy/_runtime/_pool.h",
                "ppy_numpy/_runtime/_run.h",
                "ppy_numpy/_runtime/_strided.h",
                "ppy_numpy/_runtime/_store.h",
                "ppy_numpy/_runtime/_rows.h",
            ],
            include_dirs=[numpy.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
            extra_compile_args=[
                "-O3",  # the row gathers and NaN scans of _strided.h vectorize
                "-fno-fast-math",
                "-ffp-contract=off",
                "-std=c11",
                "-D_GNU_SOURCE",
            ],
            extra_link_args=["-lm", "-lpthread"],
        ),
        # typed-loops functions: guard, call and box in C (ppy_numpy._runtime.loops)
        Extension(
            "ppy_numpy._runtime._loopcall",
            sources=["ppy_numpy/_runtime/_loopcall.c"],
            include_dirs=[numpy.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_2_0_API_VERSION")],
            extra_compile_args=["-O2", "-std=c11"],
        ),
    ],
)
