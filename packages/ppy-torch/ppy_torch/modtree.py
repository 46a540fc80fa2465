"""The described module tree as the stager reads it, and the facts it reads.

`ModRef` is one module of a `describe_module` tree with its path from `self` through
the modules' dicts; whatever the stager asks of it (a child, a parameter, a scalar, a
config's field) is logged as a `Fact`, which the region's C++ entry checks at every
call (`codegen._walk`): a region depends on nothing else of the module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ppy_torch.describe import KIND

#: what a region was built from, one fact a tuple, each checked by its C++ guard at every
#: call (`codegen.py`); `path` leads from `self` through the dicts ("_modules", name, ...)
Fact = tuple[Any, ...]
#   ("module", path, class, training, hooked)   its exact class, flag and hook tables
#   ("children", path, keys)                    its submodules, in order (a loop unrolled)
#   ("scalar", path, name, value)               `__dict__[name]`: exactly this value
#   ("noscalar", path, name)                    `__dict__[name]` absent or no scalar
#   ("objscalar", path, name, class, attr, value)  a dataclass attribute's field
#   ("nonearg", (), index)                      the method's argument `index` is None
#   ("tensor", path, table, name, dtype, device, shape, requires_grad)
#   ("none", path, table, name)                 `_parameters[name]` (or buffer) is None
#   ("absent", path, name)                      neither a parameter nor a buffer


@dataclass(frozen=True, slots=True)
class ModRef:
    """A module of the described tree and its path from `self` through the dicts.
    Whatever the stager asks of it is logged as a fact its region guards."""

    tree: tuple[Any, ...]  # (class, training, hooked, params, buffers, children, scalars)
    path: tuple[str, ...]
    log: list[Fact] = field(default_factory=list, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.log.append(
            ("module", self.path, str(self.tree[0]), bool(self.tree[1]), bool(self.tree[2]))
        )

    @property
    def cls(self) -> str:
        return str(self.tree[0])

    def _sub(self, key: str, sub: Any) -> ModRef:
        return ModRef(tuple(sub), (*self.path, "_modules", key), self.log)

    def child(self, name: str) -> ModRef | None:
        for key, sub in self.tree[5]:
            if key == name:
                return None if sub is None else self._sub(key, sub)
        return None

    def children(self) -> list[ModRef]:
        self.log.append(("children", self.path, tuple(str(key) for key, _ in self.tree[5])))
        return [self._sub(key, sub) for key, sub in self.tree[5] if sub is not None]

    def tensor(self, name: str) -> tuple[str, tuple[Any, ...]] | None:
        """("_parameters" or "_buffers", its description) of a tensor attribute."""
        for table, index in (("_parameters", 3), ("_buffers", 4)):
            for entry in self.tree[index]:
                if entry[0] == name:
                    if len(entry) == 1:
                        self.log.append(("none", self.path, table, name))
                    else:
                        dtype, device, shape, grad = entry[1], entry[2], entry[3], entry[4]
                        self.log.append(
                            ("tensor", self.path, table, name, dtype, device, tuple(shape), grad)
                        )
                    return table, tuple(entry)
        self.log.append(("absent", self.path, name))
        return None

    def object_scalar(self, name: str, attr: str) -> tuple[Any] | None:
        """`(value,)` of a scalar field of a dataclass attribute (`self.config.n`)."""
        for key, kind, value in self.tree[6]:
            if key == name and kind == "object":
                cls, fields = value
                for field_name, _kind, field_value in fields:
                    if field_name == attr:
                        found = tuple(field_value) if isinstance(field_value, list) else field_value
                        self.log.append(("objscalar", self.path, name, str(cls), attr, found))
                        return (found,)
        return None

    def scalar(self, name: str) -> tuple[bool, Any]:
        if name == "training":
            return True, bool(self.tree[1])  # guarded by its "module" fact
        for key, kind, value in self.tree[6]:
            if key == name and kind != "object":
                value = tuple(value) if isinstance(value, list) else value
                self.log.append(("scalar", self.path, name, value))
                return True, value
        if not name.startswith("_"):  # never described as a scalar: nothing to guard
            self.log.append(("noscalar", self.path, name))
        return False, None


def module_description(described: Any) -> tuple[Any, ...] | None:
    """The tree of a `describe_module` description, else None."""
    if (
        isinstance(described, tuple | list)
        and len(described) == 4
        and described[0] == "instance"
        and described[2] == KIND
    ):
        return tuple(described[3])
    return None


__all__ = ["Fact", "ModRef", "module_description"]
