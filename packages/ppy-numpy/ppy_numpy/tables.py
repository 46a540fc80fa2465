"""What NumPy's names mean to the compiler, as tables. No NumPy import here."""

from __future__ import annotations

from typing import Final

from ppy_core.ir.dialects.tensor import UNARY_FUNCTIONS as TENSOR_UNARY
from ppy_core.ir.types import F32, F64, I1, I64, ScalarType, TensorType

LIBRARY: Final = "numpy"
I32: Final = ScalarType("i32")
U8: Final = ScalarType("u8")  # bytes (crc16's data): typed loops' bitwise ops
U32: Final = ScalarType("u32")  # CSR indices (spmv's): typed loops' indices and bounds
C128: Final = ScalarType("c128")  # complex128: abs of it fuses (a float64), nothing else
ARRAY: Final = TensorType(F64, None, LIBRARY)
GUESS: Final = ARRAY  # what an unannotated leaf is guessed to be (the guard checks it)

DTYPES: Final[dict[str, ScalarType]] = {
    "numpy.float64": F64,
    "numpy.double": F64,
    "builtins.float": F64,
    "numpy.float32": F32,
    "numpy.single": F32,
    "numpy.int64": I64,
    "numpy.int32": I32,
    "numpy.uint8": U8,
    "numpy.uint32": U32,
    "numpy.bool_": I1,
    "numpy.bool": I1,
    "numpy.complex128": C128,
    "numpy.cdouble": C128,
}
#: NumPy's names of those element types: how `np.dtype(...)`, `astype(...)` and `dtype=`
#: take them as strings (only names of one meaning on every platform: not "int", "l")
DTYPE_STRINGS: Final[dict[str, ScalarType]] = {
    "float64": F64,
    "f8": F64,
    "float": F64,
    "double": F64,
    "float32": F32,
    "f4": F32,
    "single": F32,
    "int64": I64,
    "i8": I64,
    "int32": I32,
    "i4": I32,
    "uint8": U8,
    "u1": U8,
    "uint32": U32,
    "u4": U32,
    "bool": I1,
    "?": I1,
    "complex128": C128,
    "c16": C128,
    "complex": C128,
}
#: element kind -> NumPy's name of it (the text of the types below)
DTYPE_NAMES: Final = {
    "f64": "float64",
    "f32": "float32",
    "i64": "int64",
    "i32": "int32",
    "u8": "uint8",
    "u32": "uint32",
    "i1": "bool",
    "c128": "complex128",
}

BINARY_OPERATORS: Final = {"Add": "add", "Sub": "sub", "Mult": "mul", "Div": "div"}
COMPARE_OPERATORS: Final = {
    "Lt": "lt",
    "LtE": "le",
    "Gt": "gt",
    "GtE": "ge",
    "Eq": "eq",
    "NotEq": "ne",
}
#: `&`, `|`, `^`, `~` of bool arrays, and their functions: elementwise logic
LOGICAL_OPERATORS: Final = {"BitAnd": "and", "BitOr": "or", "BitXor": "xor", "Invert": "not"}
LOGICAL_FUNCTIONS: Final = {
    "numpy.logical_and": "and",
    "numpy.logical_or": "or",
    "numpy.logical_xor": "xor",
    "numpy.logical_not": "not",
}

# `array ** constant`: NumPy's fast_scalar_power calls these ufuncs instead of power.
POWER_FAST_PATHS: Final = {2: "square", 0.5: "sqrt", -1: "reciprocal"}
POWER_NO_FUSE: Final = (0, 1)  # _ones_like and positive: not tensor ops here

BINARY_FUNCTIONS: Final = {
    "numpy.add": "add",
    "numpy.subtract": "sub",
    "numpy.multiply": "mul",
    "numpy.divide": "div",
    "numpy.true_divide": "div",
    "numpy.power": "pow",
    "numpy.maximum": "maximum",
    "numpy.minimum": "minimum",
}
#: two-input ufuncs fused by calling NumPy's own loop (`tensor.binary`): their NaN and
#: signed-zero choices differ between NumPy's SIMD body and its scalar tail
LOOP_BINARY_FUNCTIONS: Final = {
    "numpy.arctan2": "arctan2",
    "numpy.hypot": "hypot",
    "numpy.fmax": "fmax",
    "numpy.fmin": "fmin",
}
#: `np.clip(x, lo, hi)`: NumPy 2's clip ufunc (`tensor.clip`); a literal None bound
#: makes it np.minimum / np.maximum, as NumPy's `_clip` does
CLIP: Final = "numpy.clip"
COMPARE_FUNCTIONS: Final = {
    "numpy.less": "lt",
    "numpy.less_equal": "le",
    "numpy.greater": "gt",
    "numpy.greater_equal": "ge",
    "numpy.equal": "eq",
    "numpy.not_equal": "ne",
}
#: `tensor.unary` functions NumPy has no ufunc of the same name for
NOT_IN_NUMPY: Final = frozenset({"erf"})
UNARY_FUNCTIONS: Final = {f"numpy.{n}": n for n in TENSOR_UNARY if n not in NOT_IN_NUMPY}
SIGN_FUNCTIONS: Final = {
    "numpy.negative": "tensor.neg",
    "numpy.absolute": "tensor.abs",
    "numpy.abs": "tensor.abs",
    "numpy.fabs": "tensor.abs",
}
REDUCTIONS: Final = {
    "sum": "add",
    "prod": "mul",
    "mean": "mean",
    "max": "max",
    "min": "min",
    "amax": "max",
    "amin": "min",
}
METHOD_REDUCTIONS: Final = ("sum", "prod", "mean", "max", "min")
#: methods that are the function of the same name with the array first
METHOD_ALIASES: Final = (*METHOD_REDUCTIONS, "clip")

