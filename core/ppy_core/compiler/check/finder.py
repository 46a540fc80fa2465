"""Where a module's source or stub is, and what names it binds, read without importing it.

A module is *found* (its stub or source parsed), *missing* (its package is found and
has no such submodule, or its project folder has no such file), or *unknown*: not
installed here, a C extension without stubs, a namespace package, or a module that
can gain names no reader sees (a module-level `__getattr__`, `globals()` written, a
star import of something unknown). Only what is found and closed is ever an error.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from pathlib import Path

from ppy_core.compiler.check.bindings import IMPLICIT, module_bindings, top_statements

#: suffixes of a C extension module: it has no source to read
_EXTENSIONS = (".so", ".pyd")


class ModuleInfo:
    """A found module: its file, whether it is a package, and the names it binds. Its
    file is parsed when its names are first asked for: that a module exists needs
    only its path (`import os` reads nothing)."""

    __slots__ = ("_names", "_open", "_read", "_tree", "folders", "merged", "name", "package",
                 "path", "stub")  # fmt: skip

    def __init__(
        self,
        name: str,
        path: Path,
        package: bool,
        *,
        read: Callable[[ModuleInfo], None] | None = None,
        open: bool = False,
        folders: tuple[Path, ...] = (),
        stub: bool = False,
    ) -> None:
        self.name, self.path, self.package = name, path, package
        self.folders, self.stub = folders, stub
        #: whether a stub's names were joined with its module's own source's
        self.merged = False
        self._read = read
        self._tree = ast.Module(body=[], type_ignores=[])
        self._names: set[str] = set()
        self._open = open

    def _ensure(self) -> None:
        if self._read is not None:
            read, self._read = self._read, None
            read(self)

    @property
    def tree(self) -> ast.Module:
        self._ensure()
        return self._tree

    @property
    def names(self) -> set[str]:
        self._ensure()
        return self._names

    @names.setter
    def names(self, value: set[str]) -> None:
        self._ensure()
        self._names = value

    @property
    def open(self) -> bool:
        """Whether the module may bind names its source does not show."""
        self._ensure()
        return self._open

    @open.setter
    def open(self, value: bool) -> None:
        self._ensure()
        self._open = value


#: what a module's source holds where it fills modules at run time (`tlz`'s loader)
_HOOKS = re.compile(rb"meta_path|path_hooks|modules\[")
MISSING = "missing"
#: Python 2's standard-library modules that Python 3 renamed or removed (an import of
#: one raises on every Python 3, unless something of that name is installed)
PYTHON2_ONLY = frozenset(
    {"compiler", "cStringIO", "cPickle", "StringIO", "urllib2", "urlparse", "ConfigParser",
     "Queue", "HTMLParser", "httplib", "cookielib", "Cookie", "SocketServer", "commands",
     "SimpleHTTPServer", "BaseHTTPServer", "CGIHTTPServer", "xmlrpclib", "SimpleXMLRPCServer",
     "DocXMLRPCServer", "UserDict", "UserList", "UserString", "copy_reg", "__builtin__",
     "exceptions", "sets", "md5", "sha", "new", "thread", "dummy_thread", "Tkinter",
     "tkMessageBox", "anydbm", "dbhash", "dumbdbm", "gdbm", "whichdb", "htmlentitydefs",
     "robotparser", "markupbase", "mimetools", "MimeWriter", "mimify", "multifile", "rfc822",
     "popen2", "posixfile", "sgmllib", "htmllib", "statvfs", "imputil", "ihooks", "mutex",
     "dircache", "fpformat"}
)  # fmt: skip


class Finder:
    """Finds modules on the project's roots, then the running Python's `sys.path`
    (a stub before its source, typeshed for the standard library)."""

    def __init__(self, roots: tuple[Path, ...]) -> None:
        paths = [Path(p) for p in sys.path if p and Path(p).is_dir()]
        self.roots = tuple(dict.fromkeys([*roots, *paths]))
        self.project = tuple(roots)
        self._found: dict[str, ModuleInfo | str | None] = {}
        self._loading: set[str] = set()
        #: every file and folder read, for the cache's key
        self.read: set[Path] = set(self.roots)

    def module(self, dotted: str) -> ModuleInfo | str | None:
        """The module's info, MISSING, or None (unknown)."""
        if dotted in self._found:
            return self._found[dotted]
        if dotted in self._loading:
            return None  # a star-import cycle: what it binds is not known yet
        self._loading.add(dotted)
        try:
            found = self._locate(dotted)
        finally:
            self._loading.discard(dotted)
        self._found[dotted] = found
        return found

    def defines(self, module: ModuleInfo, name: str) -> bool:
        """Whether `from module import name` finds something: a name the module binds
        (a stub's private names and what its module's own source binds included: a
        stub may leave them out), a module attribute every module has, a submodule."""
        if module.open or name in module.names or name in IMPLICIT:
            return True
        if module.stub:
            if name.startswith("_"):
                return True
            if not module.merged:
                module.merged = True
                self._runtime_source(module)
                if module.open or name in module.names:
                    return True
        return self.submodule(module, name) != MISSING

    def submodule(self, package: ModuleInfo, name: str) -> ModuleInfo | str | None:
        """`package.name` as a submodule: found, MISSING or None (unknown)."""
        if not package.package:
            return MISSING
        return self.module(f"{package.name}.{name}")

    def _locate(self, dotted: str) -> ModuleInfo | str | None:
        parent, _, last = dotted.rpartition(".")
        if not parent:
            return self._top(dotted)
        owner = self.module(parent)
        if not isinstance(owner, ModuleInfo):
            return owner  # a missing package's submodule is missing; unknown stays unknown
        for folder in owner.folders:
            found = self._in_folder(folder, last, dotted, stub=owner.stub)
            if found is not None:
                return found
        if owner.stub and owner.name.partition(".")[0] not in sys.stdlib_module_names:
            return None  # a stub package may leave out submodules its library has
        if owner.stub and _in_running_stdlib(dotted):
            return None  # (`re._parser`: typeshed's `re` is one file, 3.11's a package)
        if owner.open:
            return None  # `__path__` extended, or submodules made at run time
        return MISSING

    def _top(self, name: str) -> ModuleInfo | str | None:
        if name in sys.stdlib_module_names or name == "builtins":
            return self._stdlib(name)
        homes = [r for r in self.project if _holds(r, name)]
        if len(homes) > 1:
            return None  # `conftest` in two test folders: which one depends on the importer
        for root in self.roots:
            stub = root / f"{name}-stubs"
            if (stub / "__init__.pyi").is_file():
                return self._load(name, stub / "__init__.pyi", (stub,), stub=True)
            found = self._in_folder(root, name, name, stub=False)
            if found is not None:
                return found if found != MISSING else None
        if name in PYTHON2_ONLY:
            return MISSING  # Python 2's standard library: no Python 3 has it
        return None  # not installed here: unknown, not an error

    def _stdlib(self, name: str) -> ModuleInfo | None:
        """A standard-library module from typeshed's stubs (bundled by typeshed-client,
        read as files: asking its finder starts a subprocess per module)."""
        folder = _typeshed()
        if folder is None:
            return None
        found = self._in_folder(folder, name, name, stub=True)
        return found if found is not None and found.path.suffix == ".pyi" else None

    def _runtime_source(self, info: ModuleInfo) -> None:
        """A standard-library stub's names and the module's own source's together: a
        stub may leave out what the module has (`tty` star-imports `termios`)."""
        folder = _typeshed()
        stdlib = Path(ast.__file__).parent
        if folder is None or not info.path.is_relative_to(folder):
            return
        relative = info.path.relative_to(folder).with_suffix(".py")
        source = stdlib / relative
        if not source.is_file():
            return  # a C module: the stub is all there is
        self.read.add(source)
        try:
            raw = source.read_bytes()
            tree = ast.parse(raw)
        except (SyntaxError, ValueError, OSError):
            info.open = True
            return
        bound = module_bindings(tree, raw)
        info.names |= bound.names
        info.open |= bound.open
        for module, level in bound.star_imports:
            target = resolve_relative(info.name, info.package, module, level)
            found = self.module(target) if target else None
            if not isinstance(found, ModuleInfo) or found.open:
                info.open = True
            else:
                info.names |= exported(found)

    def _in_folder(self, folder: Path, last: str, dotted: str, *, stub: bool) -> ModuleInfo | None:
        """`last` in `folder`: a package, a module, a stub; None where nothing is there.
        A namespace package or a C extension is returned as MISSING's opposite: unknown,
        which the caller sees as a found-but-open module (`_unknown`)."""
        package = folder / last
        self.read.add(folder)
        for init in ("__init__.pyi", "__init__.py"):
            if (package / init).is_file():
                return self._load(dotted, package / init, (package,), stub=init.endswith("i"))
        # (a `.ppy` module wins over a `.py` one in its folder, as PPy imports them)
        for suffix in (".pyi", ".py") if stub else (".pyi", ".ppy", ".py"):
            if (folder / f"{last}{suffix}").is_file():
                return self._load(dotted, folder / f"{last}{suffix}", (), stub=suffix == ".pyi")
        if package.is_dir() or _extension(folder, last):
            return _unknown(dotted, package)
        return None

    def _load(
        self, dotted: str, path: Path, folders: tuple[Path, ...], *, stub: bool
    ) -> ModuleInfo:
        self.read.add(path)
        package = bool(folders) or path.name.startswith("__init__.")
        return ModuleInfo(dotted, path, package, read=self._parse, folders=folders, stub=stub)

    def _parse(self, info: ModuleInfo) -> None:
        """Read a module's names (the first time they are asked for)."""
        from ppy_core.compiler.check import parse

        try:
            source = info.path.read_bytes()
            tree = parse(source, str(info.path))  # (a checked file's: parsed already)
        except (SyntaxError, ValueError, OSError):
            info.open = True
            return
        info._tree = tree
        bound = module_bindings(tree, source)
        info.names = set(bound.names)
        info.open = bound.open or (info.package and self._hooked(info, tree))
        for module, level in bound.star_imports:
            target = resolve_relative(info.name, info.package, module, level)
            found = self.module(target) if target else None
            if isinstance(found, ModuleInfo) and found.stub and not found.merged:
                found.merged = True
                self._runtime_source(found)
            if not isinstance(found, ModuleInfo) or found.open:
                info.open = True
                continue
            info.names |= exported(found)

    def _hooked(self, info: ModuleInfo, tree: ast.Module) -> bool:
        """Whether a package's `__init__` imports a module of its own that installs an
        import hook or writes `sys.modules`: the package's names are then made at run
        time (`from . import _build_tlz` fills `tlz` from `toolz`)."""
        if not info.folders:
            return False
        for stmt in tree.body:
            if not isinstance(stmt, ast.ImportFrom) or stmt.level != 1:
                continue
            names = [stmt.module] if stmt.module else [a.name for a in stmt.names]
            for name in names:
                file = info.folders[0] / f"{name.partition('.')[0]}.py"
                self.read.add(file)
                try:
                    if file.is_file() and _HOOKS.search(file.read_bytes()):
                        return True
                except OSError:
                    continue
        return False


