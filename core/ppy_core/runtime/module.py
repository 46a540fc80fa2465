"""Executing an artifact's module: bind its sites, then run its code."""

from __future__ import annotations

import builtins
import os
import sys
import types
import warnings
from _thread import allocate_lock  # `threading` costs a start ~1-2 ms
from pathlib import Path

from ppy_core.runtime import dispatch, integrity, runview
from ppy_core.runtime.artifact import coded, read_code, read_manifest

TYPE_CHECKING = False  # `typing` costs a launcher ~3 ms: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


FALLBACK_MARK = "<ppy fallback>"  # in the qualname of a site's Python path (see transform)
FRESH = "__ppy_fresh"  # a fallback's read of an argument fed by an expression (see transform)


class ArtifactWarning(UserWarning):
    """A piece of an artifact could not be used; that part runs as Python."""


class Binder:
    """Creates the dispatchers of one module's sites as its code asks for them."""

    def __init__(
        self,
        directory: Path,
        manifest: dict[str, Any],
        namespace: dict[str, Any],
        refuse: str = "",
        prefix: str = "__ppy_",
    ) -> None:
        self.directory, self.manifest, self.namespace = directory, manifest, namespace
        self.refuse, self.prefix = refuse, prefix
        self.lock = allocate_lock()  # a site binds once, whichever thread calls it first
        self.kernels: dict[Any, tuple[Any, Any]] = {}  # see `_kernel`
        self.opened: set[tuple[str, ...]] = set()  # files checked, then opened (see `_make`)
        self.folder = os.path.abspath(directory)
        self.module = manifest["module"]["name"]
        # (line, col) -> site id: a specialization's sites count under the generic ones
        self.site_ids: dict[tuple[int, int], str] = {}
        namespace[FRESH] = dispatch.fresh
        for record in manifest["function_sites"]:
            namespace[f"{prefix}fn_{record['index']}"] = self._decorator(record)
        for record in manifest.get("specializable", ()):
            namespace[f"{prefix}spec_{record['index']}__"] = self._specializing(record)

    def _warn(self, message: str, stacklevel: int = 4) -> None:
        warnings.warn(f"ppy: {message}", ArtifactWarning, stacklevel=stacklevel)

    def bind(self, fallbacks: dict[int, Callable[..., Any]]) -> None:
        """Give each expression site its name in the module: an `Unbound` site, which
        loads its kernel at its first call (a module of thousands of sites starts in
        O(1) per site; what is never called is never opened)."""
        member = self.prefix != "__ppy_"
        for record in self.manifest["expr_sites"]:
            fallback = fallbacks.get(record["index"])
            if fallback is None:
                continue
            site_id = f"{self.module}:{self._site_id(record)}"
            site = Unbound(self, record, fallback, site_id)
            dispatch.register(site_id, site, member=member)
            self.namespace[site.name] = site

    def resolve(self, unbound: Unbound) -> Any:
        """The dispatcher of `unbound` (made at its first call, once: threads wait);
        from then on the module's name holds it, and the stats count it."""
        with self.lock:
            if unbound.bound is None:
                record, fallback, site_id = unbound.record, unbound.fallback, unbound.site_id
                site = self._make(record, fallback, site_id, stacklevel=5)
                dispatch.replace(site_id, unbound, site)
                unbound.bound = dispatch.wrap(site_id, site, fallback)
                if self.namespace.get(unbound.name) is unbound:
                    self.namespace[unbound.name] = unbound.bound
        return unbound.bound

    def _site_id(self, record: dict[str, Any]) -> str:
        return self.site_ids.get((record.get("line"), record.get("col")), record["id"])

    def _specializing(self, record: dict[str, Any]) -> Callable[[Callable[..., Any]], Any]:
        """The decorator the compiler put on a function with unannotated parameters:
        its specializing dispatcher (`runtime.observed`); with the compiled parts
        refused, the function as it is."""

        def decorate(function: Callable[..., Any]) -> Any:
            if self.refuse:
                return function
            from ppy_core.runtime.observed import specializing

            return specializing(function, record, self.manifest, self.directory, self.namespace)

        return decorate

    def _make(
        self,
        record: dict[str, Any],
        fallback: Callable[..., Any],
        site_id: str,
        stacklevel: int = 4,
    ) -> Any:
        """The site's dispatcher; its kernel's files are opened only while each is the
        file that passed its check (`stacklevel`: of a warning, the program's line)."""
        unit = record.get("unit")
        if unit is None:
            return dispatch.PythonSite(fallback, "not compiled")
        if self.refuse:
            return dispatch.PythonSite(fallback, self.refuse)
        files = unit["files"]
        # a kernel's files are checked before the first site opens them; once open,
        # the other sites only look up a symbol in them: nothing more is opened
        unchecked = None if tuple(files) in self.opened else integrity.changed(self.folder, files)
        if unchecked is not None:  # edited, truncated, replaced or never checked: not opened
            if integrity.report(self.directory / unchecked):
                self._warn(
                    f"site {site_id} ({record.get('text', '')}) runs as Python: its file "
                    f"{unchecked} failed its check against the manifest's sha256  [E3004]",
                    stacklevel,
                )
            return dispatch.PythonSite(fallback, "failed its check")
        try:
            site = self._bind_unit(unit, fallback, record)
            self.opened.add(tuple(files))
            return site
        except Exception as exc:
            # imported only here: a start binding a thousand sites paid ~1.5 µs a site
            from ppy_core.runtime.registered import Unregistered

            if isinstance(exc, Unregistered):
                self._warn(
                    f"site {site_id} ({record.get('text', '')}) runs as Python: the manifest "
                    f"names what no installed distribution registers: {exc}  [E3007]",
                    stacklevel,
                )
                return dispatch.PythonSite(fallback, "unregistered loader")
            self._warn(
                f"site {site_id} ({record.get('text', '')}) runs as Python: its "
                f"compiled part failed to load: {exc}  [E3004]",
                stacklevel,
            )
            return dispatch.PythonSite(fallback, "load failed")

    def _bind_unit(
        self, unit: dict[str, Any], fallback: Callable[..., Any], record: dict[str, Any]
    ) -> Any:
        """A kernel unit goes to the runtime adapter it names (by registered name, see
        `runtime.adapter`); any other unit to its backend's own loader."""
        from ppy_core.runtime import adapter  # only a module with compiled sites

        runtime = unit.get("runtime")
        if runtime:
            found = adapter.adapter(str(runtime))
            kernel = self._kernel(found, str(runtime), unit)
            if kernel is None:  # refused by this CPU (abi warned once)
                return dispatch.PythonSite(fallback, "kernel cannot run here")
            store = record.get("store")
            # views the site takes itself (the compiler asked `takes_views`)
            views = {"views": record["views"]} if record.get("views") else {}
            if store:  # a statement writing its target (the compiler asked `store_elements`)
                return found.store_site(kernel, fallback, record["id"], str(store), **views)
            return found.kernel_site(kernel, fallback, record["id"], **views)
        loader = adapter.resolve_loader(str(unit.get("loader", "")))
        return loader(unit["data"], self.directory, fallback, record)

    def _kernel(self, found: Any, runtime: str, unit: dict[str, Any]) -> Any:
        """The kernel `unit` names, loaded by its adapter (which opens the library;
        NumPy's in C: no ctypes on its start) once per module: the sites sharing a
        kernel (the same data, the same files) share what the adapter loaded."""
        shared = self.kernels.get(id(unit))  # the run view's sites share equal units
        if shared is not None and shared[0] is unit:
            return shared[1]
        data, files = unit["data"], unit["files"]
        key = (runtime, str(data.get("symbol")), *files)
        known = self.kernels.get(key)
        if known is None or known[0] != data:
            known = self.kernels[key] = (data, found.load_kernel(data, self.directory, files))
        self.kernels[id(unit)] = (unit, known[1])
        return known[1]

    def _decorator(self, record: dict[str, Any]) -> Callable[[Callable[..., Any]], Any]:
        def decorate(function: Callable[..., Any]) -> Any:
            site_id = f"{self.module}:{self._site_id(record)}"
            site = self._make(record, function, site_id)
            dispatch.register(site_id, site, member=self.prefix != "__ppy_")
            if isinstance(site, dispatch.PythonSite):
                return function
            # PPY_VERIFY compares regions too, against what the site itself falls back to
            # (`__wrapped__`: an exported `@ppy.jax` function's is its jitted body)
            fallback = getattr(site, "__wrapped__", function)
            return dispatch.wrap(site_id, site, fallback, writes=bool(record.get("writes")))

        return decorate


