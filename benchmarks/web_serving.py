"""Serving examples/27_uvicorn's FastAPI app through a real uvicorn server on
127.0.0.1: `python` against `ppy run` (and `ppy`), and workers from an app object.

    python benchmarks/web_serving.py [--requests 4000] [--rounds 10] [--out DIR]

1. Requests per second: each way serves the service in its own process (`service.ppy
   serve PORT`), all three at once, and this process sends GETs and POSTs over one
   keep-alive connection to each in turn, `--rounds` short rounds interleaved
   (`--requests` per way in all, a 60 s cap per round), so a busy neighbour costs
   every way alike; the best and the median round are reported.
2. Malformed requests (bad JSON, a constraint broken, a wrong type) answered by
   FastAPI's own 422s: the raw bytes of every answer compared across the three ways.
3. Two workers ready (both answering `/worker` with their pids), from start, and
   the CPU seconds the whole process tree spent to get there:
   `uvicorn svc:app --workers 2` (uvicorn spawns each worker, which re-imports the
   app) against `ppy_web.serve.run(app, workers=2)` under `python` and `ppy run`
   (workers forked from the loaded app), and one in-process server for reference.

Writes DIR/web_serving.md (the tables, the machine, the command).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SERVICE = REPO / "examples" / "27_uvicorn" / "service.ppy"
BIN = Path(sys.executable).parent
PPY = str(BIN / "ppy")

LOAD = [
    b"GET /items/3?q=abc HTTP/1.1\r\nhost: b\r\n\r\n",
    b"POST /orders HTTP/1.1\r\nhost: b\r\ncontent-type: application/json\r\n"
    b'content-length: 25\r\n\r\n{"sku": "ab", "count": 4}',
]
MALFORMED = [
    b'{"sku": "ab", "count": 1',
    b'{"sku": "ab", "count": 0}',
    b'{"sku": "ab", "count": "x"}',
    b'{"sku": "a", "count": 1}',
    b'{"count": 1}',
    b"[]",
    b"",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running(argv: list[str], cwd: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
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
            proc.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def read_response(sock: socket.socket, buf: bytearray) -> bytes:
    """One HTTP/1.1 response with a content-length, from a keep-alive connection."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    head, _, _ = bytes(buf).partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    total = len(head) + 4 + length
    while len(buf) < total:
        buf += sock.recv(65536)
    reply = bytes(buf[:total])
    del buf[:total]
    return reply


