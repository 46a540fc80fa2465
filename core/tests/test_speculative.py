"""Speculative sites, in the core alone: made-up array plugins (no NumPy), the site
finder run on parsed modules. An unannotated tree becomes a site only where a plugin
offers a `speculative_array`, only with enough operations, only in Python's order."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping

import pytest

from ppy_core.compiler.frontend.oracle import Oracle
from ppy_core.compiler.frontend.sites import Findings, SiteFinder
from ppy_core.compiler.frontend.speculate import MIN_OPERATIONS
from ppy_core.compiler.frontend.transform import rewrite_module
from ppy_core.compiler.frontend.views import index_record
from ppy_core.interface.hooks import HookCaller
from ppy_core.interface.plugin import Converge, ModuleContext, OperatorContext, Plugin
from ppy_core.ir.types import F64, UNKNOWN, ScalarType, TensorType, Type
from ppy_core.runtime import adapter as adapters
from ppy_core.runtime.adapter import RuntimeAdapter

_BINARY = {"Add": "tensor.add", "Sub": "tensor.sub", "Mult": "tensor.mul", "Div": "tensor.div"}


class ArrayPlugin(Plugin):
    """Arrays of library `library`: arithmetic with numbers converges; Unknown
    operands converge only next to a typed array (as NumPy's plugin does)."""

    name = "vecs"
    modules = ("vecs",)
    library = "vecs"
    speculate = True

    @property
    def array(self) -> TensorType:
        return TensorType(F64, None, self.library)

    def external_types(self) -> Mapping[str, Type]:
        return {f"{self.library}.Array": self.array}

    def operator(self, ctx: OperatorContext) -> Converge | None:
        ok = all(t == self.array or t is UNKNOWN or isinstance(t, ScalarType) for t in ctx.operands)
        if ctx.op in _BINARY and self.array in ctx.operands and ok:
            return Converge(_BINARY[ctx.op], self.array)
        return None

    def speculative_array(self) -> Type | None:
        return self.array if self.speculate else None


class OtherPlugin(ArrayPlugin):
    name = "mats"
    modules = ("mats",)
    library = "mats"


class Shy(ArrayPlugin):
    speculate = False


class ShyMats(OtherPlugin):
    speculate = False


def find(source: str, *plugins: Plugin) -> Findings:
    tree = ast.parse(textwrap.dedent(source))
    imports = {
        (a.asname or a.name): a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import)
        for a in n.names
    }
    oracle = Oracle(HookCaller(plugins))
    return SiteFinder(oracle, ModuleContext("m.py", "m", imports), 2).run(tree)


def texts(found: Findings) -> dict[str, tuple[str, ...]]:
    """Each site's text -> the texts of its assumed leaves."""
    return {
        ast.unparse(s.node): tuple(ast.unparse(s.leaves[i]) for i in s.assumed)
        for s in found.expr_sites
    }


def test_the_unannotated_function_is_one_speculative_site() -> None:
    found = find(
        """
        import vecs
        def f(a, b, c):
            return 2.0*a + 3.0*b*c - a/b
        """,
        ArrayPlugin(),
    )
    assert texts(found) == {"2.0 * a + 3.0 * b * c - a / b": ("a", "b", "c")}
    (site,) = found.expr_sites
    assert site.leaf_types == [ArrayPlugin().array] * 3


def test_no_plugin_offering_an_array_means_no_speculation() -> None:
    source = """
        import vecs
        def f(a, b, c):
            return 2.0*a + 3.0*b*c - a/b
        """
    assert texts(find(source, Shy())) == {}
    assert texts(find(source)) == {}  # a module importing no array library


def test_small_trees_and_scalars_are_not_speculated() -> None:
    assert MIN_OPERATIONS == 2
    found = find(
        """
        import vecs
        import math
        def f(a, b, xs, r):
            s = a + b                      # one operation: nothing to fuse
            t = 2.0 * 3.0 + 1.0            # literals only
            for i in range(10):
                s = i * i + 1              # a loop counter is an int
            n = len(xs)
            u = n * 2.0 + n                # from a builtin call
            v = len(xs) * 2.0 + 1.0
            w = math.pi * r * r            # another module's attribute is no array
            return a * b + 1.0             # two operations: speculated
        """,
        ArrayPlugin(),
    )
    assert texts(found) == {"a * b + 1.0": ("a", "b")}


