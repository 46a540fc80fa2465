""" "Is this name bound once?" has one count (frontend/bound.py), read by
`single_assignments` (a local's or a module name's type) and by the site finder's
parameters. Each kind of binding counts: the counts the front end kept before
(one per question) missed some (`except ... as`, `match` captures, an import or a
`def` of a name a function assigns), and counted a nested lambda's parameter as a
binding of the enclosing function's name (no core plugin needed)."""

from __future__ import annotations

import ast
import textwrap

from ppy_core.compiler.frontend.bound import binding_counts
from ppy_core.compiler.frontend.rebinding import bindings
from ppy_core.compiler.frontend.typer import single_assignments


def _func(source: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_every_kind_of_binding_counts() -> None:
    func = _func(
        """
        def f(a, *rest, k=1, **kw):
            b = 1
            for c in a: pass
            with a as d: pass
            if (e := 2): pass
            del b
            import g
            from h import i as j
            def m(): pass
            class n: pass
            try: pass
            except E as o: pass
            match a:
                case [p, *q]: pass
                case {"x": 1, **r}: pass
            global s
            u = lambda a: a
            return [v for v in a]
        """
    )
    counts = binding_counts(func)
    once = {"a", "rest", "k", "kw", "c", "d", "e", "g", "j", "m", "n", "o", "p", "q", "r", "u", "v"}
    assert {name for name, n in counts.items() if n == 1} == once
    assert counts["a"] == 1  # the lambda's parameter names the lambda's own local
    assert counts["b"] == 2  # assigned and deleted
    assert counts["s"] == 2  # global: bound elsewhere too, never once
    assert counts["f"] == 0  # the scope's own name is its enclosing scope's


def test_single_assignments_reads_the_count() -> None:
    func = _func(
        """
        def f(x):
            a = x * 2
            b = x + 1
            c = x - 1
            d = a
            try:
                pass
            except ValueError as b:
                pass
            import c
            g = lambda d: d
            return a
        """
    )
    # `b` is also bound by except, `c` by an import; the lambda's `d` is its own
    assert sorted(single_assignments(func)) == ["a", "d", "g"]


def test_a_module_name_bound_twice_is_not_bound_once() -> None:
    tree = ast.parse(
        textwrap.dedent(
            """
            import numpy as np
            n = 100
            a = np.ones(n)
            w = np.zeros(n)
            def f(n):
                return n
            def w():
                pass
            """
        )
    )
    # `n` is f's parameter too (f's own local, no binding of the module's name);
    # `w` is also a function of the module
    assert sorted(single_assignments(tree)) == ["a", "n"]


def test_rebinding_reads_the_same_count() -> None:
    func = _func(
        """
        def f(u, v):
            w = v
            for _ in range(3):
                u = u * 0.5 + v
                w += v
            x = v
            def g():
                nonlocal x
                x = 1.0
            try:
                y = v
            except ValueError as y:
                pass
            return u
        """
    )
    # every binding of u and w is plain; x is rebound by a closure, y by `except`
    assert sorted(bindings(func)) == ["u", "w"]
