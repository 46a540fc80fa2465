"""`nn.Module` forwards as ATen regions (issue 29): a model written the usual way —
submodules called in `forward`, a `ModuleList` iterated, `F.layer_norm` of its own
parameters — loaded unmodified with `ppy.load`, its `forward` specialized on the
instance (`ppy_torch.describe`) and staged as one region (`ppy_torch.modules`).

Every call is compared with the same model loaded as plain Python, bit for bit:
outputs and every parameter's gradient, in eval and train mode, with and without
grad; the fast path is asserted from `ppy.stats()`. Then one fallback per guard. The
model is built twice in all (eval and train are two descriptions)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ppy
from ppy_core.runtime.observed import explain

pytestmark = pytest.mark.needs_cc

SOURCE = """\
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self, n, p):
        super().__init__()
        self.ln = nn.LayerNorm(n)
        self.fc = nn.Linear(n, 2 * n)
        self.act = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(2 * n, n)
        self.drop = nn.Dropout(p)

    def forward(self, x):
        h = self.act(self.fc(self.ln(x)))
        return x + self.drop(self.proj(h))


class Net(nn.Module):
    def __init__(self, vocab, n, layers, p=0.0):
        super().__init__()
        self.n_embd = n
        self.wte = nn.Embedding(vocab, n)
        self.blocks = nn.ModuleList([MLP(n, p) for _ in range(layers)])
        self.weight = nn.Parameter(torch.ones(n))
        self.bias = nn.Parameter(torch.zeros(n))
        self.head = nn.Sequential(nn.Linear(n, n), nn.Tanh(), nn.Linear(n, vocab, bias=False))

    def forward(self, idx):
        x = self.wte(idx)
        for block in self.blocks:
            x = block(x)
        x = F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)
        return self.head(x) * (1.0 / self.n_embd)


class Odd(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.soft = nn.Softplus()

    def forward(self, x):
        return self.soft(self.fc(x)) + x


class Attn(nn.Module):
    \"\"\"nanoGPT's attention as it is written (its `flash` test, its softmax path).\"\"\"

    def __init__(self, n, heads, flash):
        super().__init__()
        self.c_attn = nn.Linear(n, 3 * n)
        self.c_proj = nn.Linear(n, n)
        self.n_head = heads
        self.n_embd = n
        self.dropout = 0.0
        self.flash = flash

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                is_causal=True,
            )
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


@dataclass
class Config:
    block_size: int = 8
    n_embd: int = 8


class Tiny(nn.Module):
    \"\"\"nanoGPT's GPT.forward as it is written.\"\"\"

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(11, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(0.0),
            h=nn.ModuleList([AttnBlock(config.n_embd, 2) for _ in range(2)]),
            ln_f=nn.LayerNorm(config.n_embd),
        ))
        self.lm_head = nn.Linear(config.n_embd, 11, bias=False)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}"
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss


class AttnBlock(nn.Module):
    def __init__(self, n, heads, flash=True):
        super().__init__()
        self.ln = nn.LayerNorm(n)
        self.attn = Attn(n, heads, flash)

    def forward(self, x):
        return x + self.attn(self.ln(x))
"""

VOCAB, N, LAYERS = 11, 8, 2


@pytest.fixture(scope="module")
def mods(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    root = tmp_path_factory.mktemp("modules")
    (root / "pyproject.toml").write_text('[tool.ppy]\nbackends = ["aten"]\n')
    path = root / "gptish.py"
    path.write_text(SOURCE, encoding="utf-8")
    fast = ppy.load(path, "gptish")
    spec = importlib.util.spec_from_file_location("gptish_plain", path)
    assert spec is not None
    assert spec.loader is not None
    plain: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plain)
    return fast, plain


def _pair(mods: tuple[Any, Any], cls: str = "Net", *args: Any) -> tuple[Any, Any]:
    fast, plain = mods
    torch.manual_seed(0)
    a = getattr(fast, cls)(*(args or (VOCAB, N, LAYERS)))
    b = getattr(plain, cls)(*(args or (VOCAB, N, LAYERS)))
    b.load_state_dict(a.state_dict())
    return a, b


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


def _fast_calls(cls: Any) -> int:
    """Fast calls of the regions of `cls.forward`'s specializations (their sites' ids
    end in the specialization's id)."""
    state = cls.forward.__ppy_specializations__
    assert state.qualname == f"{cls.__name__}.forward"
    head = "specialized (s"
    idents = {w[len(head) :][:8] for w in state.seen.values() if w.startswith(head)}
    return sum(
        v["fast"]
        for k, v in ppy.stats().items()
        if k.startswith("gptish:forward.") and k.rpartition("@")[2] in idents
    )


