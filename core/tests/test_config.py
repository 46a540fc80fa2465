"""`[tool.ppy]`: defaults, every key, and a coded error for every bad key or value."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ppy_core.diagnostics import ConfigError
from ppy_core.project.config import DEFAULT, Config, find_pyproject, load_config


def _write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pyproject.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_no_pyproject_gives_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ppy_core.project.config.find_pyproject", lambda start: None)
    assert load_config(tmp_path) == DEFAULT
    assert DEFAULT.opt == 2
    assert DEFAULT.build_execution == "deny"
    assert DEFAULT.strict is False


def test_nearest_pyproject_above_a_file_wins(tmp_path: Path) -> None:
    _write(tmp_path, "[tool.ppy]\nopt = 1\n")
    inner = _write(tmp_path / "sub", "[project]\nname = 'x'\n")
    source = tmp_path / "sub" / "pkg" / "mod.ppy"
    source.parent.mkdir(parents=True)
    source.write_text("x = 1\n")
    assert find_pyproject(source) == inner
    config = load_config(source)
    assert config.path == inner
    assert config.opt == 2  # the nearest has no [tool.ppy]: defaults, no further search


def test_every_key_is_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        [tool.ppy]
        strict = true
        opt = 3
        build-execution = "allow"
        backends = ["llvm", "aten"]
        cache-dir = "cache"
        [tool.ppy.plugins.torch]
        enabled = false
        [tool.ppy.plugins.foo]
        enabled = true
        threads = 4
        """,
    )
    config = load_config(tmp_path)
    assert config == Config(
        path=path.resolve(),
        strict=True,
        opt=3,
        build_execution="allow",
        backends=("llvm", "aten"),
        cache_dir=(tmp_path / "cache").resolve(),
        plugins=config.plugins,
    )
    assert config.plugin("torch").enabled is False
    assert config.plugin("foo").enabled is True
    assert dict(config.plugin("foo").options) == {"threads": 4}
    assert config.plugin("unnamed").enabled is None
    assert config.key_options()["plugins"] == {"foo": {"threads": 4}}


@pytest.mark.parametrize(
    ("text", "key", "hint"),
    [
        ("[tool.ppy]\nstrcit = true\n", "tool.ppy.strcit", "the keys of [tool.ppy] are"),
        ("[tool.ppy]\nstrict = 1\n", "tool.ppy.strict", "true or false"),
        ("[tool.ppy]\nopt = 4\n", "tool.ppy.opt", "0 (off)"),
        ("[tool.ppy]\nopt = true\n", "tool.ppy.opt", "0 (off)"),
        ("[tool.ppy]\nbuild-execution = 'yes'\n", "tool.ppy.build-execution", '"deny"'),
        ("[tool.ppy]\nbackends = 'llvm'\n", "tool.ppy.backends", "backends = ["),
        ("[tool.ppy]\nbackends = ['llvm', 'llvm']\n", "tool.ppy.backends", "once"),
        ("[tool.ppy]\ncache-dir = 3\n", "tool.ppy.cache-dir", "relative to pyproject.toml"),
        ("[tool.ppy]\nplugins = 3\n", "tool.ppy.plugins", "[tool.ppy.plugins.NAME]"),
        ("[tool.ppy.plugins]\nfoo = true\n", "tool.ppy.plugins.foo", "enabled = true"),
        ("[tool.ppy.plugins.foo]\nenabled = 'yes'\n", "tool.ppy.plugins.foo.enabled", "true"),
        ("[tool]\nppy = 3\n", "tool.ppy", "[tool.ppy]"),
    ],
)
def test_bad_configuration_is_E1950_naming_file_and_key(
    tmp_path: Path, text: str, key: str, hint: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    error = raised.value
    assert error.code == "E1950"
    assert str(path.resolve()) in str(error)
    assert key in error.diagnostic.message
    assert hint in error.diagnostic.hint


def test_invalid_toml_is_E1950(tmp_path: Path) -> None:
    _write(tmp_path, "[tool.ppy\nopt = 2\n")
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    assert raised.value.code == "E1950"
    assert "not valid TOML" in str(raised.value)


def test_config_is_frozen() -> None:
    with pytest.raises(AttributeError):
        DEFAULT.opt = 3  # type: ignore[misc]


def test_a_plugin_option_is_located_at_its_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        [project]
        name = "x"

        [tool.ppy]
        opt = 2
        plugins.bar.level = 3
        plugins.baz = { enabled = true, mode = "x" }

        [tool.ppy.plugins.foo]
        enabled = true
        "unary" = "cos"   # a comment
        [tool.other]
        mode = 1
        """,
    )
    config = load_config(tmp_path)
    where = {
        (plugin, key): config.option_location(plugin, key)
        for plugin, key in [("foo", "unary"), ("bar", "level"), ("baz", "mode"), ("foo", "x")]
    }
    assert {k: (str(v.path), v.line) for k, v in where.items() if v is not None} == {
        ("foo", "unary"): (str(path.resolve()), 11),
        ("bar", "level"): (str(path.resolve()), 6),
        ("baz", "mode"): (str(path.resolve()), 7),
        ("foo", "x"): (str(path.resolve()), 0),  # not written: the file alone
    }
    assert str(where[("foo", "unary")]) == f"{path.resolve()}:11"
    assert DEFAULT.option_location("foo", "unary") is None
