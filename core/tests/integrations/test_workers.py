"""Worker processes get the activation through PPY_PACKAGES (inherited, read by the
core's .pth at each interpreter's start): multiprocessing (spawn, forkserver),
ProcessPoolExecutor. A compiled function pickles by reference and runs compiled in
the worker; workers racing on one cold cache build each module once."""

from __future__ import annotations

import json
import sys

import pytest
from adoption_harness import Project

PACKAGE = {
    "mypkg/__init__.py": "",
    "mypkg/shapes.py": "def area(w, h):\n    return w * h + 0.5\n",
}

DRIVER = """\
import json, os, sys, time
from concurrent.futures import ProcessPoolExecutor
import multiprocessing as mp


def where(args):
    import mypkg.shapes
    from ppy_core.runtime.compiling import LOADED
    loader = type(mypkg.shapes.__spec__.loader).__name__
    return os.getpid(), list(LOADED), loader, mypkg.shapes.area(*args)


def count_builds(folder, start_at):
    # each Builder.build that runs leaves a file: how many processes compiled
    from ppy_core.compiler import driver
    build = driver.Builder.build
    def counted(self, *args, **kwargs):
        with open(os.path.join(folder, f"{os.getpid()}-{time.monotonic_ns()}"), "w") as f:
            f.write(os.path.basename(str(self.key.path)))
        return build(self, *args, **kwargs)
    driver.Builder.build = counted
    time.sleep(max(0.0, start_at - time.time()))  # all import at once, on a cold cache
    import mypkg.shapes
    from ppy_core.runtime.compiling import LOADED
    with open(os.path.join(folder, f"imported-{os.getpid()}"), "w") as f:
        f.write(",".join(LOADED))


if __name__ == "__main__":
    how, out = sys.argv[1], {}
    if how == "race":
        folder = sys.argv[2]
        n = int(sys.argv[3])
        start = time.time() + 1.5
        ctx = mp.get_context("spawn")
        with ProcessPoolExecutor(n, mp_context=ctx, initializer=count_builds,
                                 initargs=(folder, start)) as pool:
            out["workers"] = list(pool.map(where, [(2, 3)] * (4 * n)))
        files = {f: open(os.path.join(folder, f)).read() for f in os.listdir(folder)}
        out["imported"] = sorted(v for f, v in files.items() if f.startswith("imported-"))
        out["builds"] = sorted(v for f, v in files.items() if not f.startswith("imported-"))
    else:
        import mypkg.shapes
        ctx = mp.get_context(how)
        with ctx.Pool(2) as pool:
            out["workers"] = pool.map(where, [(1, 2), (3, 4)])
            out["by_reference"] = pool.apply(where, ((5, 6),))
        with ProcessPoolExecutor(2, mp_context=ctx) as ex:
            out["executor"] = list(ex.map(where, [(2, 2)]))
        out["parent"] = mypkg.shapes.area(1, 2)
    print(json.dumps(out))
"""


def _run(project: Project, *args: str) -> dict:  # type: ignore[type-arg]
    done = project.run(sys.executable, "driver.py", *args, PPY_PACKAGES="mypkg")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("how", ["spawn", "forkserver"])
def test_workers_run_the_packages_compiled(project: Project, how: str) -> None:
    project.write({**PACKAGE, "driver.py": DRIVER})
    out = _run(project, how)
    for _pid, loaded, loader, value in [*out["workers"], out["by_reference"], *out["executor"]]:
        assert "mypkg.shapes" in loaded  # compiled in the worker, through the cache
        assert loader == "PackageLoader"
        assert value in (2.5, 12.5, 30.5, 4.5)
    assert [w[3] for w in out["workers"]] == [2.5, 12.5]
    assert out["parent"] == 2.5


def test_workers_racing_on_a_cold_cache_build_each_module_once(project: Project) -> None:
    project.write({**PACKAGE, "driver.py": DRIVER})
    builds = project.root / "builds"
    builds.mkdir()
    out = _run(project, "race", str(builds), "4")
    assert out["imported"] == ["mypkg,mypkg.shapes"] * 4  # each process: both compiled
    assert all(w[1] == ["mypkg", "mypkg.shapes"] for w in out["workers"])
    assert all(w[3] == 6.5 for w in out["workers"])
    # each module built once, by one of the 4 processes: the others waited on its
    # build lock and loaded the entry it published
    assert out["builds"] == ["__init__.py", "shapes.py"], out
