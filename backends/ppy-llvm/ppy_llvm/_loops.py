"""Lowering the core `loops` dialect to one native function.

The function's C signature is ``int32 f(int64 *args, int64 *out)``:

* ``args``: one word per parameter, in order (a "real" parameter: a float the
  site may take as an np.float64 too, its bits alike): an array is the address of a record
  ``{char *data; int32 ndim; int64 *shape; int64 *strides}`` (C layout; strides
  in bytes, any strides; NumPy's array object holds one, so its loader passes an
  address inside the object and no packing is needed); an int is its value; a
  float its bits.
* ``out[0]``: the returned value's bits; ``out[1..3]``: what an error needs
  (IndexError: index, axis, size; ZeroDivisionError: which message; the
  ValueError of np.dot / @: which of the two, both lengths);
  ``out[4]``: the NumPy events seen (bit = event * FLAG_STRIDE + op, see FLAG_*).
* the return code: 0 returned, 1 IndexError, 2 ZeroDivisionError, 3 ValueError
  (math domain error), 4 ValueError (np.dot / @ of lengths that differ), 5 run
  the call as Python (returned on entry, before anything ran: an array updated in
  place whose layout NumPy would not coalesce, `_loops_inplace`; operands of lengths
  NumPy would broadcast, `_loops_outer`), 6 run the call
  as Python, where only arrays the function made were written (`_loops_flip`),
  7 ValueError (an array statement's lengths: out[1] which of NumPy's messages,
  out[2..3] the lengths, `_loops_vector`), 8 MemoryError (a temporary or copy
  malloc could not give: out[1] its length, out[2] its second axis or 0, out[3] its
  dtype, 0 float64, 1 int64, 2 int32). Stores made before an error stay made, as in
  Python. Every malloc is checked: where it cannot give what it should, the exit is 8
  or, before anything the caller sees was written, 5 or 6 (Python's run raises).
* np.dot / @ call NumPy's own BLAS `ddot` through the library's global
  ``ppy_loops_blas_ddot``, which the loader sets (`_loops_blas`).

Floating point is IEEE double with no contraction or reassociation (no fast-math
flags), so every result has Python's and NumPy's bits. Locals are stack slots that
LLVM's mem2reg turns into registers. What keeps the exact answers cheap, each its
own module: an innermost loop's affine accesses proven in bounds once on entry
(`_loops_proof`), float ops sharing their consumer's inf/NaN test (`_loops_defer`),
and reductions that store nothing run untested, rerun tested only when an
accumulator ends inf or NaN or the loop would raise (`_loops_spec`).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ._errors import LlvmBackendError
from ._loops_blas import DDOT_GLOBAL
from ._loops_emit import INDEX_ERROR, OK, Emitter
from ._loops_scalar import FLAG_OPS, FLAG_STRIDE, MATH_DOMAIN, ZERO_DIVISION

#: the calling convention above; a loader refuses units of another version
LOOPS_ABI = 3
#: ZeroDivisionError messages by out[1]
ZERO_MESSAGES = (
    "float division by zero",
    "division by zero",
    "integer division or modulo by zero",
    "integer modulo by zero",
)
FLAG_EVENTS = ("divide by zero", "overflow", "invalid value")
#: what NumPy's warning names each of FLAG_OPS ("overflow encountered in scalar add")
FLAG_PHRASES = (
    *("scalar add", "scalar subtract", "scalar multiply", "scalar divide"),
    *("dot", "matmul", "sqrt"),
    *("add", "subtract", "multiply", "divide"),
)


def symbol_of(func: Any) -> str:
    from ppy_core.ir import print_ir

    return "ppy_loops_" + hashlib.sha256(print_ir(func).encode()).hexdigest()[:20]


def refusal(func: Any) -> str | None:
    """Why this loops function cannot be lowered (None: it can)."""
    try:
        Emitter(func).emit()
    except LlvmBackendError as exc:
        return f"{exc.code}: {exc.detail}"
    return None


def compile_loops(funcs: list[Any]) -> list[tuple[str, str]]:
    """(shared library path, symbol) per loops function, all in one library."""
    from llvmlite import ir

    from ._host import target_machine
    from ._loops_variants import call_variant, needs_contiguous
    from ._toolchain import build_shared

    module = ir.Module(name="ppy_loops")
    machine = target_machine()  # the host's triple and layout: LLVM's cost models need them
    module.triple, module.data_layout = machine.triple, str(machine.target_data)
    symbols = []
    for func in funcs:
        sym = symbol_of(func)
        if sym not in module.globals:
            Emitter(func, module, sym).emit()
            # the same function for C-contiguous arrays: constant strides let LLVM
            # strength-reduce and vectorize; the loader picks it when every array is
            if needs_contiguous(func):
                Emitter(func, module, sym + "_c", contiguous=True).emit()
            else:  # nothing to gain: the one variant answers both (_loops_variants)
                call_variant(module, sym, sym + "_c")
        symbols.append(sym)
    path = build_shared(str(module), "loops")
    return [(str(path), s) for s in symbols]


def loops_refusal(func: Any) -> str | None:
    """`can_lower` for a loops function: it lowers, and its arrays' library registers
    a loops loader (entry point ``ppy.loaders: <library>.loops``) to guard and call it."""
    from ppy_core.runtime.registered import table

    library = str(func.attributes.get("library") or "")
    if library and f"{library}.loops" not in table("loader"):
        return f"E2041: no loops loader '{library}.loops' is registered for arrays of {library!r}"
    return refusal(func)


def lower_loops(funcs: list[Any], ctx: Any) -> list[Any]:
    """One CompiledUnit per loops function, all in one shared library copied into the
    build folder; each unit names its library's loops loader."""
    from pathlib import Path

    from ppy_core.cache import verified_copy
    from ppy_core.interface.backend import CompiledUnit

    built = compile_loops(funcs)
    units = []
    for func, (path, sym) in zip(funcs, built, strict=True):
        name = "loops_" + Path(path).name
        target = ctx.build_dir / name
        if not target.exists():
            verified_copy(Path(path), target)
        library = str(func.attributes.get("library") or "numpy")
        data = {
            "abi": LOOPS_ABI,
            "symbol": sym,
            "args": list(func.attributes["py_args"]),
            "result": func.attributes["py_result"],
            "writes": list(func.attributes["writes"]),
            # arrays made up front (their statements, which the site runs) and the
            # arrays returned (the site builds the value): see loops_locals
            "params": list(func.attributes.get("params", ())),
            "prologue": list(func.attributes.get("prologue", ())),
            "returns": list(func.attributes.get("returns", ())),
            "single": bool(func.attributes.get("single", False)),
            # a scalar prologue (loops_prologue): the names it and the allocations
            # make, and the body left to run as Python once they ran
            **_prologue_data(func.attributes),
            # module helpers built in place: (name, line), checked on each call
            "helpers": [list(h) for h in func.attributes.get("helpers", ())],
            "arrays": [
                [a.type.element.kind, len(a.type.shape)]
                for a, py in zip(func.entry.args, func.attributes["py_args"], strict=True)
                if py == "array"
            ],
            # the ABI's messages (see the module docstring): the loader raises them
            "zero_messages": list(ZERO_MESSAGES),
            "flag_events": list(FLAG_EVENTS),
            # what each op's warning names ("overflow encountered in scalar add")
            "flag_ops": list(FLAG_PHRASES),
            "flag_stride": FLAG_STRIDE,
            # NumPy's BLAS routines the function calls: the loader resolves and proves them
            "blas": {"ddot": DDOT_GLOBAL}
            if any(op.name in ("loops.dot", "loops.gather_dot") for op in func.walk())
            else {},
            # in-place array updates: the adapter proves NumPy's NaN rule (`_loops_inplace`)
            "inplace": any(op.name == "loops.inplace" for op in func.walk()),
            # array statements: the adapter proves their NaN rule (`_loops_vector`)
            "vector": any(op.name == "loops.vector" for op in func.walk()),
            # masked means: the adapter proves their pairwise sum (`_loops_masked`)
            "masked": any(op.name == "loops.masked_reduce" for op in func.walk()),
            "numpy_scalars": any(
                (
                    op.name == "loops.binop"
                    and op.attributes.get("py") in ("f64", "fnum", "i64", "i32")
                )
                or op.name in ("loops.dot", "loops.gather_dot", "loops.inplace")
                or op.name == "loops.flip_update"
                or op.name == "loops.vector"
                or op.attributes.get("fn") == "np_sqrt"
                for op in func.walk()
            ),
        }
        units.append(CompiledUnit("llvm", f"{library}.loops", (name,), data))
    return units


def _prologue_data(attributes: Any) -> dict[str, Any]:
    if "made" not in attributes:
        return {}
    return {
        "made": list(attributes["made"]),
        "scalars": list(attributes["scalars"]),  # [first line, line, ...]
        "rest": list(attributes["rest"]),
    }


__all__ = [
    "FLAG_EVENTS",
    "FLAG_OPS",
    "FLAG_PHRASES",
    "INDEX_ERROR",
    "LOOPS_ABI",
    "MATH_DOMAIN",
    "OK",
    "ZERO_DIVISION",
    "ZERO_MESSAGES",
    "compile_loops",
    "lower_loops",
    "loops_refusal",
    "symbol_of",
]
