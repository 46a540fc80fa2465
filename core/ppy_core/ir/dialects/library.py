"""Library calls that are named but never fused, and the `linalg` dialect built of them.

A library-call op keeps the call's library target, so a backend without a lowering
for it can still call it directly. `LibraryCall` and `library_ops` are what every
such dialect shares: the core's `linalg`, and the ones plugins register (ppy-scipy's
`scipy.special`, `scipy.fft`, `scipy.sparse`).

%r = linalg.matmul %a, %b {target = "numpy.matmul"}
    : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>

`linalg` stays in the core because several plugins converge on it: NumPy's plugin
lowers `numpy.dot`/`matmul`/... to it (`DialectOperationSpec("linalg.dot")`), and
`numpy.linalg`, `scipy.linalg`, `torch.linalg` and `jax.numpy.linalg` name the same
operations (solve, inv, det, cholesky, qr, svd, eigh, lu); a plugin may not import
another plugin, so an op set they share must live here.
"""

from __future__ import annotations

from typing import ClassVar, Final

from ppy_core.ir.core import Dialect, Operation, attribute, operand, result
from ppy_core.ir.types import Type


class LibraryCall(Operation):
    """Base of library-call ops: reads memory, calls `target` with its operands."""

    effects: ClassVar[frozenset[str]] = frozenset({"ReadMemory"})
    target = attribute(str)
    args = operand(Type, variadic=True)
    outs = result(Type, variadic=True)


def library_ops(dialect: str, names: tuple[str, ...]) -> list[type[Operation]]:
    """One `LibraryCall` op class per name, called `<dialect>.<name>`."""
    stem = "".join(part.title() for part in dialect.split("."))
    return [
        type(
            f"{stem}{n.title().replace('_', '')}Op",
            (LibraryCall,),
            {
                "name": f"{dialect}.{n}",
                "__doc__": f'%r = {dialect}.{n} %a {{target = "..."}} : (...) -> ...',
            },
        )
        for n in names
    ]


LINALG: Final = Dialect(
    "linalg",
    library_ops(
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

__all__ = ["LINALG", "LibraryCall", "library_ops"]
