"""Where the forward time of `torch_modules.py`'s model goes, and what no bit-exact
region can remove.

    python benchmarks/torch_modules_floor.py [--rounds 41] [--out DIR]

`_torch_gpt.py` ("ours": 4 layers x 128 wide, batch 2 x 64 tokens, one CPU thread,
eval, `no_grad`), run six ways, each answer compared with eager's bit for bit:

* eager: the model's Python;
* region: the model loaded with `ppy.load` (one ATen region for the whole forward),
  called as `model(idx)`;
* region entry: that region's C++ callable alone (its guard walk of the module tree
  and its body; no `Module.__call__`, no specializing dispatcher);
* C++ dispatched: the region body's at:: calls written out in a C++ loop, the
  parameters passed in (no guard walk): what the ATen dispatcher and the autograd
  kernels add stays;
* C++ direct: the same kernels in the same order called without the dispatcher: the
  structured CPU entry points (`at::cpu::addmm`, `at::cpu::native_layer_norm`,
  `at::cpu::gelu`, `at::cpu::add`, `at::cpu::index_select`, the CPU flash attention)
  and `at::native::` views, `linear` decomposed as torch's own composite does it
  (`_flatten_nd_linear`: one `addmm` of the flattened input; no bias: `mm`);
* per kernel kind, one forward's calls of that kind alone (`at::cpu::`, inputs of the
  forward's shapes), so their sum is what any bit-exact way must spend.

Times are CPU time of this thread, one block of `calls` calls per way per round, the
ways shuffled every round and each block preceded by one untimed call (the first call
after another model's pays for its weights coming back into the cache). Printed: the
best and the median block, each over eager's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch_modules as tm  # noqa: E402  (the benchmark this one explains)

#: per block, in this order: ln_1 (w, b), c_attn (w, b), c_proj (w, b), ln_2 (w, b),
#: mlp.c_fc (w, b), mlp.c_proj (w, b)
BLOCK_TENSORS = (
    "ln_1.weight",
    "ln_1.bias",
    "attn.c_attn.weight",
    "attn.c_attn.bias",
    "attn.c_proj.weight",
    "attn.c_proj.bias",
    "ln_2.weight",
    "ln_2.bias",
    "mlp.c_fc.weight",
    "mlp.c_fc.bias",
    "mlp.c_proj.weight",
    "mlp.c_proj.bias",
)

CXX = r"""
#include <torch/extension.h>
#include <ATen/CPUFunctions.h>
#include <ATen/NativeFunctions.h>

using at::Tensor;

