"""The child side of build execution (`python -m ppy_core.project._build_worker REQ OUT`).

Reads the request (target, payload, sys_path), calls `target(payload)`, and writes
the result to OUT: b"B" + bytes, or b"J" + JSON. When the callable cannot be
imported, raises, or returns something else, it writes OUT.error (JSON: stage,
message) and exits with status 3, so the parent can tell the project's failure
from a crash of the interpreter.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from pathlib import Path
from typing import Any


def _fail(out: Path, stage: str, message: str) -> None:
    out.with_suffix(".error").write_text(
        json.dumps({"stage": stage, "message": message}), encoding="utf-8"
    )
    sys.exit(3)


def _load(target: str) -> Any:
    module_name, _, qualname = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _last_frames(exc: BaseException) -> str:
    """The exception and its innermost frame: enough to find it, short enough to read."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"


def main(argv: list[str]) -> None:
    request_file, out = Path(argv[0]), Path(argv[1])
    request = json.loads(request_file.read_text(encoding="utf-8"))
    sys.path[:0] = [p for p in request["sys_path"] if p not in sys.path[:1]]
    try:
        func = _load(request["target"])
    except Exception as exc:
        _fail(out, "import", f"{request['target']} cannot be imported: {_last_frames(exc)}")
    try:
        result = func(request["payload"])
    except BaseException as exc:  # SystemExit/KeyboardInterrupt from project code too
        _fail(out, "call", _last_frames(exc))
    if isinstance(result, bytes | bytearray | memoryview):
        out.write_bytes(b"B" + bytes(result))
        return
    try:
        text = json.dumps(result)
    except (TypeError, ValueError) as exc:
        _fail(out, "result", f"it returned {type(result).__name__}, not bytes or JSON ({exc})")
    out.write_bytes(b"J" + text.encode("utf-8"))


if __name__ == "__main__":
    main(sys.argv[1:])