def _misses(cls: Any) -> int:
    """Calls of `cls.forward`'s regions whose C++ guard of the module tree missed."""
    state = cls.forward.__ppy_specializations__
    head = "specialized (s"
    idents = {w[len(head) :][:8] for w in state.seen.values() if w.startswith(head)}
    return sum(
        v["fallback"].get("module", 0)
        for k, v in ppy.stats().items()
        if k.startswith("gptish:forward.") and k.rpartition("@")[2] in idents
    )


def _trusted(a: Any, b: Any, x: torch.Tensor) -> None:
    """One call of each, bit-equal, the region's: `a`'s description is trusted after."""
    from ppy_torch import describe

    _same(a, b, x, grad=False)
    assert id(a) in describe._TRUSTED


def _same(a: Any, b: Any, x: torch.Tensor, *, grad: bool) -> None:
    with torch.set_grad_enabled(grad):
        got, want = a(x), b(x)
    assert torch.equal(_bits(got), _bits(want))
    assert got.requires_grad == want.requires_grad == grad
    if grad:
        (got * got).sum().backward()
        (want * want).sum().backward()
        for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
            assert p.grad is not None, name
            assert q.grad is not None, name
            assert torch.equal(_bits(p.grad), _bits(q.grad)), name
        a.zero_grad()
        b.zero_grad()


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    batch=st.integers(1, 3),
    tokens=st.integers(1, 9),
    train=st.booleans(),
    grad=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_forward_is_one_region_bits_equal(
    mods: tuple[Any, Any], batch: int, tokens: int, train: bool, grad: bool, seed: int
) -> None:
    a, b = _pair(mods)
    a.train(train)
    b.train(train)
    idx = torch.randint(0, VOCAB, (batch, tokens), generator=torch.Generator().manual_seed(seed))
    ppy.reset_stats()
    _same(a, b, idx, grad=grad)
    assert _fast_calls(type(a)) == 1  # the whole forward, blocks and head, one region


def test_parameters_are_read_at_every_call(mods: tuple[Any, Any]) -> None:
    """Optimizer steps and load_state_dict are seen: parameters are region inputs."""
    a, b = _pair(mods)
    a.eval()
    b.eval()
    idx = torch.randint(0, VOCAB, (2, 5))
    opt_a = torch.optim.SGD(a.parameters(), lr=0.1)
    opt_b = torch.optim.SGD(b.parameters(), lr=0.1)
    ppy.reset_stats()
    for _ in range(2):
        for model, opt in ((a, opt_a), (b, opt_b)):
            opt.zero_grad()
            model(idx).square().sum().backward()
            opt.step()
    _same(a, b, idx, grad=False)
    torch.manual_seed(1)
    fresh = {k: torch.randn_like(v) for k, v in a.state_dict().items()}
    a.load_state_dict(fresh)
    b.load_state_dict(fresh)
    _same(a, b, idx, grad=True)
    assert _fast_calls(type(a)) == 4


def test_training_dropout_stays_python(mods: tuple[Any, Any]) -> None:
    a, b = _pair(mods, "Net", VOCAB, N, LAYERS, 0.25)
    idx = torch.randint(0, VOCAB, (2, 5))
    ppy.reset_stats()
    torch.manual_seed(7)
    got = a(idx)
    torch.manual_seed(7)
    want = b(idx)
    assert torch.equal(_bits(got), _bits(want))  # the same dropout masks: torch's own
    assert _fast_calls(type(a)) == 0
    assert "Dropout in training mode" in _reason(a)
    # what `ppy.specializations(Net.forward)` says of that signature: the same reason
    assert any("Dropout in training mode" in line for line in explain(type(a).forward))


def test_hooked_module_stays_python(mods: tuple[Any, Any]) -> None:
    a, b = _pair(mods)
    a.eval()
    b.eval()
    seen: list[int] = []
    a.blocks[1].register_forward_hook(lambda *_: seen.append(1))
    b.blocks[1].register_forward_hook(lambda *_: seen.append(2))
    idx = torch.randint(0, VOCAB, (2, 5))
    ppy.reset_stats()
    _same(a, b, idx, grad=False)
    assert seen == [1, 2]  # the hook ran, as torch's __call__ runs it
    assert _fast_calls(type(a)) == 0
    # Net's forward runs Python; each block's forward is its own region but the hooked one
    assert _fast_calls(type(a.blocks[0])) == 1
    assert "forward hook" in _reason(a)
    assert any("forward hook" in line for line in explain(type(a).forward))