namespace {

constexpr size_t kPer = 12;  // tensors per block (BLOCK_TENSORS)

// p: wte, wpe, kPer per block, ln_f (w, b). The at:: calls of the region's body.
Tensor dispatched(const Tensor& idx, const std::vector<Tensor>& p, int64_t heads) {
  const int64_t B = idx.size(0), T = idx.size(1), C = p[0].size(1), hs = C / heads;
  const size_t layers = (p.size() - 4) / kPer;
  Tensor x = at::add(at::embedding(p[0], idx), at::narrow(p[1], 0, 0, T));
  for (size_t l = 0; l < layers; ++l) {
    const Tensor* q = &p[2 + kPer * l];
    Tensor h = at::layer_norm(x, {C}, q[0], q[1], 1e-5);
    Tensor qkv = at::linear(h, q[2], q[3]);
    auto part = [&](int64_t i) {
      return at::transpose(at::narrow(qkv, 2, i * C, C).view({B, T, heads, hs}), 1, 2);
    };
    Tensor y = at::scaled_dot_product_attention(part(0), part(1), part(2), {}, 0.0, true);
    y = at::transpose(y, 1, 2).contiguous().view({B, T, C});
    x = at::add(x, at::linear(y, q[4], q[5]));
    h = at::layer_norm(x, {C}, q[6], q[7], 1e-5);
    x = at::add(x, at::linear(at::gelu(at::linear(h, q[8], q[9]), "tanh"), q[10], q[11]));
  }
  return at::linear(at::layer_norm(x, {C}, p[p.size() - 2], p[p.size() - 1], 1e-5), p[0]);
}

// torch's linear of a contiguous 3-D input: with a bias one addmm of the flattened
// input (_flatten_nd_linear), without one matmul's mm; views need no kernel.
Tensor linear(const Tensor& x, const Tensor& w, const Tensor* b) {
  const int64_t B = x.size(0), T = x.size(1);
  Tensor flat = at::native::view(x, {B * T, x.size(2)});
  Tensor out = b != nullptr ? at::cpu::addmm(*b, flat, at::native::t(w))
                            : at::cpu::mm(flat, at::native::t(w));
  return at::native::view(out, {B, T, out.size(1)});
}

Tensor layer_norm(const Tensor& x, const Tensor& w, const Tensor& b) {
  return std::get<0>(at::cpu::native_layer_norm(x, {x.size(-1)}, w, b, 1e-5));
}

Tensor direct(const Tensor& idx, const std::vector<Tensor>& p, int64_t heads) {
  const int64_t B = idx.size(0), T = idx.size(1), C = p[0].size(1), hs = C / heads;
  const size_t layers = (p.size() - 4) / kPer;
  Tensor e = at::cpu::index_select(p[0], 0, at::native::view(idx, {B * T}));
  Tensor x = at::cpu::add(at::native::view(e, {B, T, C}), at::native::slice(p[1], 0, 0, T, 1));
  for (size_t l = 0; l < layers; ++l) {
    const Tensor* q = &p[2 + kPer * l];
    Tensor qkv = linear(layer_norm(x, q[0], q[1]), q[2], &q[3]);
    auto part = [&](int64_t i) {
      Tensor s = at::native::slice(qkv, 2, i * C, (i + 1) * C, 1);
      return at::native::transpose(at::native::view(s, {B, T, heads, hs}), 1, 2);
    };
    Tensor y = std::get<0>(at::cpu::_scaled_dot_product_flash_attention_for_cpu(
        part(0), part(1), part(2), 0.0, true, {}, {}));
    y = at::native::view(at::native::transpose(y, 1, 2), {B, T, C});  // contiguous already
    x = at::cpu::add(x, linear(y, q[4], &q[5]));
    Tensor g = at::cpu::gelu(linear(layer_norm(x, q[6], q[7]), q[8], &q[9]), "tanh");
    x = at::cpu::add(x, linear(g, q[10], &q[11]));
  }
  return linear(layer_norm(x, p[p.size() - 2], p[p.size() - 1]), p[0], nullptr);
}

// One forward's calls of one kernel kind, on inputs of the forward's shapes.
void matmuls(const std::vector<Tensor>& xs, const std::vector<Tensor>& ws,
             const std::vector<std::optional<Tensor>>& bs) {
  for (size_t i = 0; i < xs.size(); ++i) {
    if (bs[i].has_value()) at::cpu::addmm(*bs[i], xs[i], at::native::t(ws[i]));
    else at::cpu::mm(xs[i], at::native::t(ws[i]));
  }
}

void gelus(const std::vector<Tensor>& xs) {
  for (const Tensor& x : xs) at::cpu::gelu(x, "tanh");
}

void layer_norms(const std::vector<Tensor>& xs, const Tensor& w, const Tensor& b) {
  for (const Tensor& x : xs) layer_norm(x, w, b);
}

void adds(const std::vector<Tensor>& xs) {
  for (const Tensor& x : xs) at::cpu::add(x, x);
}

void attentions(const std::vector<Tensor>& qkvs, int64_t heads) {
  for (const Tensor& qkv : qkvs) {
    const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3;
    auto part = [&](int64_t i) {
      return qkv.narrow(2, i * C, C).view({B, T, heads, C / heads}).transpose(1, 2);
    };
    at::cpu::_scaled_dot_product_flash_attention_for_cpu(part(0), part(1), part(2), 0.0, true,
                                                         {}, {});
  }
}

void embeddings(const Tensor& wte, const Tensor& idx) {
  at::cpu::index_select(wte, 0, idx.reshape({-1}));
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("dispatched", &dispatched);
  m.def("direct", &direct);
  m.def("matmuls", &matmuls);
  m.def("gelus", &gelus);
  m.def("layer_norms", &layer_norms);
  m.def("adds", &adds);
  m.def("attentions", &attentions);
  m.def("embeddings", &embeddings);
}
"""


def extension() -> Any:
    from torch.utils.cpp_extension import load_inline

    return load_inline("ppy_torch_modules_floor", CXX, extra_cflags=["-O2"])


def ordered_tensors(model: Any) -> list[Any]:
    """The model's tensors in the order the C++ ways take them."""
    params = dict(model.named_parameters())
    names = ["wte.weight", "wpe.weight"]
    names += [f"h.{i}.{n}" for i in range(tm.LAYERS) for n in BLOCK_TENSORS]
    names += ["ln_f.weight", "ln_f.bias"]
    return [params[n] for n in names]


def kernel_ways(ext: Any, model: Any, idx: Any) -> dict[str, Callable[[], Any]]:
    """Per kernel kind, one forward's calls of it (random activations, the model's
    weights and shapes)."""
    import torch

    rows, width = tm.BATCH * tm.TOKENS, tm.WIDTH
    gen = torch.Generator().manual_seed(2)

    def act(*shape: int) -> Any:
        return torch.randn(*shape, generator=gen)

