"""How far a build has got, for the progress line a terminal shows (`cli.progress`).

The build side (the front end, the driver, a backend's long steps) says what it is
doing with `step` or `counted`; `cli.progress` draws the latest `status` while a cold
compile runs on a terminal. Nothing is drawn from here and nothing is kept but the
latest step: with no terminal watching, a step costs one assignment.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import TypeVar

    T = TypeVar("T")

#: (what, done, total) of the latest step: one tuple, replaced whole (threads read it)
_LATEST: list[tuple[str, int, int]] = [("", 0, 0)]


def step(what: str, done: int = 0, total: int = 0) -> None:
    """The build is at `what` (``"typing functions"``), `done` of `total` where counted."""
    _LATEST[0] = (what, done, total)


def counted(what: str, items: Sequence[T]) -> Iterator[T]:
    """`items`, saying `what` with how many are done as each one is taken."""
    total = len(items)
    for done, item in enumerate(items):
        _LATEST[0] = (what, done, total)
        yield item
    _LATEST[0] = (what, total, total)


def status() -> str:
    """The latest step: ``"typing functions 340/1250"``, ``"compiling kernels"``, or ''."""
    what, done, total = _LATEST[0]
    return f"{what} {done}/{total}" if what and total else what


def clear() -> None:
    """Forget the latest step (a build is over)."""
    _LATEST[0] = ("", 0, 0)


__all__ = ["clear", "counted", "status", "step"]