def test_a_call_after_the_first_operation_keeps_the_tree_python() -> None:
    # Python runs `a * 2.0` before calling g: on the fallback path an operator of an
    # unknown object may raise or print, so g must not run first.
    found = find(
        """
        import vecs
        def f(a, g, h, y):
            p = a * 2.0 + g(y)
            q = g(a) + h(y) * 2.0          # both calls come before any operation
            return p, q
        """,
        ArrayPlugin(),
    )
    assert texts(found) == {"g(a) + h(y) * 2.0": ("g(a)", "h(y)")}


def test_basic_views_of_a_name_read_before_may_follow_an_operation() -> None:
    # A stencil reads shifted views of one array: once `A[1:-1, 1:-1]` succeeded, another
    # slice of A with as many literal slices has no effect and cannot fail; anything
    # else after the first operation (an integer index, a computed bound, another name's
    # first view, a different arity) keeps the tree Python.
    found = find(
        """
        import vecs
        def f(A, B, i, n):
            s = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[2:, 1:-1] + A[:-2, ::2])
            t = A[1:-1] + A[:-2] + A[i]
            u = A[1:-1] + A[:-2] + A[:n]
            v = A[1:-1] + A[:-2] + B[1:]
            w = A[1:-1] + A[:-2] + A[1:, 1:]
            d = (A[:, None] - A[None, :]) * (A[:, None] - A[None, :])
            return s, t, u, v, w, d
        """,
        ArrayPlugin(),
    )
    stencil = ("A[1:-1, 1:-1]", "A[1:-1, :-2]", "A[2:, 1:-1]", "A[:-2, ::2]")
    outer = ("A[:, None]", "A[None, :]", "A[:, None]", "A[None, :]")
    assert texts(found) == {
        "0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[2:, 1:-1] + A[:-2, ::2])": stencil,
        "(A[:, None] - A[None, :]) * (A[:, None] - A[None, :])": outer,
    }


def test_locals_and_module_names_from_unknown_calls_are_assumed() -> None:
    found = find(
        """
        import vecs
        A = load()
        def f(n):
            x = make(n)
            return x * x + 2.0 * A
        """,
        ArrayPlugin(),
    )
    assert texts(found) == {"x * x + 2.0 * A": ("x", "A")}


def test_the_library_the_function_names_is_the_one_assumed() -> None:
    source = """
        import vecs
        import mats
        def f(a, b):
            return 2.0 * a + b * b
        def g(a, b):
            x = vecs.Array
            return 2.0 * a + b * b
        def h(a, b):
            x = mats.Array
            return 2.0 * a + b * b
        """
    found = find(source, ArrayPlugin(), OtherPlugin())
    libraries = {s.function: getattr(s.leaf_types[0], "library", "") for s in found.expr_sites}
    assert libraries == {"g": "vecs", "h": "mats"}
    assert any(
        r.function == "f" and "mats and vecs could each be meant" in r.message
        for r in found.remarks
    )
    # only one plugin offers an array: a function naming neither takes it
    only = find(source, ArrayPlugin(), ShyMats())
    assert {s.function for s in only.expr_sites} == {"f", "g"}


class ViewsAdapter(RuntimeAdapter):
    """A runtime of `vecs` that takes basic views itself (`takes_views`)."""

    name = "vecs"
    takes_views = True


@pytest.fixture
def views_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(adapters._adapters, "vecs", ViewsAdapter())


def test_views_of_steady_names_are_passed_by_name(views_taken: None) -> None:
    # `y[:, None]` comes after two operations: the call passes `y`, the runtime takes
    # the view, the fallback evaluates it where Python does; `x[:, None]` twice is one leaf
    source = """
        import vecs
        def f(x, y):
            w = make()
            d = (x[:, None] - x[None, :]) * (x[:, None] - x[None, :]) + (y[:, None] - y[None, :])
            e = (x[1:] - x[:-1]) * 2.0 + w[1:]
            return d, e
        """
    found = find(source, ArrayPlugin())
    d, e = found.expr_sites
    assert [ast.unparse(a) for a in d.args] == ["x", "y"]
    assert [ast.unparse(leaf) for leaf in d.leaves] == [
        "x[:, None]",
        "x[None, :]",
        "y[:, None]",
        "y[None, :]",
    ]
    assert [arg for arg, _view in d.sources] == [0, 0, 1, 1]
    assert [ast.unparse(a) for a in e.args] == ["x", "w"]  # w: bound on an earlier line
    tree = ast.parse(textwrap.dedent(source))
    found = SiteFinder(
        Oracle(HookCaller([ArrayPlugin()])), ModuleContext("m.py", "m", {"vecs": "vecs"}), 2
    ).run(tree)
    text = ast.unparse(rewrite_module(tree, list(enumerate(found.expr_sites)), []))
    assert "d = __ppy_site_0(x, y)" in text
    assert (
        "lambda __ppy_0, __ppy_1: (__ppy_0[:, None] - __ppy_0[None, :]) * "
        "(__ppy_0[:, None] - __ppy_0[None, :]) + (__ppy_1[:, None] - __ppy_1[None, :])"
    ) in text


