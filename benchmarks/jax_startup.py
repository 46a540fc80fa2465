"""Time to the first result of a JAX function in a fresh process, five ways.

    python benchmarks/jax_startup.py [--repeat 5] [--out DIR]

Two functions: an MLP forward (16 -> 64 -> 4, batch 32) and the Flax/optax train
step of examples/29_flax (value_and_grad + adam). Each is exported once here, as
`ppy build` does (`ppy_jax.export`); then every way runs in its own fresh
process, and the clock runs from after `import jax` (and the function's module)
to the first result ready:

- jit: a fresh `jax.jit` (trace, lower, XLA compile, run);
- persistent cache: `jax.jit` with JAX's own compilation cache warm; it hits only
  with `jax_compilation_cache_dir` set AND `jax_persistent_cache_min_compile_time_secs
  = 0` AND `jax_persistent_cache_min_entry_size_bytes = -1`, all before the first
  computation (the defaults skip entries that compiled in under a second);
- ppy export: PPy's artifact on a jaxlib/CPU other than the build's (the portable
  StableHLO export: no trace, XLA still compiles);
- ppy executable: PPy's artifact on the build's own jaxlib and CPU (the stored
  compiled executable: no trace, no compile).
Also the steady call (median of 200, in the last process) so nothing is bought
with a slower loop. Targets (issue 13): executable first result at most 0.3x of
jit's for the forward, 0.15x for the train step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import jax
import jax.numpy as jnp

import ppy

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "29_flax"

W1 = jnp.linspace(-0.5, 0.5, 16 * 64, dtype=jnp.float32).reshape(16, 64)
W2 = jnp.linspace(-0.5, 0.5, 64 * 4, dtype=jnp.float32).reshape(64, 4)


@jax.jit
def forward(x: Annotated[jax.Array, ppy.Shape(32, 16), ppy.DType("float32")]) -> jax.Array:
    return jnp.tanh(jax.nn.relu(x @ W1) @ W2)


CHILD = r"""
import sys, time, json
mode, module, function, artifact = sys.argv[1:5]
if mode == "cache":
    import jax
    jax.config.update("jax_compilation_cache_dir", sys.argv[5])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
import importlib
import jax, numpy as np
mod = importlib.import_module(module)
args = importlib.import_module("jax_startup").ARGS[function]()  # outside the clock
jax.block_until_ready(args)
f = getattr(mod, function)
t0 = time.perf_counter()
if mode in ("export", "exe"):
    from ppy_jax.runtime import ExportedFunction
    from ppy_jax._probe import executable_key
    data = open(artifact, "rb").read()
    f = ExportedFunction(data, f, fingerprint=executable_key() if mode == "exe" else "")
    assert f.runs_executable == (mode == "exe")
jax.block_until_ready(f(*args))
first = time.perf_counter() - t0
steady = []
for _ in range(200):
    t = time.perf_counter(); jax.block_until_ready(f(*args)); steady.append(time.perf_counter() - t)
steady.sort()
print(json.dumps({"first": first, "steady": steady[100]}))
"""


def forward_args() -> tuple[Any, ...]:
    """The forward's argument (made in the child, outside the clock)."""
    import numpy as np

    return (np.random.default_rng(0).standard_normal((32, 16)).astype(np.float32),)


def train_args() -> tuple[Any, ...]:
    """The train step's first arguments: initial parameters, adam state, a batch."""
    import train

    x, y = train.data(0)
    params = train.MODEL.init(jax.random.key(0), x)
    return (*jax.tree.leaves(params), *jax.tree.leaves(train.TX.init(params)), x, y)


ARGS = {"forward": forward_args, "train_step": train_args}


def child(mode: str, module: str, function: str, artifact: Path, cache: Path) -> dict[str, float]:
    path = os.pathsep.join([str(HERE), str(EXAMPLE), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode, module, function, str(artifact), str(cache)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{mode} {function} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def export_artifact(module: str, function: str, folder: Path) -> Path:
    """The artifact `ppy build` would store, made in a subprocess as it is there."""
    from ppy_core.project.build_execution import execute
    from ppy_core.project.config import Config
    from ppy_jax._probe import executable_key

    outcome = execute(
        "ppy_jax.export:export",
        {"module": module, "function": function, "fingerprint": executable_key()},
        config=Config(build_execution="allow"),
        who=f"jax export of {module}.{function}",
        sys_path=[str(HERE), str(EXAMPLE)],
        cwd=HERE,
    )
    if not outcome.ok:
        raise SystemExit(str(outcome.diagnostic))
    path = folder / f"{function}.ppyjax"
    path.write_bytes(outcome.data)
    return path


MODES = (
    ("jit", "jit"),
    ("cache", "persistent cache (warm)"),
    ("export", "ppy export"),
    ("exe", "ppy executable"),
)


def measure(module: str, function: str, repeat: int, folder: Path) -> dict[str, list[dict]]:
    artifact = export_artifact(module, function, folder)
    cache = folder / f"cache-{function}"
    child("cache", module, function, artifact, cache)  # fills JAX's cache
    runs: dict[str, list[dict]] = {mode: [] for mode, _ in MODES}
    for _ in range(repeat):  # interleaved, so load on the machine hits every way alike
        for mode, _ in MODES:
            runs[mode].append(child(mode, module, function, artifact, cache))
    return runs


def table(results: dict[str, dict[str, list[dict]]]) -> str:
    lines = [
        "| function | way | first result, median (best) ms | x jit | steady call ms |",
        "| --- | --- | --- | --- | --- |",
    ]
    for function, runs in results.items():
        base = statistics.median(r["first"] for r in runs["jit"])
        for mode, label in MODES:
            firsts = [r["first"] for r in runs[mode]]
            med = statistics.median(firsts)
            steady = statistics.median(r["steady"] for r in runs[mode]) * 1000
            lines.append(
                f"| {function} | {label} | {med * 1000:.0f} ({min(firsts) * 1000:.0f}) "
                f"| {med / base:.2f} | {steady:.3f} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ppy-jax-bench-") as scratch:
        folder = Path(scratch)
        results = {
            "forward 16-64-4, batch 32": measure("jax_startup", "forward", options.repeat, folder),
            "train step (flax + adam)": measure("train", "train_step", options.repeat, folder),
        }
    text = table(results)
    note = (
        f"\nFresh processes, {options.repeat} each, interleaved; jax {jax.__version__}, "
        f"{os.cpu_count()} CPUs (shared: timings under load are noisy)."
    )
    print(text + note)
    if options.out is not None:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / "jax_startup.md").write_text(f"# jax_startup\n\n{text}\n{note}\n")
    fwd = results["forward 16-64-4, batch 32"]
    step = results["train step (flax + adam)"]
    ratio = {
        name: statistics.median(r["first"] for r in runs["exe"])
        / statistics.median(r["first"] for r in runs["jit"])
        for name, runs in (("forward", fwd), ("train step", step))
    }
    print(
        f"executable / jit, first result: forward {ratio['forward']:.2f} (target <= 0.30), "
        f"train step {ratio['train step']:.2f} (target <= 0.15)"
    )


if __name__ == "__main__":
    main()
