"""Reusing a function's front-end result across builds of its module.

The site finder's work on one top-level function (typing, speculation, sites cut,
typed loops built, remarks and diagnostics) is a *record*, stored under the function's
key (`function_keys`). A build of an edited module looks each function's key up:
on a hit the record's function (its AST as the finder left it, which the sites point
into) replaces the freshly parsed one in the tree, and its sites, remarks and
diagnostics join the findings as if just found; on a miss the finder types it and
the record is kept. A record that does not load is a miss, never an error. A
record keeps the first line its function had (`first`); reused where the function
now starts elsewhere (lines inserted or deleted above it keep its key), every line it
names is moved by the difference (`function_rebase`), as is a prepared site's.

The records of one module live in one pack (`cache.functions`), rewritten after each
build with the records that build used: an edit reads one file and writes one.

A record is a pickle (the cache is private and each pack checked against the hash
recorded when it was written, as a backend's `.so` is). Two things do not survive
pickling as they are, and are mended here: dictionaries keyed by `id(node)` (a
site's `conv`, `operands`, `repeats`), stored as (node, value) pairs and keyed
again on loading; and the IR types a test compares by identity (`t is UNKNOWN`),
which load as the `ir.types` constants they equal.
"""

from __future__ import annotations

import ast
import io
import logging
import pickle
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ppy_core.compiler.frontend.sites import ExprSite, SiteFinder
from ppy_core.compiler.function_keys import FunctionKeys
from ppy_core.compiler.function_rebase import rebase_prepared, rebase_record
from ppy_core.diagnostics import Diagnostic
from ppy_core.ir import types as ir_types

log = logging.getLogger(__name__)

#: the `ir.types` constants: a loaded type equal to one is that object
_CANONICAL: dict[Any, Any] = {v: v for v in vars(ir_types).values() if isinstance(v, ir_types.Type)}
_TYPE_CLASSES = [
    v
    for v in vars(ir_types).values()
    if isinstance(v, type) and issubclass(v, ir_types.Type) and hasattr(v, "__dataclass_fields__")
]


def _interned(cls: type, names: tuple[str, ...], values: tuple[Any, ...]) -> Any:
    made = object.__new__(cls)
    for name, value in zip(names, values, strict=True):
        object.__setattr__(made, name, value)
    return _CANONICAL.get(made, made)


def _reduce_type(obj: Any) -> tuple[Any, ...]:
    names = tuple(f.name for f in fields(obj))
    return _interned, (type(obj), names, tuple(getattr(obj, n) for n in names))


_DISPATCH = dict.fromkeys(_TYPE_CLASSES, _reduce_type)


def _dumps(obj: Any) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH  # this pickler's only: copy/deepcopy unchanged
    pickler.dump(obj)
    return buffer.getvalue()


@dataclass(slots=True)
class Mark:
    """Where the findings stood before one function was typed."""

    expr_sites: int
    function_sites: int
    remarks: int
    rejects: int
    specializable: int
    failures: int
    counter: int
    diagnostics: int


