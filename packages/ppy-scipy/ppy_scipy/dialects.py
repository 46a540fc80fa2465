"""SciPy's library-call dialects: `scipy.special`, `scipy.fft`, `scipy.linalg`, `scipy.sparse`.

Registered by the scipy plugin (`ScipyPlugin.register_dialects`), never by the core.
Their names start with the plugin's name: `special`, `fft` and `sparse` are words
other libraries use for their own modules (`numpy.fft`, `torch.special`,
`torch.sparse`, `jax.scipy.special`, `numpy.linalg`), and a dialect name may be registered once
per build, so an unprefixed `fft` would keep any other plugin from having one.
An op's name then reads as the SciPy function family it calls. The ops are the
core's `LibraryCall`s: named, never fused, each keeping its call's target.

%y = scipy.special.unary %x {target = "scipy.special.erf"} : (tensor<?xf64>) -> tensor<?xf64>
%f = scipy.fft.rfft %x {target = "scipy.fft.rfft"} : (tensor<?xf64>) -> tensor<?xc128>
"""

from __future__ import annotations

from typing import Final

from ppy_core.ir.core import Dialect
from ppy_core.ir.dialects.library import library_ops
from ppy_scipy import tables as T
from ppy_scipy.sparse import METHODS

SPECIAL: Final = Dialect("scipy.special", library_ops("scipy.special", ("unary", "binary")))
FFT: Final = Dialect("scipy.fft", library_ops("scipy.fft", tuple(T.FFT)))
LINALG: Final = Dialect("scipy.linalg", library_ops("scipy.linalg", tuple(T.LINALG)))
SPARSE: Final = Dialect(
    "scipy.sparse",
    library_ops(
        "scipy.sparse",
        ("csr", "csc", "coo", "matvec", "matmul", *sorted(set(METHODS.values()) - {"matmul"})),
    ),
)
DIALECTS: Final = (SPECIAL, FFT, LINALG, SPARSE)

__all__ = ["DIALECTS", "FFT", "LINALG", "SPARSE", "SPECIAL"]
