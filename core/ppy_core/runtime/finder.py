"""Importing `.ppy` modules: compiled through the cache, or, under a built artifact
(PPY_ARTIFACT set), taken from the artifact with no compiler in the process."""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec
from pathlib import Path

from ppy_core.runtime.module import exec_artifact

TYPE_CHECKING = False  # importlib.abc and typing cost a launcher ~8 ms: annotations only
if TYPE_CHECKING:
    import types
    from collections.abc import Sequence
    from typing import Any

ARTIFACT_ENV = "PPY_ARTIFACT"


class PpyFinder:
    """Finds `NAME.ppy` on the import path; in `ppy FILE` mode also the project's
    `.py` files under `roots`, so they are compiled too. It keeps Python's
    precedence: the folders are searched in order, and a folder holding a module of
    that name Python would import (`NAME.py`, a package, an extension) ends the search
    there, for Python's own finders; in one folder, `NAME.ppy` wins over `NAME.py`.
    (A meta path finder is the `find_spec` protocol: `importlib.abc` is not needed.)"""

    def __init__(self, roots: Sequence[Path] = ()) -> None:
        self.roots = [r.resolve() for r in roots]

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> ModuleSpec | None:
        artifact = os.environ.get(ARTIFACT_ENV)
        if artifact:
            entry = _artifact_entry(Path(artifact), fullname)
            if entry is not None:
                directory, source = entry
                return ModuleSpec(fullname, ArtifactLoader(directory, source), origin=source)
        leaf = fullname.rpartition(".")[2]
        for base in path if path is not None else sys.path:
            if not isinstance(base, str):
                continue
            folder = base or "."
            names = _names(folder)  # one stat per folder while its listing holds
            if f"{leaf}.ppy" in names:
                candidate = os.path.join(folder, f"{leaf}.ppy")
                if os.path.isfile(candidate):
                    return ModuleSpec(fullname, CompilingLoader(Path(candidate)), origin=candidate)
            if f"{leaf}.py" in names:
                plain = os.path.join(folder, f"{leaf}.py")
                if os.path.isfile(plain):
                    if self.roots and self._in_roots(folder, plain):
                        return ModuleSpec(fullname, CompilingLoader(Path(plain)), origin=plain)
                    return None  # an earlier .py wins over a later .ppy, as in Python
            if _python_module(folder, leaf, names):
                return None
        return None

    def _in_roots(self, folder: str, plain: str) -> bool:
        """Whether the file `plain` in `folder` lies in one of the project roots (its
        resolved folder is one); the folder is resolved once per process."""
        if os.path.islink(plain):
            return any(_under(Path(plain), r) for r in self.roots)
        real = _REAL.get(folder)
        if real is None:
            real = _REAL[folder] = Path(os.path.realpath(folder))
        return real in self.roots

    def invalidate_caches(self) -> None:
        """`importlib.invalidate_caches()`: forget the folder listings."""
        _LISTINGS.clear()
        _REAL.clear()


#: folder -> (its mtime, its names): a listing is reused while the folder's mtime
#: holds and is not recent (an entry made in the same clock tick keeps the mtime)
_LISTINGS: dict[str, tuple[int, frozenset[str]]] = {}
_REAL: dict[str, Path] = {}
_RACY_NS = 2_000_000_000


def _names(folder: str) -> frozenset[str]:
    """The names in `folder` (empty when it is not a readable folder)."""
    try:
        mtime = os.stat(folder).st_mtime_ns
    except OSError:
        return frozenset()
    known = _LISTINGS.get(folder)
    if known is not None and known[0] == mtime:
        return known[1]
    try:
        names = frozenset(os.listdir(folder))
    except OSError:
        return frozenset()
    import time

    if time.time_ns() - mtime > _RACY_NS:
        _LISTINGS[folder] = (mtime, names)
    return names


def _python_module(folder: str, leaf: str, names: frozenset[str]) -> bool:
    """Whether Python's path finder would import `leaf` from `folder` (a regular
    package or an extension module; `leaf.py` is checked by the caller)."""
    if leaf in names and os.path.isfile(os.path.join(folder, leaf, "__init__.py")):
        return True
    from importlib.machinery import EXTENSION_SUFFIXES

    return any(
        leaf + s in names and os.path.isfile(os.path.join(folder, leaf + s))
        for s in EXTENSION_SUFFIXES
    )


def _under(path: Path, root: Path) -> bool:
    try:
        return path.resolve().parent == root
    except OSError:
        return False


_MANIFESTS: dict[Path, dict[str, Any]] = {}


def use_manifest(root: Path, manifest: dict[str, Any]) -> None:
    """The checked top manifest of the artifact at `root` (`launch.checked`): its
    modules are imported from it; an artifact never checked is not imported from."""
    _MANIFESTS[root] = manifest


def _artifact_entry(root: Path, fullname: str) -> tuple[Path, str] | None:
    manifest = _MANIFESTS.get(root)
    if manifest is None:  # not checked in this process (PPY_ARTIFACT inherited): check it
        from ppy_core.runtime.artifact import coded
        from ppy_core.runtime.launch import checked

        try:
            manifest = checked(root)
        except Exception as exc:
            if not coded(exc):
                raise
            return None
        _MANIFESTS[root] = manifest
    module = manifest["modules"].get(fullname)
    if module is None or fullname == manifest["main"]:
        return None
    return root / module["dir"], module["source"]


class ArtifactLoader:
    """Executes a module of the built artifact (a loader: create_module, exec_module)."""

    def __init__(self, directory: Path, source: str = "") -> None:
        self.directory, self.source = directory, source

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        exec_artifact(self.directory, module, check=True, source=self.source)


class CompilingLoader:
    """Compiles a `.ppy` (or project `.py`) module through the cache, then runs it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        from ppy_core.cache.records import project_root
        from ppy_core.cache.root import using_root

        with using_root(project_root(str(self.path))):
            self._exec(module)

    def _exec(self, module: types.ModuleType) -> None:
        from ppy_core.cache.quick import cached_entry

        cached = cached_entry(self.path.resolve())  # a cached start: no compiler, no plugin
        from ppy_core.runtime.compiling import LOADED

        if cached is not None:
            LOADED.append(module.__name__)
            exec_artifact(cached, module)
            return
        from ppy_core.diagnostics import Error
        from ppy_core.runtime.compiling import compile_path  # the compiler registered itself

        try:
            entry = compile_path(self.path)
        except Error as exc:
            if exc.code != "E0002":
                raise
            error = exc
        else:
            LOADED.append(module.__name__)
            exec_artifact(entry, module)
            return
        # as `import` of a .py file with a syntax error: Python's own SyntaxError (raised
        # outside the `except`, so it does not chain onto the diagnostic)
        compile(self.path.read_bytes(), str(self.path), "exec", dont_inherit=True)
        raise error  # (compile() disagreed with the front end: keep the diagnostic)


_installed: PpyFinder | None = None


def install(roots: Sequence[Path] = ()) -> PpyFinder:
    """Put the finder first on sys.meta_path (once); `roots` add project folders."""
    global _installed
    if _installed is None:
        _installed = PpyFinder(roots)
        sys.meta_path.insert(0, _installed)
    else:
        _installed.roots.extend(r.resolve() for r in roots)
    return _installed


__all__ = ["PpyFinder", "install", "ARTIFACT_ENV"]
