"""Issue 32, item 5: every reader of cache and artifact metadata bounds depth and size
and fails closed with a coded error (then rebuilds, or runs Python): no hang, no raw
traceback; a manifest's types are checked before use."""

from __future__ import annotations

import json
import marshal
from pathlib import Path

import pytest

from ppy_core.cache import records
from ppy_core.cache.files import sha256_file
from ppy_core.runtime import jsontext

DEEP = 100_000


def test_jsontext_refuses_deep_and_large_text() -> None:
    for text in ("[" * DEEP + "]" * DEEP, '{"a":' * 70 + "1" + "}" * 70, "[" * DEEP):
        with pytest.raises(ValueError, match="nested deeper"):
            jsontext.loads(text)
    with pytest.raises(ValueError, match="more than"):
        jsontext.loads(b"[" + b"1," * 600 + b"1]", max_bytes=1000)
    assert jsontext.loads("[" * 60 + "]" * 60) == eval("[" * 60 + "]" * 60)


def test_records_refuse_deep_cyclic_and_large_values(tmp_path: Path) -> None:
    source = tmp_path / "s.txt"
    source.write_text("x")
    import os
    import time

    os.utime(source, (time.time() - 60, time.time() - 60))
    records.write("r", [str(source)], {"v": 1}, tmp_path)
    assert records.read("r", tmp_path) == {"v": 1}
    path = records.record_path("r", tmp_path)
    good = marshal.loads(path.read_bytes())
    for value in (
        b"[\x01\x00\x00\x00" * DEEP + b"N",  # a list nested 100,000 deep (raw)
        b"\xdb\x01\x00\x00\x00r\x00\x00\x00\x00",  # a list that holds itself
    ):
        path.write_bytes(value)
        assert records.read("r", tmp_path) is None
    deep: object = 1
    for _ in range(records.MAX_DEPTH + 5):
        deep = [deep]
    path.write_bytes(marshal.dumps(dict(good, value=deep)))  # well-formed, too deep
    assert records.read("r", tmp_path) is None
    path.write_bytes(marshal.dumps(dict(good, files={str(source): "x"})))
    assert records.read("r", tmp_path) is None


def test_a_deep_record_costs_one_recompute_not_a_hang(copy) -> None:
    copy.warm()
    for record in (copy.cache / "records").glob("*.rec"):
        record.write_bytes(b"[\x01\x00\x00\x00" * DEEP + b"N")
    done = copy.run(copy.program, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == copy.expected


def test_a_deep_artifact_manifest_is_a_coded_error(copy) -> None:
    (copy.app / "manifest.json").write_text("[" * DEEP + "]" * DEEP)
    done = copy.run("app", timeout=30)
    assert done.returncode == 1, done.stderr
    assert "[E3005]" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(expr_sites="all"),
        lambda m: m["expr_sites"][0].update(index="0"),
        lambda m: m["expr_sites"][0]["unit"].update(files=["../../../etc/passwd"]),
        lambda m: m["module"].update(name=7),
        lambda m: m.update(module=None),
    ],
    ids=["sites-not-a-list", "index-a-string", "unit-file-outside", "name-a-number", "no-module"],
)
def test_wrong_types_with_a_matching_outer_hash_run_python(copy, edit) -> None:
    inner = copy.app / "modules" / "__main__" / "manifest.json"
    manifest = json.loads(inner.read_text())
    edit(manifest)
    inner.write_text(json.dumps(manifest))
    top = json.loads((copy.app / "manifest.json").read_text())
    rel = "modules/__main__/manifest.json"
    top["files"][rel] = {"size": inner.stat().st_size, "sha256": sha256_file(inner)}
    (copy.app / "manifest.json").write_text(json.dumps(top))
    done = copy.run("app", timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout == copy.expected
    assert "[E3005]" in done.stderr
    assert "Traceback" not in done.stderr
