"""The microkernel's import boundaries, checked over the project's sources.

- the core (`core/`) imports no array library, no plugin package, no backend package;
- a backend (`backends/*`) imports no plugin package, nor names one in a string
  ("ppy_torch.fused:load_site" in a table is an import deferred, not avoided);
- a plugin (`packages/*`) imports no backend package, nor names one in a string;
- a runtime part (`core/ppy_core/runtime`, and a plugin's `runtime`/`_runtime`
  package or `runtime.py`) imports no compiler module at module level (a lazy
  import inside a function is its way out).

Imports are read with `ast` (absolute imports, also inside functions); tests,
benchmarks, examples and build output are not checked. The rules run over the
real tree, and over small fake trees that break each one, so the check can fail.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = frozenset(
    {
        *("numpy", "torch", "jax", "jaxlib", "flax", "optax", "pyarrow", "pandas"),
        *("scipy", "pydantic", "uvicorn", "fastapi", "starlette", "llvmlite"),
    }
)
COMPILER = frozenset({"frontend", "passes", "driver", "compiler", "llvmlite"})
SKIP = frozenset({"tests", "benchmarks", "examples", "build", ".venv", "__pycache__", "docs"})
RUNTIME_PARTS = frozenset({"runtime", "_runtime"})
_DOTTED = re.compile(r"^([A-Za-z_]\w*)(\.\w+)*(:\w+)?$")


def packages_of(folder: Path) -> set[str]:
    """Top-level packages of the distributions in `folder` (`packages/`, `backends/`)."""
    if not folder.is_dir():
        return set()
    return {
        p.name
        for dist in folder.iterdir()
        if dist.is_dir()
        for p in dist.iterdir()
        if p.is_dir() and (p / "__init__.py").is_file()
    }


def sources(dist: Path) -> Iterator[Path]:
    for path in sorted(dist.rglob("*.py")):
        if not SKIP.intersection(path.relative_to(dist).parts):
            yield path


def imports(tree: ast.Module) -> Iterator[tuple[str, int, bool]]:
    """(module, line, at module level?) of every absolute import in `tree`."""
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, id(node) in top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node.lineno, id(node) in top


def named_modules(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """String constants that spell a module path ("pkg.mod" or "pkg.mod:function")."""
    for node in ast.walk(tree):
        text = node.value if isinstance(node, ast.Constant) else None
        if isinstance(text, str) and _DOTTED.match(text) and ("." in text or ":" in text):
            yield text.partition(":")[0], node.lineno


def _runtime_part(path: Path, dist: Path) -> bool:
    parts = path.relative_to(dist).parts
    return bool(RUNTIME_PARTS.intersection(parts[:-1])) or path.stem in RUNTIME_PARTS


def crossings(root: Path) -> list[str]:
    """Every import (or module named in a string) that crosses a boundary under `root`."""
    plugins, backends = packages_of(root / "packages"), packages_of(root / "backends")
    found: list[str] = []

    def check(dist: Path, banned: set[str] | frozenset[str], why: str, strings: bool) -> None:
        for path in sources(dist):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            except (SyntaxError, UnicodeDecodeError) as exc:
                found.append(f"{path.relative_to(root)}: unreadable ({exc})")
                continue
            where = path.relative_to(root)
            for module, line, at_top in imports(tree):
                if module.split(".")[0] in banned:
                    found.append(f"{where}:{line}: imports {module} ({why})")
                if at_top and _runtime_part(path, dist) and COMPILER & set(module.split(".")):
                    found.append(f"{where}:{line}: runtime imports {module} at module level")
            for module, line in named_modules(tree) if strings else ():
                if module.split(".")[0] in banned:
                    found.append(f"{where}:{line}: names {module} in a string ({why})")

    if (root / "core").is_dir():
        check(root / "core", LIBRARIES | plugins | backends, "the core knows no library", False)
    for dist in sorted((root / "backends").glob("*/")):
        check(dist, plugins, "a backend never imports a plugin", True)
    for dist in sorted((root / "packages").glob("*/")):
        check(dist, backends, "a plugin never imports a backend", True)
    return found


def test_the_tree_keeps_its_boundaries() -> None:
    assert (ROOT / "core" / "ppy_core").is_dir()
    assert crossings(ROOT) == []


def _tree(tmp: Path, files: dict[str, str]) -> Path:
    """A fake project: core, one plugin distribution `ppy-p`, one backend `ppy-b`."""
    base = {
        "core/ppy_core/__init__.py": "",
        "core/ppy_core/runtime/__init__.py": "",
        "packages/ppy-p/ppy_p/__init__.py": "",
        "backends/ppy-b/ppy_b/__init__.py": "",
    }
    for name, text in {**base, **files}.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("core/ppy_core/x.py", "import numpy\n", "imports numpy (the core knows no library)"),
        ("core/ppy_core/x.py", "def f():\n    import ppy_p.y\n", "imports ppy_p.y"),
        ("core/ppy_core/x.py", "from ppy_b import k\n", "imports ppy_b"),
        ("backends/ppy-b/ppy_b/x.py", "from ppy_p._runtime import make\n", "a backend never"),
        ("backends/ppy-b/ppy_b/x.py", "T = {'p': 'ppy_p.fused:load'}\n", "names ppy_p.fused"),
        ("packages/ppy-p/ppy_p/x.py", "def f():\n    from ppy_b.loader import k\n", "a plugin"),
        ("packages/ppy-p/ppy_p/x.py", "LOADER = 'ppy_b.loader'\n", "names ppy_b.loader"),
        (
            "core/ppy_core/runtime/x.py",
            "from ppy_core.compiler.driver import Builder\n",
            "runtime imports ppy_core.compiler.driver at module level",
        ),
        (
            "packages/ppy-p/ppy_p/_runtime/__init__.py",
            "import llvmlite.binding\n",
            "runtime imports llvmlite.binding at module level",
        ),
    ],
)
def test_each_rule_catches_a_crossing(tmp_path: Path, name: str, text: str, expected: str) -> None:
    found = crossings(_tree(tmp_path, {name: text}))
    assert len(found) == 1, found
    assert found[0].startswith(f"{name}:"), found
    assert expected in found[0], found


def test_what_is_allowed_passes(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            # a lazy compiler import is the runtime's way out
            "core/ppy_core/runtime/x.py": "def f():\n    from ppy_core.compiler import c\n",
            # plugins may import their library and the core; backends the core
            "packages/ppy-p/ppy_p/x.py": "import numpy\nfrom ppy_core.runtime import abi\n",
            "backends/ppy-b/ppy_b/x.py": "from ppy_core.runtime.adapter import adapter\n",
            # tests may join anything
            "backends/ppy-b/tests/test_x.py": "import ppy_p\n",
            # a sentence is not a module path
            "backends/ppy-b/ppy_b/y.py": "DOC = 'see ppy_p for the guard.'\n",
        },
    )
    assert crossings(root) == []
