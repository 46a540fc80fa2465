"""`CudaKernel` -> LLVM IR text for the NVPTX target (no LLVM needed here).

Rules that make the bits torch's (see research/cuda.md): user arithmetic carries no
`contract`/`fast` flag, so LLVM emits `mul.rn`/`add.rn` and ptxas cannot fuse them;
division and sqrt are IEEE (`div.rn`, `sqrt.rn`), nothing flushes to zero; a torch
op that nvcc fused inside itself is fused here the same way (`llvm.fma` for
`add(alpha=s)`), `t / python_scalar` is `t * (1/s)`; float32 kernels convert each
Python scalar to float32 first, as torch's opmath does. One thread per element.
"""

from __future__ import annotations

import struct
from typing import Final

from ppy_cuda._errors import cuda_error
from ppy_cuda.kernel import LIBDEVICE_UNARY, CudaKernel, Node, check

TRIPLE: Final = "nvptx64-nvidia-cuda"
DATALAYOUT: Final = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
_T: Final = {"f32": "float", "f64": "double"}
_CMP: Final = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
_ARITH: Final = {"add": "fadd", "sub": "fsub", "mul": "fmul", "div": "fdiv"}
_INTRINSIC: Final = {
    "sqrt": "sqrt",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "abs": "fabs",
}


def kernel_name(kernel: CudaKernel) -> str:
    """The PTX entry's name: stable, from the kernel's key."""
    return "ppy_" + kernel.key()[:16]


def literal(value: float, dtype: str) -> str:
    """An exact LLVM constant: float32 values are rounded to float32 first (torch's
    opmath cast) and written as the double hex LLVM wants."""
    if dtype == "f32":
        value = struct.unpack("<f", struct.pack("<f", value))[0]
    return "0x{:016X}".format(struct.unpack("<Q", struct.pack("<d", value))[0])


class _Emitter:
    def __init__(self, kernel: CudaKernel) -> None:
        self.k = kernel
        self.t = _T[kernel.dtype]
        self.lines: list[str] = []
        self.declares: set[str] = set()
        self.names: dict[int, str] = {}
        self.counter = 0

    def tmp(self) -> str:
        self.counter += 1
        return f"%v{self.counter}"

    def emit(self, text: str) -> str:
        name = self.tmp()
        self.lines.append(f"  {name} = {text}")
        return name

    def call(self, fn: str, ret: str, *args: str) -> str:
        sig = ", ".join(a.split(" ")[0] for a in args)
        self.declares.add(f"declare {ret} @{fn}({sig})")
        return self.emit(f"call {ret} @{fn}({', '.join(args)})")

    def value(self, vid: int, *, want: str = "num") -> str:
        """The SSA name of `vid`, checking it is a number (or an i1 where `want`)."""
        if self.k.is_bool(vid) != (want == "bool"):
            raise cuda_error("E2030", "a comparison used as a number, or a number as a condition")
        return self.names[vid]

    def node(self, node: Node) -> str:
        t, op = self.t, node.op
        if op == "const":
            return literal(float(node.attr("value")), self.k.dtype)  # type: ignore[arg-type]
        if self.k.is_scalar(len(self.k.leaves) + self.k.nodes.index(node)):
            raise cuda_error("E2030", f"{op} on Python scalars alone (Python computes it)")
        a = [
            self.value(x, want="bool" if op == "select" and i == 0 else "num")
            for i, x in enumerate(node.args)
        ]
        if op in ("add", "sub") and node.attr("alpha") not in (None, 1.0, -1.0):
            # torch's `a + alpha*b` in one kernel: nvcc contracts it to an FMA
            alpha = float(node.attr("alpha")) * (1.0 if op == "add" else -1.0)  # type: ignore[arg-type]
            return self.call(
                f"llvm.fma.{self.suffix}",
                t,
                f"{t} {literal(alpha, self.k.dtype)}",
                f"{t} {a[1]}",
                f"{t} {a[0]}",
            )
        if op in ("add", "sub") and node.attr("alpha") == -1.0:
            op = "sub" if op == "add" else "add"
        if op == "div" and self.k.is_scalar(node.args[1]):
            # torch: `t / python_scalar` is `t * (1/s)`, the reciprocal rounded once
            recip = self.emit(f"fdiv {t} {literal(1.0, self.k.dtype)}, {a[1]}")
            return self.emit(f"fmul {t} {a[0]}, {recip}")
        if op in _ARITH:
            return self.emit(f"{_ARITH[op]} {t} {a[0]}, {a[1]}")
        if op in ("maximum", "minimum"):
            return self.minmax(op, a[0], a[1])
        if op == "compare":
            return self.emit(f"fcmp {_CMP[str(node.attr('pred'))]} {t} {a[0]}, {a[1]}")
        if op == "select":
            return self.emit(f"select i1 {a[0]}, {t} {a[1]}, {t} {a[2]}")
        if op == "addcmul":  # torch: a + value * (b * c), the outer pair an FMA
            value = literal(float(node.attr("value", 1.0)), self.k.dtype)  # type: ignore[arg-type]
            prod = self.emit(f"fmul {t} {a[1]}, {a[2]}")
            return self.fma(value, prod, a[0])
        if op == "lerp":
            return self.lerp(a[0], a[1], a[2])
        return self.unary(str(node.attr("fn")), a[0])

    def fma(self, x: str, y: str, z: str) -> str:
        """x*y + z rounded once: only where torch's own kernel was contracted by nvcc."""
        t = self.t
        return self.call(f"llvm.fma.{self.suffix}", t, f"{t} {x}", f"{t} {y}", f"{t} {z}")

    def lerp(self, start: str, end: str, weight: str) -> str:
        # torch: |w| < 0.5 ? s + w*(e-s) : e - (e-s)*(1-w), each a contracted FMA
        t, one = self.t, literal(1.0, self.k.dtype)
        diff = self.emit(f"fsub {t} {end}, {start}")
        size = self.call(f"llvm.fabs.{self.suffix}", t, f"{t} {weight}")
        small = self.emit(f"fcmp olt {t} {size}, {literal(0.5, self.k.dtype)}")
        near = self.fma(weight, diff, start)
        rest = self.emit(f"fsub {t} {one}, {weight}")
        far = self.fma(self.emit(f"fneg {t} {diff}"), rest, end)
        return self.emit(f"select i1 {small}, {t} {near}, {t} {far}")

    @property
    def suffix(self) -> str:
        return "f32" if self.k.dtype == "f32" else "f64"

    def minmax(self, op: str, x: str, y: str) -> str:
        # torch: a NaN operand is returned as is, else ::fmax/::fmin (max.f32/min.f32)
        t = self.t
        fn = "maxnum" if op == "maximum" else "minnum"
        plain = self.call(f"llvm.{fn}.{self.suffix}", t, f"{t} {x}", f"{t} {y}")
        y_nan = self.emit(f"fcmp uno {t} {y}, {y}")
        pick_y = self.emit(f"select i1 {y_nan}, {t} {y}, {t} {plain}")
        x_nan = self.emit(f"fcmp uno {t} {x}, {x}")
        return self.emit(f"select i1 {x_nan}, {t} {x}, {t} {pick_y}")

    def unary(self, fn: str, x: str) -> str:
        t = self.t
        if fn == "neg":
            return self.emit(f"fneg {t} {x}")
        if fn == "square":
            return self.emit(f"fmul {t} {x}, {x}")
        if fn == "reciprocal":
            return self.emit(f"fdiv {t} {literal(1.0, self.k.dtype)}, {x}")
        if fn in _INTRINSIC:
            return self.call(f"llvm.{_INTRINSIC[fn]}.{self.suffix}", t, f"{t} {x}")
        name = "__nv_" + LIBDEVICE_UNARY[fn] + ("f" if self.k.dtype == "f32" else "")
        return self.call(name, t, f"{t} {x}")


