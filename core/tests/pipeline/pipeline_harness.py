"""Helpers of the pipeline tests: run programs as `python FILE`, `ppy FILE`,
`ppy run FILE` and a built launcher, in fresh processes, with the test-only
`vecmath` plugin and `pyloop` backend (core/tests/testkit) on the path.

Every process gets PPY_CACHE_DIR under a tmp dir (one cache per test module:
`harness`), and no PPY_* variable of the caller's environment.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

CORE = Path(__file__).resolve().parents[2]
REPO = CORE.parent
TESTKIT = CORE / "tests" / "testkit"
# The test project: the vecmath plugin on, and only the pyloop backend (the workspace
# venv has real backends installed too; they are not what these tests are about).
VECMATH_ON = """\
[tool.ppy]
backends = ["pyloop"]

[tool.ppy.plugins.vecmath]
enabled = true
"""

# What a compiled run leaves in sys.modules and `ppy run` must not.
COMPILER_PROBE = (
    "sorted(m for m in sys.modules if m.startswith(('ppy_core.compiler.frontend', "
    "'ppy_core.compiler.passes', 'ppy_core.compiler.driver', 'llvmlite')))"
)

# The ways of running a program, in the order three_ways returns them.
WAYS = ("python", "ppy", "run", "launcher")


def _ppy_command() -> list[str]:
    script = Path(sys.executable).with_name("ppy")
    if script.is_file():
        return [str(script)]
    found = shutil.which("ppy")
    return [found] if found else [sys.executable, "-m", "ppy_core.cli"]


PPY = _ppy_command()


def write(folder: Path, files: Mapping[str, str]) -> Path:
    """Write `files` (name -> dedented text) into `folder`; return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def stats_table(stderr: str) -> dict[str, tuple[int, str]]:
    """The PPY_STATS=1 table printed at exit: site id -> (fast calls, fallbacks text)."""
    rows: dict[str, tuple[int, str]] = {}
    lines = stderr.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("ppy stats:"))
    except StopIteration:
        return rows
    for line in lines[start + 1 :]:
        match = re.match(r"^  (\S+)\s+(\d+)   (.*)$", line)
        if match is None:
            break
        rows[match[1]] = (int(match[2]), match[3])
    return rows


def user_stderr(stderr: str) -> str:
    """stderr without the one line `ppy run` adds when it (re)builds the artifact."""
    return "".join(line for line in stderr.splitlines(True) if not line.startswith("ppy: built "))


@dataclass
class Harness:
    """Runs programs in fresh processes against one cache."""

    cache: Path
    tmp: Path

    def env(self, extra_path: Iterable[Path] = (), **variables: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PPY_")}
        env.pop("PYTHONPATH", None)
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in [*extra_path, TESTKIT])
        env["PPY_CACHE_DIR"] = str(self.cache)
        env.update(variables)
        return env

    def _run(
        self, cmd: list[str], cwd: Path | None, env: Mapping[str, str] | None, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cmd,
            cwd=cwd or self.tmp,
            env=dict(env or self.env()),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def python(
        self, file: Path, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self._run([sys.executable, str(file), *args], cwd or file.parent, env, 60)

    def ppy(
        self,
        *args: str | Path,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 60,
    ) -> subprocess.CompletedProcess[str]:
        return self._run([*PPY, *map(str, args)], cwd, env, timeout)

    def launcher(
        self,
        file: Path,
        *args: str,
        out: Path,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """`ppy build FILE -o out`, then `out/<stem> ARGS` (the built launcher)."""
        built = self.ppy("build", file, "-o", out, cwd=cwd or file.parent, env=env)
        assert built.returncode == 0, built.stderr
        return self._run([str(out / file.stem), *args], cwd or file.parent, env, 60)

    def three_ways(
        self, file: Path, *args: str, env: Mapping[str, str] | None = None, out: Path | None = None
    ) -> dict[str, subprocess.CompletedProcess[str]]:
        """The program run as `python FILE`, `ppy FILE`, `ppy run FILE`, and through
        its built launcher (DESIGN §7), each with `args`."""
        cwd = file.parent
        out = out or self.tmp / f"{file.stem}.artifact"
        return {
            "python": self.python(file, *args, cwd=cwd, env=env),
            "ppy": self.ppy(file, *args, cwd=cwd, env=env),
            "run": self.ppy("run", file, *args, cwd=cwd, env=env),
            "launcher": self.launcher(file, *args, out=out, cwd=cwd, env=env),
        }


# -- throwaway distributions ----------------------------------------------------------------


def dist(
    root: Path,
    name: str,
    version: str,
    entry_points: Mapping[str, Mapping[str, str]],
    files: Mapping[str, str],
) -> Path:
    """A distribution in `root` (put `root` on PYTHONPATH): a real `*.dist-info` with
    METADATA and entry_points.txt, and its package files (path -> source)."""
    info = root / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    text = ""
    for group, entries in entry_points.items():
        text += f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in entries.items())
    (info / "entry_points.txt").write_text(text)
    write(root, files)
    return root


# A plugin like vecmath whose `operator` hook raises on `-` (and only there).
RAISING_PLUGIN = """\
from ppy_testkit.plugin import VecmathPlugin


class HalfPlugin(VecmathPlugin):
    name = "halfvec"

    def fingerprint(self):
        return "v1:halfvec"

    def operator(self, ctx):
        if ctx.op == "Sub":
            raise RuntimeError("halfvec has no idea about Sub")
        return super().operator(ctx)


def create_plugin():
    return HalfPlugin()
"""

# Backends built on pyloop: `crashy` raises in lower; `wrong` compiles kernels whose
# results are off by one (so only PPY_VERIFY can tell).
BAD_BACKENDS = """\
from ppy_core.interface.backend import CompiledUnit
from ppy_testkit.backend import PyLoopBackend


class CrashBackend(PyLoopBackend):
    name = "crashy"

    def fingerprint(self):
        return "v1:crashy"

    def lower(self, func, ctx):
        raise RuntimeError("crashy cannot compile today")


class WrongBackend(PyLoopBackend):
    name = "wrong"

    def fingerprint(self):
        return "v1:wrong"

    def lower(self, func, ctx):
        unit = super().lower(func, ctx)
        return CompiledUnit("wrong", "badbackends:load_wrong", unit.files, unit.data)


def load_wrong(data, directory, fallback, record):
    from ppy_testkit.loader import load

    site = load(data, directory, fallback, record)
    kernel = site.kernel

    def off_by_one(n, *args):
        out = kernel(n, *args)
        return out + 1.0 if data["reduce"] else [v + 1.0 for v in out]

    site.kernel = off_by_one
    return site


class BatchyBackend(PyLoopBackend):
    # its whole-module lowering fails; site by site it works

    name = "batchy"

    def fingerprint(self):
        return "v1:batchy"

    def lower_module(self, funcs, ctx):
        raise RuntimeError("batchy cannot batch today")


class BatchedBackend(PyLoopBackend):
    # lowers a module's sites in one call (and says so in each unit)

    name = "batched"
    batches = 0

    def fingerprint(self):
        return "v1:batched"

    def lower_module(self, funcs, ctx):
        from dataclasses import replace

        units = []
        for i, func in enumerate(funcs):
            unit = self.lower(func, replace(ctx, site_id=f"{ctx.site_id}.{i}"))
            units.append(CompiledUnit("batched", unit.loader, unit.files,
                                      {**unit.data, "batch": len(funcs)}))
        return units


def create_batchy():
    return BatchyBackend()


def create_batched():
    return BatchedBackend()


def create_crashy():
    return CrashBackend()


def create_wrong():
    return WrongBackend()
"""
