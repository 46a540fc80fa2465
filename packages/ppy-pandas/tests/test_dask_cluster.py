"""A Dask `LocalCluster` of worker processes runs a package compiled by ppy: the
workers get the activation through PPY_PACKAGES (inherited, read by the core's .pth
at each worker's start), the functions are pickled by reference and run compiled
there; `client.run(ppy.stats)` gathers the workers' counters. One cluster for the
module (starting it is the slow part). Skipped where dask or distributed is missing."""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.needs_llvm

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")

# (two modules: a module holding both a NumPy and a pandas site loses the NumPy
# kernel's symbol from its library today, E2004; found here, reported)
ARRAYS = """\
import numpy as np


def blend(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * 0.25 + b * 0.75 - 1.0


def seeded(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)  # the data is made where it is used
    return blend(rng.standard_normal(n), rng.standard_normal(n))
"""
FRAMES = """\
import pandas as pd


def score(df: pd.DataFrame) -> pd.Series:
    return df["a"] * df["b"] + df["c"].fillna(0)
"""


SUMMARY = re.compile(
    r"ppy: (\d+) modules? compiled, (\d+) sites, (\d+) fast calls, (\d+) fallbacks"
)


def _loaded() -> list[str]:
    from ppy_core.runtime.compiling import LOADED

    return list(LOADED)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("daskproject")
    (root / "daskpkg").mkdir()
    (root / "daskpkg" / "__init__.py").write_text("")
    (root / "daskpkg" / "arrays.py").write_text(ARRAYS)
    (root / "daskpkg" / "frames.py").write_text(FRAMES)
    saved = {k: os.environ.get(k) for k in ("PPY_PACKAGES", "PYTHONPATH")}
    os.environ["PPY_PACKAGES"] = "daskpkg"  # the workers' processes inherit it
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), saved["PYTHONPATH"]]))
    sys.path.insert(0, str(root))  # this process pickles the functions by reference
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    try:
        with distributed.Client(cluster) as connected:
            yield connected
    finally:
        cluster.close()
        sys.path.remove(str(root))
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _stats(client: Any, site: str) -> tuple[int, dict[str, int]]:
    """(fast calls, fallbacks by reason) of `site`, summed over the workers."""
    gathered = client.run(__import__("ppy").stats)  # {worker address: its ppy.stats()}
    fast, reasons = 0, {}
    for stats in gathered.values():
        fast += stats.get(site, {}).get("fast", 0)
        for reason, n in stats.get(site, {}).get("fallback", {}).items():
            reasons[reason] = reasons.get(reason, 0) + n
    return fast, reasons


def _fast(client: Any, site: str) -> int:
    return _stats(client, site)[0]


def test_client_map_runs_the_compiled_numpy_function_on_the_workers(client: Any) -> None:
    import daskpkg.arrays as daskpkg

    client.run(__import__("ppy").reset_stats)
    seeds = list(range(6))
    results = client.gather(client.map(daskpkg.seeded, seeds, [5000] * 6, pure=False))
    for seed, got in zip(seeds, results, strict=True):
        rng = np.random.default_rng(seed)
        a, b = rng.standard_normal(5000), rng.standard_normal(5000)
        assert got.tobytes() == (a * 0.25 + b * 0.75 - 1.0).tobytes()
    assert _stats(client, "arrays:blend.1") == (6, {})  # every call on the fast path
    lines = client.run(__import__("ppy").summary)  # each worker's one line
    said = [SUMMARY.fullmatch(line) for line in lines.values()]
    assert all(said), lines
    assert sum(int(m.group(3)) for m in said if m) == 6
    assert sum(int(m.group(4)) for m in said if m) == 0
    loaded = client.run(_loaded)
    assert len(loaded) == 2
    assert all(names[:2] == ["daskpkg", "daskpkg.arrays"] for names in loaded.values())


def test_arrays_sent_to_the_workers_may_arrive_unaligned_and_run_python(client: Any) -> None:
    # Dask packs small frames: an array it deserializes may start at an address no
    # multiple of 8 (measured: 3 of 6 here); the guard sends those to NumPy itself
    import daskpkg.arrays as daskpkg

    client.run(__import__("ppy").reset_stats)
    rng = np.random.default_rng(7)
    pairs = [(rng.standard_normal(5000), rng.standard_normal(5000)) for _ in range(6)]
    futures = client.map(daskpkg.blend, *zip(*pairs, strict=True), pure=False)
    for (a, b), got in zip(pairs, client.gather(futures), strict=True):
        assert got.tobytes() == (a * 0.25 + b * 0.75 - 1.0).tobytes()
    fast, reasons = _stats(client, "arrays:blend.1")
    assert fast + reasons.get("guard: layout", 0) == 6
    assert set(reasons) <= {"guard: layout"}


def test_map_partitions_runs_the_fused_series_expression_compiled(client: Any) -> None:
    import daskpkg.frames as daskpkg

    rng = np.random.default_rng(11)
    n = 40_000
    frame = pd.DataFrame(
        {"a": rng.standard_normal(n), "b": rng.standard_normal(n), "c": rng.standard_normal(n)}
    )
    frame.loc[frame.index % 10 == 3, "c"] = np.nan
    before = _fast(client, "frames:score.1")
    lazy = dd.from_pandas(frame, npartitions=4).map_partitions(
        daskpkg.score, meta=pd.Series(dtype="float64")
    )
    got = lazy.compute()
    want = frame["a"] * frame["b"] + frame["c"].fillna(0)
    pd.testing.assert_series_equal(got, want)
    assert got.to_numpy().tobytes() == want.to_numpy().tobytes()
    assert _fast(client, "frames:score.1") - before == 4  # one call per partition