@dataclass(slots=True)
class FunctionMemo:
    """Reuse and keep records while one SiteFinder runs over a module (`run`)."""

    keys: FunctionKeys
    diagnostics: list[Diagnostic]  # the build's: what a function reported is in its record
    stored: dict[str, bytes]  # key -> record, from the module's pack
    kept: dict[str, bytes] = field(default_factory=dict)  # what the next pack holds
    reused: int = 0
    typed: int = 0
    _keys: dict[int, str] = field(default_factory=dict)  # id(function) -> its key, as parsed
    _firsts: dict[int, int] = field(default_factory=dict)  # id(function) -> its first line
    # id(site) -> "<its function's key>@<its number within the function>"
    _site_names: dict[int, str] = field(default_factory=dict)
    _site_firsts: dict[int, int] = field(default_factory=dict)  # id(site) -> its function's

    def restore(self, finder: SiteFinder, index: int, stmt: ast.FunctionDef) -> bool:
        """Put `stmt`'s stored record in place of typing it; False on a miss."""
        key = self._keys[id(stmt)] = self.keys.key(stmt)  # before typing may touch it
        first = self._firsts[id(stmt)] = self.keys.first(stmt)
        blob = self.stored.get(key)
        if blob is None:
            return False
        try:
            record = pickle.loads(blob)
            node = record["node"]
            if not isinstance(node, ast.FunctionDef) or node.name != stmt.name:
                raise TypeError("the record holds another function")
            if first != record["first"]:  # made where the function started then
                rebase_record(record, first - record["first"])
        except Exception:  # a record that does not load is a miss (it is typed again)
            log.debug("function record of %s does not load", stmt.name, exc_info=True)
            return False
        assert finder.tree is not None
        finder.tree.body[index] = node  # the sites point into this copy of the function
        self._join(finder, record, key, first)
        self.kept[key] = blob
        self.reused += 1
        return True

    def _join(self, finder: SiteFinder, record: dict[str, Any], key: str, first: int) -> None:
        found = finder.found
        base = finder._counter
        for site, conv, repeats in record["expr_sites"]:
            site.conv = {id(node): value for node, value in conv}
            site.repeats = {id(node): value for node, value in repeats}
            site.operands = finder.operands
            self._site_names[id(site)] = f"{key}@{site.id.rpartition('.')[2]}"
            self._site_firsts[id(site)] = first
            site.id = _renumbered(site.id, base)
            found.expr_sites.append(site)
        finder.operands.update((id(node), value) for node, value in record["operands"])
        for fsite in record["function_sites"]:
            fsite.id = _renumbered(fsite.id, base)
            found.function_sites.append(fsite)
        found.remarks.extend(record["remarks"])
        found.rejects.extend(record["rejects"])
        found.specializable.extend(record["specializable"])
        self.diagnostics.extend(record["diagnostics"])
        finder._counter = base + record["count"]

    def mark(self, finder: SiteFinder) -> Mark:
        found = finder.found
        return Mark(
            len(found.expr_sites),
            len(found.function_sites),
            len(found.remarks),
            len(found.rejects),
            len(found.specializable),
            len(found.failures),
            finder._counter,
            len(self.diagnostics),
        )

    def keep(self, finder: SiteFinder, stmt: ast.FunctionDef, mark: Mark) -> None:
        """Record what typing `stmt` found (not when it failed inside the compiler:
        the next build tries it again)."""
        self.typed += 1
        found = finder.found
        if len(found.failures) != mark.failures:
            return
        expr_sites = found.expr_sites[mark.expr_sites :]
        function_sites = found.function_sites[mark.function_sites :]
        key, first = self._keys[id(stmt)], self._firsts[id(stmt)]
        for site in expr_sites:
            local = _relative(site.id, mark.counter).rpartition(".")[2]
            self._site_names[id(site)] = f"{key}@{local}"
            self._site_firsts[id(site)] = first
        nodes = _reachable(stmt, expr_sites)
        record = {
            "first": first,  # where the function started: a reuse elsewhere moves the lines
            "node": stmt,
            "expr_sites": [_packed(site, nodes, mark.counter) for site in expr_sites],
            "operands": [
                (node, finder.operands[id(node)]) for node in nodes if id(node) in finder.operands
            ],
            "function_sites": [
                replace(fsite, id=_relative(fsite.id, mark.counter)) for fsite in function_sites
            ],
            "remarks": found.remarks[mark.remarks :],
            "rejects": found.rejects[mark.rejects :],
            "specializable": found.specializable[mark.specializable :],
            "diagnostics": self.diagnostics[mark.diagnostics :],
            "count": finder._counter - mark.counter,
        }
        try:
            blob = _dumps(record)
        except Exception:  # something a plugin answered does not pickle: typed each time
            log.debug("function record of %s does not pickle", stmt.name, exc_info=True)
            return
        self.kept[key] = blob

    # -- an expression site's IR, after the passes (the driver's `prepare_expr`) ---------
    def prepared(self, site: ExprSite) -> tuple[dict[str, Any], Any] | None:
        """The record and IR the last build prepared for `site`: kept under its
        function's key and its number within the function, and used only where the
        site's id is the one they were made for (it names the IR's function; a site
        numbered otherwise in the module now is prepared again), its lines moved to
        where its function now starts."""
        name = self._site_names.get(id(site))
        blob = self.stored.get(name) if name else None
        if blob is None:
            return None
        try:
            record, func, first = pickle.loads(blob)
        except Exception:
            log.debug("prepared IR of site %s does not load", site.id, exc_info=True)
            return None
        if record.get("id") != site.id:
            return None
        if first != self._site_firsts[id(site)]:
            rebase_prepared(record, self._site_firsts[id(site)] - first)
        self.kept[name] = blob  # type: ignore[index]
        return record, func

    def chosen(self, site: ExprSite) -> str | None:
        """The backend the last build chose for `site` as prepared (`prepared`), or None."""
        name = self._site_names.get(id(site))
        blob = self.stored.get(f"{name}#backend") if name else None
        if blob is None:
            return None
        made_for, _, backend = blob.decode("utf-8", "replace").partition("\n")
        if made_for != site.id or not backend:
            return None
        self.kept[f"{name}#backend"] = blob
        return backend

    def keep_chosen(self, site: ExprSite, backend: str) -> None:
        name = self._site_names.get(id(site))
        if name is not None:
            self.kept[f"{name}#backend"] = f"{site.id}\n{backend}".encode()

    def keep_prepared(self, site: ExprSite, record: dict[str, Any], func: Any) -> None:
        """Keep what preparing `site` made (before the backends or the build touch it)."""
        name = self._site_names.get(id(site))
        if name is None:
            return
        try:
            self.kept[name] = _dumps((record, func, self._site_firsts[id(site)]))
        except Exception:
            log.debug("prepared IR of site %s does not pickle", site.id, exc_info=True)


def _packed(site: ExprSite, nodes: list[ast.AST], counter: int) -> tuple[Any, ...]:
    """The site with its id relative to the function's first and its id-keyed maps
    as (node, value) pairs (the nodes' ids change when they are loaded)."""
    conv = [(n, site.conv[id(n)]) for n in nodes if id(n) in site.conv]
    repeats = [(n, site.repeats[id(n)]) for n in nodes if id(n) in site.repeats]
    bare = replace(site, id=_relative(site.id, counter), conv={}, operands={}, repeats={})
    return bare, conv, repeats


def _reachable(func: ast.FunctionDef, sites: list[ExprSite]) -> list[ast.AST]:
    """The nodes of `func` and of its sites (a site may stand for a tree the finder
    made, `t OP v` of an augmented store): every node a lookup by id may ask for."""
    roots: list[ast.AST] = [func]
    for site in sites:
        roots += [site.node, *site.leaves, *site.args, *site.tests]
        if site.store is not None:
            roots += [site.store.stmt, site.store.obj]
    seen: dict[int, ast.AST] = {}
    for root in roots:
        for node in ast.walk(root):
            seen.setdefault(id(node), node)
    return list(seen.values())


def _relative(site_id: str, counter: int) -> str:
    head, _, number = site_id.rpartition(".")
    return f"{head}.{int(number) - counter}"


def _renumbered(site_id: str, base: int) -> str:
    head, _, number = site_id.rpartition(".")
    return f"{head}.{int(number) + base}"


__all__ = ["FunctionMemo", "Mark"]
