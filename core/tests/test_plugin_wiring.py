"""Third-party plugins end to end, through `ppy` and `ppy explain`, each registered by
real entry-point metadata in a throwaway folder: routing by module claims, plugin
options, plugin diagnostics, and plugins that break (a raising fingerprint, a
failing import) without stopping the run, and what a plugin says its library's
decorators do to a function. Two fake libraries stand in for NumPy and
a rival: nothing here needs an array library or a backend (`backends = []`).
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

Ppy = Callable[..., subprocess.CompletedProcess[str]]

# "zed" owns zedlib (plays NumPy); it has an option and reports from its hooks.
ZED = """\
from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.plugin import (
    TRANSPARENT, UNVOUCHED, Converge, DecoratorSemantics, Plugin,
)
from ppy_core.ir.types import TensorType, F64

ARRAY = TensorType(F64, None, "zedlib")

class ZedPlugin(Plugin):
    name = "zed"
    modules = ("zedlib",)

    def fingerprint(self):
        return "v1:zed"

    def validate_options(self, options):
        problems = {}
        for key, value in options.items():
            if key != "unary":
                problems[key] = "is not an option of plugin 'zed' (its options: unary)"
            elif value not in ("sin", "cos"):
                problems[key] = f"is {value!r}; unary is \\"sin\\" or \\"cos\\""
        return problems

    def external_types(self):
        return {"zedlib.Array": ARRAY}

    def decorator_semantics(self, ctx):
        kinds = {"zedlib.keep": TRANSPARENT, "zedlib.route": UNVOUCHED}
        kind = kinds.get(ctx.qualname)
        return DecoratorSemantics(kind, "zed knows it") if kind else None

    def tensor_operation(self, ctx):
        if ctx.callee != "zedlib.sin":
            return None
        if ctx.constants[:1] == (2.5,):
            ctx.report(Diagnostic("E1909", "zedlib.sin(2.5): zed refuses this constant",
                                  location=ctx.location))
        return Converge("tensor.unary", ARRAY, {"op": ctx.options.get("unary", "sin")})

    def operator(self, ctx):
        if ctx.op == "Mult" and ARRAY in ctx.operands:
            ctx.report(Diagnostic("E1909", "zed: '*' on a zedlib array is deprecated",
                                  severity="warning"))
            return Converge("tensor.mul", ARRAY)
        return None

def create_plugin():
    return ZedPlugin()
"""

# "aaa" sorts before "zed" and answers every question it is asked.
GREEDY = """\
from ppy_core.interface.plugin import Converge, Plugin
from ppy_core.ir.types import TensorType, F64

ARRAY = TensorType(F64, None, "aaalib")

class GreedyPlugin(Plugin):
    name = "aaa"
    modules = ("aaalib",)

    def fingerprint(self):
        {fingerprint}

    def external_types(self):
        return {{"aaalib.Array": ARRAY}}

    def tensor_operation(self, ctx):
        return Converge("tensor.unary", ctx.args[0], {{"op": "exp"}})

    def operator(self, ctx):
        return Converge("tensor.sub", ctx.operands[0])

def create_plugin():
    return GreedyPlugin()
"""

LIBRARY = """\
import math

class Array(list):
    pass

def sin(x):
    return math.sin(x)

def tan(x):
    return math.tan(x)

def keep(f):
    return f

def route(f):
    return f

def other(f):
    return f
"""

MAIN = """\
import aaalib
import zedlib


def f(x: zedlib.Array):
    return zedlib.sin(x)


def g(x: zedlib.Array):
    return zedlib.tan(x)


def h(x: zedlib.Array, y: aaalib.Array):
    return x * y


def k(x: zedlib.Array):
    return x * 2.0


def m(x: zedlib.Array):
    return zedlib.sin(2.5) + x


print("ran", round(zedlib.sin(0.5), 6), f(0.5) == zedlib.sin(0.5))


@zedlib.keep
def kept(x: zedlib.Array):
    return zedlib.sin(x)


@zedlib.route
def routed(x: zedlib.Array):
    return zedlib.sin(x)


@zedlib.other
def unknown(x: zedlib.Array):
    return zedlib.sin(x)
"""

PYPROJECT = """\
[tool.ppy]
backends = []

[tool.ppy.plugins.aaa]
enabled = true