def exported(info: ModuleInfo) -> set[str]:
    """What `from info import *` binds: its `__all__` when that is a literal, else its
    public names."""
    listed = dunder_all(info.tree)
    if listed is not None:
        return {name for name, _ in listed}
    return {n for n in info.names if not n.startswith("_")}


def dunder_all(tree: ast.Module) -> list[tuple[str, ast.Constant]] | None:
    """A module's `__all__` strings, when every write of it is a literal list or tuple
    (`=`, `+=`, `.extend`, `.append`); None otherwise."""
    found: list[tuple[str, ast.Constant]] = []
    seen = False
    for stmt in top_statements(tree.body):
        node: ast.AST = stmt.value if isinstance(stmt, ast.Expr) else stmt
        value = None
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                continue
            if len(targets) != 1:
                return None
            value = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "__all__"
        ):
            if node.func.attr not in ("extend", "append") or len(node.args) != 1:
                return None
            value = node.args[0]
            if node.func.attr == "append":
                value = ast.List(elts=[value], ctx=ast.Load())
        else:
            continue
        if not isinstance(value, ast.List | ast.Tuple):
            return None
        for element in value.elts:
            if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
                return None
            found.append((element.value, element))
        seen = True
    return found if seen else None


def resolve_relative(module: str, package: bool, target: str | None, level: int) -> str | None:
    """The absolute name of `from <level dots><target> import ...` written in `module`."""
    if level == 0:
        return target
    parts = module.split(".") if package else module.split(".")[:-1]
    if level - 1 > len(parts) or (level - 1 == len(parts) and not target):
        return None
    base = parts[: len(parts) - (level - 1)]
    name = ".".join([*base, target] if target else base)
    return name or None