#: `np.outer(u, v)` of two vectors: `multiply(u[:, None], v[None, :])`, as NumPy's own
#: `outer` computes it (of arrays of other ranks, of their ravels: NumPy runs those)
OUTER: Final = "numpy.outer"
OUTER_VIEWS: Final = (((None, None, None), None), (None, (None, None, None)))

LINALG: Final = {f"numpy.{n}": n for n in ("dot", "matmul", "inner", "vdot", "tensordot")}
#: `np.histogram`: its counts are np.intp (int64 on the 64-bit platforms kernels run on)
HISTOGRAM: Final = "numpy.histogram"
INTP: Final = I64

CREATION: Final = (
    "numpy.zeros",
    "numpy.ones",
    "numpy.empty",
    "numpy.full",
    "numpy.zeros_like",
    "numpy.ones_like",
    "numpy.empty_like",
    "numpy.full_like",
    "numpy.linspace",
    "numpy.arange",
    "numpy.array",
    "numpy.asarray",
    "numpy.ascontiguousarray",
    "numpy.random.rand",
    "numpy.random.randn",
    "numpy.random.random",
    "numpy.random.uniform",
    "numpy.random.normal",
)
#: creations converting their first argument: of an array, an array of its dtype
CONVERSIONS: Final = ("numpy.array", "numpy.asarray", "numpy.ascontiguousarray")
#: where a creation takes its dtype positionally (the others: by keyword only)
DTYPE_POSITIONS: Final = {
    "numpy.zeros": 1,
    "numpy.ones": 1,
    "numpy.empty": 1,
    "numpy.full": 2,
    "numpy.zeros_like": 1,
    "numpy.ones_like": 1,
    "numpy.empty_like": 1,
    "numpy.full_like": 2,
    **dict.fromkeys(CONVERSIONS, 1),
}
#: calls joining arrays: NumPy runs them and their result is a leaf of a site (a
#: float64 array for float64 inputs; the guard checks the dtype of each result)
JOINS: Final = (
    "numpy.concatenate",
    "numpy.hstack",
    "numpy.vstack",
    "numpy.stack",
    "numpy.column_stack",
    "numpy.dstack",
)
#: `np.random.default_rng()`: a Generator; its float samplers give a float64 array when
#: given a size (the position of `size` among their parameters), else one float
GENERATOR: Final = "numpy.random.Generator"
GENERATOR_FLOAT_SIZE: Final = {
    "random": 0,
    "standard_normal": 0,
    "standard_exponential": 0,
    "standard_cauchy": 0,
    "uniform": 2,
    "normal": 2,
    "lognormal": 2,
    "laplace": 2,
    "logistic": 2,
    "gumbel": 2,
    "beta": 2,
    "gamma": 2,
    "wald": 2,
    "vonmises": 2,
    "f": 2,
    "triangular": 3,
    "exponential": 1,
    "chisquare": 1,
    "standard_t": 1,
    "rayleigh": 1,
    "weibull": 1,
    "pareto": 1,
    "power": 1,
    "standard_gamma": 1,
}
FLOAT_CONSTANTS: Final = ("numpy.pi", "numpy.e", "numpy.inf", "numpy.nan", "numpy.euler_gamma")

#: keywords whose literal value is NumPy's own default, so that dropping them changes
#: nothing (`np.sum(a, axis=None)` is `np.sum(a)`): for whole-array reductions, and for
#: the ufuncs (elementwise functions) above
REDUCTION_DEFAULTS: Final = {
    "axis": None,
    "dtype": None,
    "out": None,
    "keepdims": False,
    "where": True,
}
UFUNC_DEFAULTS: Final = {"out": None, "where": True, "dtype": None}
#: calls that write into an array they are given (their effects end a site)
WRITES: Final = frozenset(
    {
        "numpy.copyto",
        "numpy.put",
        "numpy.place",
        "numpy.putmask",
        "numpy.fill_diagonal",
        "numpy.ndarray.fill",
        "numpy.ndarray.sort",
        "numpy.ndarray.resize",
        "numpy.random.shuffle",
    }
)
