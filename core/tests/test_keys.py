"""Fingerprints and cache keys; keying a library-free module imports no plugin or library."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ppy_core import __version__
from ppy_core.cache.keys import (
    backend_fingerprints,
    cache_key,
    fingerprints,
    imported_modules,
    plugin_fingerprints,
    usable_fingerprints,
)
from ppy_core.diagnostics import InternalError, PluginError
from ppy_core.interface.backend import Backend
from ppy_core.interface.plugin import Plugin

CORE = Path(__file__).resolve().parents[1]
LIBRARIES = (
    "numpy",
    "torch",
    "jax",
    "flax",
    "optax",
    "pyarrow",
    "pandas",
    "scipy",
    "pydantic",
    "uvicorn",
    "fastapi",
    "starlette",
    "llvmlite",
)
PLUGIN_PACKAGES = (
    "ppy_numpy",
    "ppy_torch",
    "ppy_jax",
    "ppy_arrow",
    "ppy_pandas",
    "ppy_scipy",
    "ppy_web",
    "ppy_llvm",
    "ppy_cuda",
)


class Foo(Plugin):
    name = "foo"

    def fingerprint(self) -> str:
        return "v1:foo=1.0"


class Fast(Backend):
    name = "foo"

    def fingerprint(self) -> str:
        return "v1:fast"


def test_fingerprints_are_keyed_by_kind_and_name() -> None:
    assert fingerprints([Foo()], [Fast()]) == {"plugin:foo": "v1:foo=1.0", "backend:foo": "v1:fast"}
    assert plugin_fingerprints([Foo()]) == {"foo": "v1:foo=1.0"}
    assert backend_fingerprints([Fast()]) == {"foo": "v1:fast"}


def test_a_failing_fingerprint_is_a_plugin_error() -> None:
    class Bad(Plugin):
        name = "bad"

        def fingerprint(self) -> str:
            raise OSError("no library")

    class Empty(Plugin):
        name = "empty"

        def fingerprint(self) -> str:
            return ""

    with pytest.raises(PluginError) as raised:
        plugin_fingerprints([Bad()])
    assert raised.value.code == "E1904"
    assert "OSError: no library" in str(raised.value)
    with pytest.raises(PluginError) as raised:
        plugin_fingerprints([Empty()])
    assert raised.value.code == "E1905"


def test_a_failing_fingerprint_leaves_out_only_that_plugin_with_one_E1908_warning() -> None:
    class Bad(Plugin):
        name = "bad"

        def fingerprint(self) -> str:
            raise OSError("no library")

    class Wrong(Backend):
        name = "wrong"

        def fingerprint(self) -> str:
            return 7  # type: ignore[return-value]

    found, dropped = usable_fingerprints("plugin", [Bad(), Foo()])
    assert found == {"foo": "v1:foo=1.0"}
    assert [(d.code, d.severity) for d in dropped] == [("E1908", "warning")]
    assert "plugin 'bad': fingerprint() raised OSError: no library" in dropped[0].message
    assert "[tool.ppy.plugins.bad] enabled = false" in dropped[0].hint
    found, dropped = usable_fingerprints("backend", [Wrong(), Fast()])
    assert found == {"foo": "v1:fast"}
    assert "backend 'wrong': fingerprint() returned 7" in dropped[0].message


def test_cache_key_is_sha256_hex_and_deterministic() -> None:
    key = cache_key(b"x = 1\n", {"opt": 2}, {"numpy": "v1:numpy=2"}, {"llvm": "v1:llvm=20"})
    assert len(key) == 64
    assert int(key, 16) >= 0
    assert key == cache_key(b"x = 1\n", {"opt": 2}, {"numpy": "v1:numpy=2"}, {"llvm": "v1:llvm=20"})


def test_cache_key_is_the_same_in_another_process() -> None:
    args = (b"x = 1\n", {"opt": 2, "flags": {"b", "a"}}, {"numpy": "v1"}, {"llvm": "v1"})
    code = f"from ppy_core.cache.keys import cache_key\nprint(cache_key(*{args!r}))\n"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(CORE), "PYTHONHASHSEED": "123"},
    )
    assert done.stdout.strip() == cache_key(*args)


@pytest.mark.parametrize(
    "change",
    ["source", "options", "plugin", "backend", "extra", "plugin-set"],
)
def test_every_input_changes_the_key(change: str) -> None:
    base = {
        "source": b"a",
        "options": {"opt": 2},
        "plugin_fps": {"numpy": "v1:numpy=2.0"},
        "backend_fps": {"llvm": "v1"},
        "extra_files": {"data.json": b"{}"},
    }
    changed = dict(base)
    if change == "source":
        changed["source"] = b"b"
    elif change == "options":
        changed["options"] = {"opt": 3}
    elif change == "plugin":
        changed["plugin_fps"] = {"numpy": "v1:numpy=2.1"}
    elif change == "backend":
        changed["backend_fps"] = {"llvm": "v2"}
    elif change == "extra":
        changed["extra_files"] = {"data.json": b"[]"}
    else:
        changed["plugin_fps"] = {"numpy": "v1:numpy=2.0", "scipy": "v1"}
    assert cache_key(**base) != cache_key(**changed)  # type: ignore[arg-type]


def test_core_version_is_part_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    key = cache_key(b"a", {}, {}, {})
    monkeypatch.setattr("ppy_core.cache.keys.__version__", __version__ + ".post1")
    assert cache_key(b"a", {}, {}, {}) != key


@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=6))
def test_option_order_does_not_matter(options: dict[str, object]) -> None:
    reordered = dict(reversed(list(options.items())))
    assert cache_key(b"s", options, {}, {}) == cache_key(b"s", reordered, {}, {})


def test_unkeyable_option_is_an_internal_error() -> None:
    with pytest.raises(InternalError) as raised:
        cache_key(b"s", {"callback": object()}, {}, {})
    assert "options.callback" in str(raised.value)


def test_imported_modules() -> None:
    source = (
        b"import numpy as np, os.path\nfrom jax import numpy as jnp\nfrom . import x\n"
        b"def f():\n    import pandas\n"
    )
    assert imported_modules(source) == {"numpy", "os.path", "jax", "jax.numpy", "pandas"}
    assert imported_modules(b"def (:") == frozenset()


KEYING = """
import json, sys
before = set(sys.modules)
from ppy_core.project.config import load_config
from ppy_core.interface.discovery import activate
from ppy_core.cache.keys import cache_key, imported_modules, plugin_fingerprints
source = sys.argv[1].encode()
activation = activate(imported_modules(source), load_config(sys.argv[2]))
fps = plugin_fingerprints(activation.plugins)
key = cache_key(source, {"opt": 2}, fps, {})
print(json.dumps({"plugins": [p.name for p in activation.plugins], "fingerprints": fps,
                  "new": sorted(set(sys.modules) - before)}))
