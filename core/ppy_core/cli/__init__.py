"""The `ppy` command: argument parsing and verbs (`app`), the compiling verbs (`commands`)."""

from __future__ import annotations

from ppy_core.cli.app import main

__all__ = ["main"]
