"""The core's layout: one package per part, and no import circles between modules.

Module-level imports only (what runs when a module is imported): imports under
`if TYPE_CHECKING:` and inside functions are how a part reaches another lazily,
and cannot form an import-time circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PPY_CORE = Path(__file__).resolve().parents[1] / "ppy_core"
PARTS = {
    "interface",
    "ir",
    "compiler",
    "cache",
    "runtime",
    "project",
    "cli",
    "testing",
    "integrations",
}


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def top_level_imports(tree: ast.Module, package: str) -> Iterator[str]:
    """Absolute names of the ppy_core modules a module imports when it is imported."""
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and not _is_type_checking(node):
            todo.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            todo.extend(node.body + node.orelse + node.finalbody)
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield base
            yield from (f"{base}.{a.name}" for a in node.names)


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = {module_name(p, root): p for p in root.rglob("*.py") if "__pycache__" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = {m for m in top_level_imports(tree, package) if m in modules and m != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of `graph`, as a list of modules, or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_core_has_no_import_circle() -> None:
    cycle = find_cycle(import_graph(PPY_CORE))
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_folders_are_the_parts() -> None:
    packages = {p.name for p in PPY_CORE.iterdir() if (p / "__init__.py").is_file()}
    assert packages == PARTS
    loose = {p.stem for p in PPY_CORE.glob("*.py")} - {"__init__"}
    assert loose == {"diagnostics"}, "a new top-level module belongs in a part"


def test_the_circle_finder_finds_a_circle(tmp_path: Path) -> None:
    pkg = tmp_path / "ppy_core"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("from ppy_core.a import y\n")
    (pkg / "a" / "y.py").write_text("from . import x\n")
    (pkg / "a" / "z.py").write_text("def f():\n    from ppy_core.a import x\n")
    cycle = find_cycle(import_graph(pkg))
    assert cycle is not None
    assert set(cycle) == {"ppy_core.a.x", "ppy_core.a.y"}


@pytest.mark.parametrize(
    "lazy", ["def f():\n    import ppy_core.a.x\n", "if TYPE_CHECKING:\n    import ppy_core.a.x\n"]
)
def test_lazy_imports_make_no_circle(tmp_path: Path, lazy: str) -> None:
    pkg = tmp_path / "ppy_core"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("import ppy_core.a.y\n")
    (pkg / "a" / "y.py").write_text("from typing import TYPE_CHECKING\n" + lazy)
    assert find_cycle(import_graph(pkg)) is None
