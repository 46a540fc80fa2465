"""The `ppy` command.

Each verb is a `Verb` in VERBS: its help, a function adding its arguments, and a
handler taking the parsed arguments and returning the exit status. `ppy FILE [ARGS]`
(no verb) goes to `run_file`. A `ppy.Error` becomes its rendered diagnostic on
stderr and exit status 2; anything else is an internal error (E9001, status 70;
`PPY_DEBUG=1` shows the traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ppy_core import __version__
from ppy_core.diagnostics import ConfigError, Diagnostic, Error, NotYetError

Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True, slots=True)
class Verb:
    """One subcommand: `ppy NAME ...`."""

    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    handler: Handler


def _not_yet(what: str, lands: str) -> NotYetError:
    return NotYetError(
        f"ppy {what} is not available yet", hint=f"it lands with {lands}; `ppy doctor` works now"
    )


def _interface() -> int:
    from ppy_core.interface.plugin import INTERFACE

    return INTERFACE


# -- doctor -------------------------------------------------------------------------------


def _doctor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        default=".",
        help="a file or folder of the project (default: the current folder)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when any plugin, backend or the configuration has a problem",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _probe(thing: Any, row: dict[str, Any]) -> None:
    """Fill `row` with what a loaded plugin/backend says of itself; a failure is a problem."""
    for key, call in (("fingerprint", thing.fingerprint), ("detected", thing.detected)):
        try:
            value = call()
            row[key] = dict(value) if key == "detected" else value
        except Exception as exc:
            row["problems"].append(
                Diagnostic(
                    "E1904",
                    f"{row['kind']} {row['name']!r}: {key}() raised {type(exc).__name__}: {exc}",
                    hint=f"reinstall {row['distribution']}",
                ).render()
            )
    ready = getattr(thing, "toolchain_ready", None)
    if ready is not None:
        try:
            missing = ready()
            row["toolchain"] = "ready" if missing is None else f"missing: {missing}"
        except Exception as exc:
            row["toolchain"] = f"probe failed: {type(exc).__name__}: {exc}"


def doctor_report(path: str = ".") -> dict[str, Any]:
    """What `ppy doctor` shows, as plain data."""
    from ppy_core.interface import discovery
    from ppy_core.project.config import DEFAULT, load_config

    problems: list[str] = []
    try:
        config = load_config(path)
        config_text = str(config.path) if config.path else "none found (defaults)"
    except ConfigError as exc:
        config, config_text = DEFAULT, f"invalid, defaults used: {exc.diagnostic.message}"
        problems.append(exc.diagnostic.render())
    found = discovery.discover()
    problems.extend(d.render() for d in found.diagnostics)
    rows: list[dict[str, Any]] = []
    for entry in [*found.plugins.values(), *found.backends.values()]:
        enabled, why = discovery.enablement(entry, config)
        row: dict[str, Any] = {
            "kind": entry.kind,
            "name": entry.name,
            "distribution": entry.distribution,
            "version": entry.version,
            "first_party": entry.first_party,
            "enabled": enabled,
            "status": why,
            "entry_point": entry.value,
            "modules": list(entry.modules),
            "fingerprint": None,
            "detected": {},
            "problems": [],
        }
        if enabled:
            try:
                thing = discovery.load(entry)
            except Error as exc:
                row["problems"].append(exc.diagnostic.render())
                row["status"] = f"refused: {exc.diagnostic.message}"
            else:
                row["modules"] = list(getattr(thing, "modules", ()))
                _probe(thing, row)
        problems.extend(row["problems"])
        rows.append(row)
    runtimes = [
        {
            "name": e.name,
            "distribution": e.distribution,
            "version": e.version,
            "entry_point": e.value,
        }
        for e in found.runtimes.values()
    ]
    return {
        "ppy": __version__,
        "interface": _interface(),
        "runtimes": runtimes,
        "python": platform.python_version(),
        "executable": sys.executable,
        "config": config_text,
        "entries": rows,
        "problems": problems,
    }


def _print_doctor(report: dict[str, Any], out: TextIO) -> None:
    out.write(
        f"ppy {report['ppy']} (plugin interface {report['interface']}), "
        f"Python {report['python']} at {report['executable']}\n"
    )
    out.write(f"config: {report['config']}\n")
    for kind in ("plugin", "backend"):
        rows = [r for r in report["entries"] if r["kind"] == kind]
        out.write(f"\n{kind}s ({len(rows)}):\n")
        if not rows:
            out.write("  none installed\n")
        for row in rows:
            party = "first-party" if row["first_party"] else "third-party"
            out.write(f"  {row['name']}: {row['distribution']} {row['version']} ({party})\n")
            out.write(f"    status:      {row['status']}\n")
            out.write(f"    fingerprint: {row['fingerprint'] or '(not loaded)'}\n")
            if row.get("toolchain"):
                out.write(f"    toolchain:   {row['toolchain']}\n")
            for key, value in row["detected"].items():
                out.write(f"    detected:    {key}: {value}\n")
            for problem in row["problems"]:
                out.write("    " + problem.replace("\n", "\n    ") + "\n")
    out.write(f"\nruntime adapters ({len(report['runtimes'])}):\n")
    if not report["runtimes"]:
        out.write("  none installed\n")
    for row in report["runtimes"]:  # imported only by a program whose manifest names one
        out.write(
            f"  {row['name']}: {row['distribution']} {row['version']} ({row['entry_point']})\n"
        )
    problems = report["problems"]
    out.write(f"\n{len(problems)} problem{'s' if len(problems) != 1 else ''}\n")
    for problem in problems:
        if not any(problem in r["problems"] for r in report["entries"]):
            out.write(problem + "\n")


def doctor(args: argparse.Namespace) -> int:
    """Each discovered plugin and backend: distribution, version, enabled or why not,
    fingerprint, what it detected. Exits 0, or 1 under --strict when anything is wrong."""
    report = doctor_report(args.path)
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        _print_doctor(report, sys.stdout)
    return 1 if args.strict and report["problems"] else 0


# -- verbs whose issues have not landed --------------------------------------------------


def _file_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the .ppy or .py file")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the program's arguments")


def _build_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the .ppy or .py file")
    parser.add_argument("-o", "--output", metavar="DIR", help="where to write the artifact")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="say what it builds even off a terminal"
    )


def _explain_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="the .ppy or .py file")


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", default=["."], help="files or folders to check")
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="json: for tools and editors"
    )
    parser.add_argument(
        "--strict", action="store_true", default=None, help="as [tool.ppy] strict = true"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="report the time taken")


def _cache_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("info", "clear"), help="show or empty the cache")


def _plugin_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="{new}")
    new = actions.add_parser("new", help="write a plugin distribution ppy-NAME")
    new.add_argument("name", help="the plugin's name (its entry point), e.g. vecmath")
    new.add_argument("--module", default="", help="the top-level module it claims (default NAME)")
    new.add_argument(
        "--library", default="", help="the library's distribution name (default: the module)"
    )
    new.add_argument("--backend", action="store_true", help="write a backend instead")
    new.add_argument("-o", "--output", default=".", metavar="DIR", help="where to write it")


def plugin(args: argparse.Namespace) -> int:
    """Write a new plugin (or backend) distribution from the template."""
    from ppy_core.cli.scaffold import new_distribution

    root = new_distribution(
        args.name, Path(args.output), module=args.module, library=args.library, backend=args.backend
    )
    print(f"wrote {root}: pip install -e '{root}[test]' && pytest {root / 'tests'}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Build or reuse the artifact of FILE and run it through the runtime."""
    from ppy_core.cli.commands import run_artifact

    return run_artifact(args.file, list(args.args))


