"""Room for deep trees: a module's build runs on a thread with a large stack.

Python's parser accepts expressions nested far deeper than its default recursion
limit (1,000 frames) lets a recursive walker follow: a 1,000-term sum is a left-deep
tree of 1,000 `BinOp`s, and `ast.unparse`, the site finder, the IR builder, the
passes and the printer each recurse once or more per level. So the build runs on a
thread whose stack holds `LIMIT` frames, with the recursion limit raised to `LIMIT`
while it runs; a tree deeper still raises `RecursionError` inside one function or
site, which the driver turns into that function staying Python with one warning;
a site longer than `MAX_SITE_OPS` operations stays Python with one warning too.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: frames a build may nest (a tree of ~8,000 levels compiles); the stack below fits
#: them with room for C frames (generator expressions, `any`, `sorted` keys)
LIMIT = 40_000
STACK_BYTES = 512 * 1024 * 1024  # reserved address space; pages are touched as used

#: operations one expression site may have: past it the site stays Python (E0010). A
#: kernel's machine code generation is superlinear in its size (a 1,000-term sum's
#: ~3,000 operations take LLVM over 30 s; 600 take 2 s), and a tree that long is rare
#: enough that Python's speed on it is the better trade than a minute's compile.
MAX_SITE_OPS = 1024

_LOCK = threading.Lock()  # one deep build at a time changes the process's limit


def run_deep(fn: Callable[[], T]) -> T:
    """`fn()` on a thread with a large stack and a raised recursion limit; its result,
    or what it raised, re-raised here. Already on such a thread: just `fn()`."""
    if getattr(_LOCAL, "deep", False):
        return fn()
    outcome: list[T] = []
    failure: list[BaseException] = []
    context = contextvars.copy_context()  # the caller's settings (the cache root in force)

    def body() -> None:
        _LOCAL.deep = True
        try:
            outcome.append(context.run(fn))
        except BaseException as exc:  # re-raised on the caller's thread
            failure.append(exc)

    with _LOCK:
        previous_stack = threading.stack_size()
        previous_limit = sys.getrecursionlimit()
        try:
            threading.stack_size(STACK_BYTES)
            thread = threading.Thread(target=body, name="ppy-build", daemon=True)
        finally:
            threading.stack_size(previous_stack)
        sys.setrecursionlimit(max(previous_limit, LIMIT))
        try:
            thread.start()
            thread.join()
        finally:
            sys.setrecursionlimit(previous_limit)
    if failure:
        raise failure[0]
    return outcome[0]


_LOCAL = threading.local()

__all__ = ["LIMIT", "MAX_SITE_OPS", "run_deep"]
