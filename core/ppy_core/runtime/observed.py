"""Observed signatures: unannotated functions specialized on what they are called with.

A function whose parameters carry no annotations gets a specializing dispatcher
(the compiler marks it, `Binder` wraps it here). Each call's *signature* is what is
said of each argument: Python's scalars by the core (`int`, `float`, `bool`,
`complex`, `None`), a library's objects by that library's runtime adapter
(`RuntimeAdapter.describer`: a NumPy array's exact class, dtype, rank, layout class
and writeability), anything else by its exact class. A signature seen for the first
time is resolved once per process, in this order:

1. a built artifact carries it (`specs/<id>/` beside the module): loaded;
2. the cache holds it (an earlier process compiled it): loaded, no compiler imported;
3. a compiler is in the process (`ppy FILE`, `ppy.load`, `.ppy` imports register one
   with `runtime.compiling`): compiled now, stored in the cache;
4. otherwise (`ppy run`, a launcher): the generic function answers and the signature is
   recorded (`record`), so the next build includes it.

The dispatcher's table is the guard: a signature the table maps to a specialization
runs it, anything else runs the generic function, which is the module's own code
(speculative sites and all). At most `LIMIT` specializations per function; past that,
one E1071 warning and the generic function. The runtime never imports the compiler.
"""

from __future__ import annotations

import os
import types
import warnings