class Unbound:
    """An expression site not called yet: its first call has the binder make its
    dispatcher (`Binder.resolve`), which then stands in the module under the same
    name; until then the stats show the site with no call."""

    __slots__ = ("binder", "bound", "fallback", "name", "record", "site_id")

    def __init__(
        self, binder: Binder, record: dict[str, Any], fallback: Callable[..., Any], site_id: str
    ) -> None:
        self.binder, self.record, self.fallback, self.site_id = binder, record, fallback, site_id
        self.name = f"{binder.prefix}site_{record['index']}"
        self.bound: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound = self.bound if self.bound is not None else self.binder.resolve(self)
        return bound(*args, **kwargs)

    def ppy_stats(self) -> dict[str, Any]:
        return {"fast": 0, "fallback": {}}


def bound(value: Any) -> Any:
    """`value` as it dispatches: an `Unbound` site bound now (tests and tools that
    look at a site before the program calls it); anything else as it is."""
    return value.binder.resolve(value) if type(value) is Unbound else value


def fingerprint_mismatch(manifest: dict[str, Any]) -> str:
    """Why this process may not use the artifact's compiled parts ('' if it may): a
    plugin it names is not installed, not enabled for its project, or reports
    another library build than the one it was built against. The fingerprints come
    from records kept while the installed files are unchanged (`registered`): no
    metadata scan, no plugin and no library is imported on a cached start."""
    names = manifest.get("plugins") or []
    if not names:
        return ""  # a module that imports no library: nothing to read or load
    from ppy_core.runtime import registered

    try:
        pyproject, settings = registered.plugin_settings(manifest["module"]["path"])
    except Exception as exc:  # an invalid [tool.ppy]: compiled parts are not trusted
        return f"its project's configuration cannot be read: {exc}"
    plugins = registered.table("plugin")
    for name in names:
        row = plugins.get(name)
        if row is None:
            return f"plugin {name} is not installed"
        said = settings.get(name)
        enabled, why = registered.plugin_enabled(name, row.first_party, said, pyproject)
        if not enabled:
            return f"plugin {name} is not enabled ({why})"
        built = manifest["components"].get(f"plugin:{name}")
        try:
            now = registered.plugin_fingerprint(row)
        except RuntimeError as exc:
            return str(exc)
        if built is not None and now != built:
            return f"built against {built}, this process has {now}"
    return ""


