"""The runtime never imports the compiler, not even lazily: a process with a
compiler registers it (`runtime.compiling`), and a built artifact's process has
none (a module missing from the cache is then E3040, an ImportError)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from adoption_harness import Project

from ppy_core.runtime import compiling

RUNTIME = Path(compiling.__file__).resolve().parent


def test_no_runtime_module_imports_the_compiler() -> None:
    found = []
    for path in sorted(RUNTIME.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            found += [f"{path.name}:{node.lineno}" for n in names if "compiler" in n.split(".")]
    assert found == []


def test_without_a_registered_compiler_a_miss_is_a_coded_import_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(compiling, "_COMPILER", None)
    with pytest.raises(compiling.NoCompiler, match=r"no compiler is in this process.*E3040"):
        compiling.compile_path(tmp_path / "m.py")


def test_import_ppy_registers_the_compiler(project: Project) -> None:
    done = project.python(
        "from ppy_core.runtime import compiling\n"
        "before = compiling.registered()\n"
        "import ppy\n"
        "print(before, compiling.registered())\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
