"""Running a built artifact: what its launcher script calls. No compiler here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ppy_core.runtime import jsontext
from ppy_core.runtime.finder import ARTIFACT_ENV, install
from ppy_core.runtime.module import run_as_main, user_traceback


def launch(root: Path, argv: list[str]) -> int:
    """Run the artifact in `root` as `python FILE ARGS` would run its program."""
    manifest = jsontext.read(root / "manifest.json")
    os.environ[ARTIFACT_ENV] = str(root)
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
        )


def run_main(directory: Path, argv: list[str], sources: set[str], *, check: bool) -> int:
    """Exit status as Python's: 0, SystemExit's code, or 1 after printing the traceback."""
    try:
        run_as_main(directory, argv, check=check)
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


__all__ = ["launch", "run_main"]