def exec_artifact(
    directory: Path,
    module: types.ModuleType,
    *,
    check: bool = False,
    source: str = "",
    loaded: tuple[dict[str, Any], types.CodeType] | Exception | None = None,
) -> None:
    """Run the artifact module in `directory` inside `module`'s namespace; `source`:
    the module's own file (else its spec's origin); `loaded`: what `load` already
    gave for `directory` (a manifest of thousands of sites is read once). A folder
    whose manifest or code failed its check, or is malformed, runs that module as
    Python: one coded warning."""
    found = load(directory) if loaded is None else loaded
    if isinstance(found, Exception):
        where = getattr(found, "ppy_where", directory / "manifest.json")
        _exec_python(directory, module, source, found, integrity.report(where))
        return
    manifest, code = found
    refuse = ""
    if check:
        mismatch = fingerprint_mismatch(manifest)
        if mismatch:
            refuse = "library build changed"
            warnings.warn(
                f"ppy: {manifest['module']['path']}: {mismatch}; its compiled parts "
                f"are not used, it runs as Python  [E3003]",
                ArtifactWarning,
                stacklevel=2,
            )
    source_path = manifest["module"]["path"]
    if not Path(source_path).is_file():
        import importlib.util
        import linecache

        text = importlib.util.decode_source((directory / "source.py").read_bytes())
        linecache.cache[source_path] = (len(text), None, text.splitlines(True), source_path)
    namespace = module.__dict__
    namespace.setdefault("__builtins__", builtins)
    namespace["__file__"] = source_path
    binder = Binder(directory, manifest, namespace, refuse)
    namespace["__ppy_bind__"] = binder.bind
    exec(code, namespace)


def load(directory: Path) -> tuple[dict[str, Any], types.CodeType] | Exception:
    """The checked manifest and code of the module folder `directory`, or the coded
    error that says why not (its `ppy_where`: the file to name in a warning)."""
    good = integrity.verified(directory)
    where = directory / "manifest.json"
    manifest = None
    try:
        for name in ("manifest.json", "module.code"):
            if name not in good:
                where = directory / name
                raise _unchecked(where)
        manifest = runview.read(directory) or read_manifest(directory)
        code = read_code(directory, manifest)
    except Exception as exc:
        if not coded(exc):
            raise
        exc.ppy_where = where  # type: ignore[attr-defined]
        exc.ppy_manifest = manifest  # type: ignore[attr-defined]
        return exc
    return manifest, code


