"""Passes and the pass manager. The verifier runs after every pass; a plugin's
pass that leaves the IR invalid is named in an E1902 error."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

from ppy_core.diagnostics import InternalError, InvalidIRError, PluginError
from ppy_core.ir.core import Operation, verify

log = logging.getLogger(__name__)


class Pass(Protocol):
    """A transformation of a module in place. `owner` is "core" or a plugin's name."""

    name: ClassVar[str]
    owner: ClassVar[str]

    def run(self, root: Operation) -> None: ...


@dataclass(frozen=True, slots=True)
class Registered:
    """A pass as a plugin registered it (`register_passes`): `owner` is that plugin,
    whatever the pass itself claims, so E1902 blames the plugin that brought it."""

    owner: str
    inner: Pass

    @property
    def name(self) -> str:
        return self.inner.name

    def run(self, root: Operation) -> None:
        self.inner.run(root)


class PassManager:
    """Runs passes in order, verifying the IR before the first and after each."""

    def __init__(self, passes: Sequence[Pass]) -> None:
        self.passes = list(passes)

    def run(self, root: Operation) -> None:
        verify(root)
        for p in self.passes:
            log.debug("running pass %s (%s)", p.name, p.owner)
            try:
                p.run(root)
            except (PluginError, InternalError):
                raise
            except Exception as exc:  # InvalidIRError included: the pass is to blame
                raise _blame(p, f"raised {type(exc).__name__}: {exc}") from exc
            try:
                verify(root)
            except InvalidIRError as exc:
                raise _blame(p, f"left the IR invalid: {exc.diagnostic.message}") from exc


def _blame(p: Pass, what: str) -> Exception:
    if p.owner == "core":
        return InternalError(
            f"core pass '{p.name}' {what}", hint="this is a PPy bug; the site stays Python"
        )
    return PluginError(
        f"pass '{p.name}' of plugin '{p.owner}' {what}",
        code="E1902",
        hint=f"report it to the '{p.owner}' plugin's authors, or disable the "
        f"plugin with [tool.ppy.plugins.{p.owner}] enabled = false",
    )


__all__ = ["Pass", "PassManager", "Registered"]
