"""Build execution: run project code at build time, in a subprocess, under the policy.

Some plugins can only learn what they need by running the project's own code
(`jax.export` traces a jitted function; pydantic builds a model's schema). That is
arbitrary code, so the core gates it behind `[tool.ppy] build-execution`
("deny" by default) and isolates it: a fresh interpreter, the project's `sys.path`
and folder, a time limit, and a result that comes back serialized. Every plugin
goes through this one service. Usage (a plugin's build step):

    from ppy_core.project.build_execution import execute

    outcome = execute(
        "ppy_jax._export_worker:export",       # importable "module:callable"
        {"module": "model", "function": "train_step"},   # JSON-able payload
        config=config,                          # the project's Config (policy, root)
        who="jax export of model.train_step",   # named in every diagnostic
        instead="it stays an ordinary jitted call",
        sys_path=[str(project_root)],           # prepended in the child
        timeout_s=60.0,
        location=Location("model.py", 12),
    )
    if outcome.ok:
        blob: bytes = outcome.data              # what the callable returned (bytes),
        value = outcome.value                   # or its JSON value (dict/list/str/...)
    else:
        report(outcome.diagnostic)              # E0030 (a warning) under "deny";
                                                # E0031-E0034 when the run failed

The callable runs in the child as `callable(payload)` and returns `bytes` (kept
as is) or a JSON-serializable value. Whatever it prints goes to the child's
stdout, never into the result. A failure never raises here: it is an
`Outcome` with a coded diagnostic, so a build goes on without the piece.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ppy_core.diagnostics import Diagnostic, Location
from ppy_core.project.config import Config

DEFAULT_TIMEOUT_S: Final = 120.0
#: Environment variable set in the child, so project code can tell it runs at build time.
MARKER: Final = "PPY_BUILD_EXECUTION"
_WORKER: Final = "ppy_core.project._build_worker"
_TAIL: Final = 1200  # characters of a child's stderr kept in a diagnostic


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a build execution gave: `data` (raw result bytes) or a `diagnostic`.

    `kind` is "bytes" or "json" when ok; `value` decodes a JSON result."""

    data: bytes = b""
    kind: str = ""
    diagnostic: Diagnostic | None = None

    @property
    def ok(self) -> bool:
        return self.diagnostic is None

    @property
    def refused(self) -> bool:
        """True when the policy said no (nothing ran)."""
        return self.diagnostic is not None and self.diagnostic.code == "E0030"

    @property
    def value(self) -> Any:
        """The result: bytes as is, a JSON result decoded."""
        if self.kind == "json":
            return json.loads(self.data.decode("utf-8"))
        return self.data


def allowed(config: Config) -> bool:
    """Whether the project lets `ppy build` run its code."""
    return config.build_execution == "allow"


def refusal(config: Config, who: str, instead: str, location: Location | None = None) -> Diagnostic:
    """The one warning a caller reports under "deny": names the work, the setting, the code."""
    where = f" in {config.path}" if config.path is not None else " (no pyproject.toml found)"
    return Diagnostic(
        "E0030",
        f"{who} needs to run project code at build time, and [tool.ppy] build-execution "
        f'is "deny"{where}: {instead}',
        hint='set build-execution = "allow" under [tool.ppy] in pyproject.toml to let '
        "`ppy build` run it (in a subprocess, with a time limit)",
        location=location,
        severity="warning",
    )


def execute(
    target: str,
    payload: Any = None,
    *,
    config: Config,
    who: str,
    instead: str = "that part stays Python",
    sys_path: Sequence[str] = (),
    cwd: str | Path | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    location: Location | None = None,
) -> Outcome:
    """Run `target(payload)` ("module:callable") in a subprocess, if the policy allows.

    The child is this interpreter, in `cwd` (default: the pyproject.toml's folder),
    with `sys_path` ahead of the parent's own path. Never raises for the child's sake."""
    if not allowed(config):
        return Outcome(diagnostic=refusal(config, who, instead, location))
    if ":" not in target:
        return _failed("E0033", who, f"target {target!r} is not 'module:callable'", location)
    try:
        request = json.dumps(
            {"target": target, "payload": payload, "sys_path": [*sys_path, *sys.path]}
        )
    except (TypeError, ValueError) as exc:
        return _failed("E0033", who, f"the payload is not JSON-serializable ({exc})", location)
    folder = Path(cwd) if cwd is not None else _project_folder(config)
    with tempfile.TemporaryDirectory(prefix="ppy-exec-") as scratch:
        request_file, result_file = Path(scratch, "request.json"), Path(scratch, "result")
        request_file.write_text(request, encoding="utf-8")
        env = {**os.environ, MARKER: "1", "PYTHONDONTWRITEBYTECODE": "1"}
        command = [sys.executable, "-m", _WORKER, str(request_file), str(result_file)]
        try:
            child = subprocess.Popen(
                command,
                cwd=folder,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,  # so a timeout ends the child's own children too
            )
        except OSError as exc:
            return _failed("E0034", who, f"the subprocess could not start ({exc})", location)
        try:
            _, stderr = child.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill(child)
            return _failed(
                "E0032",
                who,
                f"it ran past its time limit of {timeout_s:g} s and was stopped",
                location,
                hint="make the work smaller, or look for a loop that never ends in it",
            )
        return _read_result(child.returncode, stderr, result_file, who, location)


def _project_folder(config: Config) -> Path:
    return config.path.parent if config.path is not None else Path.cwd()


def _kill(child: subprocess.Popen[bytes]) -> None:
    """End the child's whole process group (it is its own session leader)."""
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        child.kill()
    child.communicate()


def _read_result(
    returncode: int, stderr: bytes, result_file: Path, who: str, location: Location | None
) -> Outcome:
    tail = stderr.decode("utf-8", "replace").strip()[-_TAIL:]
    if returncode == 0 and result_file.is_file():
        raw = result_file.read_bytes()
        kind = {b"B": "bytes", b"J": "json"}.get(raw[:1], "")
        if kind:
            return Outcome(data=raw[1:], kind=kind)
        return _failed("E0034", who, "the subprocess wrote no readable result", location)
    if returncode == 3:  # the worker's own report: the callable raised or returned junk
        error_file = result_file.with_suffix(".error")
        report = _error_report(error_file)
        code = "E0033" if report.get("stage") in ("import", "result") else "E0031"
        return _failed(code, who, report.get("message", tail or "it failed"), location)
    why = f"the subprocess died (exit status {returncode})"
    if returncode < 0:
        why = f"the subprocess was killed by signal {-returncode}"
    return _failed("E0034", who, f"{why}: {tail[-400:]}" if tail else why, location)


def _error_report(path: Path) -> dict[str, str]:
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return report if isinstance(report, dict) else {}


_HINTS: Final = {
    "E0031": "the error is the project's own: run the function in Python to see it whole",
    "E0033": "the callable must be importable as 'module:name' and return bytes or JSON",
    "E0034": "the subprocess crashed or could not start: look at the message for why",
}


def _failed(
    code: str, who: str, message: str, location: Location | None, hint: str = ""
) -> Outcome:
    return Outcome(
        diagnostic=Diagnostic(
            code,
            f"{who} failed at build time: {message}",
            hint=hint or _HINTS.get(code, ""),
            location=location,
            severity="warning",
        )
    )


__all__ = ["DEFAULT_TIMEOUT_S", "MARKER", "Outcome", "allowed", "execute", "refusal"]
