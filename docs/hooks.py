"""MkDocs hooks: pages and outputs generated from the code and from real commands.

Every command shown in the docs is run here, at build time, by the Python that
builds the docs (the project's venv): `ppy --help` and each verb's help, `ppy doctor`,
`ppy explain` of `docs/snippets/scale.ppy`, `ppy plugin new`. Their outputs go to
`build/docs-generated/*.txt`, which pages include with `--8<--` (a missing one fails
the strict build); the error-code reference is generated from
`ppy_core.diagnostics.CODES`, so neither can drift from the code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "docs-generated"
RANGES = (
    ("E0", "Front end"),
    ("E19", "Plugins"),
    ("E1", "Types"),
    ("E2", "Backends and toolchains"),
    ("E3", "Cache and artifacts"),
    ("E9", "The tool itself"),
)


def _ppy(*argv: str, cwd: Path = ROOT) -> str:
    """`ppy ARGV` as a user types it; its stdout and stderr as they appear."""
    env = {**os.environ, "PPY_CACHE_DIR": str(OUT / "cache"), "COLUMNS": "88"}
    done = subprocess.run(
        [sys.executable, "-m", "ppy_core.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        raise RuntimeError(f"docs: `ppy {' '.join(argv)}` failed:\n{done.stderr}")
    shown = (done.stdout + done.stderr).replace(f"{ROOT}/", "")  # paths as the reader has them
    return shown.rstrip() + "\n"


def _write(name: str, command: str, output: str) -> None:
    (OUT / name).write_text(f"$ {command}\n{output}", encoding="utf-8")


def on_config(config: Any) -> Any:
    OUT.mkdir(parents=True, exist_ok=True)
    from ppy_core.cli.app import VERBS

    _write("help.txt", "ppy --help", _ppy("--help"))
    for verb in VERBS:
        _write(f"help-{verb}.txt", f"ppy {verb} --help", _ppy(verb, "--help"))
    _write("help-plugin-new.txt", "ppy plugin new --help", _ppy("plugin", "new", "--help"))
    _write("doctor.txt", "ppy doctor", _ppy("doctor"))
    snippets = ROOT / "docs" / "snippets"
    _write("explain.txt", "ppy explain scale.ppy", _ppy("explain", "scale.ppy", cwd=snippets))
    with tempfile.TemporaryDirectory() as tmp:
        said = _ppy("plugin", "new", "vecmath", "-o", tmp).replace(tmp + "/", "")
        tree = sorted(str(p.relative_to(tmp)) for p in Path(tmp).rglob("*") if p.is_file())
    _write("plugin-new.txt", "ppy plugin new vecmath", said + "\n".join(tree) + "\n")
    return config


def _errors_page() -> str:
    from ppy_core.diagnostics import CODES

    lines = [
        "# Error codes",
        "",
        "Generated from `ppy_core.diagnostics.CODES`, the one table every error and",
        "warning of the core, the plugins and the backends is declared in. A diagnostic",
        "renders as `file:line:col: error: message  [CODE]` with a `hint:` line saying",
        "what to do.",
        "",
    ]
    done: set[str] = set()
    for prefix, title in RANGES:
        codes = [c for c in sorted(CODES) if c.startswith(prefix) and c not in done]
        if not codes:
            continue
        lines += [f"## {title} ({prefix}xxx)", "", "| code | meaning |", "| --- | --- |"]
        lines += [f"| `{code}` | {CODES[code]} |" for code in codes]
        lines.append("")
        done.update(codes)
    return "\n".join(lines)


def _cli_page() -> str:
    from ppy_core.cli.app import VERBS

    lines = [
        "# The command line",
        "",
        "Each block is the real output of the command, generated when these docs were",
        "built.",
        "",
        "```text",
        '--8<-- "build/docs-generated/help.txt"',
        "```",
        "",
    ]
    for verb, spec in VERBS.items():
        lines += [f"## `ppy {verb}`", "", f"{spec.help[0].upper()}{spec.help[1:]}.", ""]
        lines += ["```text", f'--8<-- "build/docs-generated/help-{verb}.txt"', "```", ""]
    lines += ["```text", '--8<-- "build/docs-generated/help-plugin-new.txt"', "```", ""]
    return "\n".join(lines)


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "reference/errors.md", content=_errors_page()))
    files.append(File.generated(config, "reference/cli.md", content=_cli_page()))
    return files
