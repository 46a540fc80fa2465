"""Build a project's pydantic JSON schemas ahead of time, under the build policy.

    python -m ppy_web.schemas FILE [-o DIR]     # FILE: a .py or .ppy module

`model_json_schema()` runs the project's own code (the module is imported, models
are built, validators and `json_schema_extra` callables run), so it goes through the
core's build-execution service like JAX export: only under `[tool.ppy]
build-execution = "allow"`, in a subprocess with a time limit. Under "deny" (the
default) nothing runs and one warning says so (E0030, naming the module, the setting
and the code). The models are found by reading the source (`ppy_web.models`), so a
file that defines none costs no subprocess. The schemas are pydantic's own, byte for
byte (`json.dumps(..., indent=2, sort_keys=False)` of `model_json_schema()`).
"""

from __future__ import annotations

import argparse
import ast
import importlib.machinery
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from ppy_core.diagnostics import Diagnostic, Location
from ppy_core.project.build_execution import execute
from ppy_core.project.config import Config, load_config
from ppy_core.project.scope import scan_module
from ppy_web.models import read_models

TIMEOUT_S = 60.0


def model_names(path: Path) -> list[str]:
    """The models `path` defines, by class name, read from its source (not run)."""
    tree = ast.parse(path.read_bytes(), str(path))
    imports = scan_module(tree, path).imports
    return [q.rpartition(".")[2] for q in read_models(tree, path.stem, imports)]


def build_schemas(
    path: Path, config: Config | None = None
) -> tuple[dict[str, Any] | None, Diagnostic | None]:
    """({model: schema} or None, the diagnostic when it did not run or failed)."""
    path = path.resolve()
    names = model_names(path)
    if not names:
        return {}, None
    config = config if config is not None else load_config(path.parent)
    outcome = execute(
        "ppy_web.schemas:schemas_in_child",
        {"path": str(path), "models": names},
        config=config,
        who=f"pydantic schemas of {path.name} ({', '.join(names)})",
        instead="no schema is built",
        sys_path=[str(path.parent)],
        cwd=path.parent,
        timeout_s=TIMEOUT_S,
        location=Location(str(path)),
    )
    if not outcome.ok:
        return None, outcome.diagnostic
    return outcome.value, None


def schemas_in_child(payload: dict[str, Any]) -> dict[str, Any]:
    """(In the build-execution subprocess.) Import the module as plain Python, under a
    name of its own, and return each model's `model_json_schema()`."""
    path = Path(payload["path"])
    name = f"_ppy_schemas_{path.stem}"
    loader = importlib.machinery.SourceFileLoader(name, str(path))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return {model: getattr(module, model).model_json_schema() for model in payload["models"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ppy_web.schemas", description=__doc__)
    ap.add_argument("file", type=Path)
    ap.add_argument("-o", "--out", type=Path, default=None, help="write MODEL.json files here")
    args = ap.parse_args(argv)
    found, diagnostic = build_schemas(args.file)
    if diagnostic is not None:
        print(diagnostic.render(), file=sys.stderr)
    if found is None:
        return 1
    for model, schema in found.items():
        text = json.dumps(schema, indent=2) + "\n"
        if args.out is None:
            print(text, end="")
        else:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"{model}.json").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
