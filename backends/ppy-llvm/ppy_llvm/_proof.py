"""Proof, per library build and CPU, that a fused call of a library's own inner loop
gives that library's bits: run through the core's kernel ABI by the library's
runtime adapter, which this backend never imports.

The backend only builds the experiments: for each loop it may call, a bare call and
a fused one (arithmetic in and out), compiled into one library; each is a
`ProofCase` whose reference expression the adapter computes with its library
(`RuntimeAdapter.prove`). The verdicts are cached in the kernel cache under a key
of the backend fingerprint + the library + its adapter's `build_key()` (its version
and extension files), so the check re-runs when either changes. Only loops that
pass are fused.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import replace

from ppy_core.runtime.abi import ProofCase

from ._errors import LlvmBackendError
from ._exp import INLINE_EXP, host_has_fma, inline_exp, uses_exp
from ._exp32 import INLINE_EXP32, inline_exp32
from ._host import fingerprint
from ._spec import LOOP_BINARY, LOOP_UNARY, KernelBuilder, KernelSpec

CANDIDATES = (*LOOP_UNARY, "power", *LOOP_BINARY, "clip")
#: functions computed inline in place of a library loop where they give its bits, by
#: the loop they stand in for (proven against it, also on the adapter's "dense" sample)
INLINE = {INLINE_EXP: "exp"}


def proof_specs(
    names: Sequence[str] = CANDIDATES, binary: Sequence[str] = ()
) -> dict[str, list[tuple[KernelSpec, tuple]]]:
    """Per candidate: (spec, reference expression) of a bare call and a fused one;
    `binary` names the other libraries' loops among them that take two inputs."""
    out: dict[str, list[tuple[KernelSpec, tuple]]] = {}
    for name in names:
        b1, b2 = KernelBuilder(), KernelBuilder()
        x1, y1 = b1.leaf(), b1.leaf()
        x2, y2 = b2.leaf(), b2.leaf()
        if name == "power":
            s1 = b1.build(b1.op("pow", x1, y1))
            s2 = b2.build(b2.op("add", b2.op("pow", b2.op("mul", x2, y2), b2.const(2.5)), y2))
            fused: tuple = ("add", ("power", ("mul", 0, 1), 2.5), 1)
            out[name] = [(s1, ("power", 0, 1)), (s2, fused)]
        elif name in LOOP_BINARY or name in binary:  # bare, fused, a constant (stride 0)
            s1 = b1.build(b1.op("binary", x1, y1, op=name))
            s2 = b2.build(b2.op("add", b2.op("binary", b2.op("mul", x2, y2), y2, op=name), y2))
            b3 = KernelBuilder()
            x3, _ = b3.leaf(), b3.leaf()  # the proof calls every kernel with (x, y)
            s3 = b3.build(b3.op("binary", x3, b3.const(0.5), op=name))
            fused = ("add", (name, ("mul", 0, 1), 1), 1)
            out[name] = [(s1, (name, 0, 1)), (s2, fused), (s3, (name, 0, 0.5))]
        elif name == "clip":  # array bounds, then the constant bounds of `np.clip(x, lo, hi)`
            s1 = b1.build(b1.op("clip", x1, b1.op("neg", y1), y1))
            b3 = KernelBuilder()
            x3, _ = b3.leaf(), b3.leaf()
            s3 = b3.build(b3.op("clip", b3.op("mul", x3, x3), b3.const(-1.0), b3.const(0.5)))
            out[name] = [
                (s1, ("clip", 0, ("negative", 1), 1)),
                (s3, ("clip", ("mul", 0, 0), -1.0, 0.5)),
            ]
        else:  # a loop, or an inline stand-in proven against the loop it replaces
            s1 = b1.build(b1.op("unary", x1, op=name))
            s2 = b2.build(b2.op("add", b2.op("unary", b2.op("mul", x2, y2), op=name), y2))
            ref = INLINE.get(name, name)
            out[name] = [(s1, (ref, 0)), (s2, ("add", (ref, ("mul", 0, 1)), 1))]
    return out


def nan_specs() -> dict[str, tuple[KernelSpec, tuple]]:
    """sum(x*y) and prod(x*y): does the kernel's serial order keep the library's NaN bits?"""
    out: dict[str, tuple[KernelSpec, tuple]] = {}
    for kind, reduce in (("sum", "add"), ("prod", "mul")):
        b = KernelBuilder()
        x, y = b.leaf(), b.leaf()
        out[kind] = (b.build(b.op("mul", x, y), reduce=reduce), (kind, ("mul", 0, 1)))  # type: ignore[arg-type]
    return out