[tool.ppy.plugins.zed]
enabled = true
{zed_options}
"""


def _site(
    root: Path,
    write_dist: Callable[..., None],
    *,
    fingerprint: str = 'return "v1:aaa"',
    broken_import: bool = False,
) -> Path:
    site = root / "site"
    write_dist(
        site,
        "zed-ppy",
        {"ppy.plugins": {"zed": "zed_plugin:create_plugin"}},
        {"zed_plugin/__init__.py": ZED, "zedlib/__init__.py": LIBRARY},
    )
    greedy = "raise ImportError('aaa needs libfoo.so')\n" if broken_import else ""
    write_dist(
        site,
        "aaa-ppy",
        {"ppy.plugins": {"aaa": "aaa_plugin:create_plugin"}},
        {
            "aaa_plugin/__init__.py": greedy + GREEDY.format(fingerprint=fingerprint),
            "aaalib/__init__.py": LIBRARY,
        },
    )
    return site


def _project(root: Path, zed_options: str = "") -> Path:
    project = root / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(PYPROJECT.format(zed_options=zed_options))
    (project / "main.py").write_text(MAIN)
    return project


def _sites(explained: str) -> dict[str, str]:
    """Function name -> the explain text of its first site (header to next blank line)."""
    found: dict[str, str] = {}
    for block in explained.split("\n\n"):
        match = re.match(r"site \S+ in (\w+) at", block.strip())
        if match:
            found.setdefault(match.group(1), block)
    return found


@pytest.fixture
def write_dist(dist_writers: tuple[Callable[..., None], Callable[..., str]]) -> Callable[..., None]:
    return dist_writers[0]


def test_a_plugin_sorting_first_cannot_answer_for_another_plugins_module(
    tmp_path: Path, write_dist: Callable[..., None], ppy_in: Ppy
) -> None:
    site, project = _site(tmp_path, write_dist), _project(tmp_path)
    done = ppy_in(site, project, "explain", "main.py")
    assert done.returncode == 0, done.stderr
    assert "plugins: aaa, zed" in done.stdout
    sites = _sites(done.stdout)
    # zedlib.sin is zed's: "aaa" (asked first by name) answers "exp" for anything
    assert 'tensor.unary %1 {op = "sin"}' in sites["f"], sites["f"]
    # zed has no answer for zedlib.tan: then the others are asked
    assert 'op = "exp"' in sites["g"], sites["g"]
    # an operator on zed's arrays is zed's; one mixing zedlib and aaalib is nobody's
    assert "tensor.mul" in sites["k"]
    assert "h" not in sites
    assert "tensor.sub" not in done.stdout
    run = ppy_in(site, project, "main.py")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ran 0.479426 True"


def test_options_reach_the_plugin_and_change_its_answer(
    tmp_path: Path, write_dist: Callable[..., None], ppy_in: Ppy
) -> None:
    site, project = _site(tmp_path, write_dist), _project(tmp_path, 'unary = "cos"')
    done = ppy_in(site, project, "explain", "main.py")
    assert done.returncode == 0, done.stderr
    assert 'tensor.unary %1 {op = "cos"}' in _sites(done.stdout)["f"]


def test_a_bad_option_is_E1907_naming_the_key_at_its_line(
    tmp_path: Path, write_dist: Callable[..., None], ppy_in: Ppy
) -> None:
    site = _site(tmp_path, write_dist)
    project = _project(tmp_path, 'unary = "tan"\nspeed = 3')
    done = ppy_in(site, project, "main.py")
    assert done.returncode == 0, done.stderr  # zed is not used; the program runs as Python
    assert done.stdout.strip() == "ran 0.479426 True"
    pyproject = project / "pyproject.toml"
    assert f"{pyproject}:10: error: tool.ppy.plugins.zed.speed: is not an option" in done.stderr
    assert f"{pyproject}:9: error: tool.ppy.plugins.zed.unary: is 'tan'" in done.stderr
    assert done.stderr.count("[E1907]") == 2
    explained = ppy_in(site, project, "explain", "main.py").stdout
    assert "plugins: aaa\n" in explained
    assert "[E1907]" in explained


def test_diagnostics_from_call_and_operator_hooks_reach_stderr_and_explain(
    tmp_path: Path, write_dist: Callable[..., None], ppy_in: Ppy
) -> None:
    site, project = _site(tmp_path, write_dist), _project(tmp_path)
    main = project / "main.py"
    run = ppy_in(site, project, "main.py")
    assert run.returncode == 0, run.stderr
    # a call hook's error, at the call; an operator hook's warning without a location
    # gets the operator's
    assert f"{main}:22:12: error: zedlib.sin(2.5): zed refuses this constant  [E1909]" in (
        run.stderr
    )
    assert f"{main}:18:12: warning: zed: '*' on a zedlib array is deprecated  [E1909]" in (
        run.stderr
    )
    assert run.stderr.count("[E1909]") == 2  # each once
    explained = ppy_in(site, project, "explain", "main.py")
    assert "cache hit" in explained.stdout  # from the manifest, not a fresh compile
    assert f"{main}:22:12: error: zedlib.sin(2.5)" in explained.stdout
    assert f"{main}:18:12: warning: zed: '*'" in explained.stdout


def test_a_raising_fingerprint_deactivates_the_plugin_with_one_warning(
    tmp_path: Path, write_dist: Callable[..., None], ppy_in: Ppy
) -> None:
    site = _site(tmp_path, write_dist, fingerprint="raise OSError('no libaaa build found')")
    project = _project(tmp_path)
    run = ppy_in(site, project, "main.py")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ran 0.479426 True"
    warnings = [line for line in run.stderr.splitlines() if "[E1908]" in line]
    assert len(warnings) == 1, run.stderr
    assert (
        "warning: plugin 'aaa': fingerprint() raised OSError: no libaaa build found"
        in (warnings[0])
    )
    explained = ppy_in(site, project, "explain", "main.py")
    assert explained.returncode == 0, explained.stderr
    assert "plugins: zed\n" in explained.stdout
    sites = _sites(explained.stdout)
    assert 'op = "sin"' in sites["f"]
    assert "g" not in sites  # nobody is left to answer zedlib.tan
    again = ppy_in(site, project, "main.py")  # the key holds without it: a cache hit
    assert again.returncode == 0
    assert "[E1908]" not in again.stderr


def test_a_plugin_that_fails_to_import_is_one_warning_and_the_run_goes_on(
    tmp_path: Path, write_dist: Callable[..., None], ppy_in: Ppy
) -> None:
    site, project = _site(tmp_path, write_dist, broken_import=True), _project(tmp_path)
    run = ppy_in(site, project, "main.py")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ran 0.479426 True"
    failures = [line for line in run.stderr.splitlines() if "[E1904]" in line]
    assert len(failures) == 1, run.stderr
    assert "warning: plugin 'aaa' (aaa-ppy 1.0) failed to load" in failures[0]
    assert "ImportError: aaa needs libfoo.so" in failures[0]
    explained = ppy_in(site, project, "explain", "main.py").stdout
    assert "plugins: zed\n" in explained


def test_the_fake_libraries_are_what_the_program_imports(tmp_path: Path) -> None:
    """Guard of the fixtures above: MAIN's line numbers, as the assertions name them."""
    lines = textwrap.dedent(MAIN).splitlines()
    assert lines[17].strip() == "return x * 2.0"  # line 18
    assert lines[21].strip() == "return zedlib.sin(2.5) + x"  # line 22


def test_decorator_semantics_come_from_the_plugin_that_owns_the_decorator(
    tmp_path: Path, write_dist: Callable[..., None], ppy_in: Ppy
) -> None:
    site, project = _site(tmp_path, write_dist), _project(tmp_path)
    done = ppy_in(site, project, "explain", "main.py")
    assert done.returncode == 0, done.stderr
    sites = _sites(done.stdout)
    # transparent: compiled as if undecorated
    assert 'tensor.unary %1 {op = "sin"}' in sites["kept"], sites.get("kept")
    assert "decorator 'zedlib.keep' is transparent (zed knows it)" in done.stdout
    # unvouched: left exactly as written, with the plugin's reason
    assert "routed" not in sites
    assert "decorator 'zedlib.route' is unvouched (zed knows it)" in done.stdout
    # a decorator no plugin vouches for stays opaque ("aaa" answers nothing here)
    assert "unknown" not in sites
    assert "decorator 'zedlib.other' is not known to leave the function" in done.stdout
    run = ppy_in(site, project, "main.py")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ran 0.479426 True"
