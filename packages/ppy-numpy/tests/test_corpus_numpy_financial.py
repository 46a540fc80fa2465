"""The real check: a third-party pure-NumPy library's own pytest suite (numpy-financial
1.0.0, vendored under corpus/ with its license) run under plain pytest and under
`pytest --ppy-packages=numpy_financial`: the same tests pass, and the plugin's
summary line shows compiled sites taking the fast path."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.needs_llvm, pytest.mark.needs_cc, pytest.mark.slow]

CORPUS = Path(__file__).resolve().parent / "corpus" / "numpy_financial"
SUMMARY = re.compile(
    r"^ppy: (\d+) modules? compiled, (\d+) sites, (\d+) fast calls, (\d+) fallbacks(?: \((.*)\))?$",
    re.M,
)


def _suite(root: Path, *options: str) -> tuple[set[str], set[str], str]:
    """(passed test ids, failed or errored ids, the output) of the library's suite."""
    env = {k: v for k, v in os.environ.items() if k != "PPY_PACKAGES"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-q", *options],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    passed = set(re.findall(r"^PASSED (\S+)", done.stdout, re.M))
    failed = set(re.findall(r"^(?:FAILED|ERROR) (\S+)", done.stdout, re.M))
    return passed, failed, done.stdout


def test_the_library_suite_passes_the_same_with_its_package_compiled(tmp_path: Path) -> None:
    root = tmp_path / "numpy_financial"
    shutil.copytree(CORPUS, root)
    plain_passed, plain_failed, plain_out = _suite(root, "numpy_financial/tests")
    assert len(plain_passed) >= 20, plain_out
    assert not SUMMARY.search(plain_out)  # the plugin is inert without --ppy-packages
    passed, failed, out = _suite(root, "numpy_financial/tests", "--ppy-packages=numpy_financial")
    assert passed == plain_passed
    assert failed == plain_failed
    found = SUMMARY.search(out)
    assert found, out
    modules, sites, fast = (int(found.group(i)) for i in (1, 2, 3))
    assert modules >= 2  # numpy_financial and numpy_financial._financial, compiled
    assert sites > 0
    assert fast > 0  # compiled sites took the fast path
    print(found.group(0))  # the numbers, in `pytest -s` output and the lead's report
