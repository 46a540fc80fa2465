"""Compiling one function for one observed signature (`runtime/observed.py`).

The runtime describes a call's arguments; the module is compiled again with that one
function only, its unannotated parameters typed as annotations would have typed the
described arguments (`frontend/described.py`: a NumPy float32 array of rank 2 is
`tensor<?x?xf32, "numpy">`, a Python float `f64`). The result is a
cache entry of its own (key: `observed.spec_id` of the module's key, the function
and the signature) holding the function's code and its sites; another process finds
it without compiling. `include_recorded` puts a module's recorded specializations
into a built artifact.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ppy_core.cache.module_key import ModuleKey, module_key
from ppy_core.compiler.cached import cache_for
from ppy_core.compiler.frontend.sites import Target
from ppy_core.runtime.observed import SPECS, recorded, spec_id


def signature_names(key: ModuleKey, function: str) -> tuple[str, ...]:
    """What a signature describes, in its order: the parameters as the dispatcher
    binds them, then (a method) the `self` attributes it reads (`self.P`)."""
    from ppy_core.compiler.frontend.sites import _named
    from ppy_core.compiler.frontend.source import read_source
    from ppy_core.compiler.frontend.specializable import observed_attributes, plain_parameters

    tree = read_source(key.path, key.source).tree
    for stmt in tree.body:
        found = _named(stmt, function)
        if found is None:
            continue
        names = plain_parameters(found) or ()
        if "." not in function or not names:
            return names
        attributes = observed_attributes(found, names[0])
        return (*names, *(f"{names[0]}.{a}" for a in attributes))
    return ()


def build(source: str, function: str, signature: tuple[Any, ...]) -> Path | None:
    """The entry folder of `function`'s specialization for `signature`, from the cache
    or compiled now; None when the module cannot be keyed (then Python answers)."""
    key = module_key(Path(source).resolve())
    return build_for(key, function, signature)


def build_for(key: ModuleKey, function: str, signature: tuple[Any, ...]) -> Path | None:
    from ppy_core.compiler.driver import Builder

    names = signature_names(key, function)
    if len(names) != len(signature):
        return None
    ident = spec_id(key.key, function, signature)
    cache = cache_for(key)
    entry = cache.lookup(ident)
    if entry is not None:
        return entry.path
    target = Target(
        function,
        dict(zip(names, signature, strict=True)),
        suffix=f"@{ident[1:9]}",
        prefix=f"__ppy_{ident[1:11]}_",
        signature=signature,
    )
    builder = Builder(key, target)
    entry = cache.store(
        ident, builder.build, source_id=f"{key.path}:{function}", components=key.components
    )
    return entry.path


def include_recorded(key: ModuleKey, module_dir: Path) -> int:
    """Compile (or take from the cache) every specialization recorded for the module
    and copy each into `module_dir/specs/<id>/`, where the artifact's dispatchers look;
    the number recorded (what `ppy run` compares to know the artifact is current)."""
    count = 0
    for function, signatures in recorded(str(key.path)).items():
        for signature in signatures:
            count += 1
            entry = build_for(key, function, signature)
            if entry is None:
                continue
            target = module_dir / SPECS / spec_id(key.key, function, signature)
            if not target.exists():
                shutil.copytree(entry, target)
    return count


__all__ = ["build", "build_for", "include_recorded"]
