"""The `ppy` console script's entry: `ppy FILE` and `ppy run FILE` without argparse.

A cached start should cost little more than `python FILE`, so the two run verbs and
`-m MODULE` are recognised here, with the light imports they need (`commands`), and
everything else (other verbs, options, `--help`) goes to the full parser in `app`. A
FILE is told from a verb the way `app` tells it (not a verb, not an option); a word
with neither a dot nor a slash could be a verb this module does not know, so it goes
to `app`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_VERBOSE = ("-v", "--verbose")


def _file_like(word: str) -> bool:
    return not word.startswith("-") and ("." in word or "/" in word)


def module_argument(args: Sequence[str]) -> tuple[str, list[str]] | None:
    """(MODULE, its arguments) of `-m MODULE ARGS` or `-mMODULE ARGS`, as Python reads
    them; None when `args` does not start with `-m`."""
    if args and args[0] == "-m" and len(args) > 1:
        return args[1], list(args[2:])
    if args and args[0].startswith("-m") and len(args[0]) > 2:
        return args[0][2:], list(args[1:])
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """The console script `ppy`."""
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = False
    while args and args[0] in _VERBOSE:
        verbose = True
        args.pop(0)
    if verbose:
        from ppy_core.cli import progress

        progress.VERBOSE = True
    run = args[:1] == ["run"]
    if run and len(args) > 1 and args[1] in _VERBOSE:
        verbose = True
        del args[1]
    try:
        if run and len(args) > 1 and _file_like(args[1]):
            from ppy_core.cli.commands import run_artifact

            return run_artifact(args[1], args[2:], verbose=verbose)
        if args and _file_like(args[0]):
            from ppy_core.cli.commands import run_file

            return run_file(args[0], args[1:])
        module = module_argument(args)
        if module is not None:
            from ppy_core.cli.commands import run_module

            return run_module(module[0], module[1])
    except Exception as exc:
        from ppy_core.cli.app import report

        return report(exc)
    except KeyboardInterrupt:
        return 130
    from ppy_core.cli.app import main as full

    return full(args)


__all__ = ["main", "module_argument"]