def exchange(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        return read_response(s, bytearray())


def wait_pids(port: int, count: int, timeout: float = 60.0) -> float:
    """Seconds until `count` distinct worker pids answered (polled, new connections)."""
    start, seen = time.perf_counter(), set()
    request = b"GET /worker HTTP/1.1\r\nhost: b\r\nconnection: close\r\n\r\n"
    while time.perf_counter() - start < timeout:
        try:
            body = exchange(port, request).partition(b"\r\n\r\n")[2]
            seen.add(body)
            if len(seen) >= count:
                return time.perf_counter() - start
        except OSError:
            time.sleep(0.002)
    raise TimeoutError(f"{count} workers did not answer in {timeout} s")


def throughput(port: int, n: int) -> float:
    """Requests per second over one keep-alive connection (`n` requests, 60 s cap)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        buf = bytearray()
        start = time.perf_counter()
        for i in range(n):
            s.sendall(LOAD[i % 2])
            reply = read_response(s, buf)
            if not reply.startswith((b"HTTP/1.1 200", b"HTTP/1.1 201")):
                raise RuntimeError(reply[:200])
            if time.perf_counter() - start > 60:
                n = i + 1
                break
        return n / (time.perf_counter() - start)


def malformed(port: int) -> list[bytes]:
    out = []
    for body in MALFORMED:
        head = (
            b"POST /orders HTTP/1.1\r\nhost: b\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n"
        )
        out.append(exchange(port, head + body))
    return out


def ways() -> dict[str, list[str]]:
    return {"python": [sys.executable], "ppy": [PPY], "ppy run": [PPY, "run"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ppy-web-bench-"))
    env = {"PPY_CACHE_DIR": str(tmp / "cache")}
    for argv in ways().values():  # compile / build once, outside the timings
        command = [*argv, str(SERVICE)]
        full_env = {**os.environ, **env}
        subprocess.run(command, cwd=SERVICE.parent, env=full_env, capture_output=True, check=True)
    # all three servers up at once, short rounds interleaved: a neighbour's burst of
    # load lands on every way alike (best and median of the rounds are reported)
    rates: dict[str, list[float]] = {way: [] for way in ways()}
    answers: dict[str, list[bytes]] = {}
    with contextlib.ExitStack() as stack:
        ports = {}
        for way, argv in ways().items():
            port = ports[way] = free_port()
            stack.enter_context(
                running([*argv, str(SERVICE), "serve", str(port)], SERVICE.parent, env)
            )
        for way, port in ports.items():
            wait_pids(port, 1)
            answers[way] = malformed(port)
        per_round = max(1, args.requests // args.rounds)
        for _ in range(args.rounds):
            for way, port in ports.items():
                rates[way].append(throughput(port, per_round))
    identical = all(answers[w] == answers["python"] for w in answers)
    statuses = [a.split(b" ")[1].decode() for a in answers["python"]]

    plain = tmp / "svcmod.py"
    shutil.copy(SERVICE, plain)
    starts: dict[str, float] = {}
    cpus: dict[str, float] = {}  # CPU seconds of the whole process tree, start to stop
    uvicorn_cli = [sys.executable, "-m", "uvicorn", "svcmod:app", "--workers", "2"]
    cases = {
        "uvicorn svcmod:app --workers 2 (spawn, re-import)": (
            [*uvicorn_cli, "--log-level", "warning", "--port"],
            2,
        ),
        "python: ppy_web.serve.run(app, workers=2) (fork)": (
            [sys.executable, str(SERVICE), "serve"],
            2,
        ),
        "ppy run: ppy_web.serve.run(app, workers=2) (fork)": (
            [PPY, "run", str(SERVICE), "serve"],
            2,
        ),
        "python: one in-process server (reference)": ([sys.executable, str(SERVICE), "serve"], 1),
    }
    for _ in range(3):
        for name, (argv, workers) in cases.items():
            port = free_port()
            tail = [str(port)] if "uvicorn" in name else [str(port), str(workers)]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            with running([*argv, *tail], tmp if "uvicorn" in name else SERVICE.parent, env):
                took = wait_pids(port, workers)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the tree, all reaped
            cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            starts[name] = min(starts.get(name, float("inf")), took)
            cpus[name] = min(cpus.get(name, float("inf")), cpu)

    lines = [
        "# web_serving",
        "",
        f"`{' '.join(['python', *sys.argv])}` on {platform.node()} "
        f"({os.cpu_count()} CPUs, {platform.python_version()}); "
        "the machine is shared with other jobs, so rates move between runs.",
        "",
        f"## Requests per second ({args.requests} requests per way in {args.rounds} rounds, "
        "one keep-alive connection)",
        "",
        "| way | best round (req/s) | median round (req/s) |",
        "| --- | ---: | ---: |",
        *[f"| {w} | {max(r):,.0f} | {statistics.median(r):,.0f} |" for w, r in rates.items()],
        "",
        f"Malformed requests ({len(MALFORMED)}): statuses {', '.join(statuses)}; raw "
        f"answers identical across python, ppy, ppy run: {'yes' if identical else 'NO'}.",
        "",
        "## Workers ready (both answering), from process start (best of 3)",
        "",
        "| how | ready (ms) | CPU of the process tree (s) |",
        "| --- | ---: | ---: |",
        *[f"| {n} | {t * 1e3:,.0f} | {cpus[n]:.2f} |" for n, t in starts.items()],
        "",
        "CPU: user+sys of the server and all its workers from start until stopped (after",
        "both answered): the import work each spawned worker repeats shows there, and",
        "depends less on the neighbours' load than the wall-clock time does.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "web_serving.md").write_text(text)
    shutil.rmtree(tmp, ignore_errors=True)
    if not identical:
        raise SystemExit("the three ways answered malformed requests differently")


if __name__ == "__main__":
    main()
