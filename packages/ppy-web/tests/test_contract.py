"""Contract of ppy-web: entry points, names, claims, fingerprints, lazy imports.

The checks are ppy_core.testing.ContractSuite's; this file states ppy-web's specifics.
"""

from __future__ import annotations

from ppy_core import testing

DIST = testing.Distribution.of(__file__)


class TestContract(testing.ContractSuite):
    dist = DIST
    # (group, entry point name, fingerprint pattern)
    entries = (
        ("plugins", "pydantic", r"v1:pydantic=\d+\.\d+\.\d+\S*:core=\S+"),
        (
            "plugins",
            "uvicorn",
            r"v1:uvicorn=\d+\.\d+\.\d+\S*:fastapi=\S+:starlette=\S+:uvloop=\S+:httptools=\S+"
            r":watchfiles=\S+:httpx2=\S+:httpx=\S+",
        ),
    )
    # importing the package and creating its plugins/backends must import none of these
    libraries = ("pydantic", "pydantic_core", "uvicorn", "fastapi", "starlette")
    blocked = ("pydantic", "uvicorn")
