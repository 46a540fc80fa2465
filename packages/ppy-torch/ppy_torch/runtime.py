"""Load a built region and put it in place of the Python function.

This is the run-time half of the `aten` backend: it imports torch, loads the
extension module from the artifact, and makes the region callable. It imports
no compiler code (no stage, codegen, build, toolchain). A region that is missing
or fails to load falls back to the Python function with one warning.

Loader (named by `CompiledUnit.loader`):

    load_region(unit_data, build_dir, fallback, record=None) -> callable
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import threading
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from ppy_torch.errors import MISSING_PIECE, OTHER_BUILD, RegionWarning

_modules: dict[str, ModuleType] = {}
_lock = threading.Lock()
_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(message, RegionWarning, stacklevel=3)


def load_extension(name: str, path: Path) -> ModuleType:
    """Import the extension module `name` from `path` (once per path per process)."""
    key = str(path.resolve())
    with _lock:
        if key in _modules:
            return _modules[key]
        import torch  # noqa: F401  (the extension binds torch's Python tensor type)

        loader = importlib.machinery.ExtensionFileLoader(name, key)
        spec = importlib.util.spec_from_file_location(name, key, loader=loader)
        if spec is None:
            raise ImportError(f"cannot load {key}")
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
        _modules[key] = module
        return module


def make_region(module: ModuleType, name: str, fallback: Callable[..., Any]) -> Callable[..., Any]:
    """The region callable for function `name`, falling back to `fallback`."""
    region = module.make(name, fallback)
    _name_as(region, fallback)
    return region


def _name_as(region: Any, fallback: Callable[..., Any]) -> None:
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        if hasattr(fallback, attr):
            setattr(region, attr, getattr(fallback, attr))
    region.__wrapped__ = fallback
    # a decorator applied around the region (`@torch.no_grad()`: functools.wraps copies
    # the `__dict__`) hands these on to the function the program holds; the region's own
    # `__ppy_region__` is a property of its type, which wraps does not copy
    region.__dict__["__ppy_region__"] = True
    region.__dict__["__ppy_stats__"] = region.__ppy_stats__


class _Miss:
    """What a method region's inner fallback returns: run the method's Python."""


_MISS = _Miss()


def make_method_region(
    module: ModuleType, name: str, fallback: Callable[..., Any]
) -> Callable[..., Any]:
    """A method's region, called with the method's arguments: its C++ entry walks
    `self`'s module tree, checks every fact the region was built from and reads the
    parameters and buffers at every call (never captured: `load_state_dict`, optimizer
    steps and `.to()` are seen by the next call). A success lets the dispatcher take
    `self`'s description as it is at its next calls (`describe.trust`); any miss runs
    the method's Python and has `self` described again (`describe.forget`)."""
    from ppy_torch.describe import forget, trust

    region = module.make(name, lambda *_args: _MISS)

    def method(*args: Any, **kwargs: Any) -> Any:
        if kwargs or not args:  # the region takes positional arguments
            return fallback(*args, **kwargs)
        out = region(*args)
        if out is _MISS:
            forget(args[0])
            return fallback(*args)
        trust(args[0])
        return out

    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        if hasattr(fallback, attr):
            setattr(method, attr, getattr(fallback, attr))
    method.__wrapped__ = fallback  # type: ignore[attr-defined]
    method.__ppy_region__ = True  # type: ignore[attr-defined]
    method.__ppy_stats__ = region.__ppy_stats__  # type: ignore[attr-defined]
    method.ppy_stats = region.ppy_stats  # type: ignore[attr-defined]
    method.ppy_reset = region.ppy_reset  # type: ignore[attr-defined]
    return method


def load_region(
    unit_data: Mapping[str, Any],
    build_dir: str | Path,
    fallback: Callable[..., Any],
    record: Mapping[str, Any] | None = None,
) -> Callable[..., Any]:
    """The callable that replaces `fallback`: its region, or `fallback` itself with a
    warning when the region library is missing, unloadable, or built for another torch.
    `record` (the driver's manifest entry for the site) is accepted and not needed."""
    path = Path(build_dir) / str(unit_data["file"])
    function = str(unit_data["function"])
    import torch

    if unit_data.get("torch") not in (None, torch.__version__):
        _warn_once(
            f"torch:{path}",
            f"ppy: region {function}: built for torch "
            f"{unit_data.get('torch')}, running {torch.__version__}; the Python body "
            f"runs  [{OTHER_BUILD}]",
        )
        return fallback
    if not path.is_file():
        _warn_once(
            f"missing:{path}",
            f"ppy: region library {path} is missing; {function} "
            f"runs its Python body  [{MISSING_PIECE}]",
        )
        return fallback
    try:
        module = load_extension(str(unit_data["module"]), path)
        if unit_data.get("sources"):
            return make_method_region(module, function, fallback)
        return make_region(module, function, fallback)
    except (ImportError, OSError, KeyError, AttributeError) as exc:
        _warn_once(
            f"load:{path}",
            f"ppy: region library {path} failed to load ({exc}); "
            f"{function} runs its Python body  [{MISSING_PIECE}]",
        )
        return fallback


def region_stats(fn: Callable[..., Any]) -> dict[str, int]:
    """Calls of a region by outcome ("fast", or the fallback reason); {} for plain Python."""
    stats = getattr(fn, "__ppy_stats__", None)
    return dict(stats()) if callable(stats) else {}


__all__ = ["load_region", "load_extension", "make_method_region", "make_region", "region_stats"]
