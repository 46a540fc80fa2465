"""Text cases: each `cases/*.ppyir` file parses, verifies and prints back to itself.

A file's leading `//` lines are its header. A header line `// expect-error: TEXT`
makes it a negative case: parsing or verifying must raise InvalidIRError whose
message contains TEXT.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir import core_registry, parse_ir, print_ir, verify

CASES = sorted((Path(__file__).parent / "cases").glob("*.ppyir"))
EXPECT = "// expect-error:"


def split(path: Path) -> tuple[list[str], str]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    n = next((i for i, line in enumerate(lines) if not line.startswith("//")), len(lines))
    return [line.strip() for line in lines[:n]], "".join(lines[n:])


def test_there_are_positive_and_negative_cases() -> None:
    negatives = [p for p in CASES if any(h.startswith(EXPECT) for h in split(p)[0])]
    assert len(negatives) >= 8
    assert len(CASES) - len(negatives) >= 5


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_case(path: Path) -> None:
    header, body = split(path)
    expected = [h.removeprefix(EXPECT).strip() for h in header if h.startswith(EXPECT)]
    if expected:
        with pytest.raises(InvalidIRError) as info:
            verify(parse_ir(body, core_registry()))
        assert expected[0] in info.value.diagnostic.message
        return
    op = parse_ir(body, core_registry())
    verify(op)
    assert print_ir(op) == body
