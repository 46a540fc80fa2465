"""The compile driver: one module from source to a cached artifact entry.

key (no compiler) -> cache hit, or: parse, find sites, build IR, run passes, pick a
backend per site, rewrite the module, marshal its code, write the manifest. A
failure confined to one site leaves that site Python with a diagnostic.
"""

from __future__ import annotations

import ast
import logging
import marshal
import os
import sys
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

from ppy_core import __version__
from ppy_core.cache.functions import read_pack, write_pack
from ppy_core.cache.module_key import ModuleKey
from ppy_core.compiler.deep import MAX_SITE_OPS, run_deep
from ppy_core.compiler.frontend.contain import is_internal
from ppy_core.compiler.frontend.lowering import build_site_ir
from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.sites import (
    ExprSite,
    FunctionSite,
    SiteFinder,
    Target,
    site_library,
)
from ppy_core.compiler.frontend.source import read_source
from ppy_core.compiler.frontend.transform import (
    PREFIX,
    compile_module_code,
    rewrite_module,
    specialization_module,
)
from ppy_core.compiler.frontend.views import index_record
from ppy_core.compiler.function_keys import FunctionKeys
from ppy_core.compiler.function_records import FunctionMemo
from ppy_core.compiler.passes import CORE_PASSES
from ppy_core.diagnostics import CHECK_ONLY, Diagnostic, Error, Location
from ppy_core.interface.backend import Backend, CompiledUnit, LowerContext
from ppy_core.interface.hooks import HookCaller
from ppy_core.interface.plugin import ModuleContext
from ppy_core.interface.progress import counted
from ppy_core.interface.specs import LOWERING_ATTRIBUTE, OP_SPEC_KINDS, spec_attribute, spec_of
from ppy_core.ir import DialectRegistry, PassManager, core_registry, print_ir
from ppy_core.ir.dialects.builtin import FuncOp, ModuleOp
from ppy_core.ir.passes import Registered
from ppy_core.ir.rewrite import ApplyPatterns
from ppy_core.runtime.artifact import MANIFEST, write_manifest

log = logging.getLogger(__name__)


