"""nn.Module models as people write them: eager vs PPy (`ppy.load`) vs torch.compile.

    python benchmarks/torch_modules.py [--rounds 7] [--out DIR]

Two GPT-2-style models of 4 layers, 128 wide, at batch 2 x 64 tokens, one CPU thread:
`_torch_gpt.py` (ours: one region for the whole forward) and Karpathy's nanoGPT
`model.py` as vendored (`corpus/nanogpt/`, MIT, unmodified: its whole forward, blocks,
attention and MLP inlined, `targets=None`, the assert on `self.config` and `x[:, [-1],
:]` included, is one region too). Per model: forward time (CPU time of the thread, best block of
calls, the ways interleaved round by round, `no_grad`, eval), PPy's and
torch.compile's ratio to eager, the first call (load + build + first forward) in a
fresh process with an empty cache and with the cache warm, Python-level torch calls
per forward (a `TorchFunctionMode`; a region counts as one), ATen operators per
forward (a `TorchDispatchMode`), whether the logits equal eager's bit for bit and, for
one training step, every gradient.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LAYERS, WIDTH, HEADS, VOCAB, BLOCK, BATCH, TOKENS = 4, 128, 4, 256, 64, 2, 64
MODELS = {"ours": "_torch_gpt.py", "nanogpt": "corpus/nanogpt/model.py"}


def project(root: Path) -> dict[str, Path]:
    """A project folder holding both models (the aten backend enabled)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[tool.ppy]\nbackends = ["aten"]\n')
    paths = {}
    for name, rel in MODELS.items():
        paths[name] = root / f"bench_{name}.py"
        shutil.copy(HERE / rel, paths[name])
    return paths


def build(module: Any, name: str) -> Any:
    import torch

    torch.manual_seed(0)
    if name == "ours":
        return module.GPT(VOCAB, BLOCK, LAYERS, WIDTH, HEADS)
    config = module.GPTConfig(
        block_size=BLOCK, vocab_size=VOCAB, n_layer=LAYERS, n_head=HEADS, n_embd=WIDTH
    )
    return module.GPT(config)


