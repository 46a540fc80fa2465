"""The curated SciPy surface the plugin types and names: plain data, no SciPy import.

Which functions are ufuncs with a float64 loop was read from SciPy 1.11-1.17
(`scipy.special.<name>.types` holds ``d->d``); whether calling that loop from a fused
kernel gives SciPy's bits is not assumed here: the backend proves each one on this
build and CPU through the numpy adapter, and one that fails stays a SciPy call.
"""

from __future__ import annotations

from typing import Final

#: one-input `scipy.special` ufuncs with a ``d->d`` loop: fused as
#: ``tensor.unary {op = "scipy.special:<name>"}`` over float64 arrays
FUSIBLE_UNARY: Final = frozenset(
    {
        "erf",
        "erfc",
        "erfcx",
        "erfinv",
        "erfcinv",
        "dawsn",
        "expit",
        "logit",
        "log_expit",
        "gamma",
        "gammaln",
        "psi",
        "digamma",
        "ndtr",
        "ndtri",
        "log_ndtr",
        "j0",
        "j1",
        "y0",
        "y1",
        "i0",
        "i1",
        "i0e",
        "i1e",
        "k0",
        "k1",
        "k0e",
        "k1e",
        "entr",
        "expm1",
        "log1p",
        "cbrt",
        "exp2",
        "exp10",
        "cosdg",
        "sindg",
        "tandg",
        "cotdg",
        "spence",
        "zetac",
    }
)
#: two-input `scipy.special` ufuncs: typed (float64 in, float64 out), run by SciPy
BINARY: Final = frozenset(
    {
        "xlogy",
        "xlog1py",
        "gammainc",
        "gammaincc",
        "beta",
        "betaln",
        "binom",
        "kl_div",
        "rel_entr",
        "huber",
        "pseudo_huber",
        "poch",
        "zeta",
        "jv",
        "yv",
        "iv",
        "kv",
        "hyp0f1",
        "boxcox",
        "inv_boxcox",
    }
)
#: `scipy.fft` functions: op of the `scipy.fft` dialect, result element kind
FFT: Final = {
    "fft": "c128",
    "ifft": "c128",
    "fft2": "c128",
    "ifft2": "c128",
    "fftn": "c128",
    "ifftn": "c128",
    "rfft": "c128",
    "rfftn": "c128",
    "irfft": "f64",
    "irfftn": "f64",
    "hfft": "f64",
    "ihfft": "c128",
    "dct": "f64",
    "idct": "f64",
    "dst": "f64",
    "idst": "f64",
    "fftshift": "same",
    "ifftshift": "same",
    "fftfreq": "f64",
    "rfftfreq": "f64",
}
#: `scipy.linalg` functions: result over a float64 matrix (``same``: a float64 array;
#: ``f64``: a float; ``tuple``: several arrays, left untyped)
LINALG: Final = {
    "solve": "same",
    "inv": "same",
    "pinv": "same",
    "det": "f64",
    "norm": "f64",
    "lu": "tuple",
    "lu_factor": "tuple",
    "lu_solve": "same",
    "cho_factor": "tuple",
    "cho_solve": "same",
    "cholesky": "same",
    "qr": "tuple",
    "svd": "tuple",
    "svdvals": "same",
    "eigh": "tuple",
    "eigvalsh": "same",
    "expm": "same",
    "solve_triangular": "same",
    "lstsq": "tuple",
}
#: `scipy.sparse` constructors (a sparse matrix/array: typed as SciPy's own object)
SPARSE_CONSTRUCTORS: Final = {
    f"{kind}_{form}": kind for kind in ("csr", "csc", "coo") for form in ("matrix", "array")
}
#: methods of a sparse object the plugin names (they run SciPy)
SPARSE_METHODS: Final = ("dot", "tocsr", "tocsc", "tocoo", "toarray", "sum", "multiply")
#: calls taking a Python callable: SciPy calls back into Python (effect Callback)
CALLBACKS: Final = frozenset(
    {
        *(
            f"scipy.optimize.{n}"
            for n in (
                "minimize",
                "minimize_scalar",
                "root",
                "root_scalar",
                "brentq",
                "brenth",
                "bisect",
                "newton",
                "fsolve",
                "least_squares",
                "curve_fit",
                "differential_evolution",
                "basinhopping",
                "dual_annealing",
                "fixed_point",
                "golden",
                "brent",
                "fminbound",
                "fmin",
            )
        ),
        *(
            f"scipy.integrate.{n}"
            for n in (
                "quad",
                "dblquad",
                "tplquad",
                "nquad",
                "fixed_quad",
                "quadrature",
                "romberg",
                "solve_ivp",
                "odeint",
                "solve_bvp",
                "quad_vec",
            )
        ),
        *(
            f"scipy.stats.{n}"
            for n in ("bootstrap", "permutation_test", "monte_carlo_test", "rv_continuous")
        ),
    }
)
#: `scipy.stats` calls that take a callable only sometimes: Callback when an argument
#: is not a known array or number (e.g. `kstest(x, cdf_function)`)
MAYBE_CALLBACKS: Final = frozenset({"scipy.stats.kstest", "scipy.stats.cramervonmises"})
