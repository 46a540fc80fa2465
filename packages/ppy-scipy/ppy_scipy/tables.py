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
#: two-input `scipy.special` ufuncs whose float64 inputs pick a ``dd->d`` loop (read
#: from SciPy 1.11-1.17: `resolve_dtypes((f8, f8, None))`; those listing an ``ld->d``
#: loop first, as `kn`/`yn`/`expn`/`smirnov`, are left out: their float order is cast):
#: fused as ``tensor.binary {op = "scipy.special:<name>"}``, each behind its own proof
FUSIBLE_BINARY: Final = frozenset(
    {
        *("xlogy", "xlog1py", "kl_div", "rel_entr", "huber", "pseudo_huber"),
        *("gammainc", "gammaincc", "gammaincinv", "gammainccinv"),
        *("beta", "betaln", "binom", "poch", "powm1", "agm"),
        *("jv", "yv", "iv", "kv", "jve", "yve", "ive", "kve", "struve", "modstruve"),
        *("boxcox", "inv_boxcox", "boxcox1p", "inv_boxcox1p"),
        *("ellipeinc", "ellipkinc", "elliprc", "owens_t"),
        *("stdtr", "chdtr", "chdtrc", "pdtr", "pdtrc"),
    }
)
#: two-input `scipy.special` functions: typed (float64 in, float64 out); the fusible
#: ones converge, the rest run by SciPy: `zeta` is a Python function around a ufunc, and
#: `hyp0f1`'s loop reports through Python (a ZeroDivisionError it prints as "Exception
#: ignored" from inside the loop), which a fused kernel could not keep in order
BINARY: Final = FUSIBLE_BINARY | {"zeta", "hyp0f1"}
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
