"""What raises when its line runs, found in annotated and unannotated code alike: names
no scope defines (E1020), imports of modules (E1021) and names (E1022) that do not
exist, module attributes that do not exist (E1023), calls of the project's functions,
classes and methods whose arguments do not bind (E1024), attributes an instance of a
project class cannot have (E1025); under strict, what stays unknown (E1026).

The files are parsed and their symbol tables built once per run, for all of them
together (a call in one module is checked against a `def` in another; the checks
are `passes`). The findings are cached for the whole set of files under their sizes
and mtimes, with every module file and folder read from the installed packages, so
a warm run reads no source at all, nor imports the checks.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from ppy_core.compiler.check import flatten, parse
from ppy_core.diagnostics import Diagnostic

FORMAT = 2  # of a cached entry; bump when the rules change
#: the files this pass reads: Python, and PPy's own modules (Python syntax, imported
#: beside `.py` ones)
SUFFIXES = (".py", ".ppy")


def runtime_findings(
    paths: Sequence[Path], roots: tuple[Path, ...] = (), strict: frozenset[Path] = frozenset()
) -> list[Diagnostic]:
    """The findings over `paths` (`.py` and `.ppy` files), from the cache when
    unchanged; in the files of `strict`, a note (E1026) for each thing left unknown."""
    files = [p for p in paths if p.suffix in SUFFIXES]
    key = _key(files, strict)
    cached = _load(key)
    if cached is not None:
        return cached
    findings, read = _check(files, roots, strict)
    _store(key, findings, read)
    return findings


#: from how many files the checks run in a forked process beside the per-file typing
FORK_FROM = 8


def start(
    paths: Sequence[Path], roots: tuple[Path, ...] = (), strict: frozenset[Path] = frozenset()
) -> Callable[[], list[Diagnostic]]:
    """Begin the checks of `paths`; the function returned waits for their findings.
    Cached, they are there at once; else, for a project of some size, a forked process
    runs them while the caller types its files (the machine's second core), sending
    its findings back pickled through a pipe (it computes them itself if that fails)."""
    files = [p for p in paths if p.suffix in SUFFIXES]
    key = _key(files, strict)
    cached = _load(key)
    if cached is not None:
        return lambda: cached
    _parse_all(paths)  # (before the fork: both processes read these trees)

    def here() -> list[Diagnostic]:
        findings, read = _check(files, roots, strict)
        _store(key, findings, read)
        return findings

    if len(files) < FORK_FROM or not hasattr(os, "fork") or (os.cpu_count() or 1) < 2:
        return here
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: check, store, send, and leave without running exit hooks
        os.close(readable)
        try:
            data = pickle.dumps(here())
        except BaseException:
            data = b""
        with os.fdopen(writable, "wb") as out:
            out.write(data)
        os._exit(0)
    os.close(writable)

    def wait() -> list[Diagnostic]:
        with os.fdopen(readable, "rb") as pipe:
            data = pipe.read()
        os.waitpid(pid, 0)
        try:
            return pickle.loads(data) if data else here()
        except (pickle.UnpicklingError, EOFError, AttributeError, TypeError):
            return here()

    return wait


def _parse_all(paths: Sequence[Path]) -> None:
    """Each file parsed and walked once (`parse` keeps its tree under its bytes), for
    this pass and the per-file one; a warm check, its findings cached, parses none."""
    for path in paths:
        try:
            flatten(parse(path.read_bytes(), str(path)))
        except (OSError, SyntaxError, ValueError):
            continue  # (each pass reports it in its own way)


def _check(
    paths: list[Path], roots: tuple[Path, ...], strict: frozenset[Path] = frozenset()
) -> tuple[list[Diagnostic], set[Path]]:
    """The findings (and every file read for them); the checks imported only here."""
    from ppy_core.compiler.check.passes import check_files

    return check_files(paths, roots, strict)


# -- the cache ------------------------------------------------------------------------
def _stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "none"
    return f"{st.st_size}@{st.st_mtime_ns}"


def _key(paths: list[Path], strict: frozenset[Path] = frozenset()) -> str:
    from ppy_core.compiler.check.quick import _code_id

    document = {
        "format": FORMAT,
        "strict": sorted(str(p) for p in strict),
        "core code": _code_id("ppy_core"),
        "python": sys.version,
        "path": sys.path,
        "files": [[str(p), _stamp(p)] for p in paths],
    }
    return hashlib.sha256(json.dumps(document).encode()).hexdigest()[:32]


def _entry(key: str) -> Path | None:
    from ppy_core.compiler.check import _entry as entry

    return entry(f"runtime-{key}")


def _load(key: str) -> list[Diagnostic] | None:
    from ppy_core.compiler.check import _cached

    entry = _entry(key)
    if entry is None or not entry.is_file():
        return None
    try:
        document = json.loads(entry.read_text())
        if any(_stamp(Path(p)) != s for p, s in document["read"].items()):
            return None  # an installed package changed, or a module appeared
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    rows = entry.with_suffix(".rows")
    return _cached(rows) if rows.is_file() else None


def _store(key: str, findings: list[Diagnostic], read: set[Path]) -> None:
    from ppy_core.compiler.check import _publish, _row

    entry = _entry(key)
    if entry is None:
        return
    _publish(entry.with_suffix(".rows"), json.dumps([_row(d) for d in findings]))
    _publish(entry, json.dumps({"read": {str(p): _stamp(p) for p in sorted(read)}}))


__all__ = ["runtime_findings", "start"]
