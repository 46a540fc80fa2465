"""Run the torch examples as a user would: `python FILE`, `ppy FILE`, `ppy run FILE`,
each in a fresh process, and compare their outputs with the timing lines left out.

Each test module gets its own PPY_CACHE_DIR (compiled modules, `ppy run` artifacts),
whose `torch/` and `llvm/` folders are links to the real cache's: the precompiled
header and built regions are shared, never rebuilt per test run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"
WAYS = ("python", "ppy", "run")
_NUMBER_BEFORE_UNIT = re.compile(r"\s*[0-9][0-9.]*(\s*(?:us|ms|s)(?:/call|/step|/forward)?\b)")


def ppy_command() -> list[str]:
    script = Path(sys.executable).with_name("ppy")
    if script.is_file():
        return [str(script)]
    found = shutil.which("ppy")
    return [found] if found else [sys.executable, "-m", "ppy_core.cli"]


def shared_cache(tmp: Path) -> Path:
    """A fresh cache folder sharing the real cache's C++ builds (see the module doc)."""
    from ppy_core.cache import cache_root

    real = cache_root()
    cache = tmp / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    for sub in ("torch", "llvm"):
        (real / sub).mkdir(parents=True, exist_ok=True)
        link = cache / sub
        if not link.exists():
            link.symlink_to(real / sub, target_is_directory=True)
    return cache


@dataclass
class Runner:
    """Runs example programs against one cache."""

    cache: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PPY_")}
        env.pop("PYTHONPATH", None)
        env["PPY_CACHE_DIR"] = str(self.cache)
        env["PYTHONUNBUFFERED"] = "1"
        env.update(extra)
        return env

    def run(
        self, cmd: list[str], cwd: Path, timeout: float = 600, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            cmd,
            cwd=cwd,
            env=dict(env or self.env()),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
        return done

    def way(
        self,
        way: str,
        file: Path,
        *args: str,
        timeout: float = 600,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        head = {"python": [sys.executable], "ppy": ppy_command(), "run": [*ppy_command(), "run"]}[
            way
        ]
        return self.run([*head, str(file), *args], file.parent, timeout, env)

    def three_ways(
        self, file: Path, *args: str, timeout: float = 600, env: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """stdout of each way, in WAYS order."""
        return {way: self.way(way, file, *args, timeout=timeout, env=env).stdout for way in WAYS}


def comparable(stdout: str) -> list[str]:
    """The lines that must agree: timing lines (`#` first) left out, and any number
    given with a time unit (`3.404 us/call`) masked."""
    return [
        _NUMBER_BEFORE_UNIT.sub(r" <t>\1", line)
        for line in stdout.splitlines()
        if not line.startswith("#")
    ]


def assert_agree(outputs: Mapping[str, str]) -> None:
    first, *rest = outputs
    for way in rest:
        assert comparable(outputs[way]) == comparable(outputs[first]), (
            f"`{way}` and `{first}` disagree:\n--- {first}\n{outputs[first]}\n--- {way}\n"
            f"{outputs[way]}"
        )
