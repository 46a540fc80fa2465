"""The `aten` backend: a module's region graphs become one C++ extension.

`lower_module` is the real entry (one source and one build per module); `lower`
handles one region the same way. The result is a `CompiledUnit` per region whose
loader, `ppy_torch.runtime:load_region`, imports no compiler code.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from ppy_core.cache import verified_copy
from ppy_core.interface.backend import Backend, CompiledUnit, LowerContext
from ppy_torch import codegen, toolchain
from ppy_torch.build import BuildResult, RegionBuilder
from ppy_torch.errors import BUILD_FAILED, RegionBuildError
from ppy_torch.graph import RegionGraph

LOADER = "ppy_torch.runtime:load_region"


class AtenBackend(Backend):
    """Lowers `RegionGraph`s (the `aten` GraphRegionSpec payload) to a pybind11 extension."""

    name: ClassVar[str] = "aten"
    version: ClassVar[str] = "1"
    modules: ClassVar[tuple[str, ...]] = ("torch",)

    def __init__(self, cache_root: Path | None = None) -> None:
        self._cache_root = cache_root
        self._builder: RegionBuilder | None = None
        self.last_build: BuildResult | None = None

    def fingerprint(self) -> str:
        build = toolchain.torch_build()
        tools = toolchain.toolchain()
        return f"v{self.version}:aten:{build.fingerprint}:cxx={tools.cxx_id or 'none'}"

    def detected(self) -> Mapping[str, str]:
        build = toolchain.torch_build()
        tools = toolchain.toolchain()
        return {
            "torch": build.version,
            "cuda": build.cuda or "none",
            "cxx": tools.cxx_id or "-",
            "ninja": tools.ninja or "-",
            "missing": ", ".join(tools.missing) or "nothing",
        }

    def toolchain_ready(self) -> str | None:
        missing = toolchain.toolchain().missing
        return "missing " + ", ".join(missing) if missing else None

    def can_lower(self, func: Any) -> str | None:
        return None if isinstance(func, RegionGraph) else "the aten backend lowers region graphs"

    def builder(self) -> RegionBuilder:
        if self._builder is None:
            self._builder = RegionBuilder(self._cache_root)
        return self._builder

    def lower(self, func: Any, ctx: LowerContext) -> CompiledUnit:
        return self.lower_module([func], ctx)[0]

    def lower_module(self, graphs: Sequence[RegionGraph], ctx: LowerContext) -> list[CompiledUnit]:
        """Build all of a module's regions as one extension; one unit per region."""
        for graph in graphs:
            reason = self.can_lower(graph)
            if reason:
                raise RegionBuildError(reason, code=BUILD_FAILED)
        builder = self.builder()
        text = "\n".join(g.text() for g in graphs)
        key = hashlib.sha256("\n".join([builder.key, text]).encode()).hexdigest()
        module = builder.module_name(key)
        result = builder.build_module(module, codegen.module_source(module, graphs))
        self.last_build = result
        build_dir = Path(ctx.build_dir)
        build_dir.mkdir(parents=True, exist_ok=True)
        dest = build_dir / result.path.name
        if dest.resolve() != result.path.resolve() and not _same_file(dest, result.path):
            tmp = dest.with_name(f".{dest.name}.tmp")
            verified_copy(result.path, tmp)  # checked against its recorded hash first
            os.replace(tmp, dest)  # never truncate a library a process may have mapped
        version = toolchain.torch_build().version
        return [
            CompiledUnit(
                backend=self.name,
                loader=LOADER,
                files=(dest.name,),
                data={
                    "module": module,
                    "file": dest.name,
                    "function": g.name,
                    "torch": version,
                    "effects": sorted(g.effects),
                    "graph": g.text(),
                    **({"sources": [list(s) for s in g.sources]} if g.sources else {}),
                },
            )
            for g in graphs
        ]


def _same_file(a: Path, b: Path) -> bool:
    try:
        sa, sb = a.stat(), b.stat()
    except OSError:
        return False
    return sa.st_size == sb.st_size and sa.st_mtime_ns == sb.st_mtime_ns


__all__ = ["AtenBackend", "LOADER"]
