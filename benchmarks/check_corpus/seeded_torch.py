"""Seeded: a torch op called with the wrong arity."""

import torch


def activate(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x, x, x)  # expect: E1006
