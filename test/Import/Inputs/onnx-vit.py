#!/usr/bin/env python3
"""Writes the ViT-style patch-embedding fixture of test/Import/onnx-vit.test.

    /usr/bin/python3 test/Import/Inputs/onnx-vit.py [OUT_DIR]

Needs torch (1.13) and onnx; CI does not: the outputs are committed.
The model is a vision transformer's front (issue 21): a patch embedding (a
Conv2d whose kernel equals its stride, 4x4 patches of a 16x16 image), the
patches flattened and transposed into a [batch, 16, 32] sequence, a learned
position embedding, one pre-LayerNorm self-attention block (2 heads) with a
residual, mean pooling over the patches and a Linear head. OUT_DIR
(default: this directory) gets onnx-vit.onnx (opset 17), onnx-vit.x.npy
(batch 8) and torch's output onnx-vit.output.npy.
"""
import os
import sys

import numpy as np
import torch
from torch import nn


class ViT(nn.Module):
    def __init__(self, dim=32, heads=2, patch=4, image=16, classes=10):
        super().__init__()
        self.heads = heads
        self.patch = nn.Conv2d(3, dim, patch, stride=patch)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2, dim) * 0.1)
        self.ln = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2) + self.pos
        b, n, d = x.shape
        q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
        split = lambda t: t.reshape(b, n, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        a = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((a @ v).transpose(1, 2).reshape(b, n, d))
        return self.head(x.mean(dim=1))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    torch.manual_seed(0)
    model = ViT().eval()
    x = torch.randn(8, 3, 16, 16)
    with torch.no_grad():
        y = model(x)
    torch.onnx.export(model, (x,), os.path.join(out, "onnx-vit.onnx"),
                      input_names=["x"], output_names=["output"],
                      opset_version=17)
    np.save(os.path.join(out, "onnx-vit.x.npy"), x.numpy())
    np.save(os.path.join(out, "onnx-vit.output.npy"), y.numpy())


if __name__ == "__main__":
    main()
