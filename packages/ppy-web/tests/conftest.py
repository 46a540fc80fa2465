"""Fixtures of ppy-web's tests: the helpers beside this file (`_webserving`) import
by name (appended to sys.path: other suites' conftests first)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.append(str(HERE))
