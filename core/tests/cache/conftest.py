"""Fixtures of the cache tests: a cache in a tmp dir, a fresh per-process memo,
and a helper that runs `Cache.store` in a separate Python process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ppy_core.cache import files as _cache_files
from ppy_core.cache import store as cache
from ppy_core.cache.store import Cache

CORE = Path(cache.__file__).resolve().parents[1]

# argv: root key build_log delay_s go_file ready_file lock_timeout
STORE_SCRIPT = """
import json, os, sys, time
from pathlib import Path
from ppy_core.cache.store import Cache
root, key, build_log, delay, go, ready, timeout = sys.argv[1:8]

def build(tmp):
    with open(build_log, "a") as f:
        f.write(f"{os.getpid()}\\n")
    time.sleep(float(delay))
    (tmp / "kernel.o").write_bytes(b"k" * 4096)
    return {"builder": os.getpid()}

Path(ready).touch()
while go and not os.path.exists(go):
    time.sleep(0.005)
c = Cache(Path(root), lock_timeout=float(timeout))
e = c.store(key, build, source_id="/src/m.ppy", components={"source": "s1"})
print(json.dumps({"path": str(e.path), "meta": dict(e.meta)}))
"""


def build_files(
    files: dict[str, bytes], meta: dict[str, object] | None = None, calls: list[Path] | None = None
) -> Callable[[Path], dict[str, object]]:
    """A build function writing `files` (relative paths) and returning `meta`."""

    def build(tmp: Path) -> dict[str, object]:
        if calls is not None:
            calls.append(tmp)
        for rel, data in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)
        return dict(meta or {"kind": "test"})

    return build


@pytest.fixture(autouse=True)
def fresh_process() -> Iterator[None]:
    """Each test starts as a new process would: nothing hashed, nothing warned."""
    _cache_files.VERIFIED.clear()
    cache._WARNED.clear()
    yield
    _cache_files.VERIFIED.clear()
    cache._WARNED.clear()


@pytest.fixture
def store_cache(tmp_path: Path) -> Cache:
    return Cache(tmp_path / "cache", max_bytes=10**9, lock_timeout=30.0)


class Storer:
    """Starts `Cache.store` in child processes that wait for one 'go' file."""

    def __init__(self, root: Path, work: Path) -> None:
        self.root, self.work = root, work
        self.build_log = work / "builds.log"
        self.go = work / "go"
        self.env = {**os.environ, "PYTHONPATH": str(CORE)}

    def start(
        self, key: str, delay: float, *, wait_go: bool = True, timeout: float = 30.0
    ) -> subprocess.Popen[str]:
        ready = self.work / f"ready.{time.monotonic_ns()}"
        args = [
            sys.executable,
            "-c",
            STORE_SCRIPT,
            str(self.root),
            key,
            str(self.build_log),
            str(delay),
            str(self.go) if wait_go else "",
            str(ready),
            str(timeout),
        ]
        proc = subprocess.Popen(
            args, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        wait_until(ready.exists, proc=proc)
        return proc

    def builds(self) -> list[str]:
        return self.build_log.read_text().split() if self.build_log.exists() else []


def wait_until(
    predicate: Callable[[], bool], *, proc: subprocess.Popen[str] | None = None, limit: float = 10.0
) -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"child exited early: {proc.communicate()}")
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.005)


@pytest.fixture
def storer(tmp_path: Path) -> Storer:
    return Storer(tmp_path / "cache", tmp_path)


@pytest.fixture
def make_build() -> Callable[..., Callable[[Path], dict[str, object]]]:
    return build_files


@pytest.fixture
def wait() -> Callable[..., None]:
    return wait_until
