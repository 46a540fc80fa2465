"""Where `ppy build -o DIR` puts an artifact, and how it replaces an earlier one.

PPy never deletes what it did not make. DIR must be new, an empty folder, or an
artifact an earlier `ppy build` wrote there (it holds the marker file `MARKER`, the
user's own); anything else (a file, a folder holding other files, the folder being
worked in or one above it, the folder of the program itself) is refused with E3009
before anything is compiled. The artifact is built beside DIR under a unique name and
moved into place with one rename (an atomic exchange where the system has one), so
any number of builds may run at once: each succeeds, the last one's artifact stays,
and a reader sees a whole artifact, the old or the new, never a half-written one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from ppy_core.cache import trust
from ppy_core.diagnostics import CacheError

#: the file each artifact holds that says ppy made the folder (and may replace it)
MARKER = ".ppy-artifact"
_MARKER_TEXT = "made by `ppy build`: `ppy build -o` may replace this folder\n"


def _refuse(out: Path, why: str, hint: str) -> CacheError:
    return CacheError(f"{out}: {why}; nothing was written", code="E3009", hint=hint)


def ours(folder: Path) -> bool:
    """Whether `folder` is an artifact `ppy build` made: a real folder holding the
    marker, both the user's own."""
    try:
        st, marker = os.lstat(folder), os.lstat(folder / MARKER)
    except OSError:
        return False
    import stat

    return (
        stat.S_ISDIR(st.st_mode)
        and stat.S_ISREG(marker.st_mode)
        and not trust.owned_by_other(st)
        and not trust.owned_by_other(marker)
    )


def target(source: Path, output: str | None) -> Path:
    """The absolute folder `ppy build SOURCE -o OUTPUT` may write, or E3009."""
    out = Path(os.path.abspath(output)) if output else source.parent / f"{source.stem}.ppyapp"
    here = Path(os.path.abspath(os.getcwd()))
    other = "give -o a new folder (or an earlier artifact of `ppy build`)"
    if out == here or out in here.parents:
        raise _refuse(out, "is the folder you work in (or above it)", other)
    if out == source.parent or out in source.parents:
        raise _refuse(out, "holds the program itself", other)
    if os.path.islink(out) or (os.path.lexists(out) and not os.path.isdir(out)):
        what = "a link" if os.path.islink(out) else "a file"
        raise _refuse(out, f"is {what}, not a folder", f"{other}; or remove {out} yourself")
    if os.path.isdir(out) and os.listdir(out) and not ours(out):
        raise _refuse(
            out,
            "is a folder holding files `ppy build` did not make",
            f"{other}; or empty it yourself",
        )
    return out


def stage(out: Path) -> Path:
    """A new private folder beside `out` to build the artifact in (unique per build)."""
    trust_parent(out.parent)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".building", dir=out.parent))
    os.chmod(staging, trust.PRIVATE)
    (staging / MARKER).write_text(_MARKER_TEXT)
    trust.private_file(staging / MARKER)
    return staging


def trust_parent(folder: Path) -> None:
    """Create the folder the artifact goes in (missing parents: 0700, they are new)."""
    if not folder.is_dir():
        trust.private_dir(folder)


def publish(staging: Path, out: Path) -> None:
    """Move the finished `staging` to `out`: a rename onto a new or empty place, else
    an exchange with the earlier artifact there (then removed: ppy made it)."""
    for _attempt in range(16):
        try:
            os.rename(staging, out)  # onto nothing or an empty folder: atomic
            return
        except OSError:
            pass
        if not ours(out):  # made meanwhile by someone else, or not an artifact
            if os.path.isdir(out) and not os.listdir(out):
                continue
            raise _refuse(out, "was filled meanwhile with files `ppy build` did not make", "")
        if _exchange(staging, out):
            old = staging  # the earlier artifact, now under the staging name
        else:  # no atomic exchange here: out is missing for the time of two renames
            old = staging.with_name(staging.name + ".old")
            try:
                os.rename(out, old)
            except OSError:
                continue  # another build moved it first: try again
            try:
                os.rename(staging, out)
            except OSError:
                os.rename(old, out)  # put it back: the next attempt decides
                continue
        if ours(old):
            shutil.rmtree(old, ignore_errors=True)
        return
    raise _refuse(out, "could not be replaced (too many builds at once)", "run the build again")


def discard(staging: Path) -> None:
    """Remove a staging folder this build made and did not publish."""
    if staging.is_dir() and ours(staging):
        shutil.rmtree(staging, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders `a` and `b` atomically (Linux renameat2 RENAME_EXCHANGE)."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    with contextlib.suppress(Exception):
        done = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
        return bool(done == 0)
    return False


__all__ = ["MARKER", "discard", "ours", "publish", "stage", "target"]