def build(args: argparse.Namespace) -> int:
    """Write a self-contained artifact of FILE."""
    from ppy_core.cli.commands import build_artifact
    from ppy_core.cli.progress import progress, say

    with progress(f"building {args.file}", verbose=args.verbose):
        out = build_artifact(args.file, args.output)
    say(f"built {out}", verbose=args.verbose)  # progress: to stderr on a terminal or with -v
    return 0


def explain(args: argparse.Namespace) -> int:
    """Show, per function and site, what converged onto which IR op and why not."""
    from ppy_core.cli.commands import explain_file

    print(explain_file(args.file))
    return 0


def check(args: argparse.Namespace) -> int:
    """Type-check PATHS with the plugins' typing; 1 when there is an error."""
    from ppy_core.compiler.check import check_paths

    report = check_paths(args.paths, strict=args.strict)
    if args.format == "json":
        print(report.as_json())
    else:
        for finding in report.findings:
            print(finding.render())
        print(f"{report.errors} error(s) in {report.files} file(s)")
    if args.verbose:
        sys.stderr.write(
            f"ppy check: {report.files} file(s), {report.cached} from the cache, "
            f"{report.seconds * 1000:.0f} ms\n"
        )
    return 1 if report.errors else 0


def cache(args: argparse.Namespace) -> int:
    """Show or clear the compile cache."""
    from ppy_core.cli.commands import cache_command

    print(cache_command(args.action))
    return 0


