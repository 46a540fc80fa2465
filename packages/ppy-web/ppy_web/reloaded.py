"""The import string a reloaded worker loads an app object by: `ppy_web.reloaded:app`.

`ppy_web.serve` names an app object for uvicorn's reloader as "FILE::NAME::MODE" in
the environment (`PPY_WEB_APP`); each fresh worker process imports this module and
asks for `app`, which loads FILE (a `.py` or a `.ppy`) the way the parent did: through
`ppy.load` (compiled, through the cache) when the parent's module was PPy's, else as
plain Python, and returns its global NAME. Nothing is loaded until `app` is asked for.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

APP_ENV = "PPY_WEB_APP"


def describe(app: Any) -> str | None:
    """ "FILE::NAME::MODE" for the module global holding `app` (`__main__` first), or
    None when no module with a source file holds it."""
    modules = [sys.modules.get("__main__")] + [
        m for n, m in list(sys.modules.items()) if n != "__main__"
    ]
    for module in modules:
        namespace = getattr(module, "__dict__", None) or {}
        source = namespace.get("__file__")
        if not source or not str(source).endswith((".py", ".ppy")):
            continue
        for attr, value in list(namespace.items()):
            if value is app and not attr.startswith("__"):
                mode = "ppy" if "__ppy_bind__" in namespace else "python"
                return f"{Path(source).resolve()}::{attr}::{mode}"
    return None


def load(description: str) -> Any:
    """The app a description names, loaded as its module was in the parent."""
    source, attr, mode = description.split("::")
    path = Path(source)
    name = f"_ppy_app_{path.stem}"
    sys.path.insert(0, str(path.parent))
    if mode == "ppy":
        import ppy

        module = ppy.load(path, name)
    else:
        loader = importlib.machinery.SourceFileLoader(name, str(path))
        spec = importlib.util.spec_from_loader(name, loader)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        loader.exec_module(module)
    return getattr(module, attr)


def __getattr__(name: str) -> Any:
    if name == "app" and APP_ENV in os.environ:
        value = load(os.environ[APP_ENV])
        globals()["app"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["APP_ENV", "describe", "load"]
