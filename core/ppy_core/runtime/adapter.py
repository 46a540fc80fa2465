"""Runtime adapters: how an array library's objects meet a compiled kernel.

Each array library's plugin distribution ships one adapter and registers it by
entry point, name = the library (the `library` of the IR's tensor types):

    [project.entry-points."ppy.runtimes"]
    numpy = "ppy_numpy._runtime:create_adapter"

A backend writes a kernel with the kernel ABI (`ppy_core.runtime.abi`) and names
the adapter of the site's library in its unit (`CompiledUnit.runtime`); at run
time the binder asks that adapter for a guarded site. So a backend never imports
a plugin, a plugin never imports a backend, and the runtime imports nothing a
manifest names unless it is registered: names are looked up in the installed
distributions' metadata first, and only the one named is imported.
"""

from __future__ import annotations

from ppy_core.runtime.registered import Unregistered

TYPE_CHECKING = False  # `typing`, `dataclasses` and the ABI's records: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path
    from typing import Any, ClassVar, Final

    from ppy_core.interface.discovery import Entry
    from ppy_core.runtime.abi import KernelSignature, LoadedKernel, ProofCase

GROUP: Final = "ppy.runtimes"


class RuntimeAdapter:
    """Base of a library's runtime adapter. The run-time side (`kernel_site`) imports
    no compiler code; the build-time side (`accepts`, `companion_files`, `prove`) may
    import its distribution's build code lazily."""

    name: ClassVar[str] = ""

    def kernel_site(
        self,
        kernel: LoadedKernel,
        fallback: Callable[..., Any],
        site_id: str,
        views: Sequence[Any] | None = None,
    ) -> Callable[..., Any]:
        """A callable site: guard the call's operands (exact types of this library,
        dtype, layout), hand their buffers to `kernel`, allocate the result this
        library's way; call `fallback` (the site's Python) when the guard fails. It
        reports `{"fast": n, "fallback": {reason: n}}` through `ppy_stats()` or
        `stats()` for `ppy.stats()`."""
        raise NotImplementedError

    #: the element kinds ("f64", "i32" ...) of results `store_site` writes into their
    #: targets; the compiler makes a store site only for a result of one of them
    store_elements: ClassVar[frozenset[str]] = frozenset()

    def store_site(
        self,
        kernel: LoadedKernel,
        fallback: Callable[..., Any],
        site_id: str,
        store: str,
        views: Sequence[Any] | None = None,
    ) -> Callable[..., Any]:
        """A site for a statement that stores an elementwise result into a target,
        called as ``site(obj, key, *leaves)``; `fallback` runs the whole statement.
        `store` is ``"="`` (``obj[key] = expr``), ``"item"`` (``obj[key] OP= expr``:
        the kernel's first leaf is ``obj[key]``, its other leaves follow) or
        ``"name"`` (``obj OP= expr``, key ignored: the site returns the new value of
        the name). Only called for a result of one of `store_elements`."""
        raise NotImplementedError

    #: whether `kernel_site` and `store_site` take `views` (given only then): per kernel
    #: leaf fed by the call's arguments, ``[argument index, index or None]``, an index
    #: a list of ``[lower, upper, step]`` (a slice), an int (an integer index) or None (a
    #: new axis). The site takes each view itself, only from an exact array of its library
    #: (no effect: nothing of the program runs), and calls `fallback` with the arguments
    #: otherwise, an integer out of range included; the fallback
    #: evaluates the views where Python does (`compiler/frontend/views.py`)
    takes_views: ClassVar[bool] = False

    def describer(self, cls: type) -> Callable[[Any], tuple[Any, ...]] | tuple[Any, ...] | None:
        """Run time: how a call's signature describes an object of exactly class `cls`
        (`runtime.observed`): a function returning a hashable tuple of str, int and
        bool, or that tuple itself where every object of `cls` is described alike
        (a library's scalar type); None when this adapter does not describe `cls` (the
        object is then its class, and typed Unknown). An
        ``("instance", library, "module.Class", ...)`` is typed as the plugin's type of
        that class (its `external_types`). An array is described as
        ``("array", library, class, element kind, rank, layout, writeable)``, element
        kinds as the IR's (``"f64"``, ``"i32"``, ``"i1"``) and layout ``"C"``, ``"F"``
        or ``"A"`` (any strides); the compiler types it as that library's tensor."""
        return None

    def load_kernel(
        self, data: Mapping[str, Any], directory: Path, files: Sequence[str]
    ) -> LoadedKernel | None:
        """Run time: the kernel a manifest unit's `data` describes, its library
        `files[0]` in `directory`; None (after one E2004 warning) when the library
        cannot run here, ValueError when `data` is malformed. This default opens the
        library with ctypes (`abi.load_kernel`); an adapter with a compiled part may
        open it there (dlopen, the CPU check, dlsym) and spare a start ctypes."""
        from ppy_core.runtime import abi

        return abi.load_kernel(data, directory, files)

    def accepts(self, signature: KernelSignature) -> str | None:
        """Build time: None if `kernel_site` can call kernels of `signature`, else why
        not (the backend then leaves the site to the library, with that reason)."""
        return None

    def companion_files(self, build_dir: Path) -> tuple[str, ...]:
        """Build time: files this adapter needs beside each kernel at run time (a
        compiled dispatcher, say), written into `build_dir`; their names. They follow
        the kernel's library in the unit's files, so an artifact carries them."""
        return ()

    def build_key(self) -> str:
        """The identity of the library build whose loops kernels call (version,
        extension files): a proof's verdicts hold for this key only."""
        return ""

    def prove(self, cases: Sequence[ProofCase]) -> dict[str, str]:
        """Run each case's kernel against the library's own answer; per case name
        "ok" or why not. An adapter that cannot prove anything says so for every case."""
        return {case.name: f"the {self.name or 'runtime'} adapter runs no proofs" for case in cases}