def kernel_ir(kernel: CudaKernel, *, proven_only: bool = True) -> str:
    """The kernel as LLVM IR text: ``void NAME(i64 n, ptr out, leaves...)``, a tensor
    leaf a `ptr`, a scalar leaf a `double`. `out` is a fresh buffer (torch.empty_like):
    it aliases no input, so every pointer is `noalias`."""
    check(kernel, proven_only=proven_only)
    e = _Emitter(kernel)
    t = e.t
    params = ["i64 %n", "ptr noalias writeonly %out"]
    body: list[str] = []
    for k, kind in enumerate(kernel.leaves):
        params.append(f"ptr noalias readonly %in{k}" if kind == "a" else f"double %s{k}")
    for sreg in ("ctaid", "ntid", "tid"):
        e.declares.add(f"declare i32 @llvm.nvvm.read.ptx.sreg.{sreg}.x()")
    head = [
        "entry:",
        "  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()",
        "  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()",
        "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
        "  %c64 = zext i32 %ctaid to i64",
        "  %n64 = zext i32 %ntid to i64",
        "  %t64 = zext i32 %tid to i64",
        "  %base = mul i64 %c64, %n64",
        "  %i = add i64 %base, %t64",
        "  %inside = icmp slt i64 %i, %n",
        "  br i1 %inside, label %body, label %done",
        "body:",
    ]
    for k, kind in enumerate(kernel.leaves):
        if kind == "a":
            e.lines.append(f"  %p{k} = getelementptr inbounds {t}, ptr %in{k}, i64 %i")
            e.lines.append(f"  %x{k} = load {t}, ptr %p{k}, align {4 if t == 'float' else 8}")
            e.names[k] = f"%x{k}"
        elif kernel.dtype == "f32":
            e.lines.append(f"  %x{k} = fptrunc double %s{k} to float")
            e.names[k] = f"%x{k}"
        else:
            e.names[k] = f"%s{k}"
    for j, node in enumerate(kernel.nodes):
        e.names[len(kernel.leaves) + j] = e.node(node)
    result = e.names[kernel.result]
    if kernel.is_bool(kernel.result):
        e.lines.append(f"  %r8 = zext i1 {result} to i8")
        e.lines.append("  %q = getelementptr inbounds i8, ptr %out, i64 %i")
        e.lines.append("  store i8 %r8, ptr %q, align 1")
    else:
        if kernel.is_scalar(kernel.result):
            raise cuda_error("E2030", "a kernel whose result reads no tensor")
        e.lines.append(f"  %q = getelementptr inbounds {t}, ptr %out, i64 %i")
        e.lines.append(f"  store {t} {result}, ptr %q, align {4 if t == 'float' else 8}")
    body = [*head, *e.lines, "  br label %done", "done:", "  ret void"]
    name = kernel_name(kernel)
    return "\n".join(
        [
            f'target triple = "{TRIPLE}"',
            f'target datalayout = "{DATALAYOUT}"',
            *sorted(e.declares),
            f"define void @{name}({', '.join(params)}) {{",
            *body,
            "}",
            "!nvvm.annotations = !{!0}",
            f'!0 = !{{ptr @{name}, !"kernel", i32 1}}',
            "!llvm.module.flags = !{!1}",
            '!1 = !{i32 4, !"nvvm-reflect-ftz", i32 0}',
            "",
        ]
    )


__all__ = ["DATALAYOUT", "TRIPLE", "kernel_ir", "kernel_name", "literal"]
