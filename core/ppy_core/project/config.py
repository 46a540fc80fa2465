"""`[tool.ppy]`: the project's configuration, from the nearest `pyproject.toml`.

    [tool.ppy]
    strict = false                 # every unknown type an error (E1001)
    opt = 2                        # 0 off, 1 typed only, 2 fusion, 3 also regions
    build-execution = "deny"       # "allow" lets `ppy build` run project code
    backends = ["llvm", "aten"]    # order/restrict the installed backends
    cache-dir = ".ppy-cache"       # relative to the pyproject.toml's folder
    packages = ["mylib"]           # also compile these packages' modules when imported
                                   # (by `ppy FILE`, `ppy -m`, the pytest plugin)
    [tool.ppy.plugins.foo]
    enabled = true                 # third-party plugins load only when enabled
    some-option = 1                # anything else reaches plugin `foo` as ctx.options,
                                   # checked by its validate_options (E1907)

Unknown keys and bad values raise `ConfigError` (E1950) naming the file and key.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal

from ppy_core.diagnostics import ConfigError, Location

BuildExecution = Literal["deny", "allow"]

KEYS: Final[tuple[str, ...]] = (
    "strict",
    "opt",
    "build-execution",
    "backends",
    "cache-dir",
    "packages",
    "plugins",
)
OPT_LEVELS: Final[tuple[int, ...]] = (0, 1, 2, 3)
BUILD_EXECUTION: Final[tuple[str, ...]] = ("deny", "allow")
_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class PluginConfig:
    """`[tool.ppy.plugins.NAME]`: `enabled` (None when not said) and everything else."""

    enabled: bool | None = None
    options: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)


@dataclass(frozen=True, slots=True)
class Config:
    """The `[tool.ppy]` table, checked. `path` is the pyproject.toml it came from
    (None: no pyproject.toml was found, every default holds)."""

    path: Path | None = None
    strict: bool = False
    opt: int = 2
    build_execution: BuildExecution = "deny"
    backends: tuple[str, ...] | None = None
    cache_dir: Path | None = None
    packages: tuple[str, ...] = ()
    plugins: Mapping[str, PluginConfig] = field(default_factory=lambda: _EMPTY)

    def plugin(self, name: str) -> PluginConfig:
        """The configuration of plugin `name` (a default one when not named)."""
        return self.plugins.get(name) or PluginConfig()

    def option_location(self, plugin: str, key: str) -> Location | None:
        """Where `[tool.ppy.plugins.PLUGIN] KEY` is written (file:line, or the file
        alone when the line cannot be told), so a refused option points at itself."""
        if self.path is None:
            return None
        return Location(str(self.path), _key_line(self.path, f"tool.ppy.plugins.{plugin}", key))

    def key_options(self) -> dict[str, Any]:
        """What of this configuration changes compiled code (part of cache keys)."""
        return {
            "strict": self.strict,
            "opt": self.opt,
            "build-execution": self.build_execution,
            "backends": list(self.backends) if self.backends is not None else None,
            "plugins": {
                name: dict(p.options) for name, p in sorted(self.plugins.items()) if p.options
            },
        }


DEFAULT: Final = Config()


def find_pyproject(start: str | Path) -> Path | None:
    """The nearest `pyproject.toml` in `start`'s folder or above (`start` may be a file)."""
    here = Path(start).resolve()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(start: str | Path = ".") -> Config:
    """The configuration for a file or folder: `[tool.ppy]` of the nearest pyproject.toml.

    A pyproject.toml without `[tool.ppy]` gives the defaults (the search stops there)."""
    path = find_pyproject(start)
    if path is None:
        return DEFAULT
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"pyproject.toml cannot be read ({exc})",
            location=Location(str(path)),
            hint="check the file's permissions and encoding (UTF-8)",
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"pyproject.toml is not valid TOML ({exc})",
            location=Location(str(path)),
            hint="fix the TOML syntax at the line and column named",
        ) from None
    tool = document.get("tool", {})
    table = tool.get("ppy") if isinstance(tool, dict) else None
    if table is None:
        return Config(path=path)
    return parse_config(table, path)