class Registry:
    """What the installed metadata registers: adapters by name (a name two
    distributions register is neither's: discovery reports E1906), and the top-level
    packages of every ppy entry point (the only packages a manifest may name)."""

    __slots__ = ("packages", "runtimes")

    def __init__(self, runtimes: Mapping[str, Entry], packages: frozenset[str]) -> None:
        self.runtimes, self.packages = runtimes, packages


_registries: dict[int, Registry] = {}
_adapters: dict[str, RuntimeAdapter | str | LookupError] = {}


def registry(*, refresh: bool = False) -> Registry:
    """The registry of `sys.path`'s distributions. It is the core's one metadata scan
    (`interface.discovery.discover`, cached per path, shared with the plugin and
    backend lookup), so binding sites reads no metadata a cached start has not read."""
    from ppy_core.interface.discovery import discover  # metadata only, imports no plugin

    found = discover(refresh=refresh)
    if refresh:
        _adapters.clear()
    key = id(found)
    if key not in _registries:
        entries = [*found.plugins.values(), *found.backends.values(), *found.runtimes.values()]
        packages = frozenset(e.value.partition(":")[0].partition(".")[0].strip() for e in entries)
        _registries.clear()  # one per scan: an older scan's registry is never asked again
        _registries[key] = Registry(found.runtimes, packages)
    return _registries[key]


def registered(name: str) -> bool:
    """Whether an adapter `name` is registered (by one distribution; nothing imported)."""
    return name in registry().runtimes


def adapter(name: str) -> RuntimeAdapter:
    """The adapter registered as `name`, imported and created once per process.
    LookupError (saying why) when none is registered or it fails to load."""
    cached = _adapters.get(name)
    if cached is None:
        cached = _load(name)
        _adapters[name] = cached
    if isinstance(cached, LookupError):
        raise cached
    if isinstance(cached, str):
        raise LookupError(cached)
    return cached


def _load(name: str) -> RuntimeAdapter | str | LookupError:
    from ppy_core.runtime.registered import table  # the discovery record: no scan

    row = table("runtime").get(name)
    if row is None:
        return Unregistered(
            f"no runtime adapter {name!r} is registered (entry point group {GROUP}, "
            f"once); install the plugin distribution of {name!r}; it is not imported"
        )
    value = row.value
    module, _, factory = value.partition(":")
    try:
        import importlib

        made = getattr(importlib.import_module(module.strip()), factory.strip())()
    except Exception as exc:  # a broken adapter: its sites run Python
        return f"runtime adapter {name!r} ({value}) failed to load: {exc!r}"
    if not isinstance(made, RuntimeAdapter):
        return f"runtime adapter {name!r} ({value}) made a {type(made).__name__}"
    return made


def resolve_loader(spec: str) -> Callable[..., Any]:
    """A backend's run-time loader, named by its registered name (entry point group
    `ppy.loaders`) or by exactly the "module:function" a registered entry point gives.
    Anything else is refused (Unregistered) and not imported."""
    from ppy_core.runtime.registered import table

    loaders = table("loader")
    row = loaders.get(spec) or next((r for r in loaders.values() if r.value == spec), None)
    if row is None:
        raise Unregistered(
            f"loader {spec!r} is not a registered entry point (group ppy.loaders); "
            "it is not imported"
        )
    module, _, function = row.value.partition(":")
    import importlib

    return getattr(importlib.import_module(module.strip()), function.strip())  # type: ignore[no-any-return]


__all__ = [
    "GROUP",
    "Registry",
    "RuntimeAdapter",
    "Unregistered",
    "adapter",
    "registered",
    "registry",
    "resolve_loader",
]
