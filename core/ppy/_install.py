"""`ppy.install(["mypkg"])`: compile the modules of named packages as they are imported."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


class Installed:
    """The handle `ppy.install` returns: `uninstall()`, or use it as a context manager."""

    def __init__(self, names: Sequence[str]) -> None:
        from ppy_core.runtime.packages import PackageFinder, insert

        self.names = tuple(names)
        self._finder: PackageFinder | None = PackageFinder(self.names)
        insert(self._finder)

    def uninstall(self) -> None:
        """Stop compiling these packages' modules (those imported stay as they are)."""
        from ppy_core.runtime.packages import remove

        if self._finder is not None:
            remove(self._finder)
            self._finder = None

    @property
    def installed(self) -> bool:
        return self._finder is not None

    def __enter__(self) -> Installed:
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    def __repr__(self) -> str:
        state = "installed" if self.installed else "uninstalled"
        return f"<ppy.install {list(self.names)} {state}>"


def install(packages: str | Sequence[str]) -> Installed:
    """Compile, through the cache, every module of `packages` imported from now on
    (a name, a list of names, or "a,b"). A name that cannot be imported, or a package
    with modules already imported, gets one warning (E3041, E3042)."""
    from ppy_core.integrations.registration import register
    from ppy_core.runtime.packages import check_names, parse_names

    register()
    names = parse_names(packages) if isinstance(packages, str) else list(packages)
    return Installed(check_names(names))


__all__ = ["Installed", "install"]
