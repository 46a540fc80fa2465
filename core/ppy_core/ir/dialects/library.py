"""Dialects of library calls that are named but never fused: linalg, fft, special,
sparse. Each op keeps the call's library target, so a backend without a lowering
can still call it directly.

%r = linalg.matmul %a, %b {target = "numpy.matmul"}
    : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Dialect, Operation, attribute, operand, result
from ppy_core.ir.types import Type


class _LibraryCall(Operation):
    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory"})
    target = attribute(str)
    args = operand(Type, variadic=True)
    outs = result(Type, variadic=True)


def _ops(dialect: str, names: tuple[str, ...]) -> list[type[Operation]]:
    return [
        type(
            f"{dialect.title()}{n.title().replace('_', '')}Op",
            (_LibraryCall,),
            {
                "name": f"{dialect}.{n}",
                "__doc__": f'%r = {dialect}.{n} %a {{target = "..."}} : (...) -> ...',
            },
        )
        for n in names
    ]


LINALG: Final = Dialect(
    "linalg",
    _ops(
        "linalg",
        (
            "dot",
            "matmul",
            "inner",
            "vdot",
            "tensordot",
            "solve",
            "inv",
            "det",
            "norm",
            "cholesky",
            "qr",
            "svd",
            "eigh",
            "lu",
        ),
    ),
)
FFT: Final = Dialect("fft", _ops("fft", ("fft", "ifft", "rfft", "irfft", "fft2", "fftn")))
SPECIAL: Final = Dialect("special", _ops("special", ("unary", "binary")))
SPARSE: Final = Dialect("sparse", _ops("sparse", ("csr", "csc", "coo", "matvec", "matmul")))