def run_file(path: str, argv: Sequence[str]) -> int:
    """`ppy FILE [ARGS]`: compile FILE through the cache and run it as __main__."""
    from ppy_core.cli.commands import run_file as _run_file

    return _run_file(path, list(argv))


VERBS: dict[str, Verb] = {
    "run": Verb(
        "build or reuse FILE's artifact and run it (no compiler in the process)",
        _file_arguments,
        run,
    ),
    "build": Verb("write a self-contained artifact of FILE", _build_arguments, build),
    "explain": Verb(
        "show what each site of FILE compiled to, and why not", _explain_arguments, explain
    ),
    "check": Verb(
        "type-check files ([tool.ppy] strict = true: unknown types are errors)",
        _check_arguments,
        check,
    ),
    "doctor": Verb(
        "show each plugin and backend: version, status, fingerprint, detection",
        _doctor_arguments,
        doctor,
    ),
    "cache": Verb("show (info) or empty (clear) the compile cache", _cache_arguments, cache),
    "plugin": Verb("write a new plugin distribution (plugin new NAME)", _plugin_arguments, plugin),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every verb in VERBS."""
    parser = argparse.ArgumentParser(
        prog="ppy",
        description="PPy compiles Python. `ppy FILE [ARGS]` compiles FILE and runs it; "
        "`ppy -m MODULE [ARGS]` runs MODULE as `python -m` does, the project compiled.",
    )
    parser.add_argument("--version", action="version", version=f"ppy {__version__}")
    verbs = parser.add_subparsers(dest="verb", metavar="{FILE," + ",".join(VERBS) + "}")
    for name, verb in VERBS.items():
        sub = verbs.add_parser(name, help=verb.help, description=verb.help)
        verb.arguments(sub)
        sub.set_defaults(handler=verb.handler)
    return parser


def run_module(name: str, argv: Sequence[str]) -> int:
    """`ppy -m MODULE [ARGS]`: run MODULE as `python -m` does, the project compiled."""
    from ppy_core.cli.commands import run_module as _run_module

    return _run_module(name, list(argv))


def _dispatch(argv: list[str]) -> int:
    from ppy_core.cli.fast import module_argument

    if argv and argv[0] not in VERBS and not argv[0].startswith("-"):
        return run_file(argv[0], argv[1:])
    module = module_argument(argv)
    if module is not None:
        return run_module(*module)
    args = build_parser().parse_args(argv)
    if getattr(args, "handler", None) is None:
        build_parser().print_help(sys.stderr)
        return 2
    handler: Handler = args.handler
    return handler(args)


def main(argv: Sequence[str] | None = None) -> int:
    """The console script `ppy`."""
    try:
        return _dispatch(list(sys.argv[1:] if argv is None else argv))
    except Exception as exc:
        return report(exc)
    except KeyboardInterrupt:
        return 130


def report(exc: Exception) -> int:
    """The exit status of a command that raised `exc`, after telling the user: a
    `ppy.Error` as its diagnostic (2), anything else as an internal error (70)."""
    if isinstance(exc, Error):
        sys.stderr.write(exc.diagnostic.render() + "\n")
        return 2
    if os.environ.get("PPY_DEBUG"):
        raise exc
    sys.stderr.write(
        Diagnostic(
            "E9001",
            f"internal compiler error: {type(exc).__name__}: {exc}",
            hint="this is a bug in ppy; rerun with PPY_DEBUG=1 for the traceback and report it",
        ).render()
        + "\n"
    )
    return 70


__all__ = [
    "VERBS",
    "Verb",
    "Handler",
    "main",
    "build_parser",
    "doctor",
    "doctor_report",
    "run_file",
    "run_module",
]