def parse_config(table: object, path: Path) -> Config:
    """Check a `[tool.ppy]` table read from `path`; raise ConfigError on the first problem."""
    where = Location(str(path))
    if not isinstance(table, dict):
        raise _bad(path, "tool.ppy", "is not a table", "write it as [tool.ppy]")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(
            f"tool.ppy.{unknown[0]} is not a key of [tool.ppy]",
            hint=f"the keys of [tool.ppy] are {', '.join(KEYS)}",
            location=where,
        )
    strict = _bool(table.get("strict", False), path, "tool.ppy.strict")
    opt = table.get("opt", 2)
    if isinstance(opt, bool) or opt not in OPT_LEVELS:
        raise _bad(
            path,
            "tool.ppy.opt",
            f"is {opt!r}",
            "opt is 0 (off), 1 (typed only), 2 (fusion, the default) or 3 (regions)",
        )
    execution = table.get("build-execution", "deny")
    if execution not in BUILD_EXECUTION:
        raise _bad(
            path,
            "tool.ppy.build-execution",
            f"is {execution!r}",
            'build-execution is "deny" (the default) or "allow"',
        )
    return Config(
        path=path,
        strict=strict,
        opt=opt,
        build_execution=execution,
        backends=_backends(table.get("backends"), path),
        cache_dir=_cache_dir(table.get("cache-dir"), path),
        packages=_packages(table.get("packages", []), path),
        plugins=_plugins(table.get("plugins", {}), path),
    )


def _bad(path: Path, key: str, problem: str, hint: str) -> ConfigError:
    return ConfigError(f"{key} {problem}", hint=hint, location=Location(str(path)))


def _bool(value: object, path: Path, key: str) -> bool:
    if not isinstance(value, bool):
        raise _bad(path, key, f"is {value!r}, not a boolean", "write true or false")
    return value


def _backends(value: object, path: Path) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _bad(
            path,
            "tool.ppy.backends",
            f"is {value!r}",
            'list backend names in the order to try them: backends = ["llvm"]',
        )
    if len(set(value)) != len(value):
        raise _bad(
            path, "tool.ppy.backends", f"names a backend twice: {value!r}", "list each backend once"
        )
    return tuple(value)


def _cache_dir(value: object, path: Path) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise _bad(
            path,
            "tool.ppy.cache-dir",
            f"is {value!r}",
            'write a folder, absolute or relative to pyproject.toml: ".ppy-cache"',
        )
    return (path.parent / Path(value).expanduser()).resolve()


def _packages(value: object, path: Path) -> tuple[str, ...]:
    """`packages`: importable names whose modules are compiled as they are imported
    (not part of any cache key: it changes which modules compile, not how)."""
    if not isinstance(value, list) or not all(
        isinstance(v, str) and v and all(p.isidentifier() for p in v.split(".")) for v in value
    ):
        raise _bad(
            path,
            "tool.ppy.packages",
            f"is {value!r}",
            'list the packages as Python imports them: packages = ["mylib", "other.sub"]',
        )
    return tuple(dict.fromkeys(value))


def _plugins(value: object, path: Path) -> Mapping[str, PluginConfig]:
    if not isinstance(value, dict):
        raise _bad(
            path,
            "tool.ppy.plugins",
            "is not a table",
            "write one table per plugin: [tool.ppy.plugins.NAME]",
        )
    plugins: dict[str, PluginConfig] = {}
    for name, options in value.items():
        key = f"tool.ppy.plugins.{name}"
        if not isinstance(options, dict):
            raise _bad(
                path,
                key,
                "is not a table",
                f"write [{key}] with enabled = true or false and the plugin's options",
            )
        enabled = options.get("enabled")
        if enabled is not None:
            _bool(enabled, path, f"{key}.enabled")
        rest = {k: v for k, v in options.items() if k != "enabled"}
        plugins[name] = PluginConfig(enabled, MappingProxyType(rest) if rest else _EMPTY)
    return MappingProxyType(plugins)


_HEADER: Final = re.compile(r"^\s*\[(?!\[)\s*([^\]]+?)\s*\]\s*(?:#.*)?$")
_ASSIGNED: Final = re.compile(r"^\s*([\w\-.\"' ]+?)\s*=(.*)$")


def _dotted(text: str) -> str:
    """A TOML key as one dotted string: `"a" . b` -> `a.b` (quotes and spaces dropped)."""
    return ".".join(part.strip().strip("\"'") for part in text.split("."))


def _key_line(path: Path, table: str, key: str) -> int:
    """The 1-based line of `key` in `table` of the TOML file at `path` (0: not found).

    tomllib keeps no positions; this reads the common spellings: `[table]` then
    `key = ...`, a dotted `sub.key = ...` under a parent table, an inline table."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 0
    target, current = f"{table}.{key}", ""
    for number, line in enumerate(lines, start=1):
        header = _HEADER.match(line)
        if header:
            current = _dotted(header.group(1))
            continue
        assigned = _ASSIGNED.match(line)
        if assigned is None:
            continue
        full = _dotted(f"{current}.{assigned.group(1)}" if current else assigned.group(1))
        if full == target:
            return number
        if full == table and re.search(rf"[{{,]\s*[\"']?{re.escape(key)}[\"']?\s*=", line):
            return number
    return 0


__all__ = [
    "Config",
    "PluginConfig",
    "DEFAULT",
    "KEYS",
    "BuildExecution",
    "find_pyproject",
    "load_config",
    "parse_config",
]
