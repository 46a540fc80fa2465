"""Running a built artifact: what its launcher script calls. No compiler here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ppy_core.runtime.artifact import coded
from ppy_core.runtime.finder import ARTIFACT_ENV, install, use_manifest
from ppy_core.runtime.module import run_as_main, user_traceback

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def launch(root: Path, argv: list[str], manifest: dict[str, Any] | None = None) -> int:
    """Run the artifact in `root` as `python FILE ARGS` would run its program. Every
    file is checked against the size and sha256 its manifest records before any of it
    is read, executed or loaded: a file that fails is one coded warning and its piece
    runs as Python. An unusable manifest is a coded error (exit 1), never a traceback.
    `manifest`: the top manifest, when the caller has just `checked` it."""
    if manifest is None:
        try:
            manifest = checked(root)
        except Exception as exc:
            if not coded(exc):
                raise
            sys.stderr.write(exc.diagnostic.render() + "\n")  # type: ignore[attr-defined]
            return 1
    os.environ[ARTIFACT_ENV] = str(root)
    use_manifest(root, manifest)
    install()
    main = manifest["modules"][manifest["main"]]
    from ppy_core.cache.records import project_root
    from ppy_core.cache.root import using_root

    with using_root(project_root(main["source"])):  # the records of its project's cache
        return run_main(
            root / main["dir"],
            argv,
            {m["source"] for m in manifest["modules"].values()},
            check=True,
            source=main["source"],
        )


def checked(root: Path) -> dict[str, Any]:
    """The artifact's top manifest (CacheError E3005 when unusable or not the user's),
    after checking every file it records (`integrity`): each module folder is marked
    with its files that passed; one E3004 warning names those that did not."""
    manifest, bad = inspect(root)
    from ppy_core.runtime import integrity

    if [integrity.report(root / rel) for rel in bad].count(True):
        import warnings

        from ppy_core.runtime.module import ArtifactWarning

        rel, why = next(iter(sorted(bad.items())))
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        warnings.warn(
            f"ppy: {root}: file {rel}{more} fails its check ({why}); it is not used, its "
            "piece runs as Python  [E3004]\n  hint: rebuild the artifact with `ppy build`",
            ArtifactWarning,
            stacklevel=2,
        )
    return manifest


def inspect(root: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """(top manifest, {file: why it fails}) of the artifact in `root`, each module
    folder marked with its files that pass (`integrity`); CacheError E3005 when the
    manifest is unusable or the folder is not the user's own. No warning."""
    from ppy_core.cache import trust
    from ppy_core.runtime import integrity
    from ppy_core.runtime.artifact import read_top

    if not trust.trusted(root, "artifact"):
        from ppy_core.diagnostics import CacheError

        raise CacheError(
            f"{root}: the artifact is missing or owned by another user; nothing from it runs",
            code="E3005",
            hint="build your own copy with `ppy build`",
        )
    manifest = read_top(root)
    good, bad = integrity.check_tree(root, manifest["files"])
    integrity.mark_modules(root, [m["dir"] for m in manifest["modules"].values()], good)
    return manifest, bad


def run_main(
    directory: Path, argv: list[str], sources: set[str], *, check: bool, source: str = ""
) -> int:
    """Run an artifact module as `__main__`; the exit status as Python's."""
    return exit_status(lambda: run_as_main(directory, argv, check=check, source=source), sources)


def exit_status(body: Callable[[], object], sources: set[str]) -> int:
    """Run `body`; the exit status as Python's: 0, SystemExit's code, or 1 after
    printing the traceback from the first frame in `sources` (130 for ^C)."""
    try:
        body()
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    except BaseException as exc:
        import traceback  # ~7 ms: only for a program that fails

        traceback.print_exception(type(exc), exc, user_traceback(exc, sources))
        return 130 if isinstance(exc, KeyboardInterrupt) else 1
    finally:
        sys.stdout.flush()
    return 0


__all__ = ["checked", "exit_status", "inspect", "launch", "run_main"]
