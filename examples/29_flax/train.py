"""A small Flax MLP trained with optax on data the example generates.

`python train.py`, `ppy train.py` and `ppy run train.py` print identical losses:
the train step is `jax.jit`ted in all three (eager op-by-op JAX differs from `jit`
in the last bits). Under ppy, with `build-execution = "allow"` (pyproject.toml
here), the train step is exported at build time and its compiled executable
stored in the artifact, so the first step skips XLA compilation. Lines starting
with `#` (time to the first step, which path ran) differ between the three.

The step takes and returns flat array leaves: custom pytree nodes (optax's
ScaleByAdamState) do not serialize, so the step rebuilds them around the call.
"""

from __future__ import annotations

import sys
import time

START = time.perf_counter()

from typing import Annotated  # noqa: E402

import flax.linen as nn  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

import ppy  # noqa: E402

BATCH = 64


class Mlp(nn.Module):
    """4 -> 32 -> 1, relu between."""

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = nn.relu(nn.Dense(32)(x))
        return nn.Dense(1)(x)


MODEL = Mlp()
TX = optax.adam(1e-2)
# the pytree structures, from shapes alone (nothing is computed)
_PARAMS = jax.eval_shape(MODEL.init, jax.random.key(0), jnp.zeros((1, 4), jnp.float32))
P_TREE = jax.tree.structure(_PARAMS)
S_TREE = jax.tree.structure(jax.eval_shape(TX.init, _PARAMS))


@jax.jit
def train_step(
    b0: Annotated[jax.Array, ppy.Shape(32), ppy.DType("float32")],
    k0: Annotated[jax.Array, ppy.Shape(4, 32), ppy.DType("float32")],
    b1: Annotated[jax.Array, ppy.Shape(1), ppy.DType("float32")],
    k1: Annotated[jax.Array, ppy.Shape(32, 1), ppy.DType("float32")],
    count: Annotated[jax.Array, ppy.Shape(), ppy.DType("int32")],
    mb0: Annotated[jax.Array, ppy.Shape(32), ppy.DType("float32")],
    mk0: Annotated[jax.Array, ppy.Shape(4, 32), ppy.DType("float32")],
    mb1: Annotated[jax.Array, ppy.Shape(1), ppy.DType("float32")],
    mk1: Annotated[jax.Array, ppy.Shape(32, 1), ppy.DType("float32")],
    vb0: Annotated[jax.Array, ppy.Shape(32), ppy.DType("float32")],
    vk0: Annotated[jax.Array, ppy.Shape(4, 32), ppy.DType("float32")],
    vb1: Annotated[jax.Array, ppy.Shape(1), ppy.DType("float32")],
    vk1: Annotated[jax.Array, ppy.Shape(32, 1), ppy.DType("float32")],
    x: Annotated[jax.Array, ppy.Shape(64, 4), ppy.DType("float32")],
    y: Annotated[jax.Array, ppy.Shape(64, 1), ppy.DType("float32")],
) -> tuple[jax.Array, ...]:
    """One adam step on mean squared error; (loss, params leaves, state leaves)."""
    params = jax.tree.unflatten(P_TREE, [b0, k0, b1, k1])
    state = jax.tree.unflatten(S_TREE, [count, mb0, mk0, mb1, mk1, vb0, vk0, vb1, vk1])

    def loss_fn(p: dict) -> jax.Array:
        return jnp.mean((MODEL.apply(p, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, state = TX.update(grads, state, params)
    params = optax.apply_updates(params, updates)
    return (loss, *jax.tree.leaves(params), *jax.tree.leaves(state))


def data(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A batch of a smooth target: y = sin(x0 + 2 x1) - x2 * x3 / 2."""
    x = np.random.default_rng(seed).uniform(-1, 1, (BATCH, 4)).astype(np.float32)
    y = np.sin(x[:, :1] + 2 * x[:, 1:2]) - x[:, 2:3] * x[:, 3:4] / 2
    return x, y.astype(np.float32)


def main(steps: int = 300) -> None:
    x0, _ = data(0)
    params = MODEL.init(jax.random.key(0), x0)
    leaves = [*jax.tree.leaves(params), *jax.tree.leaves(TX.init(params))]
    first = since_start = 0.0
    for step in range(steps):
        x, y = data(step % 8)
        began = time.perf_counter()
        loss, *leaves = train_step(*leaves, x, y)
        if step == 0:
            loss.block_until_ready()
            first, since_start = time.perf_counter() - began, time.perf_counter() - START
        if step % 50 == 0 or step == steps - 1:
            print(f"step {step:3d}  loss {float(loss)!r}")
    print(f"# first step: {first * 1000:.0f} ms ({since_start * 1000:.0f} ms from process start)")
    how = type(train_step).__name__
    if getattr(train_step, "runs_executable", False):
        how += " (the compiled executable stored at build time)"
    print(f"# train step runs as: {how}")
    if ppy.stats():
        print(f"# ppy.stats: {ppy.stats()}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