def test_function_mode_and_subclass_run_python(mods: tuple[Any, Any]) -> None:
    """A `__torch_function__` mode or a tensor subclass: the region's guard runs Python."""
    a, b = _pair(mods)
    a.eval()
    b.eval()
    idx = torch.randint(0, VOCAB, (2, 5))

    class Counting(torch.overrides.TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
            Counting.calls += 1
            return func(*args, **(kwargs or {}))

    with torch.no_grad():
        a(idx)  # the region is built and used before the checks below
        ppy.reset_stats()
        with Counting():
            got = a(idx)
        eager_calls, Counting.calls = Counting.calls, 0
        with Counting():
            want = b(idx)
    assert torch.equal(_bits(got), _bits(want))
    assert eager_calls == Counting.calls > 10  # the mode saw every call: Python ran
    assert _fast_calls(type(a)) == 0

    class Sub(torch.Tensor):
        pass

    with torch.no_grad():
        got, want = a(idx.as_subclass(Sub)), b(idx.as_subclass(Sub))
    assert torch.equal(_bits(got), _bits(want))
    assert _fast_calls(type(a)) == 0


def test_unknown_submodule_stays_python(mods: tuple[Any, Any]) -> None:
    a, b = _pair(mods, "Odd", N)
    x = torch.randn(3, N)
    ppy.reset_stats()
    _same(a, b, x, grad=True)
    assert _fast_calls(type(a)) == 0
    assert "Softplus" in _reason(a)
    assert "not a curated module" in _reason(a)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit is deprecated
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_compiled_and_scripted_submodules_stay_python(mods: tuple[Any, Any]) -> None:
    """Modules wrapped by torch.compile or torch.jit are not staged (nothing is run)."""
    a, _ = _pair(mods)
    a.blocks[0] = torch.compile(a.blocks[0])
    assert "OptimizedModule" in _reason(a)
    a, _ = _pair(mods)
    a.head = torch.jit.script(a.head)
    assert "not a curated module" in _reason(a)


def _reason(model: Any) -> str:
    """Why `model.forward` is not a region for this instance (what `ppy explain` keeps):
    the plugin's answer for its description."""
    from ppy_core.interface.plugin import FunctionContext, ModuleContext
    from ppy_core.interface.specs import FallbackSpec
    from ppy_torch.describe import describe_module
    from ppy_torch.modules import method_spec

    source = ast.parse(SOURCE)
    cls = next(
        s for s in source.body if isinstance(s, ast.ClassDef) and s.name == type(model).__name__
    )
    forward = next(s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "forward")
    path = Path(model.forward.__ppy_specializations__.source)
    module = ModuleContext(
        str(path),
        "gptish",
        {"torch": "torch", "F": "torch.nn.functional", "nn": "torch.nn"},
    )
    ctx = FunctionContext(
        node=forward,
        module=module,
        params={},
        returns=None,
        opt=2,
        described={"self": describe_module(model)},
    )
    spec = method_spec(ctx)
    assert isinstance(spec, FallbackSpec), spec
    return spec.reason


# -- the region's guard of the module tree (a trusted description is not re-described)


def _eval_pair(mods: tuple[Any, Any], *args: Any) -> tuple[Any, Any]:
    a, b = _pair(mods, "Net", *args)
    a.eval()
    b.eval()
    return a, b


def test_a_trusted_module_is_not_described_again(mods: tuple[Any, Any]) -> None:
    from ppy_torch import describe

    a, b = _eval_pair(mods)
    idx = torch.randint(0, VOCAB, (2, 5))
    _trusted(a, b, idx)
    calls: list[Any] = []
    tree = describe._tree
    describe._tree = lambda *args: calls.append(args) or tree(*args)  # type: ignore[assignment]
    try:
        ppy.reset_stats()
        for _ in range(3):
            _same(a, b, idx, grad=False)
    finally:
        describe._tree = tree  # type: ignore[assignment]
    assert calls == []
    assert _fast_calls(type(a)) == 3


def test_to_dtype_between_calls(mods: tuple[Any, Any]) -> None:
    """`.to(float64)` changes each parameter in place (`param.data`): the guard misses
    once (Python answers), then the float64 tree specializes and is a region again."""
    a, b = _eval_pair(mods)
    idx = torch.randint(0, VOCAB, (2, 5))
    _trusted(a, b, idx)
    a.to(torch.float64)
    b.to(torch.float64)
    ppy.reset_stats()
    _same(a, b, idx, grad=False)
    assert _misses(type(a)) == 1
    assert _fast_calls(type(a)) == 0
    _same(a, b, idx, grad=True)
    assert _fast_calls(type(a)) == 1
    assert a(idx).dtype == torch.float64


def test_replaced_submodule_between_calls(mods: tuple[Any, Any]) -> None:
    """A submodule replaced by one of its class is read afresh (the region stays); by a
    module of another class, the guard misses and Python runs what is there now."""
    fast, plain = mods
    a, b = _eval_pair(mods)
    idx = torch.randint(0, VOCAB, (2, 5))
    _trusted(a, b, idx)
    torch.manual_seed(3)
    a.blocks[1] = fast.MLP(N, 0.0).eval()
    b.blocks[1] = plain.MLP(N, 0.0).eval()
    b.blocks[1].load_state_dict(a.blocks[1].state_dict())
    ppy.reset_stats()
    _same(a, b, idx, grad=False)
    assert _fast_calls(type(a)) == 1
    a.head[1] = torch.nn.Softplus()
    b.head[1] = torch.nn.Softplus()
    ppy.reset_stats()
    _same(a, b, idx, grad=False)
    assert _misses(type(a)) == 1
    assert _fast_calls(type(a)) == 0


@pytest.mark.parametrize(
    "change",
    [
        "scalar",  # a scalar attribute the region holds as a constant
        "training",  # a submodule in training mode
        "requires_grad",
        "hook",  # a forward hook set on a submodule
        "global_hook",
        "subclass",  # a parameter replaced by a tensor subclass
        "appended",  # a block appended to the ModuleList the region unrolled
    ],
)
def test_each_guard_runs_python(mods: tuple[Any, Any], change: str) -> None:
    """After a region's call trusted the module, one change of each kind between calls:
    the next call misses in the region's C++ guard and runs Python, bit-equal."""
    fast, plain = mods
    a, b = _eval_pair(mods)
    idx = torch.randint(0, VOCAB, (2, 5))
    _trusted(a, b, idx)
    seen: list[int] = []
    handles = []
    if change == "scalar":
        a.n_embd = b.n_embd = 3
    elif change == "training":
        a.blocks[0].train()
        b.blocks[0].train()
    elif change == "requires_grad":
        a.wte.weight.requires_grad_(False)
        b.wte.weight.requires_grad_(False)
    elif change == "hook":
        a.blocks[0].fc.register_forward_hook(lambda *_: seen.append(1))
        b.blocks[0].fc.register_forward_hook(lambda *_: seen.append(2))
    elif change == "global_hook":
        hook = torch.nn.modules.module.register_module_forward_hook(lambda *_: seen.append(0))
        handles.append(hook)
    elif change == "subclass":

        class Marked(torch.nn.Parameter):
            pass

        a.bias = Marked(a.bias.detach().clone())
        b.bias = Marked(b.bias.detach().clone())
    elif change == "appended":
        torch.manual_seed(5)
        a.blocks.append(fast.MLP(N, 0.0).eval())
        b.blocks.append(plain.MLP(N, 0.0).eval())
        b.blocks[-1].load_state_dict(a.blocks[-1].state_dict())
    ppy.reset_stats()
    try:
        torch.manual_seed(11)
        with torch.no_grad():
            got = a(idx)
        torch.manual_seed(11)
        with torch.no_grad():
            want = b(idx)
    finally:
        for h in handles:
            h.remove()
    assert torch.equal(_bits(got), _bits(want))
    assert _misses(type(a)) == 1
    assert _fast_calls(type(a)) == 0
    if change == "hook":
        assert seen == [1, 2]
    if change == "global_hook":
        assert len(seen) > 2  # every module's forward, in both models
        assert len(seen) % 2 == 0


# -- nanoGPT's attention: sizes unpacked, a split unpacked, a constant branch


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    batch=st.integers(1, 3),
    tokens=st.integers(1, 9),
    train=st.booleans(),
    grad=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_attention_block_is_one_region_bits_equal(
    mods: tuple[Any, Any], batch: int, tokens: int, train: bool, grad: bool, seed: int
) -> None:
    a, b = _pair(mods, "AttnBlock", N, 2)
    a.train(train)
    b.train(train)
    x = torch.randn(batch, tokens, N, generator=torch.Generator().manual_seed(seed))
    ppy.reset_stats()
    _same(a, b, x, grad=grad)
    assert _fast_calls(type(a)) == 1  # the block and the attention it calls: one region


def test_attention_of_another_rank_raises_python_error(mods: tuple[Any, Any]) -> None:
    """`B, T, C = x.size()` of a 2-D x: the region's rank check sends it to Python,
    which raises its own ValueError, as eager does."""
    a, b = _pair(mods, "AttnBlock", N, 2)
    a.eval()
    b.eval()
    _same(a, b, torch.randn(2, 3, N), grad=False)
    ppy.reset_stats()
    x = torch.randn(3, N)
    with pytest.raises(ValueError, match="not enough values"):
        b(x)
    with pytest.raises(ValueError, match="not enough values"):
        a(x)
    assert _fast_calls(type(a)) == 0
    errors = sum(
        v["fallback"].get("error", 0) for k, v in ppy.stats().items() if k.startswith("gptish:")
    )
    assert errors == 2  # the block's region, then the attention's (the block's Python calls it)


def test_attention_softmax_path_stays_python(mods: tuple[Any, Any]) -> None:
    """`flash` False: the branch taken calls `math.sqrt`, no region operation."""
    a, b = _pair(mods, "AttnBlock", N, 2, False)
    x = torch.randn(2, 5, N)
    ppy.reset_stats()
    _same(a, b, x, grad=True)
    assert _fast_calls(type(a)) == 0
    assert "`math`" in _reason(a)


def test_a_module_without_region_is_described_every_recheck(mods: tuple[Any, Any]) -> None:
    """A forward that is no region (a hook on a block) is described again only every
    `RECHECK` calls; the hook removed, Python answers until then, and the region after."""
    from ppy_torch import describe

    a, b = _eval_pair(mods)
    idx = torch.randint(0, VOCAB, (2, 5))
    handle = a.blocks[1].register_forward_hook(lambda *_: None)
    for _ in range(2):
        _same(a, b, idx, grad=False)
    calls: list[Any] = []
    tree = describe._tree
    describe._tree = lambda *args: calls.append(args) or tree(*args)  # type: ignore[assignment]
    try:
        ppy.reset_stats()
        _same(a, b, idx, grad=False)
        assert calls == []  # its last two descriptions were one
        handle.remove()
        for _ in range(describe.RECHECK):
            _same(a, b, idx, grad=False)
    finally:
        describe._tree = tree  # type: ignore[assignment]
    assert 1 <= _fast_calls(type(a)) < describe.RECHECK


# -- nanoGPT's GPT.forward: a None default, the device, an assert on a config, arange,
# `if targets is not None`, `x[:, [-1], :]`, `return logits, None`


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    batch=st.integers(1, 3),
    tokens=st.integers(1, 8),
    train=st.booleans(),
    grad=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_gpt_forward_is_one_region_bits_equal(
    mods: tuple[Any, Any], batch: int, tokens: int, train: bool, grad: bool, seed: int
) -> None:
    fast, plain = mods
    a, b = _pair(mods, "Tiny", fast.Config())
    b.config = plain.Config()
    a.train(train)
    b.train(train)
    idx = torch.randint(0, VOCAB, (batch, tokens), generator=torch.Generator().manual_seed(seed))
    ppy.reset_stats()
    with torch.set_grad_enabled(grad):
        (got, got_loss), (want, want_loss) = a(idx), b(idx)
    assert got_loss is None
    assert want_loss is None
    assert got.shape == (batch, 1, VOCAB)
    assert torch.equal(_bits(got), _bits(want))
    assert _fast_calls(type(a)) == 1
    if grad:
        got.square().sum().backward()
        want.square().sum().backward()
        for (name, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
            assert p.grad is not None, name
            assert q.grad is not None, name
            assert torch.equal(_bits(p.grad), _bits(q.grad)), name


def test_gpt_forward_guards(mods: tuple[Any, Any]) -> None:
    """Too long a sequence: the C++ check of the assert runs Python, which raises its
    AssertionError; targets given: Python; the config's block size changed: the guard
    misses."""
    fast, plain = mods
    a, b = _pair(mods, "Tiny", fast.Config())
    b.config = plain.Config()
    a.eval()
    b.eval()
    idx = torch.randint(0, VOCAB, (2, 5))
    with torch.no_grad():
        assert torch.equal(_bits(a(idx)[0]), _bits(b(idx)[0]))
        ppy.reset_stats()
        with pytest.raises(AssertionError, match="length 9"):
            b(torch.randint(0, VOCAB, (2, 9)))
        with pytest.raises(AssertionError, match="length 9"):
            a(torch.randint(0, VOCAB, (2, 9)))
        assert _fast_calls(type(a)) == 0
        targets = torch.randint(0, VOCAB, (2, 5))
        got, want = a(idx, targets), b(idx, targets)
        assert torch.equal(_bits(got[1]), _bits(want[1]))
        a(idx)
        a.config.block_size = b.config.block_size = 4
        ppy.reset_stats()
        with pytest.raises(AssertionError):
            a(idx)
        assert _misses(type(a)) == 1
