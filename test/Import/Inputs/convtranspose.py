#!/usr/bin/env python3
"""Writes the ConvTranspose fixture of test/Import/convtranspose.test.

    /usr/bin/python3 test/Import/Inputs/convtranspose.py [OUT_DIR]

Needs torch (1.13) and onnx; CI does not: the outputs are committed.
A decoder-style stack of nn.ConvTranspose2d (opset 17): stride 2 with
padding and output_padding, then grouped (groups 2) with dilation 2 and a
bias, then a 1x1; ReLU between. OUT_DIR (default: this directory) gets
convtranspose.onnx, convtranspose.x.npy and torch's output
convtranspose.output.npy. Batch 4 and 8 output channels split over 4 ranks.
"""
import os
import sys

import numpy as np
import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 8, 3, stride=2, padding=1,
                                     output_padding=1, bias=False)
        self.grouped = nn.ConvTranspose2d(8, 8, 3, padding=2, dilation=2,
                                          groups=2)
        self.point = nn.ConvTranspose2d(8, 8, 1)

    def forward(self, x):
        x = torch.relu(self.up(x))
        x = torch.relu(self.grouped(x))
        return self.point(x)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    torch.manual_seed(0)
    model = Decoder().eval()
    x = torch.randn(4, 4, 5, 6)
    with torch.no_grad():
        y = model(x)
    torch.onnx.export(model, (x,), os.path.join(out, "convtranspose.onnx"),
                      input_names=["x"], output_names=["y"], opset_version=17)
    np.save(os.path.join(out, "convtranspose.x.npy"), x.numpy())
    np.save(os.path.join(out, "convtranspose.output.npy"), y.numpy())


if __name__ == "__main__":
    main()
