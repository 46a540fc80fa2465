"""The `ppy` command: the console script's entry (`fast`: the run verbs without
argparse), argument parsing and verbs (`app`), the compiling verbs (`commands`)."""

from __future__ import annotations

from ppy_core.cli.fast import main

__all__ = ["main"]
