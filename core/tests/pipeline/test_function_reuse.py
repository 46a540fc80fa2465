"""Issue 32 item 6: a module compiles function by function. A build reuses what the
last build of the module found for each function whose key is unchanged
(`compiler.function_keys`, `compiler.function_records`), so an edit re-types what
changed; and a record is never reused wrongly: after each kind of edit a function's
types depend on (its own body, a module constant, a helper a typed loop inlines, an
import, a class) the program prints what Python prints, through the fast path, and
the build equals a cold build of the same source in an empty cache."""

from __future__ import annotations

import glob
import hashlib
import json
import marshal
import os
from pathlib import Path
from typing import Any

import pytest
from pipeline_harness import Harness, stats_table, write

from ppy_core.cache.functions import pack_path
from ppy_core.cache.root import using_root

pytest.importorskip("numpy")
pytest.importorskip("ppy_llvm")

PROGRAM = """\
import numpy as np
from numpy import sqrt as root

SCALE = 0.5


class Box:
    factor = 2.0


def helper(k):
    if k > 3:
        return k * 2
    return k + 1


def fused(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * 1.5 + b) * (a - b * SCALE)


def looped(a: np.ndarray, n: int) -> float:
    s = 0.0
    for i in range(n):
        s += a[i] * helper(i)
    return s


def rooted(a: np.ndarray) -> np.ndarray:
    return root(a) * 3.0 + 1.0


def boxed(a: np.ndarray) -> np.ndarray:
    return a * Box.factor + 0.25


def other(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    t = -a * b + a / 4.0
    return t * t - 1.0


a = np.linspace(0.5, 1.5, 8)
b = np.linspace(1.0, 2.0, 8)
print(repr(fused(a, b).tolist()))
print(repr(looped(a, 8)))
print(repr(rooted(a).tolist()))
print(repr(boxed(a).tolist()))
print(repr(other(a, b).tolist()))
"""
FUNCTIONS = 6  # top-level functions of PROGRAM
#: functions whose sites run fast: plain arithmetic and the typed loop (a library
#: function's kernel may be refused on a CPU where its bits are not proven NumPy's)
FAST = ("fused", "looped", "boxed", "other")


def _entry(cache: Path, program: Path, source: str) -> Path:
    """The cache entry (its files folder) built for `source` at `program` (not a
    specialization's)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    for manifest in glob.glob(str(cache / "entries" / "*" / "files" / "manifest.json")):
        found = json.loads(Path(manifest).read_text())
        if (
            found["components"]["source"] == digest
            and found["module"]["path"] == str(program.resolve())
            and "specialization" not in found
        ):
            return Path(manifest).parent
    raise AssertionError(f"no entry for the source in {cache}")


def _build(entry: Path) -> tuple[dict[str, Any], Any]:
    """An entry's manifest (but what differs between any two builds) and its code."""
    manifest = json.loads((entry / "manifest.json").read_text())
    for varying in ("functions", "key", "components"):
        manifest.pop(varying)
    return manifest, marshal.loads((entry / "module.code").read_bytes())