def _cases(
    named: list[tuple[str, KernelSpec, tuple]], inputs: str | list[str], lib_name: str
) -> list[ProofCase]:
    """One ProofCase per (name, spec, expression), fed `inputs` (one kind, or per case)."""
    from ._build import compile_specs

    # called on whole arrays only: no _splat/_rows_nan entries (the inline exp's fused
    # kernel: 356 KB of IR with them, 0.8 s of LLVM)
    kernels = compile_specs([replace(spec, rows=False, _key=[]) for _, spec, _ in named], lib_name)
    kinds = [inputs] * len(named) if isinstance(inputs, str) else inputs
    return [
        ProofCase(name, expression, kernel, kind)
        for (name, _, expression), kernel, kind in zip(named, kernels, kinds, strict=True)
    ]


def run_proof(
    library: str, names: Sequence[str] = CANDIDATES, binary: Sequence[str] = ()
) -> dict[str, str]:
    """``{loop: "ok" | reason}`` for every candidate, by experiment (`library`'s adapter)."""
    from ppy_core.runtime.adapter import adapter

    specs = proof_specs(names, binary)
    named = [(n, spec, expr) for n, pair in specs.items() for spec, expr in pair]
    lib_name = "proof" if tuple(names) == CANDIDATES else f"proof-{_safe(','.join(names))[:60]}"
    verdict = adapter(library).prove(_cases(named, "wide", lib_name))
    return {name: verdict.get(name, "not tested") for name in names}


def run_inline_proof(library: str, names: Sequence[str] = tuple(INLINE)) -> dict[str, str]:
    """``{inline function: "ok" | reason}``: its bare and fused kernels on the wide
    inputs, then the bare one on the dense sample (bits and FP flags), against the
    library's loop it stands in for (`library`'s adapter)."""
    from ppy_core.runtime.adapter import adapter

    skipped = _not_here(names)
    specs = proof_specs([n for n in names if n not in skipped])
    named = [(n, spec, expr) for n, pair in specs.items() for spec, expr in pair]
    kinds = ["wide"] * len(named)
    for name, pairs in specs.items():
        named.append((name, *pairs[0]))
        kinds.append("dense")
    verdict = dict(skipped)
    if named:
        lib_name = f"proof-inline-{_safe(','.join(specs))[:60]}"
        verdict |= adapter(library).prove(_cases(named, kinds, lib_name))
    return {name: verdict.get(name, "not tested") for name in names}


def _not_here(names: Sequence[str]) -> dict[str, str]:
    """Inline functions not worth proving on this host: glibc's exp without FMA is
    another function, and llvm.fma without it a libm call per element."""
    if INLINE_EXP in names and platform.machine() in ("x86_64", "AMD64") and not host_has_fma():
        return {INLINE_EXP: "this CPU has no FMA"}
    return {}


def inline_verdicts(library: str, refresh: bool = False) -> dict[str, str]:
    """The cached verdicts of the `INLINE` functions for this fingerprint + `library`'s build."""
    return _cached("proof-inline", library, run_inline_proof, refresh)


def inline_proven(spec: KernelSpec, library: str) -> KernelSpec:
    """`spec` with its ``exp`` loop calls computed inline where the proof for `library`
    says that gives its bits (float64: `_exp.inline_exp`, float32: `_exp32.inline_exp32`);
    unchanged if the proof cannot run (float64 loop calls then meet their own proof in
    `can_lower`, float32 ones are refused there)."""
    if not uses_exp(spec) or spec.dtype not in ("f64", "f32"):
        return spec
    try:
        if spec.dtype == "f32":
            return inline_exp32(spec, inline32_verdicts(library))
        verdict = inline_verdicts(library)
    except (LlvmBackendError, LookupError, ImportError, OSError):
        return spec
    return inline_exp(spec, verdict)


def inline32_specs() -> list[tuple[KernelSpec, tuple]]:
    """(spec, reference expression) of the float32 inline exp: bare, and fused between
    float32 arithmetic (`exp(x*y) + y`), as NumPy computes them in float32."""
    b1, b2 = KernelBuilder(), KernelBuilder()
    x1, _ = b1.leaf(), b1.leaf()  # the proof calls every kernel with (x, y)
    x2, y2 = b2.leaf(), b2.leaf()
    bare = b1.build(b1.op("unary", x1, op=INLINE_EXP32), dtype="f32")
    fused = b2.op("add", b2.op("unary", b2.op("mul", x2, y2), op=INLINE_EXP32), y2)
    return [(bare, ("exp", 0)), (b2.build(fused, dtype="f32"), ("add", ("exp", ("mul", 0, 1)), 1))]


