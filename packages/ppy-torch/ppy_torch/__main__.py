"""`python -m ppy_torch FILE [ARGS]`: run FILE with its `@ppy.opt(3)` functions as regions."""

from __future__ import annotations

import sys

from ppy_torch.direct import run_path


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python -m ppy_torch FILE [ARGS]", file=sys.stderr)
        return 2
    run_path(argv[0], argv[1:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
