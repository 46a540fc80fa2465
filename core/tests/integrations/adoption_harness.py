"""A throwaway project with a package, run in fresh interpreters under a cache of its
own (imported by the test modules of this folder)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

PPY = str(Path(sys.executable).with_name("ppy"))


@dataclass
class Project:
    root: Path
    cache: Path

    def write(self, files: Mapping[str, str]) -> None:
        for relative, text in files.items():
            path = self.root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text), encoding="utf-8")

    def env(self, path: bool, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PPY_")}
        env.pop("PYTHONPATH", None)
        env.update(PPY_CACHE_DIR=str(self.cache), **extra)
        if path:
            env["PYTHONPATH"] = str(self.root)
        return env

    def run(self, *argv: str, path: bool = True, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv),
            cwd=self.root,
            env=self.env(path, **extra),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def python(self, code: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return self.run(sys.executable, "-c", textwrap.dedent(code), **extra)

    def ppy(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        """The `ppy` command, with no PYTHONPATH: what it finds, it finds itself."""
        return self.run(PPY, *args, path=False, **extra)