from ppy_core.runtime.signatures import (
    BY_CLASS,
    LIMIT,
    MISSING,
    describe,
    record,
    recorded,
    signature_text,
    spec_id,
    typed,
    typing_part,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

ATTEMPTS = 4 * LIMIT  # signatures it compiles at most (most may gain nothing)
#: calls answered by the generic function, none specialized, before the dispatcher is
#: the generic function itself (a description per call, to gain nothing, costs 0.3 µs
#: for scalars, 1-2 µs for arrays, 0.3 ms for an nn.Module's tree)
RETIRE = 256
SPECS = "specs"  # an artifact module's folder of carried specializations
_VARIADIC = 0x04 | 0x08  # a code object's CO_VARARGS | CO_VARKEYWORDS


class SpecializationWarning(UserWarning):
    """A function has more signatures than it keeps specializations for."""


# -- who compiles --------------------------------------------------------------------


def specializer() -> Callable[[str, str, tuple[Any, ...]], Path | None] | None:
    from ppy_core.runtime.compiling import SPECIALIZER

    return SPECIALIZER[0] if SPECIALIZER else None  # type: ignore[return-value]


# -- the dispatcher ------------------------------------------------------------------


class Specializations:
    """One function's specializations: the table the dispatcher reads, and what
    `ppy explain` and `ppy.stats()` say of it."""

    __slots__ = (
        "attributes",
        "by_class",
        "by_typing",
        "countdown",
        "directory",
        "dispatcher",
        "generic",
        "generic_libraries",
        "generic_sites",
        "lock",
        "module_key",
        "namespace",
        "params",
        "positional",
        "qualname",
        "retired",
        "seen",
        "seen_typing",
        "signature_of",
        "site_ids",
        "source",
        "table",
        "warned",
    )

    def __init__(
        self,
        generic: Callable[..., Any],
        record: dict[str, Any],
        manifest: dict[str, Any],
        directory: Path,
        namespace: dict[str, Any],
    ) -> None:
        self.generic = generic
        self.qualname = str(record["function"])
        self.source = str(manifest["module"]["path"])
        self.module_key = str(manifest["key"])
        self.directory = directory
        self.namespace = namespace
        self.params = int(record.get("params", 0))
        # a specialization's sites count under the generic site at the same place
        mine = _sites_by_function(manifest).get(self.qualname, ())
        self.site_ids = {(r["line"], r["col"]): r["id"] for r in mine}
        # the generic function's compiled sites (speculative: float64 arrays, floats)
        compiled = [r for r in mine if r.get("unit")]
        self.generic_sites = frozenset(_fused(r) for r in compiled)
        self.generic_libraries = frozenset(str(r.get("library", "")) for r in compiled)
        self.table: dict[tuple[Any, ...], Callable[..., Any]] = {}
        self.seen: dict[tuple[Any, ...], str] = {}  # signature -> what became of it
        # threading's own RLock, without importing `threading` (~1 ms of a cached start)
        from _thread import RLock

        self.lock = RLock()
        self.warned = False
        self.signature_of: Any = None  # inspect.Signature, on the first keyword call
        # the typing part of a signature (`typing_part`) -> its function, what became of it
        self.by_typing: dict[tuple[Any, ...], Callable[..., Any]] = {}
        # the arguments' classes -> the function, for signatures the classes determine
        self.by_class: dict[tuple[type, ...], Callable[..., Any]] = {}
        self.attributes: tuple[str, ...] = ()  # a method's `self` attributes described
        self.countdown = RETIRE
        # every parameter positional: a specialization is called with each argument, its
        # defaults filled in here (its own are placeholders, `specialization_module`)
        code = generic.__code__
        self.positional = code.co_kwonlyargcount == 0 and not code.co_flags & _VARIADIC
        self.retired = False
        self.dispatcher: Any = None
        self.seen_typing: dict[tuple[Any, ...], str] = {}

    def bound(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...] | None:
        """The arguments by parameter, defaults filled in; None where Python would
        refuse the call (the generic function then raises Python's own error)."""
        if self.signature_of is None:
            import inspect

            self.signature_of = inspect.signature(self.generic)
        try:
            bound = self.signature_of.bind(*args, **kwargs)
        except TypeError:
            return None
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any], values: tuple[Any, ...]) -> Any:
        """A call whose signature its arguments' classes do not say: described."""
        signature = tuple(map(describe, values))
        if self.attributes:  # a method: the `self` attributes it reads, from its dict
            own = getattr(values[0], "__dict__", None) or {}
            signature += tuple(describe(own.get(a, MISSING)) for a in self.attributes)
        function = self.table.get(signature)
        if function is None:
            function = self.resolve(signature)
            if not self.attributes and all(type(v) in BY_CLASS for v in values):
                self.by_class[tuple(map(type, values))] = function
        if function is self.generic:
            self.countdown -= 1
            if self.countdown == 0:
                self.retire()
            return function(*args, **kwargs)
        if self.positional:  # a specialization's own defaults are placeholders
            return function(*values)
        return function(*args, **kwargs)

    def retire(self) -> None:
        """Answered by the generic function `RETIRE` times and never specialized: become
        the generic function (its code, defaults and globals: the module's, the same).
        Only speed is at stake: a later signature that would have specialized runs the
        generic function, whose sites still guard every call."""
        if any(f is not self.generic for f in self.table.values()):
            return
        generic, dispatcher = self.generic, self.dispatcher
        if generic.__closure__ is not None or dispatcher is None:
            return
        dispatcher.__code__ = generic.__code__
        dispatcher.__defaults__ = generic.__defaults__
        dispatcher.__kwdefaults__ = generic.__kwdefaults__
        self.retired = True

    def resolve(self, signature: tuple[Any, ...]) -> Callable[..., Any]:
        with self.lock:
            found = self.table.get(signature)
            if found is not None:
                return found
            found = self._resolve(signature)
            self.table[signature] = found
            return found

    def _resolve(self, signature: tuple[Any, ...]) -> Callable[..., Any]:
        if not typed(signature):
            self.seen[signature] = "generic: nothing typed"
            return self.generic
        typing = typing_part(signature)
        known = self.by_typing.get(typing)
        if known is not None:  # another layout of a signature already resolved
            self.seen[signature] = self.seen_typing[typing]
            return known
        found = self._specialize(typing)
        self.by_typing[typing] = found
        self.seen_typing[typing] = self.seen[signature] = self.seen.pop(typing)
        return found

    def _specialize(self, signature: tuple[Any, ...]) -> Callable[..., Any]:
        specialized = sum(1 for f in self.by_typing.values() if f is not self.generic)
        if specialized >= LIMIT or len(self.by_typing) >= ATTEMPTS:
            self.seen[signature] = "generic: past the limit"
            if not self.warned:
                self.warned = True
                warnings.warn(
                    f"ppy: {self.qualname} has been called with more than {LIMIT} signatures; "
                    f"calls of new ones run as Python (the generic function)  [E1071]",
                    SpecializationWarning,
                    stacklevel=5,
                )
            return self.generic
        ident = spec_id(self.module_key, self.qualname, signature)
        # recorded always: `ppy build` carries every signature a program was called with
        record(self.source, self.qualname, signature)
        entry = self._find(ident, signature)
        if entry is None:
            self.seen[signature] = "generic: recorded for the next build"
            return self.generic
        try:
            function = load_specialization(entry, self)
        except Exception as exc:
            self.seen[signature] = f"generic: failed to load ({exc})"
            warnings.warn(
                f"ppy: a specialization of {self.qualname} failed to load ({exc}); "
                "that signature runs as Python  [E3004]",
                stacklevel=5,
            )
            return self.generic
        if function is None:
            why = _why_not(entry)  # a plugin's reason (an nn.Module forward: its guard)
            self.seen[signature] = "generic: nothing more compiles" + (f" ({why})" if why else "")
            return self.generic
        self.seen[signature] = f"specialized ({ident})"
        return function

    def _find(self, ident: str, signature: tuple[Any, ...]) -> Path | None:
        from ppy_core.runtime.finder import ARTIFACT_ENV

        carried = self.directory / SPECS / ident
        if carried.is_dir():
            return carried
        if os.environ.get(ARTIFACT_ENV):  # under a built artifact: only what it carries
            return None
        build = specializer()
        if build is None:
            return None
        from ppy_core.cache.records import project_root
        from ppy_core.cache.store import Cache

        entry = Cache(project_root(self.source)).lookup(ident)  # compiled by an earlier run
        if entry is not None:
            return entry.path
        return build(self.source, self.qualname, signature)


