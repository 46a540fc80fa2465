"""A built artifact refuses its compiled parts against another library build, says so
once, and still runs (as Python); a missing kernel file is one warning, not a crash."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline_harness import VECMATH_ON, Harness, stats_table, write

from ppy_core.cache.files import sha256_file

PROG = """\
from vecmath import Vec


def fused(a: Vec, b: Vec) -> Vec:
    return a * b + 1.0


print(fused(Vec([1.0, 2.0]), Vec([3.0, 4.0])))
"""


def _build(harness: Harness, name: str) -> tuple[Path, Path]:
    project = write(harness.tmp / name, {"pyproject.toml": VECMATH_ON, "prog.ppy": PROG})
    out = harness.tmp / f"{name}.artifact"
    built = harness.ppy("build", project / "prog.ppy", "-o", out, cwd=project)
    assert built.returncode == 0, built.stderr
    return project, out


def test_another_library_build_falls_back_with_one_warning(harness: Harness) -> None:
    project, out = _build(harness, "fp")
    module = out / "modules" / "__main__" / "manifest.json"
    manifest = json.loads(module.read_text())
    manifest["components"]["plugin:vecmath"] = "v1:vecmath=some-other-build"
    module.write_text(json.dumps(manifest))
    # as an artifact built against that build would record it (the hashes agree)
    top = json.loads((out / "manifest.json").read_text())
    top["files"]["modules/__main__/manifest.json"] = {
        "size": module.stat().st_size,
        "sha256": sha256_file(module),
    }
    (out / "manifest.json").write_text(json.dumps(top))
    ran = harness._run([str(out / "prog")], project, harness.env(PPY_STATS="1"), 60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "Vec([4.0, 9.0])\n"
    assert ran.stderr.count("[E3003]") == 1
    assert "some-other-build" in ran.stderr
    fast, fallbacks = stats_table(ran.stderr)["prog:fused.1"]
    assert fast == 0
    assert "library build changed" in fallbacks


def test_a_missing_kernel_file_falls_back_with_one_warning(harness: Harness) -> None:
    project, out = _build(harness, "gone")
    for kernel in (out / "modules" / "__main__").glob("*.pyloop.py"):
        kernel.unlink()
    ran = harness._run([str(out / "prog")], project, harness.env(PPY_STATS="1"), 60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "Vec([4.0, 9.0])\n"
    assert ran.stderr.count("[E3004]") == 1
    assert stats_table(ran.stderr)["prog:fused.1"][0] == 0
