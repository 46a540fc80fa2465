"""`runtime.jsontext.loads` accepts and answers exactly what `json.loads` does.

The start path reads manifests with it instead of importing `json`; a manifest it read
differently from `json.loads` would be a different program.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppy_core.runtime import jsontext

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def same(left: Any, right: Any) -> bool:
    """Equal as JSON values, NaN equal to NaN, and of the same Python types."""
    if type(left) is not type(right):
        return False
    if isinstance(left, float):
        return (math.isnan(left) and math.isnan(right)) or left == right
    if isinstance(left, list):
        return len(left) == len(right) and all(map(same, left, right))
    if isinstance(left, dict):
        return left.keys() == right.keys() and all(same(left[k], right[k]) for k in left)
    return bool(left == right)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES, st.sampled_from(["", " ", "\n\t ", "\r\n"]), st.booleans())
def test_values_read_as_json_reads_them(value: Any, padding: str, indent: bool) -> None:
    text = padding + json.dumps(value, indent=2 if indent else None) + padding
    assert same(jsontext.loads(text), json.loads(text))
    assert same(jsontext.loads(text.encode()), json.loads(text.encode()))


BAD = [
    "",
    "   ",
    "{",
    "[1,]",
    '{"a": 1,}',
    "1 2",
    "[1] x",
    "nul",
    "'single'",
    '"unterminated',
    '"\x01control"',
    "\ufeff{}",
    "01",
    "{1: 2}",
    "- 1",
]


@pytest.mark.parametrize("text", BAD)
def test_what_json_refuses_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        jsontext.loads(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]":,0123456789.eE+-tfnrulsaINfiy \n', max_size=20))
def test_arbitrary_text_accepted_exactly_when_json_accepts_it(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            jsontext.loads(text)
    else:
        assert same(jsontext.loads(text), expected)


def test_read_reads_a_file(tmp_path: Any) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"sites": [1.5, None, "x"], "n": -3}))
    assert jsontext.read(path) == {"sites": [1.5, None, "x"], "n": -3}
