"""`python -m ppy_core.cli`: the `ppy` command without its console script."""

from __future__ import annotations

import sys

from ppy_core.cli import main

sys.exit(main())
