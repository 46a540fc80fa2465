"""Parses the textual form written by `ppy_core.ir.printer` back into IR."""

from __future__ import annotations

import json
import re
import struct
from typing import Any

from ppy_core.diagnostics import InvalidIRError
from ppy_core.ir.core import Block, DialectRegistry, Operation, Region, Value
from ppy_core.ir.types import (
    NONE,
    SCALAR_KINDS,
    UNKNOWN,
    ColumnType,
    Dim,
    OpaqueType,
    ScalarType,
    TensorType,
    TupleType,
    Type,
)

_WS = re.compile(r"(\s|//[^\n]*)*")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z0-9_.]+")
_VALUE = re.compile(r"%([A-Za-z0-9_]+)")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NUMBER = re.compile(r"-?(?:\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)")
_WORD = re.compile(r"(true|false|unit|-?inf|(-?)nan(?:\((0x[0-9a-fA-F]{1,16})\))?)(?![A-Za-z0-9_])")
_WORDS = {"true": True, "false": False, "unit": None, "inf": float("inf"), "-inf": float("-inf")}
_SIGN_BIT = 1 << 63
_EXPONENT = 0x7FF0000000000000
_KIND = re.compile("|".join(sorted(SCALAR_KINDS, key=len, reverse=True)))


class _Parser:
    def __init__(self, text: str, registry: DialectRegistry) -> None:
        self.text, self.pos, self.registry = text, 0, registry
        self.scopes: list[dict[str, Value]] = [{}]

    # -- scanning -------------------------------------------------------------
    def error(self, message: str) -> InvalidIRError:
        line = self.text.count("\n", 0, self.pos) + 1
        col = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return InvalidIRError(
            f"line {line}:{col}: {message}", hint="check the IR text against the printer's form"
        )

    def skip(self) -> None:
        self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def peek(self, token: str) -> bool:
        self.skip()
        return self.text.startswith(token, self.pos)

    def accept(self, token: str) -> bool:
        if self.peek(token):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str) -> None:
        if not self.accept(token):
            found = self.text[self.pos : self.pos + 20]
            raise self.error(f"expected '{token}', found '{found}'")

    def match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        self.skip()
        m = pattern.match(self.text, self.pos)
        if m:
            self.pos = m.end()
        return m

    # -- values ---------------------------------------------------------------
    def lookup(self, name: str) -> Value:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise self.error(f"%{name} is used before it is defined")

    def define(self, name: str, value: Value) -> None:
        if name in self.scopes[-1]:
            raise self.error(f"%{name} is defined twice")
        self.scopes[-1][name] = value
        if not name.isdigit():
            value.name_hint = name

    def value_name(self) -> str:
        m = self.match(_VALUE)
        if not m:
            raise self.error("expected a %value")
        return m.group(1)

    # -- types ----------------------------------------------------------------
    def type(self) -> Type:
        self.skip()
        if self.accept("tensor<"):
            return self.tensor_type()
        if self.accept("column<"):
            kind, nullable, library = self.scalar(), False, ""
            while self.accept(","):
                if self.accept("nullable"):
                    nullable = True
                else:
                    library = self.string()
            self.expect(">")
            return ColumnType(kind, nullable, library)
        if self.accept("tuple<"):
            elements: list[Type] = []
            while not self.accept(">"):
                if elements:
                    self.expect(",")
                elements.append(self.type())
            return TupleType(tuple(elements))
        if self.accept("!unknown"):
            return UNKNOWN
        if self.accept("!opaque<"):
            name = self.string()
            self.expect(">")
            return OpaqueType(name)
        if self.accept("none"):
            return NONE
        return self.scalar()

    def scalar(self) -> ScalarType:
        m = self.match(_KIND)
        if not m:
            raise self.error("expected a type")
        return ScalarType(m.group(0))

    def tensor_type(self) -> TensorType:
        if self.accept("*x"):
            element = self.scalar()
            return TensorType(element, None, self.tensor_library())
        dims: list[Dim] = []
        while True:
            self.skip()
            if self.accept("?"):
                dims.append(None)
            elif self.peek('"'):
                dims.append(self.string())
            elif m := _NUMBER.match(self.text, self.pos):
                if not m.group(0).lstrip("-").isdigit():
                    raise self.error(f"a dimension must be an integer, not {m.group(0)}")
                self.pos = m.end()
                dims.append(int(m.group(0)))
            else:
                element = self.scalar()
                return TensorType(element, tuple(dims), self.tensor_library())
            self.expect("x")

    def tensor_library(self) -> str:
        library = self.string() if self.accept(",") else ""
        self.expect(">")
        return library

    # -- attributes -----------------------------------------------------------
    def string(self) -> str:
        m = self.match(_STRING)
        if not m:
            raise self.error("expected a string")
        try:
            return str(json.loads(m.group(0)))
        except ValueError as exc:
            raise self.error(f"bad string {m.group(0)}: {exc}") from None

    def attribute(self) -> Any:
        if m := self.match(_WORD):
            return self.word(m)
        if self.peek('"'):
            return self.string()
        if self.accept("["):
            items: list[Any] = []
            while not self.accept("]"):
                if items:
                    self.expect(",")
                items.append(self.attribute())
            return tuple(items)
        if self.peek("{"):
            return self.attributes()
        if m := self.match(_NUMBER):
            text = m.group(0)
            return float(text) if any(c in text for c in ".eE") else int(text)
        return self.type()

    def word(self, m: re.Match[str]) -> Any:
        if m.group(1) in _WORDS:
            return _WORDS[m.group(1)]
        bits = int(m.group(3), 16) if m.group(3) else 0x7FF8000000000000
        if bits & _SIGN_BIT or bits & _EXPONENT != _EXPONENT or bits == _EXPONENT:
            raise self.error(f"{m.group(3)} is not the bits of a NaN")
        bits |= _SIGN_BIT if m.group(2) else 0
        return struct.unpack("<d", struct.pack("<Q", bits))[0]

    def attributes(self) -> dict[str, Any]:
        self.expect("{")
        attrs: dict[str, Any] = {}
        while not self.accept("}"):
            if attrs:
                self.expect(",")
            key = self.string() if self.peek('"') else self.identifier()
            self.expect("=")
            attrs[key] = self.attribute()
        return attrs

    def identifier(self) -> str:
        m = self.match(_IDENT)
        if not m:
            raise self.error("expected a name")
        return m.group(0)

    # -- operations -----------------------------------------------------------
    def operation(self) -> Operation:
        if self.accept("builtin.module"):
            return self.module()
        if self.accept("func.func"):
            return self.func()
        defs: list[str] = []
        if self.peek("%"):
            defs.append(self.value_name())
            while self.accept(","):
                defs.append(self.value_name())
            self.expect("=")
        m = self.match(_OPNAME)
        if not m:
            raise self.error("expected an operation name")
        cls = self.registry.lookup(m.group(0))
        if cls is None:
            raise self.error(f"unknown operation '{m.group(0)}'")
        operands: list[Value] = []
        if self.peek("%"):
            operands.append(self.lookup(self.value_name()))
            while self.accept(","):
                operands.append(self.lookup(self.value_name()))
        attrs = self.attributes() if self.peek("{") else {}
        regions: list[Region] = []
        if self.accept("("):
            regions.append(self.region())
            while self.accept(","):
                regions.append(self.region())
            self.expect(")")
        self.expect(":")
        self.types_in_parens()
        self.expect("->")
        result_types = self.types_in_parens() if self.peek("(") else [self.type()]
        if len(result_types) != len(defs):
            raise self.error(f"{len(defs)} results named, {len(result_types)} typed")
        op = cls(operands, result_types, attrs, regions)
        for name, res in zip(defs, op.results, strict=True):
            self.define(name, res)
        return op

    def types_in_parens(self) -> list[Type]:
        self.expect("(")
        types: list[Type] = []
        while not self.accept(")"):
            if types:
                self.expect(",")
            types.append(self.type())
        return types

    def region(self) -> Region:
        self.expect("{")
        region = Region()
        while self.accept("^"):
            self.identifier()
            self.expect("(")
            names, types = [], []
            while not self.accept(")"):
                if names:
                    self.expect(",")
                names.append(self.value_name())
                self.expect(":")
                types.append(self.type())
            self.expect(":")
            block = region.add(Block(types))
            self.scopes.append({})
            for name, arg in zip(names, block.args, strict=True):
                self.define(name, arg)
            while not self.peek("^") and not self.peek("}"):
                block.append(self.operation())
            self.scopes.pop()
        self.expect("}")
        return region

    def module(self) -> Operation:
        attrs = self.attributes() if self.peek("{") and not self.is_body() else {}
        block = self.body(Block())
        return self.registry.ops["builtin.module"](attributes=attrs, regions=[Region([block])])

    def is_body(self) -> bool:
        save = self.pos
        self.expect("{")
        self.skip()
        body = self.text.startswith(("}", "func.func", "builtin.module", "%"), self.pos) or bool(
            _OPNAME.match(self.text, self.pos)
        )
        self.pos = save
        return body

    def body(self, block: Block) -> Block:
        self.expect("{")
        while not self.accept("}"):
            block.append(self.operation())
        return block

    def func(self) -> Operation:
        self.expect("@")
        sym = self.string() if self.peek('"') else self.identifier()
        self.expect("(")
        names, types = [], []
        while not self.accept(")"):
            if names:
                self.expect(",")
            names.append(self.value_name())
            self.expect(":")
            types.append(self.type())
        self.expect("->")
        results = self.types_in_parens()
        attrs = self.attributes() if self.peek("{") and not self.is_body() else {}
        block = Block(types)
        self.scopes.append({})
        for name, arg in zip(names, block.args, strict=True):
            self.define(name, arg)
        self.body(block)
        self.scopes.pop()
        all_attrs = {"sym_name": sym, "result_types": tuple(results), **attrs}
        return self.registry.ops["func.func"](attributes=all_attrs, regions=[Region([block])])


def parse_ir(text: str, registry: DialectRegistry) -> Operation:
    """One top-level operation from `text`; ops are looked up in `registry`."""
    parser = _Parser(text, registry)
    op = parser.operation()
    parser.skip()
    if parser.pos != len(text):
        raise parser.error("unexpected text after the operation")
    return op


__all__ = ["parse_ir"]
