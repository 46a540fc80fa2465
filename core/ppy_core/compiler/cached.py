"""Compiling a file through the cache. A cache hit imports no compiler code: the
front end, the passes and the backends' code generators load only on a miss."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ppy_core.cache.module_key import ModuleKey, module_key
from ppy_core.cache.store import Cache, Entry
from ppy_core.diagnostics import Diagnostic
from ppy_core.runtime.artifact import MANIFEST


@dataclass(slots=True)
class Compiled:
    entry: Entry
    key: ModuleKey
    hit: bool
    diagnostics: list[Diagnostic] = field(default_factory=list)
    miss_reason: str = ""


def cache_for(key: ModuleKey) -> Cache:
    return Cache(key.config.cache_dir) if key.config.cache_dir else Cache()


def compile_file(path: Path, *, cache: Cache | None = None) -> Compiled:
    """The artifact entry of `path`, from the cache or freshly built."""
    key = module_key(path.resolve())
    cache = cache or cache_for(key)
    entry = cache.lookup(key.key)
    if entry is not None:
        return Compiled(entry, key, hit=True)
    reason = cache.explain_miss(key.key, str(key.path), key.components)
    from ppy_core.compiler.driver import Builder  # the compiler, on a miss only

    builder = Builder(key)
    entry = cache.store(key.key, builder.build, source_id=str(key.path), components=key.components)
    return Compiled(entry, key, hit=False, diagnostics=builder.diagnostics, miss_reason=reason)


def load_manifest(entry: Entry) -> dict[str, Any]:
    return json.loads((entry.path / MANIFEST).read_text())


def report_diagnostics(compiled: Compiled) -> None:
    """Print a fresh compile's diagnostics once, to stderr (a cache hit prints none)."""
    for diagnostic in compiled.diagnostics:
        sys.stderr.write(diagnostic.render() + "\n")


__all__ = ["Compiled", "cache_for", "compile_file", "load_manifest", "report_diagnostics"]
