"""The hand-written reference extension of the 8x32 ATen region benchmark.

`load()` builds `layer.cpp` exactly the way a region is built (the `aten` backend's
`RegionBuilder`: the same compiler, flags, precompiled prelude and link line, cached
under the same root by a hash of the source) and imports it, so region and reference
differ only in the code a call runs, not in how it was compiled.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


def load() -> ModuleType:
    """The built reference module (`layer(x, w, b)`); a cache hit compiles nothing."""
    from ppy_torch.build import RegionBuilder
    from ppy_torch.runtime import load_extension

    text = (HERE / "layer.cpp").read_text(encoding="utf-8")
    name = "ppy_reference_" + hashlib.sha256(text.encode()).hexdigest()[:16]
    builder = RegionBuilder()
    built = builder.build_module(name, text.replace("@MODULE@", name))
    return load_extension(name, built.path)


__all__ = ["load"]
