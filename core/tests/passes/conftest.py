"""The passes' tests share `demo_dialect` (a plugin-like dialect with a write op)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