def _env(cache: Path, **variables: str) -> dict[str, str]:
    """The user's environment: no PPY_ setting, no test kit's plugins on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PPY_")}
    env.pop("PYTHONPATH", None)
    return {**env, "PPY_CACHE_DIR": str(cache), **variables}


def _run(
    harness: Harness, program: Path, source: str, fast_in: tuple[str, ...] = FAST
) -> dict[str, int]:
    """Write `source`, run it with python and ppy (same output, through the fast
    path); where the build reused records, check it equals a cold build of the same
    source. The functions the build reused and typed."""
    program.write_text(source)
    want = harness.python(program, env=_env(harness.cache))
    assert want.returncode == 0, want.stderr
    got = harness.ppy(program, env=_env(harness.cache, PPY_STATS="1"))
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout
    fast = {
        site.partition(":")[2].partition(".")[0]: n
        for site, (n, _) in stats_table(got.stderr).items()
    }
    assert all(fast.get(f, 0) > 0 for f in fast_in), got.stderr
    entry = _entry(harness.cache, program, source)
    functions: dict[str, int] = json.loads((entry / "manifest.json").read_text())["functions"]
    if functions["reused"]:
        cold = harness.tmp / f"cold-{os.urandom(4).hex()}"
        assert harness.ppy(program, env=_env(cold)).stdout == want.stdout
        assert _build(entry) == _build(_entry(cold, program, source))
    return functions


@pytest.fixture
def program(harness: Harness, tmp_path: Path) -> Path:
    folder = write(tmp_path / "proj", {"pyproject.toml": '[project]\nname = "reuse"\n'})
    path = folder / "prog.py"
    assert _run(harness, path, PROGRAM) == {"reused": 0, "typed": FUNCTIONS}
    return path


def test_an_edit_retypes_what_changed(harness: Harness, program: Path) -> None:
    edited = PROGRAM.replace("a * 1.5 + b", "a * 9.75 + b")
    assert _run(harness, program, edited) == {"reused": FUNCTIONS - 1, "typed": 1}
    # `looped` is a typed loop that builds `helper` in place: a stale record of it
    # would compute with `k * 2`
    edited = edited.replace("return k * 2", "return k * 5 - 1")
    assert _run(harness, program, edited) == {"reused": FUNCTIONS - 2, "typed": 2}
    # `fused` loses its site: every later site's number is one less, so `other`'s first
    # site now has the number its second had (what was prepared for that one is not it)
    edited = edited.replace("return (a * 9.75 + b) * (a - b * SCALE)", "return a")
    assert "return a\n" in edited
    fast = tuple(f for f in FAST if f != "fused")
    assert _run(harness, program, edited, fast) == {"reused": FUNCTIONS - 1, "typed": 1}
    # what the module's top level runs (not what it binds) is no function's business
    edited += "print(repr(other(b, a).tolist()))\n"
    assert _run(harness, program, edited, fast) == {"reused": FUNCTIONS, "typed": 0}


#: edits every function's types may depend on, made one after another
MODULE_EDITS = [
    ("SCALE = 0.5", "SCALE = np.full(8, 0.25)"),  # a module constant, of another type
    ("from numpy import sqrt as root", "from numpy import cbrt as root"),  # an import
    ("    factor = 2.0", "    factor = 3.5"),  # a class
    ("    s = 0.0\n", "    s = 0.0\n    helper = abs\n"),  # `helper` bound twice: no helper
]


def test_module_edits_retype_every_function(harness: Harness, program: Path) -> None:
    source = PROGRAM
    for old, new in MODULE_EDITS:
        assert old in source
        source = source.replace(old, new)
        fast = FAST if "helper =" not in new else tuple(f for f in FAST if f != "looped")
        assert _run(harness, program, source, fast) == {"reused": 0, "typed": FUNCTIONS}, new


def test_a_tampered_pack_is_not_read(harness: Harness, program: Path) -> None:
    with using_root(harness.cache):
        pack = pack_path(str(program.resolve()))
    data = bytearray(pack.read_bytes())
    data[len(data) // 2] ^= 0xFF
    pack.write_bytes(bytes(data))
    edited = PROGRAM.replace("+ 0.25", "+ 0.75")
    assert _run(harness, program, edited) == {"reused": 0, "typed": FUNCTIONS}


def test_cache_clear_removes_the_packs(harness: Harness, tmp_path: Path) -> None:
    cache = tmp_path / "cache"  # its own: clearing the module's shared one would cost the rest
    program = write(tmp_path / "proj", {"prog.py": PROGRAM}) / "prog.py"
    assert harness.ppy(program, env=_env(cache)).returncode == 0
    with using_root(cache):
        pack = pack_path(str(program.resolve()))
    assert pack.is_file()
    info = harness.ppy("cache", "info", env=_env(cache))
    assert "functions" in info.stdout, info.stdout
    done = harness.ppy("cache", "clear", env=_env(cache))
    assert done.returncode == 0, done.stderr
    assert not pack.parent.exists(), done.stdout


def test_lines_inserted_above_reuse_the_records(harness: Harness, program: Path) -> None:
    """A function's key leaves out where it starts: a line inserted or deleted above
    it re-types nothing (the records' lines are moved, and the build equals a cold
    build of the shifted source, manifest and module code); a line inserted between
    a typed loop and the helper it builds in place re-types that loop only."""
    shifted = "# a comment line first\n" + PROGRAM
    assert _run(harness, program, shifted) == {"reused": FUNCTIONS, "typed": 0}
    split = shifted.replace("\n\ndef fused(", "\n\n\ndef fused(")
    assert split.count("\n\n\n\ndef fused(") == 1
    assert _run(harness, program, split) == {"reused": FUNCTIONS - 1, "typed": 1}
    deleted = split.removeprefix("# a comment line first\n")  # not built before
    assert _run(harness, program, deleted) == {"reused": FUNCTIONS, "typed": 0}


SHIFTED = """\
import numpy as np


