"""The three ways an example runs (`python FILE`, `ppy FILE`, `ppy run FILE`), for a
distribution's example test: each must exit 0 without a traceback and print the same
lines apart from its `#` lines (timings, the machine, whether the fast path ran).
Re-exported by `ppy_core.testing` (the package); imports neither pytest nor any library."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class ThreeWays:
    """Each way's whole stdout, and its lines without the `#` ones (`kept`)."""

    stdout: dict[str, str]
    kept: dict[str, list[str]]

    def fast_sites(self, way: str) -> str:
        """The `# fast path: ...` line `way` printed ("" if none)."""
        return next((ln for ln in self.stdout[way].splitlines() if ln.startswith("# fast")), "")


def three_ways(example: Path, args: Sequence[str] = (), *, timeout: int = 600) -> ThreeWays:
    """Run `example` the three ways, in its folder, with the ppy of this interpreter;
    AssertionError if one fails, raises a traceback or prints other lines."""
    ppy = shutil.which("ppy", path=str(Path(sys.executable).parent)) or "ppy"
    commands = {"python": [sys.executable], "ppy": [ppy], "ppy run": [ppy, "run"]}
    stdout: dict[str, str] = {}
    for way, command in commands.items():
        done = subprocess.run(
            [*command, str(example), *args],
            capture_output=True,
            text=True,
            cwd=example.parent,
            env=dict(os.environ),
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, (way, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, (way, done.stderr)
        stdout[way] = done.stdout
    kept = {
        w: [ln for ln in out.splitlines() if not ln.startswith("#")] for w, out in stdout.items()
    }
    assert kept["ppy"] == kept["python"], (kept["ppy"], kept["python"])
    assert kept["ppy run"] == kept["python"], (kept["ppy run"], kept["python"])
    return ThreeWays(stdout, kept)


__all__ = ["ThreeWays", "three_ways"]
