#!/usr/bin/env python3
"""Writes the fixture of test/Lower/gemm-epilogues-residual.test.

    /usr/bin/python3 test/Lower/Inputs/gemm-epilogues-residual.py [OUT_DIR]

Needs torch and onnx (CI does not: the outputs are committed).

A feed-forward block with a residual: h = fc2(GELU(fc1(x))) (torch's default
nn.GELU(), the erf form, which the exporter writes as Div/Erf/Add/Mul/Mul),
then y = ReLU(fc3(h)) + h (a bias, a ReLU and a residual add after a GEMM).
x[8,16], fc1 16->32, fc2 32->16, fc3 16->16; opset 17, weights inline.
Writes gemm-epilogues-residual.onnx, .x.npy and torch's .output.npy.
"""
import os
import sys

import numpy as np
import torch
from torch import nn


class Residual(nn.Module):
    def __init__(self, hidden=16, ffn=32):
        super().__init__()
        self.fc1 = nn.Linear(hidden, ffn)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(ffn, hidden)
        self.fc3 = nn.Linear(hidden, hidden)

    def forward(self, x):
        h = self.fc2(self.act(self.fc1(x)))
        return torch.relu(self.fc3(h)) + h


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else here
    name = os.path.join(out_dir, "gemm-epilogues-residual")
    gen = torch.Generator().manual_seed(2020)
    model = Residual()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    model.eval()
    x = torch.randn((8, 16), generator=gen)
    with torch.no_grad():
        expected = model(x)
    torch.onnx.export(model, (x,), name + ".onnx", opset_version=17,
                      input_names=["x"], output_names=["output"],
                      do_constant_folding=True)
    np.save(name + ".x.npy", x.numpy())
    np.save(name + ".output.npy", expected.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
