"""The one element type of a kernel (``KernelSpec.dtype``), read off the IR.

A kernel computes in one type, the dtype of all its array leaves: ``f64``, ``f32``
(inline float32 arithmetic), ``i64`` or ``i32`` (wrapping integer arithmetic and
signed compares, `_lower_int`). What the backend does not reproduce in that type is
refused, and the site stays NumPy:

* E2048 (float32): a library loop (NumPy's float32 loops are not proven here; but
  ``exp``, computed inline where its proof holds: `_exp32`), a reduction, float32
  meeting float64, a literal that overflows float32 (NumPy warns in its cast);
* E2049 (integers): any op but ``+ - *``, negation, abs, maximum/minimum,
  comparisons and where (division and powers are float64 or raise in NumPy), a
  float operand (promotion), a literal outside the type (NumPy raises OverflowError),
  two integer widths.

Duck-typed on the core's op objects, like `_from_ir`.
"""

from __future__ import annotations

import struct
from typing import Any

from ._errors import LlvmBackendError
from ._lower_int import INT_OPS
from ._spec import KernelSpec, LeafKind, is_loop_unary

#: element kinds a kernel computes in
KINDS = ("f64", "f32", "i64", "i32")
INT_BOUNDS = {"i64": 2**63, "i32": 2**31}


def element_kind(tensor: Any) -> str | None:
    """The element kind of a tensor type if a kernel can compute in it, else None."""
    kind = getattr(getattr(tensor, "element", None), "kind", None)
    return kind if kind in KINDS else None


def kernel_dtype(leaves: list[Any], kinds: tuple[LeafKind, ...], ops: list[Any]) -> str:
    """The kernel's element type, or LlvmBackendError (E2103/E2048/E2049)."""
    widths = {element_kind(v.type) for v, k in zip(leaves, kinds, strict=True) if k == "array"}
    if len(widths) > 1:
        code = "E2048" if "f32" in widths else "E2049"
        raise LlvmBackendError(code, f"arrays of {' and '.join(sorted(map(str, widths)))}")
    dtype = widths.pop() if widths else "f64"
    if dtype is None:  # an array of an element kind no kernel computes in (uint8, say)
        raise LlvmBackendError("E2103", "arrays of an element kind kernels do not compute in")
    if dtype in ("i64", "i32"):
        _check_int(dtype, ops)
        return dtype
    if dtype == "f32":
        _check_f32(ops)
    return dtype


def _check_f32(ops: list[Any]) -> None:
    for op in ops:
        unary = op.attributes.get("op") if op.name == "tensor.unary" else None
        loop = (
            op.name in ("tensor.binary", "tensor.clip")
            or (op.name == "tensor.pow" and not op.attributes.get("scalar_fast_path"))
            # exp: NumPy's float32 loop computed inline where proven (`_exp32`), else
            # refused by `f32_loop_refusal` once the proof has answered
            or (is_loop_unary(unary) and unary != "exp")
        )
        # a whole reduction's number is a float64 (the ABI's); rows are float32 arrays
        if loop or (op.name == "tensor.reduce" and "axis" not in op.attributes):
            raise LlvmBackendError("E2048", f"{op.name} of float32")
        value = op.attributes.get("value") if op.name == "builtin.constant" else None
        if isinstance(value, (int, float)) and not fits_float32(float(value)):
            raise LlvmBackendError("E2048", f"the constant {value!r} overflows float32")


def f32_loop_refusal(spec: KernelSpec) -> str | None:
    """E2048's detail for a float32 kernel still calling a NumPy loop (an ``exp`` the
    inline proof did not take: `_proof.inline_proven`), or None."""
    loops = spec.loop_ops() if spec.dtype == "f32" else ()
    if not loops:
        return None
    return f"NumPy's float32 {', '.join(loops)} loop (its inline exp is not proven on this host)"


def _check_int(dtype: str, ops: list[Any]) -> None:
    """Every op wraps exactly. (Scalars: the plugin types an integer site only over
    Python ints, the core lowers those as f64 leaves and literals, and the guard takes
    only a Python int in the type's range for them.)"""
    for op in ops:
        name = op.name.removeprefix("tensor.")
        if op.name == "builtin.constant":
            int_constant(op, dtype)
        elif op.name != "tensor.yield" and name not in INT_OPS:
            raise LlvmBackendError("E2049", f"{op.name} of {dtype}")


def int_constant(op: Any, dtype: str) -> int:
    """The value of an integer kernel's literal; E2049 for a float or one out of range."""
    value = op.attributes.get("value")
    if isinstance(value, float) and value.is_integer() and abs(value) <= 2**53:
        value = int(value)  # the core holds an int literal (|v| <= 2**53) as its float
    if not isinstance(value, int) or isinstance(value, bool):
        raise LlvmBackendError("E2049", f"the literal {value!r} with {dtype} arrays")
    if not -INT_BOUNDS[dtype] <= value < INT_BOUNDS[dtype]:
        raise LlvmBackendError("E2049", f"the literal {value} is out of bounds for {dtype}")
    return value


def fits_float32(value: float) -> bool:
    """Whether NumPy casts `value` to float32 without overflow (inf and NaN cast as is)."""
    try:
        struct.pack("<f", value)
    except OverflowError:
        return False
    return True
