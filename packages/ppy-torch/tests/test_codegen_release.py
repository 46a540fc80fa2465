"""A region body drops each intermediate tensor after its last read (codegen._releases):
its memory goes back to the allocator while still in cache, as eager's does when its
last name goes. Parameters and results are never dropped. Checked on the generated
source (no compiler); the built regions' bit-equality with eager is every other
region test's."""

from __future__ import annotations

from itertools import pairwise

from ppy_torch.codegen import module_source
from ppy_torch.graph import (
    INT,
    TENSOR,
    TENSORS,
    AtenCall,
    Const,
    IntOp,
    RegionGraph,
    Unpack,
    Value,
)

X, W = Value("x", TENSOR), Value("w", TENSOR)
V = [Value(str(i), TENSOR) for i in range(8)]
PARTS = Value("8", TENSORS)


def _graph() -> RegionGraph:
    """x -> relu -> (+ w) -> split in two -> the parts multiplied -> + relu's result."""
    call = AtenCall
    nodes = (
        call("relu", "relu", (("self", X),), V[0]),
        call("add", "add.Tensor", (("self", V[0]), ("other", W)), V[1]),
        call("split", "split.Tensor", (("self", V[1]), ("split_size", Const(2))), PARTS),
        Unpack(PARTS, (V[2], V[3])),
        IntOp("add", Const(1), Const(2), Value("9", INT)),
        call("mul", "mul.Tensor", (("self", V[2]), ("other", V[3])), V[4]),
        call("add", "add.Tensor", (("self", V[4]), ("other", V[0])), V[5]),
    )
    return RegionGraph("f", (X, W), nodes, (V[5],), False, frozenset())


def _body_lines() -> list[str]:
    source = module_source("m", [_graph()])
    start = source.index("static at::Tensor body_f(")
    return source[start : source.index("\n}\n", start)].splitlines()[1:]


def test_each_intermediate_is_dropped_after_its_last_read() -> None:
    drops: dict[str, str] = {}  # each dropped variable: the statement just before its drop
    lines = [line.strip() for line in _body_lines()]
    for before, line in pairwise(lines):
        if line.endswith((".reset();", ".clear();")):
            drops[line.split(".")[0]] = before
    assert drops == {
        "v1": "std::vector<at::Tensor> v8 = at::split(v1, int64_t(2));",  # its one read
        "v8": "at::Tensor v3 = v8[1];",  # the list, once unpacked
        "v2": "at::Tensor v4 = at::mul(v2, v3);",
        "v3": "v2.reset();",  # both parts after the mul reading them
        "v0": "at::Tensor v5 = at::add(v4, v0);",  # relu's result: read again last here
        "v4": "v0.reset();",
    }
    assert lines[-1] == "return v5;"


def test_parameters_results_and_ints_are_never_dropped() -> None:
    text = "\n".join(_body_lines())
    for var in ("p_x", "p_w", "v5", "v9"):
        assert f"{var}.reset" not in text
        assert f"{var}.clear" not in text
