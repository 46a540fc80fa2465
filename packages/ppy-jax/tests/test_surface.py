"""The jax plugin's answers: jax.numpy named as the shared tensor ops but never fused
(JAX's bits are not NumPy's), and the Flax linen / optax surface typed, asked of the
plugin directly (the checker that walks a user's class MRO comes with its issue)."""

from __future__ import annotations

from pathlib import Path

import flax.linen as nn
import jax
import optax
import pytest

from ppy_core.compiler.cached import compile_file, load_manifest
from ppy_core.interface.plugin import (
    TRANSPARENT,
    AttributeContext,
    CallContext,
    Converge,
    DecoratorContext,
)
from ppy_core.interface.specs import DirectCallSpec
from ppy_core.ir.types import F64, I1, TensorType, TupleType
from ppy_jax import surface
from ppy_jax.plugin import JaxPlugin

PLUGIN = JaxPlugin()
A = surface.ARRAY


def ask(callee: str, *args, receiver=None, **kw_constants):
    ctx = CallContext(callee, tuple(args), {}, receiver=receiver, kw_constants=kw_constants)
    return PLUGIN.call(ctx), PLUGIN.tensor_operation(ctx)


@pytest.mark.parametrize(
    ("callee", "n", "op", "attributes"),
    [
        ("jax.numpy.add", 2, "tensor.add", {}),
        ("jax.numpy.multiply", 2, "tensor.mul", {}),
        ("jax.numpy.sin", 1, "tensor.unary", {"op": "sin"}),
        ("jax.numpy.tanh", 1, "tensor.unary", {"op": "tanh"}),
        ("jax.numpy.negative", 1, "tensor.neg", {}),
        ("jax.numpy.greater", 2, "tensor.compare", {"pred": "gt"}),
        ("jax.numpy.sum", 1, "tensor.reduce", {"op": "add"}),
    ],
)
def test_jnp_is_named_as_numpy_and_never_fused(callee, n, op, attributes) -> None:
    answer, converge = ask(callee, *([A] * n))
    assert converge == Converge(op, converge.result, attributes)
    assert converge.result.library == "jax"
    assert answer.lowering == DirectCallSpec(callee)  # "keep the call": no backend fuses it
    assert answer.result == (TensorType(I1, None, "jax") if op == "tensor.compare" else A)


def test_jnp_unknown_or_keywords_are_not_named() -> None:
    assert ask("jax.numpy.fft_thing", A) == (None, None)
    ctx = CallContext("jax.numpy.sum", (A,), {"axis": A})
    assert PLUGIN.tensor_operation(ctx) is None


SOURCE = """\
import jax
import jax.numpy as jnp


def eager(x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.add(jnp.sin(x), y)
"""


def test_eager_jnp_site_stays_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ppy_llvm")  # the refusal shown is the llvm backend's
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "pyproject.toml").write_text("[tool.ppy]\n")
    path = tmp_path / "eagerjnp.py"
    path.write_text(SOURCE, encoding="utf-8")
    (site,) = load_manifest(compile_file(path).entry)["expr_sites"]
    assert site["unit"] is None
    assert 'target = "jax.numpy.sin"' in site["ir_final"]
    assert any("llvm" in r and "direct_call" in r for r in site["reasons"])


def test_activations_are_one_answer_and_the_same_object() -> None:
    assert nn.relu is jax.nn.relu
    assert ask("flax.linen.relu", A)[0] == ask("jax.nn.relu", A)[0]
    assert ask("jax.nn.relu", A)[0].result == A


def test_flax_module_surface() -> None:
    assert ask("flax.linen.Dense", F64)[0].result == surface.MODULE
    assert ask("flax.linen.Module.init", A, receiver=surface.MODULE)[0].result == (
        surface.VARIABLES
    )
    assert ask("flax.linen.Module.apply", surface.VARIABLES, A)[0].result == A
    mutable = ask("flax.linen.Module.apply", surface.VARIABLES, A, mutable=["stats"])[0]
    assert mutable.result == TupleType((A, surface.VARIABLES))
    compact = PLUGIN.decorator_semantics(DecoratorContext("flax.linen.compact", "__call__"))
    assert compact is not None
    assert compact.kind == TRANSPARENT
    # what the answers model: init/apply live on flax's Module, @compact marks the function
    assert "init" in vars(nn.Module)
    assert "apply" in vars(nn.Module)
    assert nn.compact(lambda self: None).compact is True


def test_train_state_and_optax_surface() -> None:
    state = ask("flax.training.train_state.TrainState.create")[0].result
    assert state == surface.TRAIN_STATE
    assert ask("flax.training.train_state.TrainState.apply_gradients")[0].result == state
    params = PLUGIN.instance_attribute(AttributeContext("params", owner_type=state))
    assert params == surface.VARIABLES
    assert ask("optax.adam", F64)[0].result == surface.TRANSFORM
    owner = next(k for k, v in PLUGIN.external_types().items() if v == surface.TRANSFORM)
    assert ask(f"{owner}.init", surface.VARIABLES)[0].result == surface.OPT_STATE
    assert ask(f"{owner}.update", surface.UPDATES, surface.OPT_STATE)[0].result == TupleType(
        (surface.UPDATES, surface.OPT_STATE)
    )
    assert ask("optax.apply_updates", surface.VARIABLES, surface.UPDATES)[0].result == (
        surface.VARIABLES
    )
    # what the answers model: adam is a (init, update) pair; update returns two things
    tx = optax.adam(1e-3)
    opt_state = tx.init({"w": jax.numpy.zeros(2)})
    out = tx.update({"w": jax.numpy.ones(2)}, opt_state)
    assert isinstance(out, tuple)
    assert len(out) == 2


def test_project_classes_resolve_through_their_external_base() -> None:
    import ast

    from ppy_core.interface.plugin import ClassContext, ModuleContext

    plugin = JaxPlugin()
    tree = ast.parse("class Mlp(nn.Module): pass\nclass Deeper(Mlp): pass\nclass Other: pass")
    module = ModuleContext("m.py", "m", {"nn": "flax.linen"})

    def ask_class(name: str, bases: tuple[str, ...]):
        node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
        return plugin.class_type(ClassContext(f"m.{name}", bases, node, tree, module))

    assert ask_class("Mlp", ("flax.linen.Module",)) == surface.MODULE
    assert ask_class("Deeper", ("m.Mlp",)) == surface.MODULE  # through the earlier class
    assert ask_class("Other", ()) is None
    built = plugin.call(CallContext("m.Deeper", (), {}))
    assert built is not None
    assert built.result == surface.MODULE
    # an instance's methods are its external base's: asked as flax.linen.Module.init
    owner = next(k for k, v in plugin.external_types().items() if v == surface.MODULE)
    assert owner == "flax.linen.Module"
    assert ask("flax.linen.Module.init", A, receiver=surface.MODULE)[0].result == (
        surface.VARIABLES
    )
    # what it models: Flax makes subclasses dataclasses without a metaclass
    assert type(nn.Module) is type
    assert [c.__name__ for c in type("Mlp", (nn.Module,), {}).__mro__][:2] == ["Mlp", "Module"]
