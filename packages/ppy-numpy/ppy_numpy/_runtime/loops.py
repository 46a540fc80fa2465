"""The run-time side of typed-loops functions over NumPy arrays (no compiler imports).

Registered as ``ppy.loaders: numpy.loops``; a backend's loops unit names it. The
site guards each call on exact types (`ndarray` of the compiled dtype and rank,
any strides, writeable where the function stores; `int` within the proven range;
`float`), packs data pointers, shapes and strides for the native function
(``int32 f(int64 *args, int64 *out)``, see ppy_llvm._loops), then turns its
answer into Python's: the returned value as the type Python would return, the
exception Python would raise (with every store before it made), and NumPy's
scalar RuntimeWarnings under the current `np.errstate`. A failed guard runs the
Python function.

The program calls the C caller (`_loopcall.LoopCall`, built with this package) in
front of the site: it makes the same guard, calls the function and boxes a returned
value without running Python code (about 0.1-0.2 us a call, against 3-5 us here);
every other call -- a failed guard, an error to raise, warnings to give -- comes to
`LoopsSite.__call__` / `LoopsSite.answer` here.
"""

from __future__ import annotations

import ctypes
import struct
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ppy_core.runtime.abi import load_library
from ppy_numpy._runtime.inlined import Helpers

LAYOUT = 5  # the function's "run this call as Python" (it returns it before running)
RERUN = 6  # "run it as Python": it wrote only the arrays the site made for it
BROADCAST = 7  # NumPy's ValueError of an array statement (ppy_llvm._loops_vector)
NO_MEMORY = 8  # its MemoryError: the temporary could not be allocated
_MEMORY_DTYPES = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.int32))  # by out[3]
LOOPS_ABI = 3  # the calling convention of ppy_llvm._loops this loader speaks
ARG_BOUND = 2**32  # the front end's proof assumes |int argument| and every dim below it
_DTYPES = {"f64": np.dtype(np.float64), "i64": np.dtype(np.int64)}
_DTYPES |= {"i32": np.dtype(np.int32), "u8": np.dtype(np.uint8)}  # CSR indices, bytes
_DTYPES |= {"u32": np.dtype(np.uint32)}  # NPBench's CSR indices
_ERRSTATE_KEYS = ("divide", "over", "invalid")
_QUIET = ("warn", "ignore")  # what the compiled code reproduces; others run Python
_unpack_d = struct.Struct("<q").pack
#: where NumPy's array object keeps {data, ndim, shape*, strides*}: after PyObject_HEAD
#: (checked against `__array_interface__` by `_record_offset_ok` before any use)
RECORD_OFFSET = object.__basicsize__


def _as_float(bits: int) -> float:
    return struct.unpack("<d", _unpack_d(bits))[0]


_pack_d, _unpack_q = struct.Struct("<d").pack, struct.Struct("<q").unpack


def _bits(x: float) -> tuple[int]:
    return _unpack_q(_pack_d(x))  # type: ignore[return-value]


def _record_offset_ok() -> bool:
    """Whether RECORD_OFFSET finds data, ndim, shape and strides of a probe array."""
    probe = np.zeros((3, 5))[:, ::2]
    words = (ctypes.c_int64 * 4).from_address(id(probe) + RECORD_OFFSET)
    nd = words[1] & 0xFFFFFFFF
    shape = (ctypes.c_int64 * 2).from_address(words[2])
    strides = (ctypes.c_int64 * 2).from_address(words[3])
    return (
        words[0] == probe.__array_interface__["data"][0]
        and nd == 2
        and tuple(shape) == probe.shape
        and tuple(strides) == probe.strides
    )


try:
    from numpy._core.umath import _extobj_contextvar
except ImportError:
    _extobj_contextvar = None
_last_state: list[Any] = [None, None, False]  # (errstate object, np.geterr(), quiet)


def _errstate() -> tuple[dict[str, str], bool]:
    """(np.geterr(), whether the compiled code reproduces it: scalar errors only warn
    or are ignored, and underflow is ignored), recomputed only when the errstate
    object changes (a new object under every np.errstate / np.seterr): a call costs
    an identity check."""
    current = _extobj_contextvar.get() if _extobj_contextvar is not None else None
    if current is None or current is not _last_state[0]:
        state = np.geterr()
        quiet = all(state[k] in _QUIET for k in _ERRSTATE_KEYS)
        # no compiled op reports underflow: where NumPy would, Python runs
        _last_state[:] = [current, state, quiet and state["under"] == "ignore"]
    return _last_state[1], _last_state[2]


