"""A module manifest's run view (`runtime.runview`): what a start reads instead of the
JSON, only while it stands for the very manifest that passed its check."""

from __future__ import annotations

import hashlib
import json
import marshal
from pathlib import Path
from typing import Any

from ppy_core.runtime import integrity, runview
from ppy_core.runtime.artifact import read_manifest, write_manifest
from ppy_core.runtime.module import load


def _unit(symbol: str) -> dict[str, Any]:
    data = {"abi": 1, "symbol": symbol, "signature": {"kind": "map", "leaves": "aa"}}
    return {"backend": "llvm", "data": data, "files": ["k.so"], "loader": "", "runtime": "numpy"}


def _manifest(sites: int) -> dict[str, Any]:
    records = [
        {
            "index": i,
            "id": f"f{i}.1",
            "function": f"f{i}",
            "line": i + 1,
            "col": 4,
            "text": "a * 2.0 + b",
            "ir": "func.func ..." * 50,
            "ir_final": "tensor.kernel ..." * 50,
            "reasons": ["x"],
            "leaves": ["a", "b"],
            "unit": _unit(f"k{i % 3}"),
        }
        for i in range(sites)
    ]
    return {
        "format": 1,
        "python": "cpython-311",
        "module": {"name": "m", "path": "/nowhere/m.py"},
        "key": "k",
        "plugins": [],
        "components": {},
        "expr_sites": records,
        "function_sites": [],
        "remarks": [{"function": "f0", "line": 1, "message": "only explain reads this"}],
        "diagnostics": [],
        "specializable": [],
    }


def _checked(folder: Path) -> None:
    """Mark the folder's files as a cache entry's check does: names, sha256s, identities."""
    files = {
        p.name: {"size": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
        for p in folder.iterdir()
    }
    integrity.mark(folder, files, {n: integrity.stamp((folder / n).stat()) for n in files})


def test_the_view_leaves_out_what_only_explain_reads_and_shares_units(tmp_path: Path) -> None:
    manifest = _manifest(30)
    write_manifest(tmp_path / "manifest.json", manifest)
    _checked(tmp_path)
    found = runview.read(tmp_path)
    assert found is not None
    assert "remarks" not in found
    assert "diagnostics" not in found
    site = found["expr_sites"][4]
    assert set(site) == {"index", "id", "function", "line", "col", "text", "unit"}
    assert site["unit"] == manifest["expr_sites"][4]["unit"]
    # the sites naming one kernel share one unit: read once, not thirty times
    assert found["expr_sites"][1]["unit"] is found["expr_sites"][4]["unit"]
    assert len({id(s["unit"]) for s in found["expr_sites"]}) == 3
    assert (tmp_path / runview.NAME).stat().st_size < (tmp_path / "manifest.json").stat().st_size
    # everything else as the JSON has it
    full = read_manifest(tmp_path)
    assert {k: v for k, v in full.items() if k not in ("expr_sites", "remarks", "diagnostics")} == {
        k: v for k, v in found.items() if k != "expr_sites"
    }


def test_the_view_stands_only_for_the_manifest_that_passed(tmp_path: Path) -> None:
    write_manifest(tmp_path / "manifest.json", _manifest(5))
    (tmp_path / "module.code").write_bytes(marshal.dumps(compile("x = 1", "m", "exec")))
    _checked(tmp_path)
    assert runview.read(tmp_path) is not None
    # the manifest edited and its hash recorded anew (as whoever may write the hashes
    # could): the view names the old manifest's sha256, so the JSON is read, and checked
    edited = _manifest(5)
    edited["expr_sites"][0]["index"] = "0"
    (tmp_path / "manifest.json").write_text(json.dumps(edited))  # the view left as it was
    _checked(tmp_path)
    assert runview.read(tmp_path) is None
    failed = load(tmp_path)
    assert isinstance(failed, Exception)
    assert "E3005" in str(getattr(failed, "code", "")) + str(failed)


def test_a_view_that_did_not_pass_or_is_malformed_is_not_read(tmp_path: Path) -> None:
    write_manifest(tmp_path / "manifest.json", _manifest(3))
    _checked(tmp_path)
    view = tmp_path / runview.NAME
    data = marshal.loads(view.read_bytes())
    view.write_bytes(view.read_bytes() + b"x")  # changed since its check
    assert runview.read(tmp_path) is None
    deep: list[Any] = []
    for _ in range(100):
        deep = [deep]
    data["view"]["components"] = {"x": deep}  # nested deeper than any reader accepts
    view.write_bytes(marshal.dumps(data))
    _checked(tmp_path)
    assert runview.read(tmp_path) is None
    shared: list[Any] = []
    for _ in range(40):
        shared = [shared, shared]  # 2**40 paths through 40 lists: walked once each
    data["view"]["components"] = {"x": shared}
    view.write_bytes(marshal.dumps(data))
    _checked(tmp_path)
    assert runview.read(tmp_path) is None  # 41 levels: fine for depth, not a string
    data["view"]["components"] = {}
    data["view"]["expr_sites"][0]["index"] = "0"
    view.write_bytes(marshal.dumps(data))
    _checked(tmp_path)
    assert runview.read(tmp_path) is None  # the types the runtime reads are checked
