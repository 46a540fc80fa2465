"""The discovery record's rows have one schema (`runtime.registered.Row`): what
`interface.discovery` writes, the run path (`registered.table`) and discovery itself
read back field by field; a row of another shape is refused, never read shifted."""

from __future__ import annotations

import json

import pytest

from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.discovery import Discovered, Entry, _from_record, as_record
from ppy_core.runtime import registered
from ppy_core.runtime.registered import Row, parse_row, row_data

PLUGIN = Entry("plugin", "vecs", "ppy_vecs:make", "ppy-vecs", "1.2", False, ("vecs", "vx"))
RUNTIME = Entry("runtime", "vecs", "ppy_vecs.rt:adapter", "ppy-vecs", "1.2", True)
FOUND = Discovered(
    plugins={"vecs": PLUGIN},
    backends={},
    diagnostics=(Diagnostic("E1902", "bad entry", "fix it"),),
    runtimes={"vecs": RUNTIME},
)


def test_the_record_reads_back_as_written() -> None:
    data = json.loads(json.dumps(as_record(FOUND)))  # what the record file holds
    assert _from_record(data) == FOUND
    rows = registered._parse(data["plugins"])
    assert rows["vecs"] == Row(
        kind="plugin",
        name="vecs",
        value="ppy_vecs:make",
        distribution="ppy-vecs",
        version="1.2",
        first_party=False,
        modules=("vecs", "vx"),
    )
    assert registered._parse(data["runtimes"])["vecs"].value == "ppy_vecs.rt:adapter"


def test_a_row_is_plain_data_of_its_fields() -> None:
    data = ["loader", "vecs.loops", "ppy_vecs.l:load", "ppy-vecs", "1", 1, ["vecs"]]
    row = parse_row(data)
    assert row.first_party is True
    assert row.modules == ("vecs",)
    assert row_data(row) == [*data[:5], True, ["vecs"]]


@pytest.mark.parametrize(
    "data",
    [
        ["plugin", "vecs", "ppy_vecs:make", "ppy-vecs", "1.2", False],  # a field short
        ["plugin", "vecs", "ppy_vecs:make", "ppy-vecs", "1.2", False, ["vecs"], "x"],
        ["plugin", "vecs", "ppy_vecs:make", "ppy-vecs", "1.2", False, 3],  # modules no list
    ],
)
def test_a_row_of_another_shape_is_refused(data: list[object]) -> None:
    with pytest.raises((TypeError, ValueError)):
        parse_row(data)
    assert registered._parse([data]) == {}  # the run path skips it
    with pytest.raises((TypeError, ValueError)):
        _from_record({"plugins": [data], "backends": [], "diagnostics": []})
