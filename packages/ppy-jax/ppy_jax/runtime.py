"""Run time of an exported JAX function: executable, portable export, or `jax.jit`.

`ExportedFunction(data, fallback)` wraps one artifact (`ppy_jax.artifact`). A call
whose arguments match the export (same count, dtype, rank, concrete lengths,
consistent symbolic lengths >= 1, arrays on a platform the export was made for)
runs the stored compiled executable when the artifact was built under this very
backend fingerprint, else the portable export (compiled once per concrete shape,
as `jax.jit` does). Anything else runs `fallback` (the ordinary jitted function),
counted by reason in `ppy.stats()`. The checks mirror the `ValueError`s that
`Exported.call` raises before compiling; any it still raises falls back too.
A Python scalar, or a weakly typed array, always falls back: `jit` promotes them
as weak types, the export does not.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ppy_jax.artifact import Artifact, ArtifactFormatError

_SCALARS = (bool, int, float, complex)


class ExportedFunction:
    """One exported function at run time (see the module docstring)."""

    def __init__(
        self,
        data: bytes,
        fallback: Callable[..., Any],
        *,
        fingerprint: str,
        site_id: str | None = None,
    ) -> None:
        import jax
        from jax import export as jax_export

        artifact = Artifact.unpack(data)
        self.name = artifact.function
        self.fallback = fallback
        self.exported = jax_export.deserialize(bytearray(artifact.exported))
        self.platforms = frozenset(self.exported.platforms)
        self._tracer: type = jax.core.Tracer
        self.fast = 0
        self.fallbacks: dict[str, int] = {}
        # jit around `call`: the steady call costs what a jitted one does (0.02 ms, not 0.3)
        self._portable = jax.jit(self.exported.call)
        self._executable: Callable[..., Any] | None = None
        self.executable_refused = ""
        if artifact.executable:
            if artifact.fingerprint == fingerprint:
                self._executable = self._load_executable(artifact.executable)
            else:
                self.executable_refused = (
                    f"compiled under {artifact.fingerprint!r}, this is {fingerprint!r}"
                )
        if site_id is not None:
            from ppy_core.runtime import dispatch

            dispatch.register(site_id, self)

    @property
    def runs_executable(self) -> bool:
        """Whether matching calls run the stored compiled executable (no XLA compile)."""
        return self._executable is not None

    def _load_executable(self, blob: bytes) -> Callable[..., Any] | None:
        import jax
        from jax.experimental import serialize_executable

        n = len(self.exported.in_avals)
        in_tree = jax.tree_util.tree_structure((tuple(range(n)), {}))
        try:
            return serialize_executable.deserialize_and_load(blob, in_tree, self.exported.out_tree)
        except Exception as exc:  # a foreign or corrupt executable: the export still runs
            self.executable_refused = f"it does not load here ({type(exc).__name__}: {exc})"
            return None

    def mismatch(self, args: tuple[Any, ...]) -> str | None:
        """Why these arguments cannot run the export (a stats reason), or None."""
        avals = self.exported.in_avals
        if len(args) != len(avals):
            return "pytree structure"
        sizes: dict[str, int] = {}
        for arg, aval in zip(args, avals, strict=True):
            if isinstance(arg, self._tracer):  # called inside another jit/grad/vmap trace
                return "inside a jax trace"
            if isinstance(arg, _SCALARS):
                return "python scalar"
            shape, dtype = getattr(arg, "shape", None), getattr(arg, "dtype", None)
            if shape is None or dtype is None:
                return "pytree structure"
            if dtype != aval.dtype:
                return "dtype"
            if getattr(arg, "weak_type", False):  # jit promotes it as a Python scalar
                return "weak type"
            if len(shape) != len(aval.shape):
                return "rank"
            for want, got in zip(aval.shape, shape, strict=True):
                if isinstance(want, int):
                    if want != got:
                        return "shape"
                elif got < 1 or sizes.setdefault(str(want), got) != got:
                    return "shape"
            devices = getattr(arg, "devices", None)
            if callable(devices) and not {d.platform for d in devices()} <= self.platforms:
                return "device"
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        reason = "keyword arguments" if kwargs else self.mismatch(args)
        if reason is None:
            try:
                out = (self._executable or self._portable)(*args)
            except ValueError:  # a mismatch `Exported.call` saw and the checks did not
                reason = "rejected by the export"
            else:
                self.fast += 1
                return out
        self.fallbacks[reason] = self.fallbacks.get(reason, 0) + 1
        return self.fallback(*args, **kwargs)

    def ppy_stats(self) -> dict[str, Any]:
        return {"fast": self.fast, "fallback": dict(self.fallbacks)}

    def ppy_reset(self) -> None:
        self.fast = 0
        self.fallbacks.clear()


_WARNED: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=4)


def load_exported(
    unit_data: Mapping[str, Any],
    build_dir: str | Path,
    fallback: Callable[..., Any],
    record: Mapping[str, Any] | None = None,
) -> Callable[..., Any]:
    """The loader the `stablehlo` backend names (entry point `ppy.loaders: stablehlo`):
    the exported function for `fallback`, or the jitted `fallback` itself, with one
    warning, when the artifact is missing or unreadable."""
    import jax

    from ppy_jax._probe import executable_key

    name = str(unit_data.get("function", "?"))
    if unit_data.get("jit_fallback"):
        fallback = jax.jit(fallback)  # `@ppy.jax` alone: the fallback must be jitted too
    path = Path(build_dir) / str(unit_data["file"])
    try:
        exported = ExportedFunction(path.read_bytes(), fallback, fingerprint=executable_key())
    except (OSError, ArtifactFormatError, ValueError) as exc:
        _warn_once(
            f"load:{path}",
            f"ppy: the export of {name} ({path}) cannot be used ({exc}); it runs as an "
            "ordinary jitted call  [E3026]",
        )
        return fallback
    if exported.executable_refused:
        _warn_once(
            f"exe:{path}",
            f"ppy: {name}'s stored XLA executable is not used: {exported.executable_refused}; "
            "the portable export runs (XLA compiles it once)  [E3025]",
        )
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        if hasattr(fallback, attr):
            setattr(exported, attr, getattr(fallback, attr))
    exported.__wrapped__ = fallback
    return exported


__all__ = ["ExportedFunction", "load_exported"]
