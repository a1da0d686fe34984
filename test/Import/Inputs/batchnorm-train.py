#!/usr/bin/env python3
"""Writes the training-mode batch norm fixture of test/Import/batchnorm-train.test.

    /usr/bin/python3 test/Import/Inputs/batchnorm-train.py [OUT_DIR]

Needs torch (1.13) and onnx; CI does not: the outputs are committed.
A small CNN (conv, BatchNorm2d, relu, strided conv, BatchNorm2d, relu,
global average pool, Linear) exported in training mode (opset 15,
BatchNormalization with training_mode = 1), with the first batch norm's
running statistics added as graph outputs 1 and 2. OUT_DIR (default: this
directory) gets batchnorm-train.onnx, batchnorm-train.x.npy and torch's
nn.BatchNorm2d train-mode results: batchnorm-train.output_0.npy (the
network's output, normalised by the batch statistics), .output_1.npy (the
running mean after the step) and .output_2.npy (the running variance after
the step as ONNX defines it: from the batch's biased variance; PyTorch's own
running_var uses the unbiased one), both from torch's batch statistics and
the running statistics stored in the model file. Batch 8 splits evenly over
2, 4 and 8 ranks.
"""
import copy
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
from torch import nn


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(8)
        self.conv1 = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.bn0(self.conv0(x)))
        x = torch.relu(self.bn1(self.conv1(x)))
        return self.fc(torch.flatten(x.mean(dim=(2, 3)), 1))


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
    # Channels with distinct means and spreads, so wrong statistics show.
    x = torch.randn(8, 3, 8, 8) * torch.tensor([1.0, 2.0, 0.5]).view(
        1, 3, 1, 1) + torch.tensor([0.5, -1.0, 2.0]).view(1, 3, 1, 1)
    path = os.path.join(out, "batchnorm-train.onnx")
    model.train()
    # Export traces a train-mode forward (updating the running statistics
    # it then stores) and leaves the module changed: the reference is a copy
    # taken before.
    reference = copy.deepcopy(model)
    torch.onnx.export(model, (x,), path, input_names=["x"],
                      output_names=["y"], opset_version=15,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    # The first batch norm's running statistics as graph outputs.
    proto = onnx.load(path)
    bn = [n for n in proto.graph.node if n.op_type == "BatchNormalization"]
    assert len(bn) == 2 and bn[0].attribute[-1].name in (
        "training_mode", "momentum", "epsilon"), bn[0]
    for name in bn[0].output[1:3]:
        proto.graph.output.append(
            onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT,
                                               [8]))
    onnx.checker.check_model(proto)
    onnx.save(proto, path)

    # Torch's train-mode step; the running statistics the model file holds
    # (the traced forward's) updated with torch's batch statistics.
    seen = {}

    def keep_input(module, inputs, output):
        seen["in"] = inputs[0].detach().clone()  # returns None: output kept

    reference.bn0.register_forward_hook(keep_input)
    old_mean = reference.bn0.running_mean.clone()
    with torch.no_grad():
        y = reference(x)
    batch = seen["in"]
    mean = batch.mean(dim=(0, 2, 3))
    var = batch.var(dim=(0, 2, 3), unbiased=False)
    assert torch.allclose(reference.bn0.running_mean,
                          0.9 * old_mean + 0.1 * mean, atol=1e-6)
    stored = {t.name: onnx.numpy_helper.to_array(t)
              for t in proto.graph.initializer}
    running_mean = 0.9 * stored["bn0.running_mean"] + 0.1 * mean.numpy()
    running_var = 0.9 * stored["bn0.running_var"] + 0.1 * var.numpy()
    np.save(os.path.join(out, "batchnorm-train.x.npy"), x.numpy())
    np.save(os.path.join(out, "batchnorm-train.output_0.npy"), y.numpy())
    np.save(os.path.join(out, "batchnorm-train.output_1.npy"), running_mean)
    np.save(os.path.join(out, "batchnorm-train.output_2.npy"), running_var)


if __name__ == "__main__":
    main()