def test_views_of_names_that_may_change_keep_pythons_order(views_taken: None) -> None:
    # after an operation, a first view of a name that may be unbound, is global, is
    # deleted (`del`, `except ... as`) or rebound from a nested function, or beside a
    # call leaf, stays Python;
    # `p`, bound on an earlier line and left alone, is passed by name
    source = """
        import vecs
        G = load()
        H = load()
        def f(x, c, h, v):
            if c:
                y = make()
            a = (x[1:] - x[:-1]) * 2.0 + y[1:]
            b = (x[1:] - x[:-1]) * 2.0 + G[1:]
            z = make()
            e = h(x) * (x[1:] - x[:-1]) + z[1:]
            k = make()
            def m():
                nonlocal k
                k = None
            g = (x[1:] - x[:-1]) * 2.0 + k[1:]
            q = make()
            r = (x[1:] - x[:-1]) * 2.0 + q[1:]
            del q
            try:
                t = make()
            except ValueError as v:
                pass
            u = (x[1:] - x[:-1]) * 2.0 + v[1:]
            p = make()
            s = (x[1:] - x[:-1]) * 3.0 + p[1:]
            return a, b, e, g, r, s, u
        M = (G[1:] - G[:-1]) * 2.0 + H[1:]
        """
    assert texts(find(source, ArrayPlugin())) == {
        "(x[1:] - x[:-1]) * 3.0 + p[1:]": ("x[1:]", "x[:-1]", "p[1:]")
    }


def test_a_name_bound_earlier_in_a_loop_body_is_steady_there(views_taken: None) -> None:
    # `un = make()` at the top of a loop body is bound for the body's later lines (every
    # iteration runs it first): its views are passed by name. Not before it in the body
    # (the previous iteration's, or unbound), not after the loop, not in a sibling branch,
    # nor on the assignment's own line
    source = """
        import vecs
        def f(x, n, c):
            k = 0
            while k < n:
                a = (x[1:] - x[:-1]) * 2.0 + un[1:]
                un = make()
                if c:
                    w = make()
                else:
                    b = (x[1:] - x[:-1]) * 4.0 + w[1:]
                for j in range(n):
                    d = (x[1:] - x[:-1]) * 3.0 + un[1:]
                k += 1
            e = (x[1:] - x[:-1]) * 5.0 + un[1:]
            v = make(); g = (x[1:] - x[:-1]) * 6.0 + v[1:]
            return a, b, d, e, g
        """
    found = find(source, ArrayPlugin())
    assert texts(found) == {"(x[1:] - x[:-1]) * 3.0 + un[1:]": ("x[1:]", "x[:-1]", "un[1:]")}
    (site,) = found.expr_sites
    assert [ast.unparse(a) for a in site.args] == ["x", "un"]


def test_column_views_with_integer_literals_are_passed_by_name(views_taken: None) -> None:
    # `u[1:-1, 0]` (an integer beside a slice) is a view the runtime takes, failing over
    # to Python where the integer is out of range; `u[1, 2]` is an element, `u[1:-1, i]`
    # no literal: read after an operation, those keep Python's order (no site)
    source = """
        import vecs
        def f(b, u, i):
            b[1:-1, -1] = (u[1:-1, 0] - u[1:-1, -2]) * 2.0 + u[2:, -1]
            c = (u[1:-1, 0] - u[1:-1, -2]) * 2.0 + u[1, 2]
            d = (u[1:-1, 0] - u[1:-1, -2]) * 2.0 + u[1:-1, i]
            return c, d
        """
    found = find(source, ArrayPlugin())
    (site,) = found.expr_sites
    assert ast.unparse(site.node) == "(u[1:-1, 0] - u[1:-1, -2]) * 2.0 + u[2:, -1]"
    assert [ast.unparse(a) for a in site.args] == ["u"]
    assert [index_record(view) for _arg, view in site.sources if view is not None] == [
        [[1, -1, None], 0],
        [[1, -1, None], -2],
        [[2, None, None], -1],
    ]
