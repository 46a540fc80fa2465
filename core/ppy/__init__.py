"""PPy's user-facing module.

Under plain `python` everything here is inert: the decorators return the function
they were given (marked, with `__ppy_region__ == False`), and `Shape`/`DType` are
plain values for `typing.Annotated`. The compiler reads them from the source.
"""

from __future__ import annotations

from ppy._annotations import DType, Shape
from ppy._decorators import fastmath, jax, opt, pure
from ppy._load import load, reset_stats, stats, summary
from ppy_core import __version__
from ppy_core.diagnostics import Error, VerifyError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ppy._install import Installed, install

__all__ = [
    "__version__",
    "opt",
    "fastmath",
    "pure",
    "jax",
    "Shape",
    "DType",
    "Error",
    "VerifyError",
    "load",
    "install",
    "Installed",
    "stats",
    "summary",
    "reset_stats",
]


def __getattr__(name: str) -> object:
    """`ppy.install` and `ppy.Installed` load on first use: `import ppy` stays as light."""
    if name in ("install", "Installed"):
        from ppy import _install

        return getattr(_install, name)
    raise AttributeError(f"module 'ppy' has no attribute {name!r}")


def load_ipython_extension(shell: object) -> None:
    """`%load_ext ppy`: IPython and Jupyter cells compiled through the cache."""
    from ppy_core.integrations.ipython import load_ipython_extension as load

    load(shell)


def unload_ipython_extension(shell: object) -> None:
    from ppy_core.integrations.ipython import unload_ipython_extension as unload

    unload(shell)


def _install_finder() -> None:
    """`import ppy` lets Python import `.ppy` modules, compiled in this process (the
    compiler registers itself with the runtime; it loads on the first cache miss)."""
    from ppy_core.integrations.registration import register
    from ppy_core.runtime.finder import install

    register()
    install()


_install_finder()