"""


def _key_in_fresh_process(source: str, project: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", KEYING, source, str(project)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _tops(modules: object) -> set[str]:
    assert isinstance(modules, list)
    return {m.partition(".")[0] for m in modules}


def test_keying_a_library_free_module_imports_no_plugin_and_no_library(tmp_path: Path) -> None:
    source = "import math\nfrom os import path\n\ndef f(x: float) -> float:\n    return x + 1\n"
    out = _key_in_fresh_process(source, tmp_path)
    assert out["plugins"] == []
    imported = _tops(out["new"])
    assert not imported & set(LIBRARIES), imported & set(LIBRARIES)
    assert not imported & set(PLUGIN_PACKAGES), imported & set(PLUGIN_PACKAGES)


@pytest.mark.skipif(
    importlib.util.find_spec("ppy_numpy") is None or importlib.util.find_spec("numpy") is None,
    reason="needs ppy-numpy and numpy installed",
)
def test_keying_a_numpy_module_imports_numpy_and_its_plugin_only(tmp_path: Path) -> None:
    out = _key_in_fresh_process("import numpy as np\nx = np.sin(1.0)\n", tmp_path)
    assert out["plugins"] == ["numpy"]
    assert str(out["fingerprints"]["numpy"]).startswith("v2:numpy=")  # type: ignore[index]
    imported = _tops(out["new"])
    assert {"numpy", "ppy_numpy"} <= imported
    assert not imported & (set(LIBRARIES) - {"numpy"})
    assert not imported & (set(PLUGIN_PACKAGES) - {"ppy_numpy"})
