"""Issue 32, item 4: any number of `ppy FILE`, `ppy run` and `ppy build` of one
program at once all succeed with the same output: one builds, the others wait on its
lock (`cache.lock`) or reuse what it built; `ppy build -o` replaces atomically."""

from __future__ import annotations

from pathlib import Path

N = 8


def _all_ok(done, expected: str) -> None:
    for proc in done:
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == expected, proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr


def test_eight_cold_ppy_run_and_ppy_file_at_once(copy, kit, tmp_path: Path) -> None:
    cold = tmp_path / "cold-cache"
    program = str(copy.program)
    cmds = [[*kit.PPY, "run", program] for _ in range(N // 2)]
    cmds += [[*kit.PPY, program] for _ in range(N - N // 2)]
    done = kit.in_parallel(cmds, kit.environment(cold), copy.program.parent)
    _all_ok(done, copy.expected)
    assert len(list((cold / "runs").iterdir())) == 1  # one artifact, no leftovers
    assert len(list((cold / "entries").iterdir())) == 1  # one entry for all
    again = copy.run("run", program, env={"PPY_CACHE_DIR": str(cold), "PPY_STATS": "1"})
    assert again.returncode == 0, again.stderr
    assert "prog:step.1                             1   -" in again.stderr  # fast path


def test_eight_builds_into_one_folder_at_once(copy, kit, tmp_path: Path) -> None:
    app = tmp_path / "app"
    cmds = [[*kit.PPY, "build", str(copy.program), "-o", str(app)] for _ in range(N)]
    done = kit.in_parallel(cmds, copy.env, copy.program.parent)
    for proc in done:
        assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".app.")) == []
    ran = kit.in_parallel([[str(app / copy.program.stem)]] * 2, copy.env, tmp_path)
    _all_ok(ran, copy.expected)
