"""Compiling the modules of named packages as they are imported (`ppy.install`,
`[tool.ppy] packages`, `PPY_PACKAGES`, `--ppy-packages`).

`PackageFinder` asks Python's own `PathFinder` where a module of a named package is
and keeps everything it says (`__spec__`, `__path__`, `__file__`, resources) but the
loader: a `.py` module gets a `PackageLoader`, a `SourceFileLoader` whose
`exec_module` runs the module's cache entry, compiled on a miss by the compiler
registered in `runtime.compiling`. So `inspect.getsource`, tracebacks with source
lines and `importlib.reload` work as for the plain module. A module that fails to
compile runs as plain Python after one warning (E3043). No compiler is imported here.
"""

from __future__ import annotations

import sys
import warnings
from importlib.machinery import PathFinder, SourceFileLoader

TYPE_CHECKING = False
if TYPE_CHECKING:
    import types
    from collections.abc import Iterable, Sequence
    from importlib.machinery import ModuleSpec
    from pathlib import Path


class PackageWarning(UserWarning):
    """A named package, or one of its modules, is not compiled: it runs as Python."""


def _warn(message: str) -> None:
    warnings.warn(f"ppy: {message}", PackageWarning, stacklevel=4)  # the caller's call


class PackageLoader(SourceFileLoader):
    """Runs a module of a named package from its cache entry (compiled on a miss);
    Python's own loader, unchanged, when it cannot be compiled."""

    def exec_module(self, module: types.ModuleType) -> None:
        from pathlib import Path

        from ppy_core.cache.quick import cached_entry
        from ppy_core.cache.records import project_root
        from ppy_core.cache.root import using_root
        from ppy_core.runtime.module import exec_artifact

        path = Path(self.path).resolve()
        with using_root(project_root(str(path))):
            entry = cached_entry(path)  # a cached start: no compiler, no plugin
            if entry is None:
                entry = self._compile(path)
        if entry is None:
            super().exec_module(module)
            return
        from ppy_core.runtime.compiling import LOADED

        LOADED.append(module.__name__)
        exec_artifact(entry, module)

    def _compile(self, path: Path) -> Path | None:
        from ppy_core.runtime.compiling import compile_path

        try:
            return compile_path(path)
        except Exception as exc:  # a compile failure costs the speed, never the import
            text = getattr(getattr(exc, "diagnostic", None), "message", "") or str(exc)
            _warn(
                f"{self.name} ({path}) is not compiled, it runs as Python: "
                f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}  [E3043]"
            )
            return None


def _selected(fullname: str, names: Iterable[str]) -> bool:
    return any(fullname == n or fullname.startswith(n + ".") for n in names)


class PackageFinder:
    """A meta path finder for the modules of `names` (top-level or dotted packages)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> ModuleSpec | None:
        if not _selected(fullname, self.names):
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            return spec  # a namespace package, an extension, bytecode only: Python's
        if type(spec.loader) is not SourceFileLoader:
            return spec
        spec.loader = PackageLoader(fullname, spec.origin)
        return spec

    def invalidate_caches(self) -> None:
        return None


def insert(finder: PackageFinder) -> None:
    """Put `finder` first on sys.meta_path, but after pytest's assertion rewriting hook
    when there is one: pytest keeps its test modules and conftests (it claims only
    those), every other module of a named package is ours."""
    at = 0
    for index, other in enumerate(sys.meta_path):
        if type(other).__name__ == "AssertionRewritingHook":
            at = index + 1
    sys.meta_path.insert(at, finder)


def remove(finder: PackageFinder) -> None:
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)


def locate(name: str, also: Sequence[str] = ()) -> bool:
    """Whether package or module `name` can be imported, found without importing it
    (nor its parents); `also`: folders the program's start will put first on the path."""
    parent = sys.modules.get(name)
    if parent is not None:
        return True
    parts = name.split(".")
    spec = PathFinder.find_spec(parts[0], [*also, *sys.path] if also else None)
    for depth in range(1, len(parts)):
        if spec is None or spec.submodule_search_locations is None:
            return False
        spec = PathFinder.find_spec(".".join(parts[: depth + 1]), spec.submodule_search_locations)
    return spec is not None


def check_names(names: Sequence[str], also: Sequence[str] = (), *, find: bool = True) -> list[str]:
    """The names that can be compiled; one warning for each that cannot be imported
    (E3041; `find=False`: not looked for, only checked to be a name) and one naming
    the modules of a package already imported (E3042)."""
    kept: list[str] = []
    for name in names:
        if not name or not all(part.isidentifier() for part in name.split(".")):
            _warn(f"{name!r} is not a module name; write a package as Python imports it  [E3041]")
            continue
        already = sorted(m for m in sys.modules if _selected(m, (name,)))
        if already:
            _warn(
                f"{', '.join(already)} of {name} {'was' if len(already) == 1 else 'were'} "
                "imported before ppy was switched on: already-imported modules run as Python; "
                "switch ppy on earlier (PPY_PACKAGES, or before the first import)  [E3042]"
            )
        elif find and not locate(name, also):
            _warn(f"package {name!r} cannot be imported: nothing of it is compiled  [E3041]")
            continue
        kept.append(name)
    return kept


def configured(source: str) -> list[str]:
    """`[tool.ppy] packages` of the project of file `source` (its nearest
    pyproject.toml), read through a record while that file is unchanged; the usual
    case (a pyproject.toml that never says `packages`) is one small read.
    ConfigError (E1950) when the configuration is invalid."""
    from ppy_core.cache import records

    pyproject = records.nearest_pyproject(source)
    if pyproject is None:
        return []
    try:
        with open(pyproject, "rb") as handle:
            if b"packages" not in handle.read():
                return []
    except OSError:
        return []
    name = f"packages:{pyproject}"
    known = records.read(name)
    if isinstance(known, list):
        return [str(n) for n in known]
    from ppy_core.project.config import load_config

    names = list(load_config(pyproject).packages)
    records.write(name, [pyproject], names)
    return names


def activate(
    names: Sequence[str], also: Sequence[str] = (), *, find: bool = True
) -> PackageFinder | None:
    """Compile the modules of `names` from now on (the checked ones); the finder, or
    None when no name is left. `also`, `find`: as for `check_names`."""
    kept = check_names(names, also, find=find)
    if not kept:
        return None
    finder = PackageFinder(kept)
    insert(finder)
    return finder


def parse_names(text: str) -> list[str]:
    """`a,b, c` -> ["a", "b", "c"] (as PPY_PACKAGES and --ppy-packages write them)."""
    return [part.strip() for part in text.split(",") if part.strip()]


__all__ = [
    "activate",
    "configured",
    "insert",
    "remove",
    "PackageFinder",
    "PackageLoader",
    "PackageWarning",
    "check_names",
    "locate",
    "parse_names",
]
