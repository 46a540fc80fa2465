"""The build: cache hits start no compiler, failures name their log, fallbacks warn once."""

from __future__ import annotations

import json
import os
import shutil
import socket
import time
from pathlib import Path
from typing import Any

import pytest
import regions
import torch

from ppy_torch import direct, runtime, toolchain
from ppy_torch.build import RegionBuilder, build_lock, write_if_changed
from ppy_torch.errors import RegionBuildError, RegionWarning


def test_write_if_changed(tmp_path: Path) -> None:
    path = tmp_path / "a.cpp"
    assert write_if_changed(path, "x") is True
    stamp = path.stat().st_mtime_ns
    assert write_if_changed(path, "x") is False
    assert path.stat().st_mtime_ns == stamp


def test_stale_lock_is_broken(tmp_path: Path) -> None:
    dead = {"pid": 2**22 + 12345, "host": socket.gethostname(), "time": time.time()}
    (tmp_path / ".lock").write_text(json.dumps(dead))
    start = time.monotonic()
    with build_lock(tmp_path):
        assert time.monotonic() - start < 1.0  # broken at once, not after an expiry
        assert (tmp_path / ".lock").is_file()
    assert not (tmp_path / ".lock").exists()


def test_missing_compiler_falls_back_with_one_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    monkeypatch.setattr(direct, "_backend", None)
    toolchain.reset()
    try:
        assert "C++ compiler" in (direct.backend().toolchain_ready() or "")
        with pytest.warns(RegionWarning, match=r"missing a C\+\+ compiler.*\[E2003\]"):
            fn = direct.compile_function(regions.layer)
        assert fn is regions.layer
    finally:
        toolchain.reset()


@pytest.mark.needs_cc
def test_warm_build_starts_no_compiler(
    compiled: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(direct, "_backend", None)
    import subprocess

    def forbid(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(subprocess, "run", forbid)
    built = direct.compile_functions(regions.REGIONS)
    assert direct.backend().last_build is not None
    assert direct.backend().last_build.compiled is False
    assert built[0].__ppy_region__ is True


@pytest.mark.needs_cc
def test_failed_build_names_source_and_log(compiled: dict[str, Any]) -> None:
    builder = RegionBuilder()
    with pytest.raises(RegionBuildError) as info:
        builder.build_module("ppy_aten_broken", '#include "ppy_aten_prelude.h"\nnot c++;\n')
    message = str(info.value)
    assert info.value.code == "E2002"
    assert "region.cpp" in message
    assert "build.log" in message
    log = Path(message.split("build log ")[1].split()[0])
    assert "error" in log.read_text()


@pytest.mark.needs_cc
def test_missing_library_falls_back(compiled: dict[str, Any], tmp_path: Path) -> None:
    be = direct.backend()
    from ppy_core.interface.backend import LowerContext
    from ppy_torch.plugin import stage_spec  # noqa: F401 (the graph comes from the plugin)

    units = be.lower_module(
        [
            direct._stage(
                direct._function_node(regions.residual),
                direct.imports_of_globals(vars(regions)),
                "",
            ).graph
        ],  # type: ignore[union-attr]
        LowerContext(site_id="residual", build_dir=tmp_path),
    )
    data = units[0].data
    assert runtime.load_region(data, tmp_path, regions.residual).__ppy_region__ is True
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.move(str(tmp_path / data["file"]), moved / data["file"])
    with pytest.warns(RegionWarning, match=r"missing.*\[E3004\]"):
        fn = runtime.load_region(data, tmp_path, regions.residual)
    assert fn is regions.residual
    x = torch.randn(3)
    assert torch.equal(fn(x, x), regions.residual(x, x))
    assert os.path.isfile(moved / data["file"])
