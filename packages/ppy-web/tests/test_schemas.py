"""pydantic schemas built ahead of time run the project's code, so only under
`build-execution = "allow"` (through the core's service): under "deny" nothing runs
and one E0030 warning names the work; under "allow" the schemas are pydantic's own;
a model that fails is a coded warning, never a crash."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from ppy_web.schemas import build_schemas, model_names

MODELS = textwrap.dedent(
    """\
    from pathlib import Path
    from typing import Annotated

    from pydantic import BaseModel, Field

    Path(__file__).with_name("ran").write_text("yes")  # proof the module was run


    class Order(BaseModel):
        sku: str = Field(min_length=2)
        count: Annotated[int, Field(ge=1, le=100)]


    class Gift(Order):
        note: str = ""
    """
)


def project(tmp_path: Path, policy: str | None, body: str = MODELS) -> Path:
    if policy is not None:
        (tmp_path / "pyproject.toml").write_text(f'[tool.ppy]\nbuild-execution = "{policy}"\n')
    path = tmp_path / "shop.ppy"
    path.write_text(body, encoding="utf-8")
    return path


def test_models_are_found_without_running(tmp_path: Path) -> None:
    path = project(tmp_path, None)
    assert model_names(path) == ["Order", "Gift"]
    assert not (tmp_path / "ran").exists()


def test_deny_runs_nothing_and_says_so(tmp_path: Path) -> None:
    path = project(tmp_path, "deny")
    found, diagnostic = build_schemas(path)
    assert found is None
    assert diagnostic is not None
    assert diagnostic.code == "E0030"
    assert diagnostic.severity == "warning"
    assert "shop.ppy (Order, Gift)" in diagnostic.message
    assert "build-execution" in diagnostic.message
    assert not (tmp_path / "ran").exists()


def test_the_default_is_deny(tmp_path: Path) -> None:
    path = project(tmp_path, None)
    found, diagnostic = build_schemas(path)
    assert found is None
    assert diagnostic is not None
    assert diagnostic.code == "E0030"


def test_allow_gives_pydantics_own_schemas(tmp_path: Path) -> None:
    path = project(tmp_path, "allow")
    found, diagnostic = build_schemas(path)
    assert diagnostic is None
    assert found is not None
    namespace: dict[str, object] = {"__file__": str(tmp_path / "inline.py")}
    exec(compile(MODELS, "inline.py", "exec", dont_inherit=True), namespace)
    for name in ("Order", "Gift"):
        assert found[name] == namespace[name].model_json_schema()  # type: ignore[attr-defined]
    assert found["Order"]["properties"]["count"]["minimum"] == 1


def test_a_failing_model_is_a_warning(tmp_path: Path) -> None:
    path = project(tmp_path, "allow", MODELS + "\nraise RuntimeError('no database')\n")
    found, diagnostic = build_schemas(path)
    assert found is None
    assert diagnostic is not None
    assert diagnostic.code == "E0031"
    assert "no database" in diagnostic.message


def test_the_command(tmp_path: Path) -> None:
    path = project(tmp_path, "allow")
    out = tmp_path / "schemas"
    done = subprocess.run(
        [sys.executable, "-m", "ppy_web.schemas", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "Order.json").read_text())["title"] == "Order"
    (tmp_path / "denied").mkdir()
    denied = project(tmp_path / "denied", "deny")
    done = subprocess.run(
        [sys.executable, "-m", "ppy_web.schemas", str(denied)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "[E0030]" in done.stderr
    assert "Traceback" not in done.stderr
