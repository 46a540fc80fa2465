"""The jax plugin's answers around the array operations (`ppy_jax.pytrees`): pytree
utilities, keys, transforms, an Array's methods and operators, asked directly and
through `ppy check --strict` on a Flax training step."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ppy_core.compiler.check import check_paths
from ppy_core.interface.plugin import CallContext, Converge, OperatorContext
from ppy_core.ir.types import F32, F64, I1, I64, OpaqueType, TensorType, TupleType
from ppy_jax import pytrees, surface
from ppy_jax.plugin import JaxPlugin

PLUGIN = JaxPlugin()
A = surface.ARRAY


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def _call(callee: str, *args, receiver=None):
    answer = PLUGIN.call(CallContext(callee, tuple(args), {}, receiver=receiver))
    return answer.result if answer is not None else None


def test_trees_keys_and_transforms_follow_jax_annotations() -> None:
    assert _call("jax.tree.structure", A) == pytrees.TREEDEF
    assert _call("jax.tree_util.tree_unflatten", pytrees.TREEDEF) == OpaqueType("typing.Any")
    assert _call("jax.tree.leaves", A) == OpaqueType("builtins.list")
    assert _call("jax.random.key", I64) == pytrees.KEY
    assert _call("jax.value_and_grad", OpaqueType("builtins.function")) == pytrees.VALUE_AND_GRAD
    called = _call(f"{pytrees.VALUE_AND_GRAD.name}.__call__", pytrees.VALUE_AND_GRAD)
    assert called == TupleType((A, pytrees.TREE))
    assert _call("jax.Array.block_until_ready", A, receiver=A) == A
    assert _call("jax.tree.flatten_with_path", A) is None  # not modelled: stays Unknown


@pytest.mark.parametrize(
    ("op", "operands", "expected"),
    [
        ("Sub", (A, A), A),
        ("Pow", (A, I64), A),
        ("Mult", (F64, A), A),
        ("Gt", (A, F64), surface.BOOL_ARRAY),
        ("Add", (A, TensorType(I1, None, "jax")), None),  # promotion: not modelled
        ("Add", (A, TensorType(F64, None, "numpy")), None),  # a NumPy array: not JAX's
        ("Add", (F64, I64), None),  # no Array at all
    ],
)
def test_operators_on_arrays_are_typed_never_converged(op, operands, expected) -> None:
    reply = PLUGIN.operator(OperatorContext(op, operands, (None,) * len(operands)))
    assert not isinstance(reply, Converge)
    assert reply == expected
    if expected is A:
        assert reply.element == F32


def test_a_flax_training_step_checks_clean_under_strict(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ppy]\nstrict = true\n")
    path = tmp_path / "step.py"
    path.write_text(
        textwrap.dedent(
            """
            import flax.linen as nn
            import jax
            import jax.numpy as jnp
            import optax


            class Mlp(nn.Module):
                @nn.compact
                def __call__(self, x: jax.Array) -> jax.Array:
                    return nn.Dense(1)(nn.relu(nn.Dense(8)(x)))


            MODEL = Mlp()
            TX = optax.adam(1e-2)


            def step(x: jax.Array, y: jax.Array) -> jax.Array:
                params = MODEL.init(jax.random.key(0), x)
                state = TX.init(params)

                def loss_fn(p: dict) -> jax.Array:
                    return jnp.mean((MODEL.apply(p, x) - y) ** 2)

                loss, grads = jax.value_and_grad(loss_fn)(params)
                updates, state = TX.update(grads, state, params)
                params = optax.apply_updates(params, updates)
                leaves = [*jax.tree.leaves(params), *jax.tree.leaves(state)]
                print(len(leaves))
                return loss.block_until_ready()
            """
        )
    )
    report = check_paths([str(path)])
    assert [(f.location.line, f.message) for f in report.findings if f.location] == []
