"""Helpers for the tests that start real servers on 127.0.0.1: a free port, bounded
polling, a raw HTTP/1.1 exchange, and a process group that is always stopped."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def raw(port: int, request: bytes, timeout: float = 5.0) -> bytes:
    """Send one raw HTTP request (ending with `Connection: close`) and read to EOF."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def get_json(port: int, path: str = "/", timeout: float = 5.0) -> Any:
    reply = raw(port, f"GET {path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n".encode())
    return json.loads(reply.partition(b"\r\n\r\n")[2])


def wait_for(check: Any, timeout: float, what: str) -> Any:
    """Call `check()` until it returns a truthy value (errors count as not yet)."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except (OSError, ValueError) as exc:
            last = exc
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} ({last!r})")


@contextlib.contextmanager
def started(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path, log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """Run `argv` in its own process group; on exit SIGINT it, then SIGKILL the group."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            yield proc
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # any worker left behind