    xs, ws, bs = [], [], []
    for block in model.h:
        for lin, fan_in in (
            (block.attn.c_attn, width),
            (block.attn.c_proj, width),
            (block.mlp.c_fc, width),
            (block.mlp.c_proj, 4 * width),
        ):
            xs.append(act(rows, fan_in))
            ws.append(lin.weight)
            bs.append(lin.bias)
    xs.append(act(rows, width))
    ws.append(model.lm_head.weight)
    bs.append(None)
    gelu_in = [act(rows, 4 * width) for _ in model.h]
    norm_in = [act(tm.BATCH, tm.TOKENS, width) for _ in range(2 * tm.LAYERS + 1)]
    qkv_in = [act(tm.BATCH, tm.TOKENS, 3 * width) for _ in model.h]
    ln = model.ln_f
    return {
        "kernels: addmm/mm (17)": lambda: ext.matmuls(xs, ws, bs),
        "kernels: gelu (4)": lambda: ext.gelus(gelu_in),
        "kernels: flash attention (4)": lambda: ext.attentions(qkv_in, tm.HEADS),
        "kernels: layer_norm (9)": lambda: ext.layer_norms(norm_in, ln.weight, ln.bias),
        "kernels: add (9)": lambda: ext.adds(norm_in),
        "kernels: embedding (1)": lambda: ext.embeddings(model.wte.weight, idx),
    }


def region_entry(model: Any) -> Callable[..., Any]:
    """The C++ callable of the region `model.forward` runs as."""
    state = type(model).forward.__ppy_specializations__
    method = next(
        f
        for f in state.table.values()
        if f is not state.generic and getattr(f, "__ppy_region__", False)
    )
    cells = dict(zip(method.__code__.co_freevars, method.__closure__ or (), strict=True))
    return cells["region"].cell_contents  # runtime.make_method_region's C++ region


def timed(ways: dict[str, Callable[[], Any]], rounds: int, calls: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        order = list(ways.items())
        random.shuffle(order)
        for name, run in order:
            run()  # untimed: brings this way's weights back into the cache
            start = time.thread_time()
            for _ in range(calls):
                run()
            times[name].append((time.thread_time() - start) / calls * 1e3)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    import torch

    import ppy

    torch.set_num_threads(1)
    ext = extension()
    with tempfile.TemporaryDirectory() as tmp:
        paths = tm.project(Path(tmp) / "proj")
        plain = tm.load_plain(paths["ours"], "plain_ours")
        fast_mod = ppy.load(paths["ours"], "bench_ours")
        with contextlib.redirect_stdout(io.StringIO()):
            eager, fast = (tm.build(m, "ours").eval() for m in (plain, fast_mod))
        fast.load_state_dict(eager.state_dict())
        idx = torch.randint(0, tm.VOCAB, (tm.BATCH, tm.TOKENS), generator=torch.Generator())
        with torch.no_grad():
            for _ in range(3):
                fast(idx)  # the first calls specialize and build the region
            entry = region_entry(fast)
            tensors = ordered_tensors(fast)
            ways: dict[str, Callable[[], Any]] = {
                "eager": lambda: eager(idx),
                "region (model(idx))": lambda: fast(idx),
                "region entry (guard walk + body)": lambda: entry(fast, idx),
                "C++ dispatched (region body's at:: calls)": lambda: ext.dispatched(
                    idx, tensors, tm.HEADS
                ),
                "C++ direct (at::cpu:: kernels, at::native:: views)": lambda: ext.direct(
                    idx, tensors, tm.HEADS
                ),
            }
            want = eager(idx)
            for name, run in list(ways.items())[1:]:
                if not tm.bits_equal(run(), want):
                    raise SystemExit(f"{name}: not bit-equal to eager")
            ways.update(kernel_ways(ext, fast, idx))
            times = timed(ways, args.rounds, args.calls)
    best = min(times["eager"])
    middle = statistics.median(times["eager"])
    kinds = [n for n in times if n.startswith("kernels:")]
    lines = [
        f"{tm.LAYERS} layers x {tm.WIDTH} wide, batch {tm.BATCH} x {tm.TOKENS} tokens, "
        f"one CPU thread, torch {torch.__version__}; {args.rounds} rounds of {args.calls} "
        "calls, shuffled\n",
        "| way | best ms (x eager) | median ms (x eager) |",
        "| --- | --- | --- |",
    ]
    for name, values in times.items():
        low, mid = min(values), statistics.median(values)
        lines.append(
            f"| {name} | {low:.3f} ({low / best:.3f}x) | {mid:.3f} ({mid / middle:.3f}x) |"
        )
    low = sum(min(times[n]) for n in kinds)
    mid = sum(statistics.median(times[n]) for n in kinds)
    lines.append(
        f"| all kernels above | {low:.3f} ({low / best:.3f}x) | {mid:.3f} ({mid / middle:.3f}x) |"
    )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "torch_modules_floor.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
