"""Build progress on stderr: only where someone watches it.

`ppy FILE`, `ppy run FILE` and the program print the same stdout and, on a warm
cache, the same stderr as `python FILE`; what ppy says about building goes to stderr
only when stderr is a terminal, or with `-v`. A build that takes a while says what
it is doing while it does it: a first line after `FIRST_S`, another every `EVERY_S`,
and how long it took; a quick one (a cache hit) says nothing at all.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

FIRST_S = 0.5
EVERY_S = 5.0
#: `-v` anywhere before the file (`ppy -v FILE`, `ppy -v run FILE`): the whole process
VERBOSE = False


def wanted(verbose: bool = False) -> bool:
    """Whether to say anything: `-v` given, or stderr is a terminal."""
    if verbose or VERBOSE:
        return True
    try:
        return os.isatty(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):
        return False


def say(message: str, *, verbose: bool = False) -> None:
    """`ppy: MESSAGE` on stderr, when wanted."""
    if wanted(verbose):
        sys.stderr.write(f"ppy: {message}\n")
        sys.stderr.flush()


@contextlib.contextmanager
def progress(what: str, *, verbose: bool = False) -> Iterator[None]:
    """Around a step that may be long (a compile, a C++ build): when wanted and once
    it has taken FIRST_S, `ppy: WHAT ...`, then every EVERY_S how long so far, and at
    the end how long it took."""
    if not wanted(verbose):
        yield
        return
    start = time.monotonic()
    done = threading.Event()
    spoke = threading.Event()

    def beat() -> None:
        wait = FIRST_S
        while not done.wait(wait):
            elapsed = time.monotonic() - start
            text = f"{what} ..." if not spoke.is_set() else f"{what}: {elapsed:.0f} s so far"
            sys.stderr.write(f"ppy: {text}\n")
            sys.stderr.flush()
            spoke.set()
            wait = EVERY_S

    thread = threading.Thread(target=beat, name="ppy-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if spoke.is_set():
            say(f"{what}: done in {time.monotonic() - start:.1f} s", verbose=True)


__all__ = ["EVERY_S", "FIRST_S", "VERBOSE", "progress", "say", "wanted"]
