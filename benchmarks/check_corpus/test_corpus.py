"""The checker corpus: `ppy check` finds every seeded error (`# expect: CODE` on its line,
with that code) and reports nothing on the clean files. `benchmarks/checkers.py` runs the
same corpus through mypy and pyright for the comparison table."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppy_core.compiler.check import check_paths

CORPUS = Path(__file__).resolve().parent

for library in ("numpy", "torch", "pydantic"):
    pytest.importorskip(library)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))


def _expected() -> set[tuple[str, int, str]]:
    return {
        (path.name, number, text.rpartition("# expect:")[2].strip())
        for path in CORPUS.glob("seeded_*.py")
        for number, text in enumerate(path.read_text().splitlines(), 1)
        if "# expect:" in text
    }


def test_every_seeded_error_and_nothing_else() -> None:
    report = check_paths([str(CORPUS)])
    found = {
        (Path(f.location.path).name, f.location.line, f.code)
        for f in report.findings
        if f.location is not None
    }
    assert found == _expected()
    assert len(found) == 7


EXAMPLES = CORPUS.parents[1] / "examples"
#: what is not done yet, so strict mode over that example still finds it
GAPS: dict[str, str] = {}


def _needs(folder: Path) -> set[str]:
    import ast
    import sys

    tops: set[str] = set()
    for path in [*folder.rglob("*.py"), *folder.rglob("*.ppy")]:
        for node in ast.walk(ast.parse(path.read_bytes())):
            if isinstance(node, ast.Import):
                tops.update(a.name.partition(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                tops.add(node.module.partition(".")[0])
    return {t for t in tops if t not in sys.stdlib_module_names}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            p.name,
            marks=[pytest.mark.xfail(strict=True, reason=GAPS[p.name])] if p.name in GAPS else [],
        )
        for p in sorted(EXAMPLES.glob("[0-9][0-9]_*"))
    ],
)
def test_every_program_example_checks_clean_under_strict(name: str) -> None:
    import importlib.util

    folder = EXAMPLES / name
    for module in sorted(_needs(folder)):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")
    report = check_paths([str(folder)], strict=True)
    assert [str(f) for f in report.findings] == []
    assert report.files >= 1
