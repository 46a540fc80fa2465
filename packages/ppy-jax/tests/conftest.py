"""The jax tests' helpers (jax_project.py) are importable by the test modules here."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
