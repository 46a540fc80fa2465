"""Coded diagnostics of the LLVM backend (E2xxx: backends and toolchain)."""

from __future__ import annotations

from typing import Final

#: code -> (message template, hint)
CODES: Final[dict[str, tuple[str, str]]] = {
    "E2101": (
        "llvmlite is not importable: {detail}",
        "pip install llvmlite, or leave these sites to NumPy",
    ),
    "E2102": (
        "no working C compiler to link kernels: {detail}",
        "install cc/gcc or set CC; sites run NumPy meanwhile",
    ),
    "E2103": ("operation {detail} has no CPU lowering", "this site stays NumPy"),
    "E2104": (
        "{detail} is not proven bit-exact against NumPy on this CPU",
        "this site stays NumPy",
    ),
    "E2106": ("kernel build failed: {detail}", "see the saved IR and build log named above"),
    "E2107": ("kernel IR is malformed: {detail}", "report a compiler bug; this site stays NumPy"),
    "E2108": ("no run-time guard for {detail}", "this site stays with its library"),
    "E2109": (
        "{detail} cannot beat the library's own calls (the cost rule, `_cost.py`)",
        "this site stays with its library; fuse arithmetic into it, or PPY_COST_RULE=0",
    ),
    "E2040": ("typed loops cannot be lowered: {detail}", "the function stays Python"),
    "E2049": (
        "{detail}: integer kernels hold wrapping + - *, negation, abs, extrema, compares",
        "this site stays NumPy (its division, powers, promotion or OverflowError)",
    ),
    "E2047": (
        "{detail}: complex128 arrays enter a kernel only through abs (NumPy's SIMD hypot)",
        "this site stays NumPy (its complex loops)",
    ),
    "E2048": (
        "{detail}: float32 kernels hold inline float32 arithmetic only",
        "this site stays NumPy (its float32 loops, or its promotion)",
    ),
}


class LlvmBackendError(Exception):
    """An error of the LLVM backend with a code in E21xx and a hint."""

    def __init__(self, code: str, detail: str) -> None:
        message, hint = CODES[code]
        self.code = code
        self.detail = detail
        self.hint = hint
        super().__init__(f"{message.format(detail=detail)}  [{code}]\n  hint: {hint}")


def reason(code: str, detail: str) -> str:
    """Render a `can_lower` refusal reason string with its code."""
    return f"{CODES[code][0].format(detail=detail)}  [{code}]"
