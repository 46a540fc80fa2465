"""Clean: an ordinary torch layer."""

import torch


def layer(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    h = torch.relu(torch.add(torch.matmul(x, w), b))
    return torch.sigmoid(h).view(2, -1).sum(dim=1)
