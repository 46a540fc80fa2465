"""Issue 32, item 3: caches are private. Every folder ppy creates is 0700 and every file
it writes the user's alone, whatever the umask; a folder others may write into is
repaired (the user's own) or refused (another user's), and what another local user
changed through such a folder never runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

OTHER = "ppyhostile"


def test_everything_ppy_writes_is_private_under_umask_0(copy, kit, tmp_path: Path) -> None:
    cache, app = tmp_path / "fresh-cache", tmp_path / "fresh-app"
    env = kit.environment(cache)
    for args in ([copy.program], ["run", copy.program], ["build", copy.program, "-o", app]):
        done = subprocess.run(
            [*kit.PPY, *map(str, args)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=lambda: os.umask(0),
            check=False,
        )
        assert done.returncode == 0, done.stderr
    for path, mode in kit.modes(cache) + kit.modes(app):
        assert mode & 0o077 == 0, f"{path} is {mode:o}"
        if os.path.isdir(path):
            assert mode == 0o700, f"{path} is {mode:o}"


def test_a_cache_made_world_writable_is_repaired_and_checked(copy, kit) -> None:
    for path, _mode in kit.modes(copy.cache):
        os.chmod(path, 0o777 if os.path.isdir(path) else 0o666)
    done = copy.run(copy.program, env={"PPY_STATS": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == copy.expected, done.stderr
    assert done.stderr.count("[E3010]") == 1, done.stderr  # repaired, said once
    assert copy.cache.stat().st_mode & 0o777 == 0o700
    # the entry's files were writable by others: not trusted, rebuilt private (an
    # entry of another key, not looked up, is left as it is: never used unchecked)
    entries = (copy.cache / "entries").iterdir()
    used = max(entries, key=lambda e: (e / "last_used").stat().st_mtime_ns)
    assert (copy.cache / "entries").stat().st_mode & 0o777 == 0o700
    for path, mode in kit.modes(used):
        assert mode & 0o077 == 0, f"{path} is {mode:o}"


def _other_user() -> tuple[int, int]:
    """(uid, gid) of a second local user, created when the tests run as root."""
    if os.geteuid() != 0:
        pytest.skip("needs root to act as a second local user (useradd, setuid)")
    import pwd

    try:
        entry = pwd.getpwnam(OTHER)
    except KeyError:
        if shutil.which("useradd") is None:
            pytest.skip("no useradd to create a second local user")
        subprocess.run(["useradd", "--no-create-home", OTHER], check=True)
        entry = pwd.getpwnam(OTHER)
    return entry.pw_uid, entry.pw_gid


def _as_other_user(uid: int, gid: int, cache: Path, foreign: Path) -> int:
    """In a forked child running as the other user: replace every entry's kernel with
    `foreign` and its hash in the manifest, as the open folders let anyone. The exit
    status of the child (0: it rewrote at least one entry)."""
    import hashlib

    pid = os.fork()
    if pid == 0:  # the child: no return from here
        status = 1
        try:
            os.setgid(gid)
            os.setuid(uid)
            data = foreign.read_bytes()
            for manifest_path in (cache / "entries").glob("*/manifest.json"):
                manifest = json.loads(manifest_path.read_text())
                for library in (manifest_path.parent / "files").glob("*.so"):
                    library.unlink()  # the folder lets us: put ours in its place
                    library.write_bytes(data)
                    manifest["files"][library.name] = {
                        "size": len(data),
                        "sha256": hashlib.sha256(data).hexdigest(),
                    }
                manifest_path.unlink()
                manifest_path.write_text(json.dumps(manifest, sort_keys=True, indent=1))
                status = 0
        finally:
            os._exit(status)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_another_user_rewriting_an_open_cache_runs_nothing(copy, kit, tmp_path: Path) -> None:
    uid, gid = _other_user()
    copy.warm()
    foreign = kit.foreign_library(tmp_path)
    os.chmod(tmp_path, 0o755)
    os.chmod(foreign, 0o755)
    for path, _mode in kit.modes(copy.cache):
        os.chmod(path, 0o777 if os.path.isdir(path) else 0o666)
    mark = tmp_path / "mark"
    # the other user must reach the cache: let it through the folders above (x only)
    above = [p for p in tmp_path.parents if str(p).startswith(str(Path(tmp_path.anchor, "tmp")))]
    saved = [(p, p.stat().st_mode & 0o7777) for p in above]
    try:
        for folder, mode in saved:
            os.chmod(folder, mode | 0o001)
        assert _as_other_user(uid, gid, copy.cache, foreign) == 0
    finally:
        for folder, mode in saved:
            os.chmod(folder, mode)
    owners = {p.stat().st_uid for p in (copy.cache / "entries").rglob("*.so")}
    assert uid in owners  # the other user's files are in the owner's cache now
    ran = copy.run(copy.program, env={"PPY_STATS": "1", "PPY_HOSTILE_MARK": str(mark)})
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == copy.expected, ran.stderr
    assert "[E3006]" in ran.stderr or "[E3001]" in ran.stderr, ran.stderr
    assert not mark.exists()  # the other user's constructor never ran
    run = copy.run("run", copy.program, env={"PPY_HOSTILE_MARK": str(mark)})
    assert run.returncode == 0, run.stderr
    assert run.stdout == copy.expected, run.stderr
    assert not mark.exists()


def test_a_cache_root_another_user_owns_is_refused(copy, kit) -> None:
    uid, gid = _other_user()
    os.chown(copy.cache, uid, gid)
    done = copy.run(copy.program)
    kit.assert_python_or_coded(done, copy.expected)
    assert done.returncode == 2
    assert "[E3006]" in done.stderr
    assert "hint:" in done.stderr
    records = json.dumps(sorted(os.listdir(copy.cache)))
    assert "secret" in records  # nothing of it was removed
