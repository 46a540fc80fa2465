"""The cache key of one module, computed without the compiler.

Reads the source and the project files it imports, activates exactly the plugins
whose library the module imports, and joins their fingerprints with the backends'.
A module that imports no library loads no plugin and no backend. Runtime-safe: it
imports no front end, no pass, no code generator.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ppy_core import __version__
from ppy_core.cache.keys import cache_key, imported_modules
from ppy_core.diagnostics import Error, Location
from ppy_core.project.config import Config, load_config
from ppy_core.project.scope import ModuleScope, scan_module

if TYPE_CHECKING:
    from ppy_core.interface.backend import Backend
    from ppy_core.interface.discovery import Activation


@dataclass(frozen=True, slots=True)
class ModuleKey:
    path: Path
    source: bytes
    key: str
    components: dict[str, str]
    config: Config
    activation: Activation
    backends: tuple[Backend, ...]
    project_files: dict[str, Path]
    scope: ModuleScope | None


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise Error(
            f"{path}: cannot be read: {exc.strerror or exc}",
            code="E0001",
            hint="check the path and its permissions",
            location=Location(str(path)),
        ) from None


def options_of(config: Config) -> dict[str, object]:
    return {**config.key_options(), "python": sys.implementation.cache_tag}


def module_key(path: Path, config: Config | None = None, *, typing_only: bool = False) -> ModuleKey:
    """Key `path` (an absolute file path) under its project's configuration.

    `typing_only` (for `ppy check`): no backends, and the plugins' typing fingerprints
    (`keys.typing_fingerprint`: typing needs no code generator, and must not import
    torch to key a file)."""
    source = read_bytes(path)
    config = config or load_config(path)
    try:
        tree: ast.Module | None = ast.parse(source)
    except (SyntaxError, ValueError):
        tree = None  # the compile reports it; the key still covers the bytes
    scope = scan_module(tree, path) if tree is not None else None
    project_files = dict(scope.project_files) if scope else {}
    imported = imported_modules(tree or source)
    activation = _activation(imported, project_files, config)
    tops = frozenset(m.partition(".")[0] for m in imported)
    backends = (
        tuple(b for b in _load_backends(config, tops).backends if b.relevant(tops))
        if activation.plugins and not typing_only
        else ()
    )
    activation, backends, plugin_fps, backend_fps = _fingerprints(
        activation, backends, typing=typing_only
    )
    extra = {name: read_bytes(file) for name, file in sorted(project_files.items())}
    options = {
        **options_of(config),
        "code": code_ids(
            [
                __name__,
                *(type(p).__module__ for p in activation.plugins),
                *(type(b).__module__ for b in backends),
            ]
        ),
    }
    # The artifact holds the file's path (code filenames, __file__, the project files it
    # imports): the same bytes at another path are another entry.
    where = str(path)
    key = cache_key(source, {**options, "module_path": where}, plugin_fps, backend_fps, extra)
    components = {
        "core": __version__,
        "source": _sha(source),
        "options": _sha(json.dumps(options, sort_keys=True, default=str).encode()),
        "path": _sha(where.encode("utf-8", "surrogateescape")),
    }
    components.update({f"plugin:{k}": v for k, v in plugin_fps.items()})
    components.update({f"backend:{k}": v for k, v in backend_fps.items()})
    components.update({f"file:{k}": _sha(v) for k, v in extra.items()})
    return ModuleKey(
        path, source, key, components, config, activation, tuple(backends), project_files, scope
    )


# Imports that are never a library a plugin claims.
_NOT_LIBRARIES = frozenset({"ppy", "ppy_core", "__future__"})


def _activation(
    imported: frozenset[str], project_files: dict[str, Path], config: Config
) -> Activation:
    """The plugins of a module: those claiming a module it imports. A module that
    imports no library (only the standard library, ppy and its project's modules)
    loads no plugin at all; an enabled third-party plugin whose library the module
    does not import is left out of its key and its compile (loading it is how its
    claims are learnt)."""
    own = {name.partition(".")[0] for name in project_files}
    tops = {m.partition(".")[0] for m in imported} - _NOT_LIBRARIES - own
    # Plugins, their discovery and their interface load only for a module that
    # imports a library: a plain module's cached start stays light.
    if not tops - sys.stdlib_module_names:
        return NO_PLUGINS  # type: ignore[return-value]
    from ppy_core.interface.discovery import activate

    activation = activate(imported, config)
    plugins = tuple(
        p for p in activation.plugins if any(activation.claims.get(top) == p.name for top in tops)
    )
    if len(plugins) == len(activation.plugins):
        return activation
    return replace(activation, plugins=plugins)


@dataclass(frozen=True, slots=True)
class _NoPlugins:
    """The activation of a module that imports no library (duck-types Activation,
    without loading discovery and the plugin interface)."""

    plugins: tuple[()] = ()
    claims: dict[str, str] = field(default_factory=dict)
    diagnostics: tuple[()] = ()
    refused: dict[str, str] = field(default_factory=dict)


NO_PLUGINS = _NoPlugins()


def _load_backends(config: Config, tops: frozenset[str]) -> Any:
    from ppy_core.interface.discovery import load_backends

    return load_backends(config, imported=tops)  # irrelevant backends stay unimported


def _fingerprints(
    activation: Activation, backends: tuple[Backend, ...], *, typing: bool = False
) -> tuple[Activation, tuple[Backend, ...], dict[str, str], dict[str, str]]:
    """The fingerprints of the module's plugins and backends. One whose fingerprint
    fails is left out of the activation (or the backends) with an E1908 warning among
    the activation's diagnostics: the key, the compile and the run go on without it."""
    if not activation.plugins and not backends:
        return activation, backends, {}, {}
    from ppy_core.cache.keys import usable_fingerprints

    plugin_fps, dropped = usable_fingerprints("plugin", activation.plugins, typing=typing)
    backend_fps, dropped_backends = usable_fingerprints("backend", backends)
    dropped += dropped_backends
    if not dropped:
        return activation, backends, plugin_fps, backend_fps
    refused = {**activation.refused}
    refused.update(
        {p.name: "fingerprint() failed" for p in activation.plugins if p.name not in plugin_fps}
    )
    activation = replace(
        activation,
        plugins=tuple(p for p in activation.plugins if p.name in plugin_fps),
        diagnostics=(*activation.diagnostics, *dropped),
        refused=refused,
    )
    return activation, tuple(b for b in backends if b.name in backend_fps), plugin_fps, backend_fps


@functools.cache
def _package_code_id(package: str) -> str:
    """Stat-hash of a package's Python and C sources: an edited compiler (an editable
    install) must never reuse artifacts its old code built."""
    module = sys.modules.get(package)
    root = Path(getattr(module, "__file__", "") or "").parent
    if not root.is_dir():
        return "?"
    digest = hashlib.sha256()
    for file in sorted(root.rglob("*")):
        if file.suffix in (".py", ".c", ".h", ".cpp") and "__pycache__" not in file.parts:
            st = file.stat()
            digest.update(f"{file.relative_to(root)}:{st.st_size}:{st.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


def code_ids(modules: list[str]) -> dict[str, str]:
    """The code id of each top-level package the given modules belong to."""
    tops = sorted({m.partition(".")[0] for m in modules})
    for top in tops:
        importlib.import_module(top)
    return {top: _package_code_id(top) for top in tops}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


__all__ = ["ModuleKey", "module_key", "read_bytes", "options_of"]
