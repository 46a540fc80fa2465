"""A GPT-2-style model written with nn.Modules, as `benchmarks/torch_modules.py`
runs it: submodules called in `forward`, a ModuleList of blocks iterated, a fused qkv
projection narrowed into heads, causal `scaled_dot_product_attention`, tied lm head."""

from __future__ import annotations

import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.resid_dropout = nn.Dropout(0.0)
        self.n_embd = n_embd
        self.n_head = n_head

    def forward(self, x):
        B = x.size(0)
        T = x.size(1)
        qkv = self.c_attn(x)
        hs = self.n_embd // self.n_head
        q = qkv.narrow(2, 0, self.n_embd).view(B, T, self.n_head, hs).transpose(1, 2)
        k = qkv.narrow(2, self.n_embd, self.n_embd).view(B, T, self.n_head, hs).transpose(1, 2)
        v = qkv.narrow(2, 2 * self.n_embd, self.n_embd).view(B, T, self.n_head, hs).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, self.n_embd)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(0.0)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab, block_size, n_layer, n_embd, n_head):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as GPT-2's

    def forward(self, idx):
        x = self.wte(idx) + self.wpe.weight.narrow(0, 0, idx.size(1))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))
