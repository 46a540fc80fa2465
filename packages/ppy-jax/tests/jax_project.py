"""A small JAX project the export tests build: its source and a pyproject.toml."""

from __future__ import annotations

from pathlib import Path

MODEL = """\
from typing import Annotated

import jax
import jax.numpy as jnp

import ppy

W = jnp.linspace(-1.0, 1.0, 16 * 4, dtype=jnp.float32).reshape(16, 4)
B = jnp.arange(4, dtype=jnp.float32) / 8


@jax.jit
def forward(x: Annotated[jax.Array, ppy.Shape("batch", 16), ppy.DType("float32")]):
    return jnp.tanh(x @ W + B) * 0.5


@jax.jit
def fixed(x: Annotated[jax.Array, ppy.Shape(8, 16), ppy.DType("float32")]):
    return jnp.tanh(x @ W + B) * 0.5


@jax.jit
def pair(
    x: Annotated[jax.Array, ppy.Shape("batch", 16), ppy.DType("float32")],
    y: Annotated[jax.Array, ppy.Shape("batch", 4), ppy.DType("float32")],
):
    out = jnp.tanh(x @ W + B)
    return {"loss": jnp.mean((out - y) ** 2), "out": out}


@ppy.jax
def plain(x: Annotated[jax.Array, ppy.Shape("batch", 16), ppy.DType("float32")]):
    return jnp.sum(jnp.sin(x) * 3.0, axis=1)


@jax.jit
def branchy(x: Annotated[jax.Array, ppy.Shape("batch", 16), ppy.DType("float32")]):
    if x.shape[0] > 3:  # a Python branch on a symbolic length: export cannot decide it
        return x * 2.0
    return x


@jax.jit
def unannotated(x):
    return x + 1.0
"""

MAIN = '''\
import jax
import numpy as np

import ppy
import jaxproj_model as model


def jitted(function):
    """The plain `jax.jit` of what `function` runs (its Python body under ppy too)."""
    return jax.jit(getattr(function, "__wrapped__", function))


for b in (1, 7, 64):
    x = np.random.default_rng(b).standard_normal((b, 16)).astype(np.float32)
    for name in ("forward", "plain"):
        got, want = getattr(model, name)(x), jitted(getattr(model, name))(x)
        same = np.asarray(got).tobytes() == np.asarray(want).tobytes()
        print(name, b, "same bits as jit:", same, float(np.asarray(got).sum()))
print("kinds", type(model.forward).__name__, type(model.fixed).__name__,
      type(model.branchy).__name__, type(model.unannotated).__name__)
print("stats", ppy.stats())
'''


def write_project(folder: Path, execution: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "jaxproj"\nversion = "0"\n\n[tool.ppy]\n'
        f'build-execution = "{execution}"\n'
    )
    (folder / "jaxproj_model.py").write_text(MODEL)
    (folder / "main.py").write_text(MAIN)
    return folder
