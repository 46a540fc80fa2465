"""Build progress on stderr: only where someone watches it.

`ppy FILE`, `ppy run FILE` and the program print the same stdout and, on a warm
cache, the same stderr as `python FILE`; what ppy says about building goes to stderr
only when stderr is a terminal, or with `-v`. On a terminal, a build that takes
longer than `FIRST_S` shows one line, redrawn in place every `REDRAW_S` with what it
is doing (`ppy_core.interface.progress.status`: ``typing functions 340/1250``) and
for how long, and erased when the build is done: nothing of it stays on the screen,
and nothing reaches a pipe or a log. With `-v` the build says the same in lines that
stay (a first one after `FIRST_S`, another every `EVERY_S`, and how long it took). A
quick build (a cache hit) says nothing at all.
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

FIRST_S = 1.0
EVERY_S = 5.0
REDRAW_S = 0.2  # the terminal's line: often enough to count, seldom enough to cost nothing
#: clear the terminal's current line and go to its start (VT100, every terminal since)
ERASE = "\r\x1b[2K"
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


def live(verbose: bool = False) -> bool:
    """Whether progress is one line redrawn in place: stderr a terminal that takes
    VT100 codes, and no `-v` (whose lines stay, for a log)."""
    if verbose or VERBOSE or os.environ.get("TERM") == "dumb":
        return False
    return wanted()


@contextlib.contextmanager
def progress(what: str, *, verbose: bool = False) -> Iterator[None]:
    """Around a step that may be long (a compile, a C++ build): on a terminal, once
    it has taken FIRST_S, `ppy: WHAT: STEP, N s` redrawn in place until it ends, then
    erased; with `-v`, `ppy: WHAT ...`, every EVERY_S how long so far, and at the end
    how long it took; else nothing."""
    if not wanted(verbose):
        yield
        return
    from ppy_core.interface import progress as steps

    steps.clear()
    start = time.monotonic()
    done = threading.Event()
    spoke = threading.Event()
    inline = live(verbose)

    def beat() -> None:
        wait = FIRST_S
        while not done.wait(wait):
            elapsed = time.monotonic() - start
            if inline:
                sys.stderr.write(ERASE + fitted(f"ppy: {what}", steps.status(), elapsed))
                wait = REDRAW_S
            else:
                text = f"{what} ..." if not spoke.is_set() else f"{what}: {elapsed:.0f} s so far"
                sys.stderr.write(f"ppy: {text}\n")
                wait = EVERY_S
            sys.stderr.flush()
            spoke.set()

    thread = threading.Thread(target=beat, name="ppy-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        steps.clear()
        if spoke.is_set() and inline:
            sys.stderr.write(ERASE)  # gone: the program's own output starts a clean line
            sys.stderr.flush()
        elif spoke.is_set():
            say(f"{what}: done in {time.monotonic() - start:.1f} s", verbose=True)


def fitted(head: str, status: str, elapsed: float) -> str:
    """``HEAD: STATUS, N s``, cut to the terminal's width: a line that wrapped could not
    be redrawn in place."""
    text = f"{head}: {status}, {elapsed:.0f} s" if status else f"{head}, {elapsed:.0f} s"
    try:
        width = os.get_terminal_size(sys.stderr.fileno()).columns or 80  # 0: not told
    except (AttributeError, OSError, ValueError):
        width = 80
    return text if len(text) < width else text[: max(width - 4, 1)] + "..."


__all__ = [
    "ERASE",
    "EVERY_S",
    "FIRST_S",
    "REDRAW_S",
    "VERBOSE",
    "fitted",
    "live",
    "progress",
    "say",
    "wanted",
]
