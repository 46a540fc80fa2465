"""The compiling verbs of the `ppy` command: FILE, run, build, explain, cache."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ppy_core.runtime.finder import install
from ppy_core.runtime.launch import exit_status, launch, run_main

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
        _register_compiler()
        install([path.parent])
        _activate_packages(str(path), str(path.parent))  # run_main puts it on sys.path
        return run_main(entry, argv, {str(path)}, check=False)


def run_module(name: str, argv: list[str]) -> int:
    """`ppy -m MODULE ARGS`, as `python -m MODULE ARGS`: `sys.path[0]` is the current
    folder, `sys.argv[0]` the module's file, the module runs as `__main__` (a
    package's `__main__` submodule for a package). The project's modules (the
    folder's `.py` files, `[tool.ppy] packages`) are compiled as they are imported,
    the module itself too when it is one of them."""
    cwd = os.getcwd()
    _register_compiler()
    install([Path(cwd)])
    sys.path.insert(0, cwd)
    _activate_packages(os.path.join(cwd, "__main__.py"))
    sys.argv = ["-m", *argv]  # as Python has it while the module's parents import
    spec = _main_spec(name)
    main = _main_module(spec)
    sys.argv[0] = spec.origin or name
    return exit_status(lambda: _exec_main(spec, main), {spec.origin or ""})


def _main_spec(name: str) -> Any:
    import importlib.util

    from ppy_core.diagnostics import Error

    def missing(why: str) -> Error:
        return Error(f"{name}: {why}", code="E0004", hint="give a module as `python -m` takes it")

    try:
        spec = importlib.util.find_spec(name)  # imports its parent packages, as python -m
    except (ImportError, ValueError) as exc:
        raise missing(f"cannot be found ({exc})") from None
    if spec is None:
        raise missing("no module of that name")
    if spec.submodule_search_locations is not None:  # a package runs its __main__
        if name == "__main__" or name.endswith(".__main__"):
            raise missing("a package's __main__ is itself a package")
        inner = importlib.util.find_spec(f"{name}.__main__")
        if inner is None:
            raise missing("is a package and has no __main__ module")
        spec = inner
    if spec.loader is None:
        raise missing("has no loader (a namespace package?)")
    return spec


def _main_module(spec: Any) -> Any:
    import builtins
    import types

    main = types.ModuleType("__main__")
    main.__dict__.update(
        __builtins__=builtins,
        __spec__=spec,
        __loader__=spec.loader,
        __package__=spec.parent,
        __file__=spec.origin,
        __cached__=spec.cached,
    )
    sys.modules["__main__"] = main
    return main


def _exec_main(spec: Any, main: Any) -> None:
    from ppy_core.runtime.finder import CompilingLoader
    from ppy_core.runtime.packages import PackageLoader

    loader = spec.loader
    if isinstance(loader, (CompilingLoader, PackageLoader)):
        loader.exec_module(main)  # the compiled module, as __main__
        return
    code = loader.get_code(spec.name)
    if code is None:
        from ppy_core.diagnostics import Error

        raise Error(f"{spec.name}: no code to run", code="E0004", hint="name a Python module")
    exec(code, main.__dict__)


def _activate_packages(source: str, folder: str = "") -> None:
    """`[tool.ppy] packages` of the project of `source`: compiled as they are imported
    (`folder`: where the program will find them, not on sys.path yet)."""
    from ppy_core.cache import records

    pyproject = records.nearest_pyproject(source)
    try:  # the usual case, no `packages` said: a small read, no more imports
        with open(pyproject or os.devnull, "rb") as handle:
            if b"packages" not in handle.read():
                return
    except OSError:
        return
    from ppy_core.runtime.packages import activate, configured

    names = configured(source)
    if names:
        activate(names, [folder] if folder else ())


def _register_compiler() -> None:
    """The project's modules are compiled in this process as the program imports them
    (the runtime's loaders ask the registered compiler on a cache miss)."""
    from ppy_core.integrations.registration import register

    register()


def build_artifact(file: str, output: str | None) -> Path:
    """Compile FILE and the project modules it imports into a self-contained folder:
    a new or empty one, or an earlier artifact (see `cli.output`: nothing else is
    replaced; E3009), built beside it and moved into place whole."""
    from ppy_core.cli import output as place

    path = _existing(file)
    out = place.target(path, output)
    staging = place.stage(out)
    try:
        _assemble(path, staging)
        place.publish(staging, out)
    finally:
        place.discard(staging)
    return out


def _assemble(path: Path, staging: Path) -> None:
    """Write the artifact of `path` into the folder `staging`, every file private."""
    import shutil

    from ppy_core.cache import trust
    from ppy_core.compiler.cached import compile_file, load_manifest, report_diagnostics

    modules: dict[str, dict[str, Any]] = {}
    todo = [("__main__", path)]
    summary: dict[str, Any] = {"sites": [], "kernels": [], "regions": [], "fingerprints": {}}
    while todo:
        name, source = todo.pop()
        if name in modules:
            continue
        compiled = compile_file(source)
        report_diagnostics(compiled)
        manifest = load_manifest(compiled.entry)
        folder = f"modules/{name}"
        shutil.copytree(compiled.entry.path, staging / folder)
        from ppy_core.compiler.specialize import include_recorded

        # every signature its unannotated functions were called with (runtime.observed)
        observed = include_recorded(compiled.key, staging / folder)
        modules[name] = {
            "dir": folder,
            "source": str(source),
            "key": compiled.key.key,
            "observed": observed,
        }
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
    launcher.chmod(0o700)
    from ppy_core.cache.files import scan_files

    # what the launcher and `ppy run` check before they run any of it (every file
    # made the user's alone on the way: 0600, 0700 for the launcher)
    top["files"] = scan_files(staging)
    import json

    (staging / "manifest.json").write_text(json.dumps(top, indent=1, sort_keys=True))
    trust.private_file(staging / "manifest.json")


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
    manifest = artifacts.usable(root) if fresh else None
    if manifest is None:  # stale, or failed its check: one process rebuilds it
        status = artifacts.rebuild(path, root, fresh, verbose)
        if status:
            return status
        manifest = None
    return launch(root, argv, manifest)


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
    lines.extend(_explain_specializations(compiled, manifest))
    if manifest["remarks"]:
        lines.append("\nstays Python:")
        for remark in manifest["remarks"]:
            lines.append(
                f"  {path.name}:{remark['line']} ({remark['function']}): {remark['message']}"
            )
    for diagnostic in manifest["diagnostics"]:
        lines.append(diagnostic)
    return "\n".join(lines)


def _explain_specializations(compiled: Any, manifest: dict[str, Any]) -> list[str]:
    """Each function typed by its calls: the signatures recorded for it and, for each,
    what its specialization compiled (from the cache; nothing is compiled here)."""
    from ppy_core.compiler.cached import cache_for, load_manifest
    from ppy_core.runtime.observed import recorded, signature_text, spec_id

    lines: list[str] = []
    signatures = recorded(str(compiled.key.path))
    cache = cache_for(compiled.key)
    for record in manifest.get("specializable", ()):
        function = record["function"]
        lines.append(
            f"\nfunction {function} (line {record['line']}): specializing dispatcher "
            "(its unannotated parameters are typed by each call's signature)"
        )
        seen = signatures.get(function, [])
        if not seen:
            lines.append("  no signature observed yet: the first call of each compiles it")
        for signature in seen:
            entry = cache.lookup(spec_id(compiled.key.key, function, signature))
            text = signature_text(signature)
            if entry is None:
                lines.append(f"  {text}: not compiled yet (the next call or build does)")
                continue
            spec = load_manifest(entry)
            units = [r for k in ("expr_sites", "function_sites") for r in spec[k] if r.get("unit")]
            if units:
                what = ", ".join(f"{r['id']} ({r.get('backend', '?')})" for r in units)
                lines.append(f"  {text}: compiled {what}")
            else:
                lines.append(f"  {text}: nothing more compiles than the generic function")
            for remark in spec.get("remarks", ()):
                lines.append(f"    line {remark['line']}: {remark['message']}")
    return lines


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


__all__ = [
    "run_file",
    "run_module",
    "build_artifact",
    "run_artifact",
    "explain_file",
    "cache_command",
]
