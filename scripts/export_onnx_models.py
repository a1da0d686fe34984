#!/usr/bin/env python3
"""Exports the ONNX models autoshard's import tests use (one-time generation).

Run with Debian's python3-torch and python3-onnx:

    apt-get install -y python3-torch python3-onnx
    /usr/bin/python3 scripts/export_onnx_models.py [OUT_DIR]

OUT_DIR defaults to test/Import/Inputs. For each model it writes NAME.onnx
(opset 17, weights inline), the inputs as NAME.<input>.npy and torch's output
as NAME.output.npy. The outputs are committed: CI never needs torch. Sizes are
tiny on purpose (the whole set stays a few hundred KB) but every dim that a
test splits is divisible by 2, 4 and 8.
"""
import os
import sys

import numpy as np
import torch
from torch import nn

OPSET = 17


class MLP(nn.Module):
    """Megatron-style MLP block: Linear -> GELU -> Linear -> ReLU."""

    def __init__(self, hidden=16, ffn=32):
        super().__init__()
        self.fc1 = nn.Linear(hidden, ffn)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(ffn, hidden)

    def forward(self, x):
        return torch.relu(self.fc2(self.act(self.fc1(x))))


class Block(nn.Module):
    """Pre-LayerNorm transformer block with causal self-attention."""

    def __init__(self, embed, heads, ffn):
        super().__init__()
        self.ln1 = nn.LayerNorm(embed)
        # batch_first=False keeps torch off the fused fast path, which
        # torch.onnx cannot export.
        self.attn = nn.MultiheadAttention(embed, heads)
        self.ln2 = nn.LayerNorm(embed)
        self.fc1 = nn.Linear(embed, ffn)
        self.gelu = nn.GELU()
        self.fc2 = nn.Linear(ffn, embed)

    def forward(self, x, mask):
        h = self.ln1(x).transpose(0, 1)  # [S, B, E]
        a, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + a.transpose(0, 1)
        return x + self.fc2(self.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=64, seq=8, embed=32, heads=4, ffn=64, layers=2):
        super().__init__()
        self.seq = seq
        self.tok = nn.Embedding(vocab, embed)
        self.pos = nn.Embedding(seq, embed)
        self.layers = nn.ModuleList(
            [Block(embed, heads, ffn) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(embed)
        self.head = nn.Linear(embed, vocab, bias=False)
        # Additive causal mask; a large negative instead of -inf keeps every
        # intermediate finite.
        mask = torch.triu(torch.full((seq, seq), -1e9), diagonal=1)
        self.register_buffer("causal_mask", mask)

    def forward(self, ids):
        pos = torch.arange(self.seq, device=ids.device)
        x = self.tok(ids) + self.pos(pos)
        for layer in self.layers:
            x = layer(x, self.causal_mask)
        return self.head(self.ln_f(x))


def randomize(model, gen):
    # Non-trivial LayerNorm affine parameters and biases so that a wrong
    # broadcast or a dropped bias shows up in the comparison.
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.2)


def export(model, name, inputs, input_names, out_dir):
    model.eval()
    with torch.no_grad():
        expected = model(*inputs)
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, tuple(inputs), path, opset_version=OPSET,
                      input_names=input_names, output_names=["output"],
                      do_constant_folding=True)
    for n, t in zip(input_names, inputs):
        np.save(os.path.join(out_dir, f"{name}.{n}.npy"), t.numpy())
    np.save(os.path.join(out_dir, f"{name}.output.npy"),
            expected.numpy().astype(np.float32))
    print(f"{path}: {os.path.getsize(path)} bytes, output "
          f"{tuple(expected.shape)}")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        here, "..", "test", "Import", "Inputs")
    os.makedirs(out_dir, exist_ok=True)
    gen = torch.Generator().manual_seed(1234)

    mlp = MLP()
    randomize(mlp, gen)
    x = torch.randn((8, 16), generator=gen)
    export(mlp, "mlp", [x], ["x"], out_dir)

    gpt = GPT()
    randomize(gpt, gen)
    ids = torch.randint(0, 64, (2, 8), generator=gen, dtype=torch.int64)
    export(gpt, "gpt", [ids], ["ids"], out_dir)


if __name__ == "__main__":
    main()
