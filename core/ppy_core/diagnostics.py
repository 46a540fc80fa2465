"""Error codes, diagnostics, and the exception hierarchy.

Codes are declared once, here, in DESIGN's ranges: E0xxx front end, E1xxx
types, E19xx plugins, E2xxx backends and toolchains, E3xxx cache and
artifacts. A diagnostic renders as

    model.ppy:14:9: error: np.einsum: subscripts with '...' are not supported  [E1104]
      hint: write the dimensions out, or leave this call to NumPy
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Severity = Literal["error", "warning", "note"]

CODES: Final[dict[str, str]] = {
    # E0xxx: front end
    "E0001": "the file cannot be read",
    "E0002": "syntax error",
    "E0003": "an import of the project cannot be resolved",
    "E0004": "`ppy -m` names a module that cannot be found or run",
    "E0010": "a construct stays Python",
    "E0020": "a ppy decorator or annotation is used wrongly",
    # E0030-E0039: build execution (ppy_core.project.build_execution)
    "E0030": "project code must run at build time and [tool.ppy] build-execution is deny",
    "E0031": "project code run at build time raised",
    "E0032": "project code run at build time ran past its time limit",
    "E0033": "a build-time callable cannot be imported or returned neither bytes nor JSON",
    "E0034": "the build-time subprocess crashed or could not start",
    "E0040": "`ppy plugin new` was given a name that cannot name a plugin",
    "E0041": "`ppy plugin new` would overwrite an existing folder",
    # E1xxx: types
    "E1001": "a type is unknown under strict mode",
    "E1002": "an annotation cannot be understood",
    "E1003": "an attribute a typed library object does not have",
    "E1004": "operands no plugin accepts and Python refuses",
    "E1005": "a return contradicts the function's annotation",
    "E1006": "a call that does not fit the signature its plugin models",
    "E1007": "shape or dtype refinements that contradict each other",
    "E1009": "an assignment contradicts the variable's annotation",
    "E1010": "a pure function writes memory",
    # E1020-E1029: what raises when its line runs, found without types (check.raising)
    "E1020": "a name no scope defines (NameError when the line runs)",
    "E1021": "an import of a module that does not exist",
    "E1022": "an import of a name its module does not define",
    "E1023": "an attribute a module does not have",
    "E1024": "a call whose arguments do not bind to the project's function, class or method",
    "E1025": "an attribute an instance of a project class cannot have",
    "E1026": "what the run-time checks leave unknown, named under strict (a note)",
    "E1050": "a pydantic model is built with a constant its Field constraints refuse",
    "E1051": "a pydantic model is built with a keyword its constructor does not accept",
    "E1052": "a pydantic model is built without a required field",
    "E1053": "a strict pydantic model is built with a constant of another type",
    "E1060": "a function with loops stays Python: a statement typed loops do not compile",
    "E1061": "a typed loop's int is not proven to fit 64 bits: the function stays Python",
    "E1062": "a typed loop's local has a Python type that depends on the path taken",
    "E1071": "a function called with more signatures than it keeps specializations for",
    # E19xx: plugins
    "E1900": "a plugin hook raised",
    "E1901": "two enabled plugins claim one module",
    "E1902": "a plugin pass left the IR invalid",
    "E1903": "a plugin was written against another interface version",
    "E1904": "a plugin failed to import or to create itself",
    "E1905": "a plugin or backend entry point is malformed",
    "E1906": "two distributions register one plugin or backend name",
    "E1907": "a plugin option in [tool.ppy.plugins.NAME] is refused by its plugin",
    "E1908": "a plugin's or backend's fingerprint() failed: it is left out of the module",
    "E1909": "a plugin reported a problem in the code it was asked about",
    "E1910": "a plugin registers a dialect name another dialect already has",
    # E1950-: configuration
    "E1950": "the [tool.ppy] configuration is invalid",
    # E2xxx: backends and toolchains
    "E2001": "no backend can lower this site",
    "E2002": "a backend failed to compile a site",
    "E2003": "a toolchain is missing",
    "E2004": "a compiled kernel was built for another machine",
    # E2030-E2039: the cuda backend (ppy-cuda)
    "E2030": "a site holds what the cuda backend cannot lower to PTX",
    "E2031": "an (arch, PTX ISA) pair LLVM's NVPTX target would abort on",
    "E2032": "ptxas refused PTX the cuda backend produced",
    "E2033": "a torch op whose CUDA bits are not proven to match the kernel's",
    "E2034": "no libdevice matching torch's CUDA version is found",
    "E2035": "no CUDA driver or GPU here: the site runs torch",
    "E2036": "a CUDA kernel failed to load or launch: the site runs torch",
    "E2040": "the llvm backend cannot lower a typed-loops function",
    "E2048": "a float32 site needs what llvm does not reproduce in float32: NumPy runs it",
    "E2049": "an integer site needs what llvm does not reproduce in integers: NumPy runs it",
    "E2041": "no loops loader is registered for a typed-loops function's arrays",
    "E2042": "NumPy's BLAS routine a typed-loops function calls is not found or not proven "
    "to give NumPy's bits: the function runs as Python",
    "E2015": "a columnar site holds an op or a type no columnar kernel lowers",
    # E2025-E2029: the stablehlo backend (ppy-jax)
    "E2025": "a JAX export handed to the stablehlo backend is unreadable",
    # E3xxx: cache and artifacts
    "E3001": "a cache entry is corrupt",
    "E3002": "a cache lock could not be taken",
    "E3003": "an artifact was built against another library build",
    "E3004": "a piece of an artifact is missing or fails to load",
    "E3005": "an artifact manifest is invalid",
    "E3006": "a cache entry, lock or record owned by another user is refused",
    "E3007": "a manifest names a loader or adapter that is not a registered entry point",
    "E3008": "a backend's build file differs from the hash recorded when it was built",
    "E3009": "`ppy build -o` names a place holding what ppy did not make",
    "E3010": "a cache folder others may write into is made private, or refused",
    # E3025-E3029: exported JAX functions at run time (ppy-jax)
    "E3025": "a stored XLA executable was compiled for another jaxlib or CPU: the export runs",
    "E3026": "an exported JAX function's artifact is missing or unreadable: jit runs",
    "E3030": "uvicorn is asked for workers or reload with an app no import string can name",
    "E3031": "uvicorn workers cannot be forked from this process: spawned, each re-importing",
    # E3040-E3044: compiling modules as they are imported (ppy.install, PPY_PACKAGES)
    "E3040": "a module is not in the cache and no compiler is in this process",
    "E3041": "a package named for compiling cannot be imported",
    "E3042": "modules of a package named for compiling were imported before ppy was on",
    "E3043": "a module of a package named for compiling failed to compile: it runs as Python",
    # E9xxx: internal
    "E9001": "internal compiler error",
    "E9002": "a command is not available yet",
}

#: What only `ppy check` reports: the compile path asks the same hooks but drops these,
#: since Python itself decides at run time (a misspelt attribute on a line never run).
CHECK_ONLY: Final[frozenset[str]] = (
    frozenset(("E1003", "E1004", "E1005", "E1006", "E1007", "E1009"))
    | {"E1050", "E1051", "E1052", "E1053"}  # pydantic constructions its plugin refuses
    | {"E1020", "E1021", "E1022", "E1023", "E1024", "E1025", "E1026"}  # raising at run time
)


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a source file; line and column are 1-based, as Python's."""

    path: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.path
        if self.column <= 0:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.line}:{self.column}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One reported problem: a code from CODES, a message, an optional hint."""

    code: str
    message: str
    hint: str = ""
    location: Location | None = None
    severity: Severity = "error"

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise KeyError(f"undeclared diagnostic code {self.code}")

    def render(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}{self.severity}: {self.message}  [{self.code}]"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def __str__(self) -> str:
        return self.render()


class Error(Exception):
    """Base of every error PPy raises across a package boundary."""

    code: str = "E9001"

    def __init__(
        self,
        message: str,
        *,
        hint: str = "",
        location: Location | None = None,
        code: str | None = None,
    ) -> None:
        self.diagnostic = Diagnostic(code or self.code, message, hint, location)
        self.code = self.diagnostic.code
        super().__init__(self.diagnostic.render())

    @classmethod
    def from_diagnostic(cls, diagnostic: Diagnostic) -> Error:
        return cls(
            diagnostic.message,
            hint=diagnostic.hint,
            location=diagnostic.location,
            code=diagnostic.code,
        )


class ConfigError(Error):
    """The nearest pyproject.toml's [tool.ppy] table is invalid."""

    code = "E1950"


class PluginError(Error):
    """A plugin could not be loaded, conflicts with another, or misbehaved."""

    code = "E1904"


class InvalidIRError(Error):
    """The IR verifier rejected an operation."""

    code = "E9001"


class BackendError(Error):
    """A backend could not compile a site, or its toolchain is missing."""

    code = "E2002"


class CacheError(Error):
    """A cache entry or an artifact is unusable."""

    code = "E3001"


class InternalError(Error):
    """A bug in the compiler; for the user it degrades to the Python path."""

    code = "E9001"


class VerifyError(Error):
    """PPY_VERIFY=1 found a fast path whose answer differs from Python's."""

    code = "E9001"


class NotYetError(Error):
    """A command whose issue has not landed yet."""

    code = "E9002"


__all__ = [
    "CODES",
    "Location",
    "Diagnostic",
    "Error",
    "ConfigError",
    "PluginError",
    "InvalidIRError",
    "BackendError",
    "CacheError",
    "InternalError",
    "VerifyError",
    "NotYetError",
    "Severity",
]
