"""`ppy plugin new NAME`: write a plugin (or backend) distribution that works as written.

The written distribution installs (`pip install -e ppy-NAME`), is discovered through
its entry point, passes the core's contract kit (`ppy_core.testing.ContractSuite`)
in its own `tests/`, and — being third-party — stays disabled until a project says
`[tool.ppy.plugins.NAME] enabled = true`. Its hooks are the base class's no-ops
with one real answer each (the fingerprint names the library build found), so
nothing it declares is unwired; "Writing a plugin" in the docs walks through the rest.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from string import Template

from ppy_core.diagnostics import Error

_NAME = re.compile(r"[a-z][a-z0-9_]*")

_PYPROJECT = Template("""\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "ppy-$name"
version = "0.1.0"
description = "$description"
requires-python = ">=3.11"
dependencies = ["ppy>=0.1.0,<0.2"]

[project.optional-dependencies]
test = ["pytest>=8", "$module"]

[project.entry-points."ppy.$group"]
$name = "ppy_$name:create_$kind"

[tool.setuptools.packages.find]
where = ["."]
include = ["ppy_$name", "ppy_$name.*"]
""")

_INIT = Template('''\
"""ppy-$name: $description.

`create_$kind` is the entry point. Importing this package imports neither
`$module` nor the compiler: the class is loaded when the core asks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ppy_$name.$kind import $cls

__version__ = "0.1.0"


def create_$kind() -> $cls:
    """The `$name` $kind (entry point `ppy.$group: $name`)."""
    from ppy_$name.$kind import $cls

    return $cls()
''')

_FINGERPRINT = '''\
    def fingerprint(self) -> str:
        """`v1:$module=VERSION`, or `v1:$module=none` when it cannot be imported:
        cached artifacts are keyed by it, so a new build of `$module` rebuilds them.
        (The fingerprint may import the library; importing this package may not.)"""
        try:
            library = importlib.import_module("$module")
        except ImportError:
            return f"v{self.version}:$module=none"
        found = getattr(library, "__version__", None) or md.version("$dist")
        return f"v{self.version}:$module={found}"

    def detected(self) -> Mapping[str, str]:
        """What `ppy doctor` shows."""
        return {"$module": self.fingerprint().rpartition("=")[2]}
'''

_PLUGIN = Template(
    '''\
"""The `$name` plugin: what PPy knows of `$module`.

Every hook of `ppy_core.interface.plugin.Plugin` answers None ("not mine") until
overridden. Start with `external_types` (the library's classes as IR types) and
`tensor_operation` (its calls that are shared tensor ops); see "Writing a plugin".
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
from collections.abc import Mapping

from ppy_core.interface.plugin import Plugin


class $cls(Plugin):
    name = "$name"
    version = "1"
    modules = ("$module",)  # the top-level modules this plugin claims

'''
    + _FINGERPRINT
)

_BACKEND = Template(
    '''\
"""The `$name` backend: generates code for the sites it can lower.

Until `can_lower` accepts an op it lowers nothing, and every site keeps the other
backends or Python. A backend never types a call and imports no plugin.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ppy_core.interface.backend import Backend

if TYPE_CHECKING:
    from ppy_core.ir.core import Operation


class $cls(Backend):
    name = "$name"
    version = "1"
    modules = ("$module",)  # serves only modules that import these

    def can_lower(self, func: Operation) -> str | None:
        return "the $name backend lowers no operation yet"

'''
    + _FINGERPRINT
)

_CONTRACT = Template('''\
"""The core's contract kit over this distribution: entry point, fingerprint, lazy imports."""

from __future__ import annotations

from ppy_core import testing


class TestContract(testing.ContractSuite):
    dist = testing.Distribution.of(__file__)
    entries = (("$group", "$name", r"v1:$module=\\S+"),)
    libraries = ("$module",)  # importing the package must import none of these
    blocked = ("$module",)  # without them, the fingerprint says `=none`
    requires = "$module"
    first_party = False
''')

_README = Template("""\
# ppy-$name

$description.

    pip install -e .[test]
    pytest tests

A third-party $kind is disabled until a project enables it in its `pyproject.toml`:

    [tool.ppy.plugins.$name]
    enabled = true

`ppy doctor` lists it, with its fingerprint and whether it is enabled.
""")


def new_distribution(
    name: str, out: Path, *, module: str = "", library: str = "", backend: bool = False
) -> Path:
    """Write `out/ppy-NAME` for a plugin (or backend) named `name` claiming `module`,
    whose library is the distribution `library` (default: the module's name)."""
    if not _NAME.fullmatch(name) or keyword.iskeyword(name):
        raise Error(
            f"{name!r} is not a plugin name",
            code="E0040",
            hint="use lowercase letters, digits and '_', starting with a letter (e.g. 'vecmath')",
        )
    module = module or name
    root = out / f"ppy-{name}"
    if root.exists():
        raise Error(
            f"{root} already exists; nothing was written",
            code="E0041",
            hint="choose another name or folder (-o DIR), or remove the folder",
        )
    kind = "backend" if backend else "plugin"
    words = {
        "name": name,
        "module": module,
        "dist": library or module.replace("_", "-"),
        "kind": kind,
        "group": f"{kind}s",
        "cls": "".join(part.title() for part in name.split("_")) + kind.title(),
        "description": f"the PPy {kind} for {module}",
    }
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"ppy_{name}/__init__.py": _INIT,
        f"ppy_{name}/{kind}.py": _BACKEND if backend else _PLUGIN,
        "tests/test_contract.py": _CONTRACT,
    }
    for relative, template in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.substitute(words), encoding="utf-8")
    return root


__all__ = ["new_distribution"]
