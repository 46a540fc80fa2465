"""Functions the end-to-end tests compile, all into one extension per session."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def layer(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.relu(torch.add(torch.matmul(x, weight), bias))


def residual(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.tanh(torch.add(x, torch.mul(y, 0.5)))


def split_heads(x: torch.Tensor, n_head: int) -> tuple[torch.Tensor, torch.Tensor]:
    b = x.size(0)
    t = x.shape[1]
    h = x.view(b, t, n_head, x.size(2) // n_head).transpose(1, 2)
    return h, x.sum(dim=-1, keepdim=True)


def operators(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = (x + y) * 2.0 - x / 3
    return -z @ y.transpose(0, 1) + 1


def write_rows(out: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    torch.narrow(out, 0, 0, 2).copy_(src)
    return out


def block(
    x: torch.Tensor, ln_w: torch.Tensor, ln_b: torch.Tensor, w: torch.Tensor, b: torch.Tensor
) -> torch.Tensor:
    h = F.layer_norm(x, (x.size(-1),), ln_w, ln_b, 1e-5)
    h = F.gelu(F.linear(h, w, b), approximate="tanh")
    return x + F.softmax(h, dim=-1)


def reductions(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.mean(x), torch.mean(x, (0,), True)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


REGIONS = [layer, residual, split_heads, operators, write_rows, block, reductions, attention]


def not_a_region(x: torch.Tensor) -> torch.Tensor:
    for _ in range(2):
        x = x + 1
    return x


def unknown_call(x: torch.Tensor) -> torch.Tensor:
    return torch.special.erf(x)


def unknown_keyword(x: torch.Tensor) -> torch.Tensor:
    return torch.sum(x, dtype=torch.float64)
