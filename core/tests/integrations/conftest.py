"""Fixtures of the tests of switching ppy on in an existing project (helpers in
adoption_harness.py, importable by the test modules of this folder)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adoption_harness import Project  # (`pytester` is enabled in the root conftest.py)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "proj"
    root.mkdir()
    return Project(root, tmp_path / "cache")
