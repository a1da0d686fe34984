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

For `autoshard train` the tagger also gets tag labels (lstm-tagger.labels.npy)
and torch's own training loop from the same initial weights (cross entropy
over the tags, Adam lr 0.01, 5 steps): lstm-tagger.train/losses_adam.json and
the final parameters in ONNX's layout (LSTM gates i o f c, both biases in B,
the Linear's weight transposed) named as autoshard writes them.
"""
import json
import os
import sys

import numpy as np
import onnx
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


def onnx_gates(t, hidden):
    """torch's LSTM gate rows (i f g o) in ONNX's order (i o f c)."""
    i, f, g, o = torch.split(t, hidden, dim=0)
    return torch.cat([i, o, f, g], dim=0)


def train_tagger(out, model, ids):
    """torch's training loop for lstm-tagger.train (see the docstring)."""
    graph = onnx.load(os.path.join(out, "lstm-tagger.onnx")).graph
    lstm = next(n for n in graph.node if n.op_type == "LSTM")
    matmul = next(n for n in graph.node if n.op_type == "MatMul")
    labels = torch.randint(0, 5, (8, 6))
    np.save(os.path.join(out, "lstm-tagger.labels.npy"), labels.numpy())
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(ids).reshape(-1, 5),
                                           labels.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    d = os.path.join(out, "lstm-tagger.train")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "losses_adam.json"), "w") as f:
        json.dump(losses, f)
    h = model.lstm.hidden_size
    lstm_params = model.lstm
    params = {
        "emb.weight": model.emb.weight,
        "fc.bias": model.fc.bias,
        lstm.input[1]: onnx_gates(lstm_params.weight_ih_l0, h)[None],
        lstm.input[2]: onnx_gates(lstm_params.weight_hh_l0, h)[None],
        lstm.input[3]: torch.cat([onnx_gates(lstm_params.bias_ih_l0, h),
                                  onnx_gates(lstm_params.bias_hh_l0, h)])[None],
        matmul.input[1]: model.fc.weight.t(),
    }
    for name, t in params.items():
        np.save(os.path.join(d, name.replace("::", "__") + ".npy"),
                t.detach().contiguous().numpy())


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "test", "Import",
        "Inputs")
    torch.manual_seed(0)
    ids = torch.randint(0, 20, (8, 6))
    tagger = Tagger()
    export(out, "lstm-tagger", tagger, [ids], ["ids"], ["logits"], 17)
    x = torch.randn(5, 8, 8)
    h0 = torch.randn(2, 8, 16)
    export(out, "gru2", GRU2(), [x, h0], ["x", "h0"], ["y", "hn"], 11)
    x = torch.randn(8, 6, 8)
    h0 = torch.randn(2, 8, 16)
    c0 = torch.randn(2, 8, 16)
    export(out, "bilstm", BiLSTM(), [x, h0, c0], ["x", "h0", "c0"],
           ["y", "hn", "cn"], 14)
    # Last: the existing fixtures keep their random draws.
    train_tagger(out, tagger.train(), ids)


if __name__ == "__main__":
    main()