def _holds(root: Path, name: str) -> bool:
    return (
        (root / f"{name}.py").is_file()
        or (root / f"{name}.ppy").is_file()
        or (root / name / "__init__.py").is_file()
    )


def _in_running_stdlib(dotted: str) -> bool:
    """Whether the running Python's own standard library has module `dotted`."""
    *parents, last = dotted.split(".")
    folder = Path(ast.__file__).parent.joinpath(*parents)
    return (folder / f"{last}.py").is_file() or (folder / last / "__init__.py").is_file()


def _typeshed() -> Path | None:
    try:
        import typeshed_client
    except ImportError:  # (a dependency of ppy-core; kept safe)
        return None
    folder = Path(typeshed_client.__file__).parent / "typeshed"
    return folder if folder.is_dir() else None


def _extension(folder: Path, last: str) -> bool:
    try:
        return any(
            p.name.startswith(f"{last}.") and p.suffix in _EXTENSIONS for p in folder.iterdir()
        )
    except OSError:
        return False


def _unknown(dotted: str, path: Path) -> ModuleInfo:
    """A module that exists but whose names nobody can list (a namespace package, a C
    extension without stubs): found, and open."""
    folders = (path,) if path.is_dir() else ()
    return ModuleInfo(dotted, path, bool(folders), open=True, folders=folders)


__all__ = ["MISSING", "Finder", "ModuleInfo", "dunder_all", "exported", "resolve_relative"]
