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
