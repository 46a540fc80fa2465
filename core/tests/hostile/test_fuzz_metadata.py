"""Issue 32: a structured fuzzer over every kind of cache and artifact file.

Seeded (PPY_FUZZ_SEED), a bounded number of cases (PPY_FUZZ_CASES, default 16), a
time limit per case: each case copies the session's warm cache and artifact, mutates
one file (flip a byte, truncate, swap two files, nest deeply, wrong JSON types with
the covering hashes and seal recomputed, so the type checks themselves are reached)
and runs the program one way (the artifact's launcher, `ppy run`, `ppy FILE`). The
output must be Python's or a coded error: no signal, no traceback, no hang, never a
different answer. The launcher script itself is not mutated: it is what Python runs
first, before any check can (see `runtime.integrity`).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

SEED = int(os.environ.get("PPY_FUZZ_SEED", "32"))
CASES = int(os.environ.get("PPY_FUZZ_CASES", "16"))
LIMIT_S = 45


def _files(copy, where: str) -> list[Path]:
    if where == "app":
        root = copy.app
        skip = {copy.app / copy.program.stem}
    else:
        root = copy.cache
        skip = set()
    return sorted(
        p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and p not in skip
    )


def _deep(path: Path) -> None:
    if path.suffix == ".rec":
        path.write_bytes(b"[\x01\x00\x00\x00" * 100_000 + b"N")
    else:
        path.write_text("[" * 100_000 + "]" * 100_000)


def _wrong_types(rng: random.Random, path: Path) -> bool:
    """Replace one value of a JSON file with a value of another type; False if the
    file is not a JSON object."""
    try:
        data = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError):
        return False
    if not isinstance(data, dict) or not data:
        return False
    node: object = data
    for _ in range(rng.randrange(1, 4)):  # walk a few levels down
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        children = [(k, v) for k, v in children if isinstance(v, dict | list) and v]
        if not children:
            break
        _key, node = rng.choice(children)
    keys = list(node) if isinstance(node, dict) else list(range(len(node)))  # type: ignore[arg-type]
    key = rng.choice(keys)
    node[key] = rng.choice([None, 7, "x", [], {}, True, -1.5, [[["deep"]]]])  # type: ignore[index]
    path.write_text(json.dumps(data))
    return True


def _rehash(copy, path: Path) -> None:
    """Make the hashes that cover `path` match again (and reseal a cache manifest):
    what someone able to write the files and read the user's secret could do."""
    from ppy_core.cache.files import seal, secret, sha256_file

    if path.is_relative_to(copy.app):
        top = json.loads((copy.app / "manifest.json").read_text())
        rel = path.relative_to(copy.app).as_posix()
        if rel in top.get("files", {}):
            top["files"][rel] = {"size": path.stat().st_size, "sha256": sha256_file(path)}
            (copy.app / "manifest.json").write_text(json.dumps(top))
    elif path.name == "manifest.json" and path.parent.parent.name == "entries":
        key = secret(copy.cache)
        (path.parent / "seal").write_text(seal(key, path.read_bytes()))


def _mutate(rng: random.Random, copy, where: str) -> str:
    files = _files(copy, where)
    path = rng.choice(files)
    kind = rng.choice(["flip", "truncate", "swap", "deep", "types", "types"])
    if kind == "flip" and path.stat().st_size:
        data = bytearray(path.read_bytes())
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(data))
    elif kind == "truncate":
        size = path.stat().st_size
        path.write_bytes(path.read_bytes()[: rng.randrange(size + 1) if size else 0])
    elif kind == "swap":
        other = rng.choice([f for f in files if f != path] or [path])
        first, second = path.read_bytes(), other.read_bytes()
        path.write_bytes(second)
        other.write_bytes(first)
        path = other if other == path else path
    elif kind == "deep":
        _deep(path)
    elif kind == "types":
        json_files = [p for p in files if p.suffix == ".json"]
        path = rng.choice(json_files)
        if _wrong_types(rng, path):
            _rehash(copy, path)
    return f"{kind} {path.relative_to(copy.cache if where == 'cache' else copy.app)}"


@pytest.mark.parametrize("case", range(CASES))
def test_a_mutated_file_gives_python_or_a_coded_error(copy, kit, case: int) -> None:
    rng = random.Random(SEED * 1000 + case)
    way = rng.choice(["app", "run", "file"])
    where = "app" if way == "app" else "cache"
    if where == "cache":
        copy.warm()
        if way == "run":
            assert copy.run("run", copy.program).returncode == 0
    what = _mutate(rng, copy, where)
    args = ("app",) if way == "app" else ("run", copy.program) if way == "run" else (copy.program,)
    done = copy.run(*args, timeout=LIMIT_S)
    try:
        kit.assert_python_or_coded(done, copy.expected)
    except AssertionError as exc:
        raise AssertionError(f"case {case} (seed {SEED}): {what}, run by {way}: {exc}") from None
