"""FastAPI's route decorators are unvouched: `app = FastAPI()` types `app`, so
`@app.get("/")` is known as "fastapi.FastAPI.get", and the function is left exactly
as written (FastAPI calls it), with the reason in `ppy explain`. Compiling does not
import FastAPI (it need not be installed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ppy_core.compiler.cached import compile_file, load_manifest

SOURCE = """\
import numpy as np
from fastapi import APIRouter, FastAPI
from numpy.typing import NDArray

app = FastAPI()
router = APIRouter()


@app.get("/items")
def items(a: NDArray[np.float64]) -> NDArray[np.float64]:
    return a * 2.0 + 1.0


@router.post("/more")
def more(a: NDArray[np.float64]) -> NDArray[np.float64]:
    return a * 2.0 + 1.0


def helper(a: NDArray[np.float64]) -> NDArray[np.float64]:
    return a * 2.0 + 1.0
"""


def test_routes_are_left_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ppy_numpy")  # `helper` is a site only where NumPy's plugin is installed
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "pyproject.toml").write_text('[tool.ppy]\nbackends = ["llvm"]\n')
    path = tmp_path / "routes.py"
    path.write_text(SOURCE, encoding="utf-8")
    manifest = load_manifest(compile_file(path).entry)
    assert [s["function"] for s in manifest["expr_sites"]] == ["helper"]
    remarks = {r["function"]: r["message"] for r in manifest["remarks"]}
    assert remarks["items"] == (
        "decorator 'fastapi.FastAPI.get' is unvouched "
        "(FastAPI.get registers it; FastAPI calls it): left exactly as written"
    )
    assert remarks["more"].startswith("decorator 'fastapi.APIRouter.post' is unvouched")