def run_inline32_proof(library: str) -> dict[str, str]:
    """``{INLINE_EXP32: "ok" | reason}``: both kernels on the adapter's float32 sample
    (bits, and FP flags under ``np.errstate(all="raise")``) against `library`'s exp."""
    from ppy_core.runtime.adapter import adapter

    if platform.machine() not in ("x86_64", "AMD64"):
        return {INLINE_EXP32: "NumPy's float32 exp is reproduced for its x86 SIMD loop only"}
    if not host_has_fma():
        return {INLINE_EXP32: "this CPU has no FMA"}
    named = [(INLINE_EXP32, spec, expr) for spec, expr in inline32_specs()]
    verdict = adapter(library).prove(_cases(named, "dense32", "proof-inline32"))
    return {INLINE_EXP32: verdict.get(INLINE_EXP32, "not tested")}


def inline32_verdicts(library: str, refresh: bool = False) -> dict[str, str]:
    """The cached verdict of the float32 inline exp for this fingerprint + `library`'s
    build + the text of `_exp32` (an edit to the lowering is proven again)."""
    return _cached(f"proof-inline32-{_exp32_key()}", library, run_inline32_proof, refresh)


@functools.cache
def _exp32_key() -> str:
    from . import _exp32

    with open(_exp32.__file__, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()[:12]


def run_nan_proof(library: str) -> dict[str, str]:
    """``{"sum": "ok" | reason, "prod": ...}`` for NaN-laden data (`library`'s adapter)."""
    from ppy_core.runtime.adapter import adapter

    named = [(kind, spec, expr) for kind, (spec, expr) in nan_specs().items()]
    verdict = adapter(library).prove(_cases(named, "nan", "proof-nan"))
    return {kind: verdict.get(kind, "not tested") for kind, _, _ in named}


def _cached(
    prefix: str, library: str, run: Callable[[str], dict[str, str]], refresh: bool
) -> dict[str, str]:
    path = _path(prefix, library)
    if not refresh and os.path.exists(path):
        with open(path) as fh:
            cached = dict(json.load(fh))
        expected = {"proof": CANDIDATES, "proof-inline": INLINE}.get(prefix, ())
        if set(expected) <= set(cached):
            return cached  # else: a verdict from before a candidate was added
    verdict = run(library)
    _write(path, verdict)
    return verdict


def _path(prefix: str, library: str) -> str:
    """The verdict file of `prefix` for this fingerprint and `library`'s build."""
    from ppy_core.runtime.adapter import adapter

    from ._toolchain import cache_dir

    build = adapter(library).build_key()
    key = hashlib.sha256(f"{fingerprint()}|{library}|{build}".encode()).hexdigest()[:24]
    return str(cache_dir() / f"{prefix}-{key}.json")


def _write(path: str, verdict: dict[str, str]) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as fh:
        json.dump(verdict, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)


def proven(
    library: str, refresh: bool = False, loops: Sequence[str] = (), binary: Sequence[str] = ()
) -> dict[str, str]:
    """The cached loop verdicts for this fingerprint + `library`'s build (computed on
    first use), plus one for each ufunc of another library that `loops` names
    (``scipy.special:erf``; those in `binary` take two inputs, ``scipy.special:xlogy``):
    the missing ones proven together, each cached under that library's install.
    LookupError when no adapter is registered for `library`."""
    verdict = dict(_cached("proof", library, run_proof, refresh))
    foreign = [n for n in dict.fromkeys(loops) if n not in verdict and ":" in n]
    if not foreign:
        return verdict
    paths = {n: _path(f"proof-{_safe(n)}-{_install_key(n)}", library) for n in foreign}
    for path in paths.values():
        if not refresh and os.path.exists(path):
            with open(path) as fh:
                verdict.update(json.load(fh))
    missing = [n for n in foreign if n not in verdict]
    if missing:  # one compile and one adapter run for all of them
        found = run_proof(library, missing, [n for n in missing if n in binary])
        for name in missing:
            _write(paths[name], {name: found[name]})
        verdict.update(found)
    return verdict


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _install_key(name: str) -> str:
    """The installed version and top-level file of the module that defines `name`,
    read without importing it: a new install of that library re-runs the proof."""
    return _top_install_key(name.partition(":")[0].split(".")[0])


@functools.cache
def _top_install_key(top: str) -> str:
    import importlib.metadata
    import importlib.util

    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    origin = getattr(spec, "origin", None) or ""
    st = os.stat(origin) if origin and os.path.exists(origin) else None
    dists = importlib.metadata.packages_distributions().get(top, [])
    versions = ",".join(f"{d}={importlib.metadata.version(d)}" for d in sorted(set(dists)))
    text = f"{top}|{versions}|{origin}|{st.st_size if st else 0}|{int(st.st_mtime) if st else 0}"
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def nan_verdicts(library: str, refresh: bool = False) -> dict[str, str]:
    """The cached NaN-result verdicts for this fingerprint + `library`'s build."""
    return _cached("proof-nan", library, run_nan_proof, refresh)