def logits_of(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


def load_plain(path: Path, name: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # nanoGPT's @dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def child(path: Path, name: str) -> None:
    """One fresh process: load with PPy, build, first forward; prints JSON."""
    import contextlib
    import io

    import torch

    import ppy

    torch.set_num_threads(1)
    start = time.perf_counter()
    module = ppy.load(path, f"bench_{name}")
    with contextlib.redirect_stdout(io.StringIO()):  # nanoGPT prints its size
        model = build(module, name).eval()
    idx = torch.randint(0, VOCAB, (BATCH, TOKENS))
    with torch.no_grad():
        model(idx)
    took = time.perf_counter() - start
    fast = sum(v["fast"] for v in ppy.stats().values())
    print(json.dumps({"first_s": took, "fast": fast}))


def first_calls(name: str) -> tuple[float, float, int]:
    """(cold, cached) first-call seconds, each in a fresh process, and the cache entries
    the cached process still made: its module's key covers the plugin's and the core's
    code, so a tree edited between the two runs (other work in the checkout) compiles
    again; 0 is a true warm start."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = project(Path(tmp) / "proj")
        cache = Path(tmp) / "cache"
        env = {**os.environ, "PPY_CACHE_DIR": str(cache)}
        out = []
        entries = []
        for _ in range(2):
            done = subprocess.run(
                [sys.executable, __file__, "--child", name, "--path", str(paths[name])],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            out.append(json.loads(done.stdout.strip().splitlines()[-1])["first_s"])
            entries.append(len(list((cache / "entries").iterdir())))
        return out[0], out[1], entries[1] - entries[0]


def counted(model: Any, idx: Any, covered: list[Any]) -> tuple[int, int]:
    """(Python-level torch calls, ATen ops) of one forward; each module in `covered`
    (its forward a region) counts as one Python-level call."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class Calls(torch.overrides.TorchFunctionMode):
        n = 0

        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            Calls.n += 1
            return func(*args, **(kwargs or {}))

    class Ops(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            Ops.n += 1
            return func(*args, **(kwargs or {}))

    with torch.no_grad():
        with Ops():
            model(idx)
        # a region steps aside under a __torch_function__ mode (its guard): stand each
        # in with one counted call that runs it with the mode disabled
        for m in covered:
            inner = m.forward

            def stand_in(*args: Any, _inner: Any = inner) -> Any:
                Calls.n += 1
                with torch._C.DisableTorchFunction():
                    return _inner(*args)

            m.forward = stand_in
        try:
            with Calls():
                model(idx)
        finally:
            for m in covered:
                del m.forward
    return Calls.n, Ops.n


def covered_modules(model: Any) -> list[Any]:
    """The top-most modules whose forward ran as a region (a specialization)."""
    found = []

    def walk(m: Any) -> None:
        state = getattr(type(m).forward, "__ppy_specializations__", None)
        if state is not None and any(
            f is not state.generic and getattr(f, "__ppy_region__", False)
            for f in state.table.values()
        ):
            found.append(m)
            return
        for c in m.children():
            walk(c)

    walk(model)
    return found


def best_ms(ways: dict[str, Any], rounds: int, calls: int = 10) -> dict[str, float]:
    """Per way, the best block of `calls` calls, the ways interleaved round by round,
    in CPU time of this thread (`time.thread_time`: every way runs on it, one torch
    thread; on a shared machine the wall clock also counts other processes' turns).
    One untimed call opens each block: the way before it left its own weights in the
    cache, and the first call would pay for fetching these back."""
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(rounds):
        for name, run in ways.items():
            run()
            start = time.thread_time()
            for _ in range(calls):
                run()
            best[name] = min(best[name], (time.thread_time() - start) / calls * 1e3)
    return best


def bits_equal(a: Any, b: Any) -> bool:
    import torch

    return a.dtype == b.dtype and torch.equal(
        a.detach().contiguous().view(torch.uint8), b.detach().contiguous().view(torch.uint8)
    )


def measure(name: str, paths: dict[str, Path], rounds: int) -> dict[str, Any]:
    import contextlib
    import io

    import torch

    import ppy

    plain = load_plain(paths[name], f"plain_{name}")
    fast_mod = ppy.load(paths[name], f"bench_{name}")
    with contextlib.redirect_stdout(io.StringIO()):
        eager, fast, ref = (build(m, name).eval() for m in (plain, fast_mod, plain))
    fast.load_state_dict(eager.state_dict())
    ref.load_state_dict(eager.state_dict())
    idx = torch.randint(0, VOCAB, (BATCH, TOKENS), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = logits_of(eager(idx))
        ppy.reset_stats()
        got = logits_of(fast(idx))
        fast_calls = sum(v["fast"] for v in ppy.stats().values())
        start = time.perf_counter()
        compiled = torch.compile(ref)
        comp = logits_of(compiled(idx))
        compile_s = time.perf_counter() - start
    # one training step (dropout 0): every gradient against eager's
    eager.train()
    fast.train()
    logits_of(eager(idx)).square().sum().backward()
    logits_of(fast(idx)).square().sum().backward()
    grads = all(
        bits_equal(p.grad, q.grad)
        for p, q in zip(eager.parameters(), fast.parameters(), strict=True)
        if p.grad is not None
    )
    eager.eval()
    fast.eval()
    with torch.no_grad():
        times = best_ms(
            {
                "eager": lambda: eager(idx),
                "ppy": lambda: fast(idx),
                "compile": lambda: compiled(idx),
            },
            rounds,
        )
    calls_e, ops_e = counted(eager, idx, [])
    covered = covered_modules(fast)
    calls_p, ops_p = counted(fast, idx, covered)
    cold, cached, recompiled = first_calls(name)
    return {
        "model": name,
        "eager_ms": times["eager"],
        "ppy_ms": times["ppy"],
        "compile_ms": times["compile"],
        "ppy_x": times["ppy"] / times["eager"],
        "compile_x": times["compile"] / times["eager"],
        "compile_first_s": compile_s,
        "ppy_cold_s": cold,
        "ppy_cached_s": cached,
        "cached_compiled": recompiled,
        "calls_eager": calls_e,
        "calls_ppy": calls_p,
        "ops_eager": ops_e,
        "ops_ppy": ops_p,
        "regions": len(covered),
        "region_calls": fast_calls,
        "logits_equal": bits_equal(got, want),
        "grads_equal": grads,
        "compile_max_diff": float((comp - want).abs().max()),
    }


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| model | eager ms | PPy ms (x eager) | torch.compile ms (x eager)"
        " | first call PPy cold / cached s (cached run compiled) | torch.compile first s"
        " | Python-level calls eager / PPy | ATen ops eager / PPy"
        " | logits equal | grads equal | compile max diff |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['eager_ms']:.2f} | {r['ppy_ms']:.2f} ({r['ppy_x']:.2f}x) "
            f"| {r['compile_ms']:.2f} ({r['compile_x']:.2f}x) "
            f"| {r['ppy_cold_s']:.1f} / {r['ppy_cached_s']:.2f} ({r['cached_compiled']} compiled) "
            f"| {r['compile_first_s']:.1f} "
            f"| {r['calls_eager']} / {r['calls_ppy']} ({r['regions']} regions) "
            f"| {r['ops_eager']} / {r['ops_ppy']} | {r['logits_equal']} | {r['grads_equal']} "
            f"| {r['compile_max_diff']:.1e} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--child", default="")
    parser.add_argument("--path", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.child:
        child(args.path, args.child)
        return 0
    import torch

    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        paths = project(Path(tmp) / "proj")
        rows = [measure(name, paths, args.rounds) for name in MODELS]
    text = (
        f"{LAYERS} layers x {WIDTH} wide, batch {BATCH} x {TOKENS} tokens, one CPU thread, "
        f"torch {torch.__version__}\n\n{table(rows)}\n"
    )
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "torch_modules.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
