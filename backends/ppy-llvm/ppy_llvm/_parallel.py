"""A module's kernels compiled on every CPU: worker processes beside the builder.

LLVM work is the cold compile of a module of many distinct kernels (issue 32: 1,250
functions whose every kernel differs spend most of their time in `_toolchain._emit`,
one O3 pipeline and one object per kernel). llvmlite serializes every call into
LLVM behind one process-wide lock, so threads cannot share that work: processes can.
`emit_in_workers` hands a share of the kernels not compiled yet to one worker process
per further CPU (`python -c ...serve()`, which imports this module and llvmlite, not
the user's program), compiles its own share meanwhile, and waits. Each object is
compiled by the same code from the same IR on the same host CPU as in the builder
itself (`_toolchain._emit`), so its bytes are the same, and published as any other
(atomically, its sha256 recorded beside it); the builder then links every object
after checking it (`verify_build`). A worker that fails or is killed costs nothing
but time: whatever it left undone the builder compiles itself, and reports.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

#: IR bytes per process before another process pays off: a worker's start, Python and
#: llvmlite, costs about what LLVM spends on 300 KB of kernels (a dozen small ones; a
#: module's shared bodies are few and large since `_hoist`, its wrappers many and small)
PARALLEL_MIN = 300_000


def cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def emit_in_workers(
    jobs: Sequence[tuple[str, str]], folder: Path, emit_here: Callable[[str, str], object]
) -> int:
    """Compile the objects of `jobs` ((IR text, key) not compiled yet) into `folder`,
    with `emit_here(text, key)` for this process's share, shared out by IR size; the
    number of workers used (0: too little work or one CPU, all left to the caller)."""
    workers = min(cpus(), sum(len(text) for text, _ in jobs) // PARALLEL_MIN)
    if workers < 2:
        return 0
    shares: list[list[tuple[str, str]]] = [[] for _ in range(workers)]
    sizes = [0] * workers
    for job in sorted(jobs, key=lambda j: -len(j[0])):  # the largest first, to the least loaded
        least = sizes.index(min(sizes))
        shares[least].append(job)
        sizes[least] += len(job[0])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    procs = []
    for share in shares[1:]:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from ppy_llvm._parallel import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # a failure is compiled again here, and reported
            env=env,
        )
        assert proc.stdin is not None
        try:
            with proc.stdin:
                proc.stdin.write(marshal.dumps({"folder": str(folder), "jobs": share}))
        except OSError:  # it died already (a broken pipe): its share is left to the caller
            pass
        procs.append(proc)
    try:
        for text, key in shares[0]:
            emit_here(text, key)
    finally:
        for proc in procs:
            proc.wait()
    return workers


def serve() -> None:
    """A worker: compile the jobs on stdin (see `emit_in_workers`) into their folder."""
    from ppy_core.cache import publish_bytes, verify_build

    from ._toolchain import _emit

    order = marshal.loads(sys.stdin.buffer.read())
    folder = Path(order["folder"])
    for text, key in order["jobs"]:
        path = folder / f"obj-{key}.o"
        if not verify_build(path):
            publish_bytes(path, _emit(text, path.with_suffix(".ll")))


__all__ = ["PARALLEL_MIN", "cpus", "emit_in_workers", "serve"]
