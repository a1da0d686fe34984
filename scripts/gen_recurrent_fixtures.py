#!/usr/bin/env python3
"""Writes the recurrent-layer fixtures of test/Import/*lstm* / *gru* tests.

    /usr/bin/python3 scripts/gen_recurrent_fixtures.py [OUT_DIR]

Needs torch (1.13) and onnx; CI does not: the outputs are committed.
OUT_DIR (default test/Import/Inputs) gets, per model, NAME.onnx (weights
inline), the inputs as NAME.<input>.npy and torch's outputs as
NAME.<output>.npy:

- lstm-tagger (opset 17): Embedding -> LSTM (batch_first, no initial state)
  -> Linear, the classic sequence tagger; output `logits`.
- gru2 (opset 11): a 2-layer GRU (seq-first) with an initial state `h0`;
  outputs `y` and `hn`.
- bilstm (opset 14): a bidirectional LSTM (batch_first) with initial states
  `h0`, `c0`; outputs `y`, `hn`, `cn`.

Batch 8 and hidden sizes 16/32 split evenly over 2 and 4 ranks; sequences are
short (5-6 steps) so the unrolled programs stay small.
"""
import os
import sys

import numpy as np
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self, vocab=20, embed=16, hidden=32, tags=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, tags)

    def forward(self, ids):
        y, _ = self.lstm(self.emb(ids))
        return self.fc(y)


class GRU2(nn.Module):
    def __init__(self, inp=8, hidden=16):
        super().__init__()
        self.gru = nn.GRU(inp, hidden, num_layers=2)

    def forward(self, x, h0):
        return self.gru(x, h0)


class BiLSTM(nn.Module):
    def __init__(self, inp=8, hidden=16):
        super().__init__()
        self.lstm = nn.LSTM(inp, hidden, batch_first=True, bidirectional=True)

    def forward(self, x, h0, c0):
        y, (hn, cn) = self.lstm(x, (h0, c0))
        return y, hn, cn


def export(out, name, model, inputs, input_names, output_names, opset):
    model.eval()
    with torch.no_grad():
        outputs = model(*inputs)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    torch.onnx.export(model, tuple(inputs), os.path.join(out, name + ".onnx"),
                      input_names=input_names, output_names=output_names,
                      opset_version=opset)
    for n, t in zip(input_names, inputs):
        np.save(os.path.join(out, "%s.%s.npy" % (name, n)), t.numpy())
    for n, t in zip(output_names, outputs):
        np.save(os.path.join(out, "%s.%s.npy" % (name, n)), t.numpy())


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "test", "Import",
        "Inputs")
    torch.manual_seed(0)
    ids = torch.randint(0, 20, (8, 6))
    export(out, "lstm-tagger", Tagger(), [ids], ["ids"], ["logits"], 17)
    x = torch.randn(5, 8, 8)
    h0 = torch.randn(2, 8, 16)
    export(out, "gru2", GRU2(), [x, h0], ["x", "h0"], ["y", "hn"], 11)
    x = torch.randn(8, 6, 8)
    h0 = torch.randn(2, 8, 16)
    c0 = torch.randn(2, 8, 16)
    export(out, "bilstm", BiLSTM(), [x, h0, c0], ["x", "h0", "c0"],
           ["y", "hn", "cn"], 14)


if __name__ == "__main__":
    main()
