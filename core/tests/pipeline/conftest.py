"""Fixtures of the pipeline tests (helpers in pipeline_harness.py, importable by the
test modules of this folder)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pipeline_harness import BAD_BACKENDS, RAISING_PLUGIN, Harness, dist


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Harness:
    """A harness whose processes share one cache for the whole test module."""
    tmp = tmp_path_factory.mktemp("pipeline")
    return Harness(cache=tmp / "cache", tmp=tmp)


@pytest.fixture(scope="module")
def bad_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of throwaway distributions: plugin `halfvec` (raises in `operator`),
    backends `crashy` (raises in `lower`) and `wrong` (wrong results)."""
    root = tmp_path_factory.mktemp("badsite")
    dist(
        root,
        "halfvec-ppy",
        "1.0",
        {"ppy.plugins": {"halfvec": "halfvec:create_plugin"}},
        {"halfvec.py": RAISING_PLUGIN},
    )
    dist(
        root,
        "bad-backends",
        "1.0",
        {
            "ppy.backends": {
                "crashy": "badbackends:create_crashy",
                "wrong": "badbackends:create_wrong",
                "batchy": "badbackends:create_batchy",
                "batched": "badbackends:create_batched",
            },
            "ppy.loaders": {"wrong": "badbackends:load_wrong"},  # registered: it may load
        },
        {"badbackends.py": BAD_BACKENDS},
    )
    return root
