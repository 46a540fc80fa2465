"""Importing `.ppy` modules: compiled through the cache, or, under a built artifact
(PPY_ARTIFACT set), taken from the artifact with no compiler in the process."""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
import types
from collections.abc import Sequence
from pathlib import Path

from ppy_core.diagnostics import Error
from ppy_core.runtime.module import exec_artifact

ARTIFACT_ENV = "PPY_ARTIFACT"


class PpyFinder(importlib.abc.MetaPathFinder):
    """Finds `NAME.ppy` on the import path; in `ppy FILE` mode also the project's
    `.py` files under `roots`, so they are compiled too."""

    def __init__(self, roots: Sequence[Path] = ()) -> None:
        self.roots = [r.resolve() for r in roots]

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        artifact = os.environ.get(ARTIFACT_ENV)
        if artifact:
            entry = _artifact_entry(Path(artifact), fullname)
            if entry is not None:
                directory, source = entry
                return importlib.util.spec_from_loader(
                    fullname, ArtifactLoader(directory), origin=source
                )
        leaf = fullname.rpartition(".")[2]
        for base in path if path is not None else sys.path:
            folder = Path(base or ".")
            candidate = folder / f"{leaf}.ppy"
            if candidate.is_file():
                return importlib.util.spec_from_loader(
                    fullname, CompilingLoader(candidate), origin=str(candidate)
                )
            plain = folder / f"{leaf}.py"
            if plain.is_file() and any(_under(plain, r) for r in self.roots):
                return importlib.util.spec_from_loader(
                    fullname, CompilingLoader(plain), origin=str(plain)
                )
        return None


def _under(path: Path, root: Path) -> bool:
    try:
        return path.resolve().parent == root
    except OSError:
        return False


def _artifact_entry(root: Path, fullname: str) -> tuple[Path, str] | None:
    try:
        manifest = json.loads((root / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    module = manifest.get("modules", {}).get(fullname)
    if module is None or fullname == manifest.get("main"):
        return None
    return root / module["dir"], module["source"]


class ArtifactLoader(importlib.abc.Loader):
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        exec_artifact(self.directory, module, check=True)


class CompilingLoader(importlib.abc.Loader):
    def __init__(self, path: Path) -> None:
        self.path = path

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        from ppy_core.compiler.cached import compile_file, report_diagnostics  # compiler: lazily

        try:
            compiled = compile_file(self.path)
        except Error as exc:
            if exc.code != "E0002":
                raise
            error: Error | None = exc
        else:
            error = None
        if error is not None:
            # as `import` of a .py file with a syntax error: Python's own SyntaxError
            compile(self.path.read_bytes(), str(self.path), "exec", dont_inherit=True)
            raise error  # (compile() disagreed with the front end: keep the diagnostic)
        report_diagnostics(compiled)
        exec_artifact(compiled.entry.path, module)


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