def total(n):
    if n > 2:
        return n - 1
    return n


def scaled(x: np.ndarray, n: int) -> float:
    c = 2.0 * n
    s = 0.0
    for v in x:
        s += (v * c if v > 0.5 else v + c) + total(n)
    return s


def counted(n: int) -> int:
    t = 0
    for i in range(n):
        t += i
    return t


def fails(a: np.ndarray, k: int) -> float:
    s = 0.0
    for i in range(3):
        s += a[i + k]
    return s


a = np.linspace(0.0, 1.0, 6)
print(repr(scaled(a, 3)), counted(4))
print(repr(fails(a, 0)))
print(repr(fails(a.tolist(), 9)))
"""


def test_shifted_records_report_the_new_lines(harness: Harness, tmp_path: Path) -> None:
    """After lines are inserted above them, reused records report the new lines:
    `ppy explain`'s remarks, the traceback of a call Python runs (a list where the
    typed loop takes an array), and the typed loop's prologue, `for v in x`, `a if c
    else b` and inlined helper, which stay fast (the helper's line, which the site
    checks at run time, moved too)."""
    folder = write(tmp_path / "proj", {"pyproject.toml": '[project]\nname = "shift"\n'})
    program = folder / "prog.py"

    def run(source: str) -> tuple[dict[str, int], str, str]:
        program.write_text(source)
        want = harness.python(program, env=_env(harness.cache))
        got = harness.ppy(program, env=_env(harness.cache, PPY_STATS="1"))
        assert got.returncode == want.returncode == 1, got.stderr
        assert got.stdout == want.stdout
        fast = {
            s.partition(":")[2].partition(".")[0]
            for s, (n, _) in stats_table(got.stderr).items()
            if n
        }
        assert {"scaled", "fails"} <= fast, got.stderr
        traceback = _frames(got.stderr, program)  # the program's (not the site's)
        assert traceback == _frames(want.stderr, program)
        entry = _entry(harness.cache, program, source)
        functions = json.loads((entry / "manifest.json").read_text())["functions"]
        explain = harness.ppy("explain", program, env=_env(harness.cache))
        assert explain.returncode == 0, explain.stderr
        return functions, "\n".join(traceback), explain.stdout

    before = run(SHIFTED)
    assert before[0] == {"reused": 0, "typed": 4}
    after = run("# one\n# two\n" + SHIFTED)
    assert after[0] == {"reused": 4, "typed": 0}
    line = SHIFTED.splitlines().index("        s += a[i + k]") + 1
    assert f"line {line}, in fails" in before[1]
    assert f"line {line + 2}, in fails" in after[1]
    lines = SHIFTED.splitlines()
    fl = lines.index("def fails(a: np.ndarray, k: int) -> float:") + 1
    cl = lines.index("        t += i") + 1
    for text, moved in ((before[2], 0), (after[2], 2)):
        assert f"function fails (line {fl + moved})" in text
        assert (
            f"prog.py:{cl + moved} (counted): typed loops: stays Python: line {cl + moved}:" in text
        )
    cold = harness.ppy("explain", program, env=_env(tmp_path / "cold"))
    assert cold.stdout.split("\n", 1)[1] == after[2].split("\n", 1)[1]  # but hit or miss


def _frames(stderr: str, program: Path) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith(f'  File "{program}"')]
