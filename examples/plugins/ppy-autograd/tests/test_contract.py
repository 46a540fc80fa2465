"""The core's contract kit over ppy-autograd, a third-party distribution."""

from __future__ import annotations

from ppy_core import testing


class TestContract(testing.ContractSuite):
    dist = testing.Distribution.of(__file__)
    entries = (("plugins", "autograd", r"v1:autograd=\d+\.\d+\S*"),)
    libraries = ("autograd", "numpy")  # importing the package imports neither
    blocked = ("autograd",)
    requires = "autograd"
    first_party = False
