"""The compiling verbs of the `ppy` command: FILE, run, build, explain, cache."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ppy_core.runtime.finder import install
from ppy_core.runtime.launch import launch, run_main

TYPE_CHECKING = False  # the run verbs import only what a cached start needs
if TYPE_CHECKING:
    from typing import Any


def _existing(file: str) -> Path:
    path = Path(file)
    if not path.is_file():
        from ppy_core.diagnostics import Error, Location

        raise Error(
            f"{file}: no such file",
            code="E0001",
            location=Location(file),
            hint="give the path of a .ppy or .py file",
        )
    return path.resolve()


def run_file(file: str, argv: list[str]) -> int:
    """`ppy FILE ARGS`: compile through the cache in-process, run as __main__. A
    cached start reads the key from its record (`cache.quick`) and loads no compiler,
    plugin, backend or library before the program does."""
    from ppy_core.cache.quick import cached_entry
    from ppy_core.cache.records import project_root
    from ppy_core.cache.root import using_root

    path = _existing(file)
    with using_root(project_root(str(path))):  # its records too under its cache-dir
        entry = cached_entry(path)
        if entry is None:
            from ppy_core.cache.quick import remember
            from ppy_core.cli.progress import progress
            from ppy_core.compiler.cached import compile_file, report_diagnostics

            with progress(f"compiling {file}"):
                compiled = compile_file(path)
            report_diagnostics(compiled)
            remember(compiled.key)
            entry = compiled.entry.path
        install([path.parent])
        return run_main(entry, argv, {str(path)}, check=False)


def build_artifact(file: str, output: str | None) -> Path:
    """Compile FILE and the project modules it imports into a self-contained folder."""
    import shutil

    from ppy_core.compiler.cached import compile_file, load_manifest, report_diagnostics

    path = _existing(file)
    out = Path(output) if output else path.parent / f"{path.stem}.ppyapp"
    modules: dict[str, dict[str, Any]] = {}
    todo = [("__main__", path)]
    summary: dict[str, Any] = {"sites": [], "kernels": [], "regions": [], "fingerprints": {}}
    staging = out.with_name(out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    while todo:
        name, source = todo.pop()
        if name in modules:
            continue
        compiled = compile_file(source)
        report_diagnostics(compiled)
        manifest = load_manifest(compiled.entry)
        folder = f"modules/{name}"
        shutil.copytree(compiled.entry.path, staging / folder)
        modules[name] = {"dir": folder, "source": str(source), "key": compiled.key.key}
        _summarize(summary, name, folder, manifest)
        for dep, dep_path in manifest.get("project_files", {}).items():
            todo.append((dep, Path(dep_path)))
    top = {
        "format": 1,
        "main": "__main__",
        "modules": modules,
        "python": sys.implementation.cache_tag,
        **summary,
    }
    launcher = staging / path.stem
    launcher.write_text(
        f'#!{sys.executable}\n"""Runs the PPy artifact in this folder."""\n'
        "import pathlib, sys\n"
        "from ppy_core.runtime.launch import launch\n"
        "sys.exit(launch(pathlib.Path(__file__).resolve().parent, "
        "sys.argv[1:]))\n"
    )
    launcher.chmod(launcher.stat().st_mode | 0o111)
    from ppy_core.cache.files import scan_files

    top["files"] = scan_files(staging)  # what `ppy run` checks before it runs any of it
    import json

    (staging / "manifest.json").write_text(json.dumps(top, indent=1, sort_keys=True))
    shutil.rmtree(out, ignore_errors=True)
    os.replace(staging, out)
    return out


def _summarize(summary: dict[str, Any], name: str, folder: str, manifest: dict[str, Any]) -> None:
    summary["fingerprints"].update(manifest.get("components", {}))
    for kind in ("expr_sites", "function_sites"):
        for record in manifest[kind]:
            unit = record.get("unit")
            summary["sites"].append(
                {
                    "module": name,
                    "id": record["id"],
                    "kind": kind[:-6],
                    "compiled": unit is not None,
                }
            )
            if unit is None:
                continue
            target = "regions" if kind == "function_sites" else "kernels"
            summary[target].extend(f"{folder}/{f}" for f in unit["files"])


def run_artifact(file: str, argv: list[str], *, verbose: bool = False) -> int:
    """`ppy run FILE`: build (in a child process, only when stale), then run the
    artifact here with the runtime alone. The artifact lives under the project's
    cache (`cache-dir`), is the user's own, and passes the checks of a cache entry."""
    from ppy_core.cache.records import project_root
    from ppy_core.cache.root import using_root

    path = _existing(file)
    with using_root(project_root(str(path))):  # artifact and records under its cache-dir
        return _run_artifact(path, argv, verbose)