def _errstate_quiet() -> bool:
    """Whether the current np.errstate only warns or ignores (the C caller asks)."""
    return _errstate()[1]


class LoopsSite:
    """One guarded loops function; `ppy_stats()` counts fast calls and fallbacks."""

    def __init__(
        self, fn: Any, fn_c: Any, data: Mapping[str, Any], fallback: Callable[..., Any]
    ) -> None:
        self.fn, self.fn_c, self.fallback = fn, fn_c, fallback
        self.kinds: list[str] = list(data["args"])
        arrays = iter(data["arrays"])
        self.specs = [
            (_DTYPES[a[0]], a[1]) if k == "array" else None
            for k in self.kinds
            for a in [next(arrays) if k == "array" else None]
        ]
        code = fallback.__code__  # the function itself: a function site's fallback
        names = list(data.get("params") or code.co_varnames[: len(self.kinds)])
        self.writes = {k for k, name in enumerate(names) if name in set(data["writes"])}
        # arrays the function makes up front, and its leading scalar statements
        # (loops_prologue): their statements run here, in Python
        made = list(data.get("made") or names[len(names) - len(data.get("prologue", ())) :])
        self.visible = len(self.kinds) - len(made)
        source, scalars = list(data.get("prologue", ())), list(data.get("scalars", ()))
        self.prologue = _prologue(source, names, made, fallback, scalars)
        # once a scalar prologue ran, Python runs only the rest of the body
        self.rest = _rest(data, names[: self.visible], made, fallback)
        self.rest_scalars = sum(1 for k in self.kinds[self.visible :] if k != "array")
        self.returns = [names.index(n) for n in data.get("returns", ())]
        self.single = bool(data.get("single", False))
        self.result = str(data["result"])
        self.zero = list(data["zero_messages"])
        self.events, self.ops = list(data["flag_events"]), list(data["flag_ops"])
        self.stride = int(data["flag_stride"])
        self.numpy_scalars = bool(data["numpy_scalars"])
        self.Args = ctypes.c_int64 * max(1, len(self.kinds))  # one word per parameter
        self.Out = ctypes.c_int64 * 5
        self.fast, self.fallbacks = 0, {}  # type: ignore[var-annotated]
        helpers = data.get("helpers") or []  # module functions built in place (inlined)
        self.helpers = Helpers(helpers, fallback.__globals__) if helpers else None
        # the caller's defaults (a specialization's loader sets the generic function's)
        self.__defaults__ = fallback.__defaults__
        self.__wrapped__ = fallback
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            if hasattr(fallback, attr):
                setattr(self, attr, getattr(fallback, attr))

    def _python(self, reason: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
        return self.fallback(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        defaults = self.__defaults__
        if defaults and not kwargs and self.visible - len(defaults) <= len(args) < self.visible:
            args = (*args, *defaults[len(defaults) - (self.visible - len(args)) :])
        if self.helpers is not None and not self.helpers.hold():
            return self._python("a helper it builds in place is rebound", args, kwargs)
        if kwargs or len(args) != self.visible:
            return self._python("keyword or missing arguments", args, kwargs)
        packed = self.Args()
        contiguous = True
        state = None
        for k, x in enumerate(args):  # the caller's arguments, before any of its code runs
            why = self._pack(packed, k, x)
            if why is not None:
                return self._python(why, args, kwargs)
            contiguous = contiguous and (self.kinds[k] != "array" or x.flags.c_contiguous)
        if self.numpy_scalars:
            state, quiet = _errstate()
            if not quiet:
                return self._python("np.errstate raises or calls on scalar errors", args, kwargs)
        full = args
        if self.prologue is not None:  # what the function makes first, run as Python
            full = (*args, *self.prologue(*args))
            for k in range(self.visible, len(full)):
                why = self._pack(packed, k, full[k])
                if why is not None:
                    return self._after_prologue(why, args, full, kwargs)
                contiguous = contiguous and (self.kinds[k] != "array" or full[k].flags.c_contiguous)
        out = self.Out()
        code = (self.fn_c if contiguous else self.fn)(packed, out)
        if code == LAYOUT:  # returned on entry, before anything ran
            reason = "a case NumPy's loops decide (a layout, a broadcast, a NaN or zero pick)"
            return self._after_prologue(reason, args, full, kwargs)
        if code == RERUN:  # a case it leaves to Python (two NaNs meeting, a broadcast)
            reason = "a case NumPy answers its own way: two NaNs meeting, or a broadcast"
            return self._after_prologue(reason, args, full, kwargs)
        self.fast += 1
        value = self.answer(code, tuple(out), state, 4)
        if self.returns:  # the arrays the function returns, as it names them
            made = tuple(full[k] for k in self.returns)
            return made[0] if self.single else made
        return value

    def _pack(self, packed: Any, k: int, x: Any) -> str | None:
        """Argument k into its word; None, or why it is not what the function takes."""
        kind = self.kinds[k]
        if kind == "array":
            dtype, rank = self.specs[k]  # type: ignore[misc]
            if type(x) is not np.ndarray or x.dtype is not dtype or x.ndim != rank:
                return f"argument {k + 1} is not its {rank}-D array"
            if k in self.writes and not x.flags.writeable:
                return f"argument {k + 1} is read-only"
            if rank and max(x.shape) >= ARG_BOUND:
                return "an array dimension beyond 2**32"
            packed[k] = id(x) + RECORD_OFFSET  # {data, ndim, shape*, strides*} in the object
        elif kind == "int":
            if type(x) is not int or not -ARG_BOUND <= x <= ARG_BOUND:
                return f"argument {k + 1} is not an int below 2**32"
            packed[k] = x
        elif kind == "float":
            if type(x) is not float:
                return f"argument {k + 1} is not a float"
            packed[k] = _bits(x)[0]
        elif kind == "real":  # a float or an np.float64: the function cannot tell
            if type(x) is not float and type(x) is not np.float64:
                return f"argument {k + 1} is not a float or np.float64"
            packed[k] = _bits(float(x))[0]
        return None

    def _after_prologue(
        self, reason: str, args: tuple[Any, ...], full: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Any:
        """Python, once the prologue ran: the rest of the body with what it made (its
        arrays made again there, as the body makes them), or the whole function where
        the prologue made arrays only (running those again shows nothing)."""
        if self.rest is None:
            return self._python(reason, args, kwargs)
        self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
        return self.rest(*full[: self.visible + self.rest_scalars])

    def answer(
        self,
        code: int,
        out: tuple[int, ...],
        state: Mapping[str, str] | None = None,
        level: int = 3,
    ) -> Any:
        """Python's answer to the native function's (`code`, out[0..4]): NumPy's scalar
        warnings first (out[4]), then the value of the type Python returns, or the
        exception Python raises. The C caller (`_loopcall`) comes here off its common path;
        `level`: the warnings' stacklevel that names the program's call."""
        if out[4]:
            self._warn(out[4], state or _errstate()[0], level)
        if code == 0:
            return self._value(out[0], out[1])
        if code == 1:
            raise IndexError(
                f"index {out[1]} is out of bounds for axis {out[2]} with size {out[3]}"
            )
        if code == 2:
            raise ZeroDivisionError(self.zero[out[1]])
        if code == BROADCAST:  # an array statement's lengths (out[1]: which message)
            raise ValueError(_broadcast_message(*out[1:4]))
        if code == NO_MEMORY:  # a temporary of out[1] elements (out[2]: a second axis)
            shape = (out[1], out[2]) if out[2] else (out[1],)
            dtype = _MEMORY_DTYPES[out[3]]  # out[3]: its dtype, float64 unless set
            np.empty(shape, dtype)  # NumPy's own MemoryError, where memory is still short
            raise MemoryError(f"ppy: no memory for a temporary of shape {shape} ({dtype})")
        if code == 4:  # np.dot (out[1] 0) or @ (1) of lengths out[2] and out[3]
            n1, n2 = out[2], out[3]
            if out[1] == 0:
                raise ValueError(
                    f"shapes ({n1},) and ({n2},) not aligned: {n1} (dim 0) != {n2} (dim 0)"
                )
            raise ValueError(
                "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                f"signature (n?,k),(k,m?)->(n?,m?) (size {n2} is different from {n1})"
            )
        raise ValueError("math domain error")

    def _value(self, bits: int, tag: int) -> Any:
        kind = self.result
        if kind == "fnum":  # a float, or an np.float64 where the run made it one
            return np.float64(_as_float(bits)) if tag else _as_float(bits)
        if kind == "float":
            return _as_float(bits)
        if kind == "f64":
            return np.float64(_as_float(bits))
        if kind == "int":
            return int(bits)
        if kind == "i64":
            return np.int64(bits)
        if kind == "bool":
            return bool(bits)
        return None

    def _warn(self, flags: int, state: Mapping[str, str], level: int) -> None:
        """NumPy's scalar RuntimeWarnings, one per (event, op) the call met."""
        for event, name in enumerate(self.events):
            if state[_ERRSTATE_KEYS[event]] != "warn":
                continue
            for op, opname in enumerate(self.ops):
                if flags >> (event * self.stride + op) & 1:
                    warnings.warn(
                        f"{name} encountered in {opname}", RuntimeWarning, stacklevel=level
                    )

    def ppy_stats(self) -> dict[str, Any]:
        return {"fast": self.fast, "fallback": dict(self.fallbacks)}

    def ppy_reset(self) -> None:
        self.fast, self.fallbacks = 0, {}


def _broadcast_message(form: int, a: int, b: int) -> str:
    """NumPy's words for lengths that do not broadcast: a binary ufunc (0), an
    in-place one (1; 2 where the target has length 1), a copy into a view (3)."""
    if form == 0:
        return f"operands could not be broadcast together with shapes ({a},) ({b},) "
    if form == 1:
        return f"operands could not be broadcast together with shapes ({a},) ({b},) ({a},) "
    if form == 2:
        return (
            f"non-broadcastable output operand with shape ({a},) doesn't match "
            f"the broadcast shape ({b},)"
        )
    return f"could not broadcast input array from shape ({a},) into shape ({b},)"


def _prologue(
    source: list[str], names: list[str], made: list[str], fallback: Any, scalars: list[Any]
) -> Any:
    """The function's leading statements that the site runs as a Python function of its
    parameters returning what they make (`made`), in its own globals: its scalar
    statements (`scalars`: their first line, then the program's lines, compiled onto
    those lines of its file, loops_prologue), then the allocations (`source`, one
    statement each: `x = np.zeros_like(b)`); None when it has neither."""
    if not source and not scalars:
        return None
    params = ", ".join(names[: len(names) - len(made)])
    at, lines = (int(scalars[0]), [str(x) for x in scalars[1:]]) if scalars else (2, [])
    indent = _indent(lines)
    text = "\n" * max(0, at - 2) + f"def _ppy_prologue({params}):\n"
    text += "".join(f"{line}\n" for line in lines)
    text += "".join(f"{indent}{line}\n" for line in source)
    text += f"{indent}return ({', '.join(made)},)\n"
    where = fallback.__code__.co_filename if scalars else f"<prologue of {fallback.__name__}>"
    space: dict[str, Any] = {}
    exec(compile(text, where, "exec"), fallback.__globals__, space)
    return space["_ppy_prologue"]


def _rest(data: Mapping[str, Any], visible: list[str], made: list[str], fallback: Any) -> Any:
    """The body after a scalar prologue (`rest`: its first line, then the program's
    lines) as a function of the parameters and the prologue's numbers, compiled onto
    those lines of its file in its globals; None without one (or for a closure, whose
    cells it could not name)."""
    rest = list(data.get("rest") or ())
    if len(rest) < 2 or fallback.__code__.co_freevars:
        return None
    kinds = data["args"][len(visible) :]
    scalars = [m for m, kind in zip(made, kinds, strict=True) if kind != "array"]
    head = f"def {fallback.__name__}({', '.join([*visible, *scalars])}):\n"
    text = "\n" * max(0, int(rest[0]) - 2) + head + "".join(f"{line}\n" for line in rest[1:])
    space: dict[str, Any] = {}
    exec(compile(text, fallback.__code__.co_filename, "exec"), fallback.__globals__, space)
    return space[fallback.__name__]


def _indent(lines: list[str]) -> str:
    """The indentation of the first line that has text (four spaces without one)."""
    for line in lines:
        if line.strip():
            return line[: len(line) - len(line.lstrip())]
    return "    "


def load(
    data: Mapping[str, Any], build_dir: str | Path, fallback: Callable[..., Any], record: Any = None
) -> Any:
    """The loader (entry point ``ppy.loaders: numpy.loops``): the guarded site, or the
    Python function itself when the library cannot run on this CPU."""
    if data.get("abi") != LOOPS_ABI:  # an artifact built for another convention
        return fallback
    if not _record_offset_ok():
        warnings.warn(
            "ppy: this NumPy's array object has no record at the offset typed loops "
            "read; those functions run as Python  [E2041]",
            RuntimeWarning,
            stacklevel=2,
        )
        return fallback
    library = load_library(Path(build_dir) / str(record["unit"]["files"][0]) if record else "")
    if library is None:
        return fallback
    if data.get("blas") and not _blas_ready(library, data, record):
        return fallback
    if not _statements_ready(library, data, record):
        return fallback
    fns = []
    for symbol in (str(data["symbol"]), str(data["symbol"]) + "_c"):  # any strides, C order
        fn = getattr(library, symbol)
        fn.restype = ctypes.c_int32
        fn.argtypes = None  # both are c_int64 arrays, passed as pointers: no conversion
        fns.append(fn)
    site = LoopsSite(fns[0], fns[1], data, fallback)
    site._library = library  # type: ignore[attr-defined]  # keep the CDLL alive
    return _in_c(site, fns) or site


def _blas_ready(library: Any, data: Mapping[str, Any], record: Any) -> bool:
    """Whether NumPy's own `ddot` is found and proven for this library (`blas`); its
    address is then in the library's slot. Else a warning, and Python runs."""
    from ppy_numpy._runtime import blas

    address = blas.numpy_ddot()
    why = "NumPy's BLAS has no ILP64 cblas_ddot" if address is None else None
    if address is not None:
        key = str(record["unit"]["files"][0]) if record else str(data["symbol"])
        why = blas.proven(library, address, data, key)
    if why is None:
        return True
    warnings.warn(
        f"ppy: typed loops calling np.dot / @ run as Python: {why}  [E2042]",
        RuntimeWarning,
        stacklevel=3,
    )
    return False


def _statements_ready(library: Any, data: Mapping[str, Any], record: Any) -> bool:
    """Whether the library's in-place array updates (`C *= beta`, `inplace`) and array
    statements (`C[i, :n] += s * x`, `vector`) are proven to give NumPy's bytes and
    warnings on this build. Else a warning naming what differed: Python runs."""
    from ppy_numpy._runtime import inplace, vector

    key = str(record["unit"]["files"][0]) if record else str(data["symbol"])
    for flag, prover, what in (
        ("inplace", inplace, "typed loops updating arrays in place"),
        ("vector", vector, "typed loops with array statements"),
    ):
        why = prover.proven(library, data, key) if data.get(flag) else None
        if why is not None:
            warnings.warn(
                f"ppy: {what} run as Python: {why}  [E2042]", RuntimeWarning, stacklevel=3
            )
            return False
    if data.get("masked"):  # `X[m].mean()`: its pairwise sum against NumPy's
        from ppy_numpy._runtime import masked

        why = masked.proven(library, key)
        if why is not None:
            warnings.warn(
                f"ppy: typed loops with masked means run as Python: {why}  [E2042]",
                RuntimeWarning,
                stacklevel=3,
            )
            return False
    return True


#: Python kinds -> the C caller's one-letter codes (see _loopcall.c)
_ARG_CODES = {"array": "a", "int": "i", "float": "f", "unused": "u", "real": "r"}
_RESULT_CODES = {"none": "n", "float": "f", "f64": "F", "int": "i", "i64": "I", "bool": "b"}
_RESULT_CODES["fnum"] = "x"


def _in_c(site: LoopsSite, fns: list[Any]) -> Any:
    """The C caller in front of `site` (guard, call and boxing without Python code:
    well under a microsecond), or None where the extension is not built or the
    function makes or returns arrays (the site does that in Python)."""
    if site.prologue is not None or site.returns or site.helpers or site.__defaults__:
        return None  # (the C caller takes no defaults and checks no helper)
    try:
        from ppy_numpy._runtime._loopcall import LoopCall
    except ImportError:  # a source tree without the built extension: Python calls
        return None
    call = LoopCall(
        ctypes.cast(fns[0], ctypes.c_void_p).value,
        ctypes.cast(fns[1], ctypes.c_void_p).value,
        "".join(_ARG_CODES[k] for k in site.kinds),
        [spec[0].num if spec else 0 for spec in site.specs],
        [spec[1] if spec else 0 for spec in site.specs],
        [int(k in site.writes) for k in range(len(site.kinds))],
        _RESULT_CODES[site.result],
        site.numpy_scalars,
        site,
    )
    for attr in ("__module__", "__name__", "__qualname__", "__doc__", "_library"):
        if hasattr(site, attr):
            setattr(call, attr, getattr(site, attr))
    call.__wrapped__ = site.fallback
    return call
