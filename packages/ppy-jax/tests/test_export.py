"""Build-time export (through the build-execution service) and the exported function
at run time: one artifact for every batch size, bit-identical to `jax.jit`, every
mismatch kind falling back to the jitted call and counted, the stored executable
used only under its own jaxlib/CPU key."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from jax_project import write_project

from ppy_core.project.build_execution import execute
from ppy_core.project.config import load_config
from ppy_jax._probe import executable_key
from ppy_jax.artifact import Artifact, ArtifactFormatError
from ppy_jax.export import ExportRefusal, export
from ppy_jax.runtime import ExportedFunction


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ModuleType]]:
    folder = write_project(tmp_path_factory.mktemp("jaxproj"), "allow")
    sys.path.insert(0, str(folder))
    try:
        yield folder, importlib.import_module("jaxproj_model")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("jaxproj_model", None)


def build(folder: Path, function: str) -> bytes:
    """The artifact, made as `ppy build` makes it: in a subprocess, under the policy."""
    outcome = execute(
        "ppy_jax.export:export",
        {"module": "jaxproj_model", "function": function, "fingerprint": executable_key()},
        config=load_config(folder),
        who=f"jax export of {function}",
        sys_path=[str(folder)],
    )
    assert outcome.ok, outcome.diagnostic
    return outcome.data


@pytest.fixture(scope="module")
def forward_artifact(project: tuple[Path, ModuleType]) -> bytes:
    return build(project[0], "forward")


@pytest.fixture(scope="module")
def forward(project: tuple[Path, ModuleType], forward_artifact: bytes) -> ExportedFunction:
    return ExportedFunction(forward_artifact, project[1].forward, fingerprint=executable_key())


def same_bits(a: object, b: object) -> bool:
    x, y = np.asarray(a), np.asarray(b)
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def test_one_artifact_serves_batch_1_7_64(forward: ExportedFunction, project) -> None:
    _, model = project
    forward.ppy_reset()
    for batch in (1, 7, 64):
        x = np.random.default_rng(batch).standard_normal((batch, 16)).astype(np.float32)
        assert same_bits(forward(x), model.forward(x))
        assert same_bits(forward(jnp.asarray(x)), model.forward(x))
    assert forward.ppy_stats() == {"fast": 6, "fallback": {}}
    assert not forward.runs_executable  # symbolic batch: no executable, the export runs


FLOATS = st.floats(width=32, allow_nan=True, allow_infinity=True, allow_subnormal=True)


@settings(max_examples=25, deadline=None)
@given(
    hnp.arrays(
        np.float32,
        st.tuples(st.sampled_from([1, 2, 7, 64]), st.just(16)),
        elements=FLOATS | st.sampled_from([-0.0, 0.0, np.inf, -np.inf, np.nan, 1e-45, 3e38]),
    )
)
def test_special_values_bit_identical_to_jit(forward: ExportedFunction, x: np.ndarray) -> None:
    import jaxproj_model

    before = forward.fast
    assert same_bits(forward(x), jaxproj_model.forward(x))
    assert forward.fast == before + 1


@pytest.mark.parametrize(
    ("args", "kwargs", "reason"),
    [
        ((np.zeros((3, 16), np.float64),), {}, "dtype"),
        ((jnp.zeros((3, 16), jnp.bfloat16),), {}, "dtype"),
        ((np.zeros((3, 8), np.float32),), {}, "shape"),
        ((np.zeros((0, 16), np.float32),), {}, "shape"),  # a dimension variable is >= 1
        ((np.zeros((16,), np.float32),), {}, "rank"),
        ((np.zeros((2, 16), np.float32), np.zeros(1)), {}, "pytree structure"),
        (([[0.5] * 16],), {}, "pytree structure"),
        ((1.5,), {}, "python scalar"),
        ((jax.lax.broadcast(jnp.asarray(1.5), (2, 16)),), {}, "weak type"),
        ((), {"x": np.ones((2, 16), np.float32)}, "keyword arguments"),
    ],
)
def test_every_mismatch_falls_back_to_jit(
    forward: ExportedFunction, args: tuple, kwargs: dict, reason: str
) -> None:
    forward.ppy_reset()
    try:
        expected = forward.fallback(*args, **kwargs)
    except (TypeError, ValueError) as exc:  # jit refuses it too: the same error comes back
        with pytest.raises(type(exc)):
            forward(*args, **kwargs)
    else:
        assert same_bits(forward(*args, **kwargs), expected)
    assert forward.ppy_stats() == {"fast": 0, "fallback": {reason: 1}}


def test_inside_another_trace_falls_back_to_the_jitted_function(
    forward: ExportedFunction, project
) -> None:
    """An exported function called under jit/grad/vmap sees tracers: jit composes."""
    model = project[1]
    forward.ppy_reset()
    x = np.random.default_rng(5).standard_normal((3, 16)).astype(np.float32)
    outer = jax.jit(lambda v: forward(v) * 2.0)
    assert same_bits(outer(x), jax.jit(lambda v: model.forward(v) * 2.0)(x))
    assert same_bits(jax.vmap(forward)(x[:, None, :]), jax.vmap(model.forward)(x[:, None, :]))
    assert forward.ppy_stats()["fallback"] == {"inside a jax trace": 2}


def test_foreign_device_falls_back(project, forward_artifact: bytes) -> None:
    model = project[1]
    exported = ExportedFunction(forward_artifact, model.forward, fingerprint="")
    exported.platforms = frozenset({"cuda"})  # as if exported for another platform only
    x = jnp.ones((2, 16), jnp.float32)
    assert same_bits(exported(x), model.forward(x))
    assert exported.ppy_stats() == {"fast": 0, "fallback": {"device": 1}}


def test_pytrees_out_and_several_symbolic_parameters(project) -> None:
    model = project[1]  # exported in this process: the subprocess path is tested above
    data = export({"module": "jaxproj_model", "function": "pair", "fingerprint": "k"})
    pair = ExportedFunction(data, model.pair, fingerprint="k")
    x = np.random.default_rng(0).standard_normal((5, 16)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((5, 4)).astype(np.float32)
    got, want = pair(x, y), model.pair(x, y)
    assert set(got) == {"loss", "out"}
    assert all(same_bits(got[k], want[k]) for k in want)
    with pytest.raises(TypeError):  # "batch" is 5 by x, 3 by y: jit refuses it too
        pair(x, y[:3])
    assert pair.ppy_stats() == {"fast": 1, "fallback": {"shape": 1}}


def test_executable_used_under_its_key_refused_under_another(project) -> None:
    model = project[1]
    data = export({"module": "jaxproj_model", "function": "fixed", "fingerprint": "key-A"})
    assert Artifact.unpack(data).executable  # every length known: compiled at build time
    x = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
    here = ExportedFunction(data, model.fixed, fingerprint="key-A")
    assert here.runs_executable
    assert not here.executable_refused
    assert same_bits(here(x), model.fixed(x))
    other = ExportedFunction(data, model.fixed, fingerprint="key-B (another jaxlib)")
    assert not other.runs_executable
    assert "key-A" in other.executable_refused
    assert same_bits(other(x), model.fixed(x))  # the portable export still runs
    assert other.ppy_stats() == {"fast": 1, "fallback": {}}


def test_corrupt_artifacts_are_refused(project, forward_artifact: bytes) -> None:
    model, data = project[1], forward_artifact
    for bad in (b"", b"PPYJAX1\n", data[:-10], data + b"x", b"garbage" + data):
        with pytest.raises(ArtifactFormatError):
            ExportedFunction(bad, model.forward, fingerprint="")


def test_a_raising_export_is_a_coded_diagnostic(project) -> None:
    folder, _ = project
    outcome = execute(
        "ppy_jax.export:export",
        {"module": "jaxproj_model", "function": "branchy"},
        config=load_config(folder),
        who="jax export of branchy",
        sys_path=[str(folder)],
    )
    assert outcome.diagnostic is not None
    assert outcome.diagnostic.code == "E0031"
    assert "InconclusiveDimensionOperation" in outcome.diagnostic.message
    assert "jax export of branchy failed at build time" in outcome.diagnostic.message


def test_parameters_without_shape_and_dtype_are_refused(project) -> None:
    with pytest.raises(ExportRefusal, match=r"no ppy\.Shape and ppy\.DType"):
        export({"module": "jaxproj_model", "function": "unannotated"})


def test_jit_of_exported_is_jits_bits(forward: ExportedFunction) -> None:
    """The steady path is `jax.jit(Exported.call)`: it must equal a plain jitted call."""
    x = jnp.linspace(-3, 3, 7 * 16, dtype=jnp.float32).reshape(7, 16)
    assert same_bits(forward._portable(x), jax.jit(forward.exported.call)(x))


def test_loader_binds_warns_and_falls_back(project, tmp_path: Path) -> None:
    from ppy_jax.runtime import load_exported

    model = project[1]
    data = export({"module": "jaxproj_model", "function": "fixed", "fingerprint": "elsewhere"})
    (tmp_path / "f.ppyjax").write_bytes(data)
    raw = model.fixed.__wrapped__  # as `@ppy.jax` alone leaves it: not jitted
    unit = {"file": "f.ppyjax", "function": "fixed", "jit_fallback": True}
    with pytest.warns(RuntimeWarning, match=r"E3025"):  # executable of another machine
        bound = load_exported(unit, tmp_path, raw)
    assert isinstance(bound, ExportedFunction)
    assert hasattr(bound.__wrapped__, "lower")  # the fallback (and PPY_VERIFY's) is jitted
    x = np.random.default_rng(9).standard_normal((8, 16)).astype(np.float32)
    assert same_bits(bound(x), model.fixed(x))
    with pytest.warns(RuntimeWarning, match=r"E3026"):
        missing = load_exported({**unit, "file": "gone.ppyjax"}, tmp_path, raw)
    assert hasattr(missing, "lower")
    assert same_bits(missing(x), model.fixed(x))