def _run_artifact(path: Path, argv: list[str], verbose: bool) -> int:
    from ppy_core.cli import artifacts

    known = artifacts.fresh_quick(path)
    if known is None:
        root, fresh = artifacts.fresh_slow(path)
    else:
        root, fresh = known
    if not fresh:
        import subprocess

        from ppy_core.cli import progress

        # the child says what it builds, to stderr, on a terminal or with -v (only)
        cmd = [sys.executable, "-m", "ppy_core.cli", "build", str(path), "-o", str(root)]
        if verbose or progress.VERBOSE:
            cmd.append("-v")
        done = subprocess.run(cmd, check=False)
        if done.returncode != 0:
            return done.returncode
        artifacts.made(path, root)
    problem = artifacts.intact(root)
    if problem:
        from ppy_core.diagnostics import CacheError

        raise CacheError(
            f"{root}: {problem}; nothing from it runs",
            code="E3001",
            hint=f"remove {root} (or `ppy cache clear`) and run again",
        )
    return launch(root, argv)


def explain_file(file: str) -> str:
    """Per function and site: the IR, the backend chosen, every reason for Python."""
    from ppy_core.compiler.cached import compile_file, load_manifest, report_diagnostics

    path = _existing(file)
    compiled = compile_file(path)
    report_diagnostics(compiled)
    manifest = load_manifest(compiled.entry)
    lines = [
        f"{path}: cache {'hit' if compiled.hit else 'miss'}"
        + (f" ({compiled.miss_reason})" if compiled.miss_reason else ""),
        f"plugins: {', '.join(manifest['plugins']) or 'none (no library imported)'}",
    ]
    for record in manifest["expr_sites"]:
        where = f"{path.name}:{record['line']}:{record['col']}"
        state = f"compiled by {record['backend']}" if record.get("unit") else "stays Python"
        state += " [speculative]" if record.get("assumed") else ""
        state += f" [store {record['store']}]" if record.get("store") else ""
        lines.append(
            f"\nsite {record['id']} in {record['function']} at {where}: "
            f"{record['text']}  -> {state}"
        )
        lines.append(f"  leaves: {', '.join(record['leaves']) or '-'}")
        if record.get("views"):  # frontend/views.py
            lines.append(
                f"  passes {', '.join(record['args'])}: the runtime takes the views of them "
                "itself; anything else runs Python, which reads each view where it stands"
            )
        if record.get("assumed"):
            lines.append(
                f"  speculative: assumes {', '.join(record['assumed'])} "
                f"{'is a' if len(record['assumed']) == 1 else 'are'} "
                f"{record.get('library') or 'array'} array{'s' * (len(record['assumed']) > 1)} "
                "(unannotated); the guard checks each call, anything else runs Python"
            )
        for reason in record["reasons"]:
            lines.append(f"  reason: {reason}")
        if record.get("ir_final"):
            lines.append("  IR:")
            lines.extend("    " + line for line in record["ir_final"].splitlines())
    for record in manifest["function_sites"]:
        state = f"compiled by {record['backend']}" if record.get("unit") else "stays Python"
        lines.append(
            f"\nfunction {record['function']} (line {record['line']}): whole region -> {state}"
        )
        for reason in record["reasons"]:
            lines.append(f"  reason: {reason}")
        if record.get("ir_final"):  # a region in core IR (typed loops)
            lines.append("  IR:")
            lines.extend("    " + line for line in record["ir_final"].splitlines())
    if manifest["remarks"]:
        lines.append("\nstays Python:")
        for remark in manifest["remarks"]:
            lines.append(
                f"  {path.name}:{remark['line']} ({remark['function']}): {remark['message']}"
            )
    for diagnostic in manifest["diagnostics"]:
        lines.append(diagnostic)
    return "\n".join(lines)


def cache_command(action: str) -> str:
    from ppy_core.cache.store import Cache

    cache = Cache()
    if action == "clear":
        entries, builds = cache.clear(), cache.clear_builds()
        folders = f" and the build folders {', '.join(builds)}" if builds else ""
        return f"removed {entries} entries{folders} from {cache.root}"
    info = cache.info()
    folders = ", ".join(p.name for p in cache.build_folders()) or "none"
    return (
        f"cache: {info.place}\nentries: {info.entries}\n"
        f"size: {info.size_bytes / 1e6:.1f} MB of {info.max_bytes / 1e6:.0f} MB\n"
        f"build folders: {folders}"
    )


__all__ = ["run_file", "build_artifact", "run_artifact", "explain_file", "cache_command"]