class Builder:
    """Builds one module's artifact into the directory the cache hands it."""

    def __init__(self, key: ModuleKey, target: Target | None = None) -> None:
        self.key = key
        self.target = target  # one function's specialization (`compiler/specialize.py`)
        self.diagnostics: list[Diagnostic] = list(key.activation.diagnostics)
        self.registry: DialectRegistry = core_registry()
        self.lowerings: dict[str, dict[str, Any]] = {}  # op name -> `lowering` attribute
        self.memo: FunctionMemo | None = None  # what the module's last build found

    def report(self, diagnostic: Diagnostic) -> None:
        if diagnostic.code not in CHECK_ONLY:  # `ppy check`'s findings, not the build's
            self.diagnostics.append(diagnostic)

    def register_dialects(self, hooks: HookCaller) -> None:
        """Each plugin's dialects; a name already taken is refused for that dialect
        only (E1910, naming the plugin), so its ops stay unknown and its sites Python."""
        for plugin, dialects in hooks.collect("register_dialects"):
            for dialect in dialects:
                try:
                    self.registry.register(dialect)
                except ValueError:
                    self.report(
                        Diagnostic(
                            "E1910",
                            f"plugin {plugin!r} registers dialect {dialect.name!r}, "
                            "a name another dialect already has",
                            hint="a plugin's dialect is named after the plugin "
                            f"(e.g. '{plugin}.{dialect.name}'); report it to its authors",
                            severity="warning",
                        )
                    )

    def build(self, out: Path) -> dict[str, Any]:
        """Build on a thread with room for deep trees (`deep.py`). A compiler bug that
        escapes every site's and function's own guard still costs no program: the
        module is stored as written (no site compiled) with one E9001 warning."""
        source = read_source(self.key.path, self.key.source)
        try:
            return run_deep(lambda: self.build_sites(source, out))
        except Exception as exc:
            if not is_internal(exc) or self.target is not None:
                raise  # a specialization that fails: its caller keeps the general path
            self.report(self._internal(exc, "the module", None))
            return self.build_plain(source, out)

    def build_plain(self, source: Any, out: Path) -> dict[str, Any]:
        """The module as written: its code and a manifest with no site."""
        for stale in out.iterdir():  # what the failed build had written
            if stale.is_file():
                stale.unlink()
        code = compile(source.data, str(self.key.path), "exec", dont_inherit=True)
        (out / "module.code").write_bytes(marshal.dumps(code))
        (out / "source.py").write_bytes(source.data)
        write_manifest(out / MANIFEST, self.manifest([], [], [], []))
        return {"module": str(self.key.path)}

    def _internal(self, exc: BaseException, what: str, node: ast.AST | None) -> Diagnostic:
        """A warning that `what` stays Python: E0010 for a tree too deep to walk, else
        E9001 (a compiler bug), its traceback printed under PPY_DEBUG=1."""
        log.debug("internal error compiling %s", what, exc_info=exc)
        if os.environ.get("PPY_DEBUG"):
            traceback.print_exception(exc)
        where = _where(self.key.path, node) if node is not None else Location(str(self.key.path))
        if isinstance(exc, RecursionError):
            return Diagnostic(
                "E0010",
                f"{what} nests too deeply for ppy to compile; it stays Python",
                "the program runs as written; split the expression into statements to "
                "compile it (rerun with PPY_DEBUG=1 for where it stopped)",
                where,
                "warning",
            )
        return Diagnostic(
            "E9001",
            f"internal compiler error compiling {what} ({type(exc).__name__}: {exc}); "
            "it stays Python",
            "the program runs as written; rerun with PPY_DEBUG=1 for the traceback and report it",
            where,
            "warning",
        )

    def build_sites(self, source: Any, out: Path) -> dict[str, Any]:
        # A plugin whose every claim conflicted (E1901) answers for nothing.
        claimants = set(self.key.activation.claims.values())
        plugins = [p for p in self.key.activation.plugins if p.name in claimants]
        hooks = HookCaller(
            plugins,
            report=self.report,
            claims=self.key.activation.claims,  # routes each question to its module's plugin
            options={p.name: self.key.config.plugin(p.name).options for p in plugins},
        )
        self.register_dialects(hooks)
        oracle = Oracle(hooks)
        scope = self.key.scope
        imports = dict(scope.imports) if scope else {}
        module_ctx = ModuleContext(
            str(self.key.path), self.key.path.stem, imports, report=hooks.relay
        )
        finder = SiteFinder(
            oracle, module_ctx, self.key.config.opt, self.target, libraries=bool(plugins)
        )
        memo = self.memo = (
            self.function_memo(source.tree, source.text) if self.target is None else None
        )
        finder.memo = memo
        findings = finder.run(source.tree)
        for stmt, exc in findings.failures:
            name = getattr(stmt, "name", None)
            self.report(self._internal(exc, f"function '{name}'" if name else "a statement", stmt))
        for node, reject in findings.rejects:
            self.report(
                Diagnostic(reject.code, reject.message, reject.hint, _where(self.key.path, node))
            )
        passes = self.plugin_passes(hooks)
        self.lowerings = self.plugin_lowerings(hooks)
        expr_records, compiled_exprs = [], []
        results = self.expr_units(findings.expr_sites, passes, out)
        for site, (record, unit) in zip(findings.expr_sites, results, strict=True):
            record["index"] = len(expr_records)
            expr_records.append(record)
            if unit is not None:
                compiled_exprs.append((record["index"], site))
        fn_records, compiled_fns = [], []
        units = self.function_units(findings.function_sites, out)
        for fsite, (record, unit) in zip(findings.function_sites, units, strict=True):
            record["index"] = len(fn_records)
            fn_records.append(record)
            if unit is not None:
                compiled_fns.append((record["index"], fsite))
        prefix = self.target.prefix if self.target else PREFIX
        specializable = [(i, s.node) for i, s in enumerate(findings.specializable)]
        tree = rewrite_module(source.tree, compiled_exprs, compiled_fns, prefix, specializable)
        if self.target is not None:
            tree = specialization_module(tree, self.target.function, prefix)
        names = {site.node.lineno: site.function for _i, site in compiled_exprs}
        code = compile_module_code(tree, str(self.key.path), names)
        (out / "module.code").write_bytes(marshal.dumps(code))
        (out / "source.py").write_bytes(source.data)
        manifest = self.manifest(expr_records, fn_records, findings.remarks, findings.specializable)
        if self.target is not None:
            manifest["specialization"] = {
                "function": self.target.function,
                "signature": self.target.signature,
                "prefix": prefix,
                "name": self.target.function.rpartition(".")[2],
                "gains": bool(compiled_exprs or compiled_fns),
            }
        if memo is not None:
            manifest["functions"] = {"reused": memo.reused, "typed": memo.typed}
        write_manifest(out / MANIFEST, manifest)
        if memo is not None:  # the build is done: what it found is the next one's to reuse
            write_pack(str(self.key.path), memo.kept)
        return {"module": str(self.key.path)}

    def function_memo(self, tree: ast.Module, text: str) -> FunctionMemo:
        """Each top-level function's findings of the last build of this module, to reuse
        where the function's key is unchanged (`function_keys`, `function_records`)."""
        keys = FunctionKeys(tree, text, self.key.components)
        return FunctionMemo(keys, self.diagnostics, read_pack(str(self.key.path)))

    def manifest(
        self,
        expr_records: list[Any],
        fn_records: list[Any],
        remarks: list[Any],
        specializable: list[Any],
    ) -> dict[str, Any]:
        """The manifest of this build: its sites' records, remarks and diagnostics."""
        return {
            "format": 1,
            "core": __version__,
            "python": sys.implementation.cache_tag,
            "module": {"path": str(self.key.path), "name": self.key.path.stem},
            "key": self.key.key,
            "components": self.key.components,
            "plugins": [p.name for p in self.key.activation.plugins],
            "expr_sites": expr_records,
            "function_sites": fn_records,
            "project_files": {k: str(v) for k, v in self.key.project_files.items()},
            "remarks": [
                {"function": r.function, "line": r.line, "message": r.message} for r in remarks
            ],
            "diagnostics": [d.render() for d in self.diagnostics],
            "specializable": [
                {
                    "index": i,
                    "function": s.function,
                    "line": s.node.lineno,
                    "params": len(s.params),
                    "attributes": list(s.attributes),
                }
                for i, s in enumerate(specializable)
            ],
        }

    def plugin_passes(self, hooks: HookCaller) -> list[Any]:
        """The plugins' passes, then their rewrite patterns (one pass per plugin), then
        the core's; each owned by the plugin that registered it, for E1902."""
        passes: list[Any] = [
            Registered(plugin, p) for plugin, ps in hooks.collect("register_passes") for p in ps
        ]
        for plugin, patterns in hooks.collect("register_patterns"):
            passes.append(ApplyPatterns(plugin, tuple(patterns)))
        return [*passes, *CORE_PASSES]

    def plugin_lowerings(self, hooks: HookCaller) -> dict[str, dict[str, Any]]:
        """op name -> the `lowering` attribute of the spec a plugin registered for its
        own dialect's op (`register_lowerings`); the first plugin to name an op wins."""
        table: dict[str, dict[str, Any]] = {}
        for plugin, answer in hooks.collect("register_lowerings"):
            for op_name, spec in dict(answer).items():
                if type(spec) in OP_SPEC_KINDS:
                    table.setdefault(op_name, spec_attribute(spec))
                else:
                    log.debug("plugin %s: lowering of %s is no op spec", plugin, op_name)
        return table

    def _annotate(self, func: FuncOp) -> None:
        """Put each registered lowering on the ops it names (a call's own spec stays)."""
        for op in func.walk():
            if op.name in self.lowerings and LOWERING_ATTRIBUTE not in op.attributes:
                op.attributes[LOWERING_ATTRIBUTE] = self.lowerings[op.name]

    def expr_units(
        self, sites: list[ExprSite], passes: list[Any], out: Path
    ) -> list[tuple[dict[str, Any], CompiledUnit | None]]:
        """Every expression site's record and unit. Sites whose first willing backend
        has `lower_module` are compiled together (one library per module and backend);
        if that fails, each is compiled alone, so one bad site costs only itself."""
        prepared = [
            self.prepare_reusing(site, passes) for site in counted("preparing sites", sites)
        ]
        results: list[tuple[dict[str, Any], CompiledUnit | None]] = [
            (record, None) for record, _func in prepared
        ]
        groups: dict[tuple[str, bool], list[int]] = {}
        for i, (record, func) in enumerate(counted("choosing backends", prepared)):
            backend = self._chosen(sites[i], func) if func is not None else None
            if backend is not None and hasattr(backend, "lower_module"):
                groups.setdefault((backend.name, sites[i].fastmath), []).append(i)
            elif func is not None:
                results[i] = (
                    record,
                    self.lower(func, sites[i].id, sites[i].fastmath, out, record, sites[i].node),
                )
        for (name, fastmath), indexes in groups.items():
            backend = next(b for b in self.key.backends if b.name == name)
            units = self._lower_batch(backend, [prepared[i][1] for i in indexes], fastmath, out)
            for n, i in enumerate(indexes):
                record, func = prepared[i]
                if units is None:
                    unit = self.lower(func, sites[i].id, fastmath, out, record, sites[i].node)
                else:
                    unit = units[n]
                    self._skipped_reasons(func, backend, record)
                    self._record_unit(record, backend, unit)
                results[i] = (record, unit)
        return results

    def _chosen(self, site: ExprSite, func: FuncOp) -> Backend | None:
        """`_first_willing`, or the backend the last build chose for the site as it was
        prepared (`function_records`: the backends' fingerprints are in its key)."""
        name = self.memo.chosen(site) if self.memo is not None else None
        backend = next((b for b in self.key.backends if b.name == name), None)
        if backend is None:
            backend = self._first_willing(func)
            if backend is not None and self.memo is not None:
                self.memo.keep_chosen(site, backend.name)
        return backend

    def _first_willing(self, func: FuncOp) -> Backend | None:
        for backend in self.key.backends:
            if _refusal(backend, func) is None:
                return backend
        return None

    def _skipped_reasons(self, func: FuncOp, chosen: Backend, record: dict[str, Any]) -> None:
        for backend in self.key.backends:
            if backend is chosen:
                return
            record["reasons"].append(f"{backend.name}: {_refusal(backend, func)}")

    def _lower_batch(
        self, backend: Backend, funcs: list[Any], fastmath: bool, out: Path
    ) -> list[CompiledUnit] | None:
        if len(funcs) < 2:
            return None
        ctx = LowerContext(
            site_id=f"{self.key.path.stem}.{backend.name}", build_dir=out, fastmath=fastmath
        )
        try:
            units = backend.lower_module(funcs, ctx)  # type: ignore[attr-defined]
        except Exception:
            log.debug(
                "batch lowering by %s failed; lowering site by site", backend.name, exc_info=True
            )
            return None
        return list(units) if len(units) == len(funcs) else None

    def prepare_reusing(
        self, site: ExprSite, passes: list[Any]
    ) -> tuple[dict[str, Any], FuncOp | None]:
        """`guarded_prepare`, or what the last build prepared for the same site of the
        same function (`function_records`); kept unless preparing it reported."""
        found = self.memo.prepared(site) if self.memo is not None else None
        if found is not None:
            return found
        mark = len(self.diagnostics)
        record, func = self.guarded_prepare(site, passes)
        if self.memo is not None and len(self.diagnostics) == mark:
            self.memo.keep_prepared(site, record, func)
        return record, func

    def guarded_prepare(
        self, site: ExprSite, passes: list[Any]
    ) -> tuple[dict[str, Any], FuncOp | None]:
        """`prepare_expr`, with a compiler bug in it costing only this site."""
        try:
            return self.prepare_expr(site, passes)
        except Exception as exc:
            if not is_internal(exc):
                raise
            diagnostic = self._internal(exc, f"site {site.id}", site.node)
            self.report(diagnostic)
            record: dict[str, Any] = {
                "id": site.id,
                "function": site.function,
                "line": site.node.lineno,
                "col": site.node.col_offset + 1,
                "text": f"(site {site.id})",
                "leaves": [],
                "unit": None,
                "reasons": [diagnostic.message],
            }
            return record, None

    def prepare_expr(
        self, site: ExprSite, passes: list[Any]
    ) -> tuple[dict[str, Any], FuncOp | None]:
        record: dict[str, Any] = {
            "id": site.id,
            "function": site.function,
            "line": site.node.lineno,
            "col": site.node.col_offset + 1,
            "text": ast.unparse(site.node),
            "leaves": [ast.unparse(leaf) for leaf in site.leaves],
            "unit": None,
            "reasons": [],
        }
        if any(view is not None for _arg, view in site.sources):  # frontend/views.py
            record["args"] = [ast.unparse(arg) for arg in site.args]
            record["views"] = [
                [arg, None if view is None else index_record(view, site.args)]
                for arg, view in site.sources
            ]
        if site.store is not None:  # the statement writes its target (frontend/stores.py)
            record["store"] = site.store.form
            record["text"] = ast.unparse(site.store.stmt)
        if site.assumed:  # speculative: unannotated leaves taken as the library's arrays
            record["assumed"] = [ast.unparse(site.leaves[i]) for i in site.assumed]
            record["library"] = site_library(site)
        try:
            func = build_site_ir(site, self.registry)
            if (size := sum(1 for _op in func.walk())) > MAX_SITE_OPS:
                message = (
                    f"an expression of {size} operations is longer than one compiled "
                    f"site may be ({MAX_SITE_OPS}); it stays Python"
                )
                hint = "split it into statements of fewer operations to compile it"
                where = _where(self.key.path, site.node)
                self.report(Diagnostic("E0010", message, hint, where, "warning"))
                record["reasons"].append(message)
                return record, None
            record["ir"] = print_ir(func)
            module = ModuleOp.empty()
            module.regions[0].block.append(func)
            PassManager(passes).run(module)
            self._annotate(func)
            record["ir_final"] = print_ir(func)
        except Error as exc:
            self.report(_located(exc.diagnostic, self.key.path, site.node))
            record["reasons"].append(f"IR: {exc.diagnostic.message}")
            return record, None
        return record, func

    def function_units(
        self, fsites: list[FunctionSite], out: Path
    ) -> list[tuple[dict[str, Any], CompiledUnit | None]]:
        """Whole-function sites; a backend with `lower_module` builds all of a module's
        regions at once (one extension per module), else one by one."""
        for fsite in fsites:  # backend "" (typed loops): the first enabled one that lowers it
            if not fsite.spec.backend:
                chosen = self._first_willing(fsite.spec.graph)
                name = chosen.name if chosen is not None else "(none that lowers it)"
                fsite.spec = replace(fsite.spec, backend=name)
        results = [self.function_site(f, out, lower=False) for f in fsites]
        by_backend: dict[str, list[int]] = {}
        for i, fsite in enumerate(fsites):
            if not results[i][0]["reasons"]:
                by_backend.setdefault(fsite.spec.backend, []).append(i)
        for name, indexes in by_backend.items():
            backend = next(b for b in self.key.backends if b.name == name)
            batch = getattr(backend, "lower_module", None)
            if batch is None or len(indexes) == 1:
                for i in indexes:
                    results[i] = self.function_site(fsites[i], out)
                continue
            try:
                ctx = LowerContext(site_id=fsites[indexes[0]].id, build_dir=out)
                batch_units = list(batch([fsites[i].spec.graph for i in indexes], ctx))
                if len(batch_units) != len(indexes):
                    raise ValueError(f"{len(batch_units)} units for {len(indexes)} regions")
            except Exception:
                log.debug("batch lowering by %s failed; one by one", name, exc_info=True)
                for i in indexes:  # one bad region must not cost the others
                    results[i] = self.function_site(fsites[i], out)
                continue
            for i, unit in zip(indexes, batch_units, strict=True):
                record = results[i][0]
                self._record_unit(record, backend, unit)
                results[i] = (record, unit)
        return results

    def function_site(
        self, fsite: FunctionSite, out: Path, lower: bool = True
    ) -> tuple[dict[str, Any], CompiledUnit | None]:
        record: dict[str, Any] = {
            "id": fsite.id,
            "function": fsite.function,
            "line": fsite.node.lineno,
            "backend": fsite.spec.backend,
            "unit": None,
            "reasons": [],
        }
        if isinstance(fsite.spec.graph, FuncOp):  # core IR (typed loops): `ppy explain` shows it
            record["ir_final"] = print_ir(fsite.spec.graph)
            # it writes its arrays: PPY_VERIFY runs its Python on copies of them
            record["writes"] = "WriteMemory" in fsite.spec.effects
        backend = next((b for b in self.key.backends if b.name == fsite.spec.backend), None)
        if backend is None:
            record["reasons"].append(f"backend '{fsite.spec.backend}' is not enabled")
            return record, None
        if not lower:
            return record, None
        unit = self._try_lower(backend, fsite.spec.graph, fsite.id, False, out, record, fsite.node)
        return record, unit

    def lower(
        self,
        func: FuncOp,
        site_id: str,
        fastmath: bool,
        out: Path,
        record: dict[str, Any],
        node: ast.AST,
    ) -> CompiledUnit | None:
        for backend in self.key.backends:
            reason = _refusal(backend, func)
            if reason is not None:
                record["reasons"].append(f"{backend.name}: {reason}")
                continue
            unit = self._try_lower(backend, func, site_id, fastmath, out, record, node)
            if unit is not None:
                return unit
        if not self.key.backends:
            record["reasons"].append("no backend is installed and enabled")
        return None

    def _try_lower(
        self,
        backend: Backend,
        what: Any,
        site_id: str,
        fastmath: bool,
        out: Path,
        record: dict[str, Any],
        node: ast.AST,
    ) -> CompiledUnit | None:
        ctx = LowerContext(site_id=site_id, build_dir=out, fastmath=fastmath)
        try:
            unit = backend.lower(what, ctx)
        except Error as exc:
            self.report(_located(exc.diagnostic, self.key.path, node))
            record["reasons"].append(f"{backend.name}: {exc.diagnostic.message}")
            return None
        except Exception as exc:
            log.debug("backend %s failed", backend.name, exc_info=True)
            if os.environ.get("PPY_DEBUG"):
                traceback.print_exc()
            message = (
                f"backend '{backend.name}' failed to compile site {site_id}: "
                f"{type(exc).__name__}: {exc}"
            )
            self.report(
                Diagnostic(
                    "E2002",
                    message,
                    "the site stays Python; rerun with PPY_DEBUG=1 for the compiler's traceback",
                    _where(self.key.path, node),
                    "warning",
                )
            )
            record["reasons"].append(message)
            record["traceback"] = traceback.format_exc()
            return None
        self._record_unit(record, backend, unit)
        return unit

    @staticmethod
    def _record_unit(record: dict[str, Any], backend: Backend, unit: CompiledUnit) -> None:
        record["unit"] = {
            "backend": unit.backend,
            "loader": unit.loader,
            "runtime": unit.runtime,
            "files": list(unit.files),
            "data": dict(unit.data),
        }
        record["backend"] = backend.name


def _refusal(backend: Backend, func: FuncOp) -> str | None:
    """Why `backend` will not lower `func`: a lowering spec on one of its ops that it
    cannot read (`read_spec`), else its `can_lower`; None: it will. A backend that
    raises is refused with what it raised: a backend bug must not cost the module."""
    try:
        for op in func.walk():
            attribute = op.attributes.get(LOWERING_ATTRIBUTE)
            if attribute is not None:
                spec = spec_of(attribute)
                reason = backend.read_spec(spec)
                if reason is not None:
                    return f"{op.name}: {reason}"
        return backend.can_lower(func)
    except Exception as exc:
        return f"raised {type(exc).__name__}: {exc}"


def _where(path: Path, node: ast.AST) -> Location:
    return Location(str(path), getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)


def _located(diagnostic: Diagnostic, path: Path, node: ast.AST) -> Diagnostic:
    if diagnostic.location is not None:
        return diagnostic
    return Diagnostic(
        diagnostic.code,
        diagnostic.message,
        diagnostic.hint,
        _where(path, node),
        diagnostic.severity,
    )


__all__ = ["Builder"]
