"""The kernel ABI's cheap paths of a start binding many kernels: a symbol's address
by one dlsym on the library's handle (`abi.address_in`), and each signature checked
once (`KernelUnit`), with what they answer unchanged."""

from __future__ import annotations

import ctypes

import pytest

from ppy_core.runtime import abi


def test_an_address_is_the_one_ctypes_finds_and_a_missing_symbol_is_zero() -> None:
    libc = ctypes.CDLL(None)  # the process itself: libc's symbols
    for name in ("memcpy", "strlen", "qsort"):
        expected = ctypes.cast(getattr(ctypes.CDLL(None), name), ctypes.c_void_p).value
        assert abi.address_in(libc, name) == expected
    assert abi.address_in(libc, "ppy_no_such_symbol_anywhere") == 0
    assert "memcpy" not in vars(libc)  # no ctypes function object was made on the handle


@pytest.mark.parametrize(
    ("kind", "leaves", "loops"),
    [("nope", "a", ()), ("map", "ax", ()), ("map", ["a"], ()), ("map", "a", (("sin", "x"),))],
)
def test_a_bad_signature_is_refused_every_time(kind: str, leaves: str, loops: tuple) -> None:
    for _ in range(2):  # a refused signature is not remembered as checked
        with pytest.raises(ValueError, match="kernel"):
            abi.KernelUnit("ppy_k_x", kind, leaves, loops)


def test_a_signature_checked_once_reads_back_as_given() -> None:
    loops = (("sin", "d->d"),)
    first = abi.KernelUnit("ppy_k_a", "map", "aws", loops, True, "v1")
    again = abi.KernelUnit("ppy_k_b", "map", "aws", loops)  # the remembered signature
    assert (first.symbol, first.kind, first.leaves, first.loops) == ("ppy_k_a", "map", "aws", loops)
    assert (first.nan_ok, first.fingerprint) == (True, "v1")
    assert (again.symbol, again.nan_ok, again.fingerprint) == ("ppy_k_b", False, "")
    listed = abi.KernelUnit("ppy_k_c", "map", "a", (["sin", "d->d"],))  # loops that do not hash
    assert listed.loops == (["sin", "d->d"],)
    data = {"abi": abi.ABI_VERSION, "symbol": "ppy_k_d", "signature": {"kind": "sum"}}
    with pytest.raises(ValueError, match="malformed"):
        abi.KernelUnit.from_data(data)  # no leaves
