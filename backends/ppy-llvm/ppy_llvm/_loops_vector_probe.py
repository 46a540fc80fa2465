"""Typed loops' array statements: the exported probe of their NaN rule.

`ppy_loops_probe_vector_<op>` runs one NumPy ufunc call the way the statements run
every operation (`_loops_vector`'s `_rule` and `_binary`, on the host emitter), so
the runtime adapter can prove it against NumPy itself per build
(ppy_numpy._runtime.vector); this backend never imports that adapter.
"""

from __future__ import annotations

from typing import Any

OPS = ("add", "sub", "mul", "truediv")


PROBE = "ppy_loops_probe_vector_"


def probe_functions(host: Any) -> None:
    """Once per module: the exported `void ppy_loops_probe_vector_<op>(i8 *out, so,
    i8 *x, sx, i8 *y, sy, n, i64 inplace, i64 *flags)`, one NumPy call
    `out[e] = x[e] op y[e]` (byte strides, 0 a broadcast scalar; `inplace`: out is x)
    through the very rule and code the statements run: the adapter proves it against
    NumPy (ppy_numpy._runtime.vector)."""
    ir, module = host.ir, host.module
    if PROBE + "add" in module.globals:
        return
    i64, i8p = host.i64, ir.IntType(8).as_pointer()
    fnty = ir.FunctionType(
        ir.VoidType(), [i8p, i64, i8p, i64, i8p, i64, i64, i64, i64.as_pointer()]
    )
    saved = host.b, host.flags, host.fn
    try:
        for name in OPS:
            _probe(host, name, ir.Function(module, fnty, name=PROBE + name))
    finally:
        host.b, host.flags, host.fn = saved


def _probe(host: Any, name: str, fn: Any) -> None:
    i64, f64p = host.i64, host.f64.as_pointer()
    host.fn, host.b = fn, host.ir.IRBuilder(fn.append_basic_block("entry"))
    out, so, x, sx, y, sy, n, inplace, host.flags = fn.args
    b_ = host.b
    flat = host._rule(name, n, sx, sy, so, inplace=False)
    inner = host._rule(name, n, sx, sy, sx, inplace=True)
    mine = b_.icmp_signed("!=", inplace, i64(0))
    rule = (b_.select(mine, inner[0], flat[0]), b_.select(mine, inner[1], flat[1]))
    stride = b_.select(mine, sx, so)
    target = b_.select(mine, x, out)

    def one(e: Any) -> None:
        a = b_.load(b_.bitcast(b_.gep(x, [b_.mul(e, sx)]), f64p))
        c = b_.load(b_.bitcast(b_.gep(y, [b_.mul(e, sy)]), f64p))
        r = host._binary(name, rule, a, c, e)
        b_.store(r, b_.bitcast(b_.gep(target, [b_.mul(e, stride)]), f64p))

    host._count(n, one)
    b_.ret_void()


__all__ = ["OPS", "PROBE", "probe_functions"]