#: the last manifest grouped (a module's dispatchers are made one after another while
#: it runs; one entry holds no manifest of a module long gone)
_GROUPED: list[tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]] = []


def _sites_by_function(manifest: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """A module manifest's expression sites grouped by function, once per manifest
    (a module of many functions binds each dispatcher in constant time)."""
    if _GROUPED and _GROUPED[0][0] is manifest:
        return _GROUPED[0][1]
    grouped: dict[str, list[dict[str, Any]]] = {}
    for site in manifest.get("expr_sites", ()):
        grouped.setdefault(str(site.get("function")), []).append(site)
    _GROUPED[:] = [(manifest, grouped)]
    return grouped


def load_specialization(entry: Path, state: Specializations) -> Callable[..., Any] | None:
    """The specialized function an entry holds, its sites bound in the module's
    namespace (under the generic sites' ids), or None when it compiled nothing."""
    from ppy_core.runtime import integrity
    from ppy_core.runtime.artifact import read_code, read_manifest
    from ppy_core.runtime.module import Binder

    good = integrity.verified(entry)
    if not good and entry.parent.name == SPECS:  # carried by an artifact: checked with it
        inside = f"{SPECS}/{entry.name}/"
        module_files = integrity.verified(entry.parent.parent)
        integrity.mark(entry, {n[len(inside) :] for n in module_files if n.startswith(inside)})
        good = integrity.verified(entry)
    for name in ("manifest.json", "module.code"):
        if name not in good:  # edited, truncated, replaced or never checked: never run
            raise ValueError(f"{entry / name} failed its check against the recorded sha256")
    manifest = read_manifest(entry)
    spec = manifest.get("specialization")
    if not isinstance(spec, dict) or not spec.get("gains") or not _gains(manifest, state):
        return None
    code = read_code(entry, manifest)
    binder = Binder(entry, manifest, state.namespace, prefix=str(spec["prefix"]))
    binder.site_ids = state.site_ids
    scratch: dict[str, Any] = {"__ppy_bind__": binder.bind}
    exec(code, state.namespace, scratch)
    function = scratch.pop(str(spec["name"]))
    scratch.pop("__ppy_bind__")
    for name, value in scratch.items():  # what its code reads as globals (store sites' modules)
        state.namespace.setdefault(name, value)
    generic = state.generic
    function.__defaults__ = generic.__defaults__
    function.__kwdefaults__ = generic.__kwdefaults__
    function.__dict__.update(generic.__dict__)
    return function  # type: ignore[no-any-return]


def _why_not(entry: Path) -> str:
    """The specialization's own remarks on why its function is no region, for explain."""
    from ppy_core.runtime.artifact import read_manifest

    try:
        remarks = read_manifest(entry).get("remarks", ())
    except Exception:
        return ""
    return "; ".join(
        str(r["message"])
        for r in remarks
        if isinstance(r, dict) and str(r.get("message", "")).startswith("no region:")
    )


def _gains(manifest: dict[str, Any], state: Specializations) -> bool:
    """Whether a specialization runs more than the generic function does: a typed
    loop, a site where the generic one has none (or has one taking other views:
    `_fused`), none where the generic one has a site (its guard would refuse what the
    specialization's types know, or it costs), or operands the generic sites' guards
    refuse (anything but float64 arrays of the library they assumed: those
    the speculative sites take, with all of their tuning, so for such a signature the
    generic function answers). A Python float is refused where they guessed an array
    (`guard: type`), while a specialization types it a float: it gains."""
    if any(r.get("unit") for r in manifest.get("function_sites", ())):
        return True
    compiled = {_fused(r) for r in manifest.get("expr_sites", ()) if r.get("unit")}
    if compiled - state.generic_sites:
        return True
    if _drops(manifest, state):
        return True
    signature = manifest["specialization"].get("signature") or ()
    return not all(_speculated(d, state.generic_libraries) for d in signature if d)


def _drops(manifest: dict[str, Any], state: Specializations) -> bool:
    """Whether the generic function has a site where the specialization has none: its
    types say that site's guard refuses every call (go_fast's `np.tanh(a[i, i])`, an
    element) or that it costs. (A specialization that compiled nothing is not run:
    the generic function answers, its guards refusing as before.)"""
    places = {(r["line"], r["col"]) for r in manifest.get("expr_sites", ()) if r.get("unit")}
    return any(fused[:2] not in places for fused in state.generic_sites)


def _fused(record: dict[str, Any]) -> tuple[Any, ...]:
    """What a compiled site fuses: where its tree stands and the views the runtime
    takes for it (`views`, which the run view keeps). A specialization's site where the
    generic one stands but taking other views fuses more (`A + np.outer(u, v)`: the
    generic site's leaf is the call's result, the specialization reads `u[:, None]`
    and `v[None, :]`)."""
    return (record["line"], record["col"], repr(record.get("views")))


def _speculated(description: Any, libraries: frozenset[str]) -> bool:
    """Whether the generic function's speculative sites take such an argument: an
    object typed Unknown, or a float64 array of the library they assumed."""
    kind = description[0]
    if kind == "array":
        return description[3] == "f64" and description[1] in libraries
    return kind in ("object", "missing", "None", "complex")


def specializing(
    generic: Callable[..., Any],
    record: dict[str, Any],
    manifest: dict[str, Any],
    directory: Path,
    namespace: dict[str, Any],
) -> Callable[..., Any]:
    """The function as the program holds it: a plain function of the module (it binds
    as a method and pickles by reference like the original) dispatching on each call's
    signature. Its state is a keyword-only default, not a closure, so that a function
    only ever called with scalars that gain nothing can become the generic function
    itself (`retire`): its code swapped in, the dispatcher's cost gone for every holder
    of it (a default argument, a callback table) alike."""
    state = Specializations(generic, record, manifest, directory, namespace)
    state.attributes = tuple(str(a) for a in record.get("attributes", ()))
    dispatcher = types.FunctionType(_dispatch.__code__, namespace, generic.__name__)
    dispatcher.__kwdefaults__ = {"_ppy_state": state}
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(dispatcher, name, getattr(generic, name))
    dispatcher.__dict__.update(generic.__dict__)
    dispatcher.__wrapped__ = generic  # type: ignore[attr-defined]
    dispatcher.__ppy_specializations__ = state  # type: ignore[attr-defined]
    state.dispatcher = dispatcher
    return dispatcher


def _dispatch(*args: Any, _ppy_state: Specializations, **kwargs: Any) -> Any:
    """The dispatcher's code. It runs with the module's globals: everything it needs
    comes through its state (builtins aside)."""
    state = _ppy_state
    defaults = state.generic.__defaults__
    if not kwargs and len(args) == state.params:
        values = args
    elif (  # trailing defaults left out (`crc16(data)`): filled in without binding
        not kwargs
        and state.positional
        and defaults
        and state.params - len(defaults) <= len(args) < state.params
    ):
        values = (*args, *defaults[len(defaults) - (state.params - len(args)) :])
    else:
        values = state.bound(args, kwargs)
        if values is None:
            return state.generic(*args, **kwargs)
    if not state.attributes:  # scalars alone: the classes say the whole signature
        function = state.by_class.get(tuple(map(type, values)))
        if function is not None:
            if function is state.generic:
                state.countdown -= 1
                if state.countdown == 0:
                    state.retire()
                return function(*args, **kwargs)
            if state.positional:  # every argument: its own defaults are placeholders
                return function(*values)
            return function(*args, **kwargs)
    return state.call(args, kwargs, values)


_DISPATCHER_CODES: set[Any] = {_dispatch.__code__}


def explain(function: Any) -> list[str]:
    """What became of each signature a dispatcher has seen (the running process's
    side of `ppy explain`'s list)."""
    state = getattr(function, "__ppy_specializations__", None)
    if state is None:
        return []
    return [f"{signature_text(s)}: {why}" for s, why in state.seen.items()]


__all__ = [
    "LIMIT",
    "SpecializationWarning",
    "describe",
    "explain",
    "record",
    "recorded",
    "spec_id",
    "signature_text",
    "specializing",
]
