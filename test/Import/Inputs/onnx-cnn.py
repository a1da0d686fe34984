#!/usr/bin/env python3
"""Writes the ResNet-style CNN fixture of test/Import/onnx-cnn*.test.

    /usr/bin/python3 test/Import/Inputs/onnx-cnn.py [OUT_DIR]

Needs torch (1.13) and onnx; CI does not: the outputs are committed.
OUT_DIR (default: this directory) gets onnx-cnn.onnx (opset 17, weights
inline, BatchNormalization kept as its own node), onnx-cnn.x.npy and torch's
output onnx-cnn.output.npy. Every op kind the importer maps to a conv or pool
appears: strided, dilated and grouped convs with and without bias, batch norm
with non-trivial running statistics, max and average pooling (with padding
not counted), a residual add, global average pooling and a Linear. Batch 8
and H = W = 16 split evenly over 2, 4 and 8 ranks.
"""
import os
import sys

import numpy as np
import torch
from torch import nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2, stride=2)
        self.conv1 = nn.Conv2d(16, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=2, dilation=2, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.down = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
        self.bn3 = nn.BatchNorm2d(32)
        self.grouped = nn.Conv2d(32, 32, 3, padding=1, groups=4)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn0(self.stem(x))))
        y = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(x + self.bn2(self.conv2(y)))
        x = torch.relu(self.bn3(self.down(x)))
        x = self.avg(torch.relu(self.grouped(x)))
        return self.fc(torch.flatten(self.gap(x), 1))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    torch.manual_seed(0)
    model = CNN()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    model.eval()
    x = torch.randn(8, 3, 16, 16)
    with torch.no_grad():
        y = model(x)
    path = os.path.join(out, "onnx-cnn.onnx")
    # PRESERVE keeps BatchNormalization (EVAL would fold it into the convs).
    torch.onnx.export(model, (x,), path, input_names=["x"],
                      output_names=["output"], opset_version=17,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)
    np.save(os.path.join(out, "onnx-cnn.x.npy"), x.numpy())
    np.save(os.path.join(out, "onnx-cnn.output.npy"), y.numpy())


if __name__ == "__main__":
    main()
