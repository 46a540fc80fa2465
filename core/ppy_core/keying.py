"""The cache key of one module, computed without the compiler.

Reads the source and the project files it imports, activates exactly the plugins
whose library the module imports, and joins their fingerprints with the backends'.
A module that imports no library loads no plugin and no backend. Runtime-safe: it
imports no front end, no pass, no code generator.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from ppy_core import __version__
from ppy_core.backends import Backend
from ppy_core.config import Config, load_config
from ppy_core.diagnostics import Error, Location
from ppy_core.discovery import Activation, activate, load_backends
from ppy_core.keys import backend_fingerprints, cache_key, imported_modules, plugin_fingerprints
from ppy_core.scope import ModuleScope, scan_module


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
        raise Error(f"{path}: cannot be read: {exc.strerror or exc}", code="E0001",
                    hint="check the path and its permissions",
                    location=Location(str(path))) from None


def options_of(config: Config) -> dict[str, object]:
    return {**config.key_options(), "python": sys.implementation.cache_tag}


def module_key(path: Path, config: Config | None = None) -> ModuleKey:
    """Key `path` (an absolute file path) under its project's configuration."""
    source = read_bytes(path)
    config = config or load_config(path)
    try:
        tree: ast.Module | None = ast.parse(source)
    except (SyntaxError, ValueError):
        tree = None  # the compile reports it; the key still covers the bytes
    scope = scan_module(tree, path) if tree is not None else None
    activation = activate(imported_modules(tree or source), config)
    backends = load_backends(config).backends if activation.plugins else ()
    plugin_fps = plugin_fingerprints(activation.plugins)
    backend_fps = backend_fingerprints(backends)
    project_files = dict(scope.project_files) if scope else {}
    extra = {name: read_bytes(file) for name, file in sorted(project_files.items())}
    options = options_of(config)
    key = cache_key(source, options, plugin_fps, backend_fps, extra)
    components = {"core": __version__, "source": _sha(source),
                  "options": _sha(json.dumps(options, sort_keys=True, default=str).encode())}
    components.update({f"plugin:{k}": v for k, v in plugin_fps.items()})
    components.update({f"backend:{k}": v for k, v in backend_fps.items()})
    components.update({f"file:{k}": _sha(v) for k, v in extra.items()})
    return ModuleKey(path, source, key, components, config, activation, tuple(backends),
                     project_files, scope)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


__all__ = ["ModuleKey", "module_key", "read_bytes", "options_of"]
