"""`PPY_PACKAGES=a,b`: switch ppy on at the interpreter's start.

The core installs `ppy_packages.pth` into site-packages; its one line calls
`activate()` only when the variable is set (unset, it costs one dictionary lookup).
Every process started with the variable, a multiprocessing or Dask worker, a
`torchrun` rank, compiles the named packages' modules as they are imported, through
the shared cache (one process builds a module, the others wait for its build lock
and load it).
"""

from __future__ import annotations

import os

ENV = "PPY_PACKAGES"


def activate() -> None:
    """Install the package finder for PPY_PACKAGES, with the compiler registered. A
    failure here must not stop the interpreter: it is one line on stderr."""
    try:
        from ppy_core.runtime.packages import activate as _activate
        from ppy_core.runtime.packages import parse_names

        names = parse_names(os.environ.get(ENV, ""))
        if not names:
            return
        from ppy_core.integrations.registration import register

        register()
        # not looked for on sys.path: at the interpreter's start it is not final yet
        # (the script's folder, `-m`'s current folder, a spawned worker's parent's
        # path come later); a name nothing provides simply never matches an import
        _activate(names, find=False)
    except Exception as exc:  # a broken install: Python must still start
        import sys

        sys.stderr.write(f"ppy: {ENV} is ignored: {type(exc).__name__}: {exc}\n")


__all__ = ["ENV", "activate"]
