"""What `ppy check` learns from the torch surface the plugin models: a call of a curated
torch function with more positional arguments than any of its signatures takes (Python
raises TypeError there, e.g. `torch.relu(x, x, x)`). Only functions: methods such as
`x.view(2, 3, 4)` spread their shape, so positional counts say nothing there."""

from __future__ import annotations

from ppy_core.diagnostics import Diagnostic
from ppy_core.interface.plugin import CallContext
from ppy_torch import ops


def check_arity(ctx: CallContext, aten: str) -> None:
    """Report a call of `ctx.callee` (curated as ATen op `aten`) that no signature fits."""
    if ctx.receiver is not None or ".Tensor." in ctx.callee:
        return
    signatures = ops.ATEN_CALLS[aten].signatures
    most = max(len(s.params) for s in signatures)
    given = len(ctx.args)
    if given <= most:
        return
    ctx.report(
        Diagnostic(
            "E1006",
            f"{ctx.callee}() takes at most {most} positional argument"
            f"{'s' * (most != 1)}, {given} given",
            f"see help({ctx.callee}); pass the extra values by keyword or drop them",
            ctx.location,
        )
    )