def _unchecked(path: Path) -> Exception:
    from ppy_core.diagnostics import CacheError

    return CacheError(
        f"{path}: missing, or fails its check against the recorded sha256",
        code="E3004",
        hint="rebuild it (`ppy build`; the cache rebuilds its own)",
    )


def _exec_python(
    directory: Path, module: types.ModuleType, source: str, why: Exception, warn: bool
) -> None:
    """Run the module from its source as Python would: the artifact's checked copy
    (`source.py`), else the module's own file; `why` (coded) when there is neither.
    `warn`: say so (once: the launcher may have named the file already)."""
    origin = source or getattr(getattr(module, "__spec__", None), "origin", None) or ""
    if "source.py" in integrity.verified(directory):
        raw = (directory / "source.py").read_bytes()
    elif origin and Path(origin).is_file():
        raw = Path(origin).read_bytes()
    else:
        raise why
    if warn:
        warnings.warn(f"ppy: {why}; the module runs as Python", ArtifactWarning, stacklevel=3)
    namespace = module.__dict__
    namespace.setdefault("__builtins__", builtins)
    namespace["__file__"] = origin or str(directory / "source.py")
    exec(compile(raw, namespace["__file__"], "exec", dont_inherit=True), namespace)


def run_as_main(directory: Path, argv: list[str], *, check: bool = False, source: str = "") -> None:
    """Run the artifact as `__main__`, as `python FILE ARGS` would run its source
    (`source`: its path, where the caller knows it; else its manifest's)."""
    loaded = load(directory)
    if not source:
        failed = isinstance(loaded, Exception)
        manifest = getattr(loaded, "ppy_manifest", None) if failed else loaded[0]  # type: ignore[index]
        source = manifest["module"]["path"] if manifest else str(directory / "source.py")
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    sys.argv = [source, *argv]
    sys.path.insert(0, str(Path(source).parent))
    dispatch.install_stats_printer()
    exec_artifact(directory, main, check=check, source=source, loaded=loaded)


def user_traceback(exc: BaseException, source_files: set[str]) -> types.TracebackType | None:
    """The traceback from the first frame in the user's files on (as `python FILE` shows),
    without the frames a site's dispatcher adds (here and in chained exceptions)."""
    _clean_chain(exc, set())
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename not in source_files:
        tb = tb.tb_next
    return tb or exc.__traceback__


def _clean_chain(exc: BaseException | None, seen: set[int]) -> None:
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc.__traceback__ = without_dispatch(exc.__traceback__)
        _clean_chain(exc.__cause__, seen)
        exc = exc.__context__


def without_dispatch(tb: types.TracebackType | None) -> types.TracebackType | None:
    """`tb` with each site's call replaced by its fallback's frame: a site's Python
    path runs in a function named after the user's function (its qualname carries
    FALLBACK_MARK), at the user's line; the frame of the call to the dispatcher and
    the dispatcher's own frames in between are dropped, as `python FILE` has none."""
    frames: list[types.TracebackType] = []
    changed = False
    observed = sys.modules.get("ppy_core.runtime.observed")
    dispatchers = observed._DISPATCHER_CODES if observed is not None else ()
    while tb is not None:
        code = tb.tb_frame.f_code
        if code in dispatchers:  # a specializing dispatcher's frame: `python FILE` has none
            changed = True
            tb = tb.tb_next
            continue
        if FALLBACK_MARK in code.co_qualname:
            at = next(
                (
                    i
                    for i in range(len(frames) - 1, -1, -1)
                    if frames[i].tb_frame.f_code.co_filename == code.co_filename
                ),
                None,
            )
            if at is not None:
                del frames[at:]
                changed = True
        frames.append(tb)
        tb = tb.tb_next
    if not changed:
        return frames[0] if frames else None
    out: types.TracebackType | None = None
    for frame in reversed(frames):
        out = types.TracebackType(out, frame.tb_frame, frame.tb_lasti, frame.tb_lineno)
    return out


__all__ = [
    "exec_artifact",
    "load",
    "run_as_main",
    "ArtifactWarning",
    "Binder",
    "Unbound",
    "bound",
    "user_traceback",
    "without_dispatch",
    "FALLBACK_MARK",
    "FRESH",
    "fingerprint_mismatch",
]
