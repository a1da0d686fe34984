#!/usr/bin/env python3
"""PyTorch side of bench/training/run.py: times a full training step on CPU.

    PYTHON bench/training/torch_step.py SPEC.json

PYTHON must import torch and numpy (Debian: /usr/bin/python3 with
python3-torch). SPEC (written by run.py) names the model, the .npy files of
its initial parameters (the very files autoshard's program reads), the batch,
the labels, the loss, Adam's hyperparameters, the step count and the thread
count. Each step is timed as a whole:

    opt.zero_grad(); out = model(*inputs); loss = LOSS(out, labels)
    loss.backward(); opt.step()

Prints one JSON object: torch version, threads, per-step wall times (ms) and
losses (loss.item() of each step, i.e. before that step's update).

With "mode": "forward" in SPEC (bench/runtime/run.py) it times `repeat`
forward passes instead, under torch.no_grad() after two warm-up calls, and
prints their wall times (ms) and the output's sum.

Models:
  fixture-mlp, fixture-gpt  scripts/export_training_fixtures.py's MLP and
      TrainGPT (the classes that wrote test/Train/Inputs/*/model.onnx), with
      parameters loaded through config.json's initializer mapping.
  gen-gpt  the GPT of scripts/gen_models.py gpt (reshape form): token and
      position tables, pre-LN blocks (LayerNorm eps 1e-5; separate Wq, Wk,
      Wv, Wo [E, E] used as x @ W, heads = column blocks; scores / sqrt(D)
      plus an additive -1e9 causal mask; softmax), MLP gelu_tanh(x W1) W2
      without biases, final LayerNorm, head x @ W_head [E, V]. Parameters are
      named by their dist.name.
"""
import json
import math
import os
import sys
import time
import types

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fixture_classes():
    """MLP and TrainGPT from scripts/export_training_fixtures.py. That script
    imports onnx at the top for its export code, which the classes do not
    use: a stand-in module lets this run where python3-onnx is missing."""
    sys.path.insert(0, os.path.join(REPO, "scripts"))
    try:
        import onnx  # noqa: F401
    except ImportError:
        stub = types.ModuleType("onnx")
        stub.numpy_helper = types.ModuleType("onnx.numpy_helper")
        sys.modules["onnx"] = stub
        sys.modules["onnx.numpy_helper"] = stub.numpy_helper
    import export_training_fixtures as fx
    return fx


def load_fixture(spec):
    fx = fixture_classes()
    with open(spec["config"]) as f:
        config = json.load(f)
    if spec["model"] == "fixture-mlp":
        model = fx.MLP()
    else:
        # The sizes export_training_fixtures.main() gives the GPT.
        model = fx.TrainGPT(vocab=64, seq=8, embed=32, heads=4, ffn=64,
                            layers=2)
    state = {}
    for m in config["initializers"]:
        a = np.load(os.path.join(spec["weights_dir"], m["file"]))
        if m["layout"] == "transpose":
            a = a.T
        state[m["torch_name"]] = torch.from_numpy(np.ascontiguousarray(a))
    model.load_state_dict(state, strict=True)
    return model


class GenGPT(nn.Module):
    """scripts/gen_models.py gpt (reshape form), parameters by dist.name."""

    def __init__(self, shapes, weights_dir, layers, heads):
        super().__init__()
        self.layers, self.heads = layers, heads
        for name in shapes:
            a = np.load(os.path.join(weights_dir, name + ".npy"))
            assert list(a.shape) == shapes[name], (name, a.shape)
            self.register_parameter(name, nn.Parameter(torch.from_numpy(a)))
        seq = shapes["wpe"][0]
        self.mask = torch.triu(torch.full((seq, seq), -1e9), diagonal=1)

    def p(self, name):
        return getattr(self, name)

    def attention(self, h, i):
        b, s, e = h.shape
        d = e // self.heads

        def heads_of(w):
            return (h @ self.p(w + "_%d" % i)).view(b, s, self.heads, d).permute(0, 2, 1, 3)

        q, k, v = heads_of("wq"), heads_of("wk"), heads_of("wv")
        scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(d)) + self.mask
        ctx = torch.softmax(scores, dim=-1) @ v  # [B, H, S, D]
        ctx = ctx.permute(0, 2, 1, 3).reshape(b, s, e)
        return ctx @ self.p("wo_%d" % i)

    def forward(self, ids):
        e = self.wte.shape[1]
        x = self.wte[ids] + self.wpe
        for i in range(self.layers):
            h = F.layer_norm(x, (e,), self.p("ln1_g_%d" % i), self.p("ln1_b_%d" % i), 1e-5)
            x = x + self.attention(h, i)
            h = F.layer_norm(x, (e,), self.p("ln2_g_%d" % i), self.p("ln2_b_%d" % i), 1e-5)
            m = F.gelu(h @ self.p("w1_%d" % i), approximate="tanh")
            x = x + m @ self.p("w2_%d" % i)
        h = F.layer_norm(x, (e,), self.lnf_g, self.lnf_b, 1e-5)
        return h @ self.w_head


def forward(model, inputs, repeat):
    model.eval()
    times = []
    with torch.no_grad():
        for _ in range(2):
            out = model(*inputs)
        for _ in range(repeat):
            start = time.perf_counter()
            out = model(*inputs)
            times.append((time.perf_counter() - start) * 1e3)
    json.dump({"torch": torch.__version__, "threads": torch.get_num_threads(),
               "times_ms": times, "output_sum": float(out.sum())}, sys.stdout)
    sys.stdout.write("\n")


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    torch.set_num_threads(spec["threads"])
    if spec["model"].startswith("fixture-"):
        model = load_fixture(spec)
    else:
        model = GenGPT(spec["shapes"], spec["weights_dir"], spec["layers"],
                       spec["heads"])
    inputs = [torch.from_numpy(np.load(f)) for f in spec["inputs"]]
    if spec.get("mode") == "forward":
        forward(model, inputs, spec["repeat"])
        return
    model.train()
    labels = torch.from_numpy(np.load(spec["labels"]))
    o = spec["optimizer"]
    opt = torch.optim.Adam(model.parameters(), lr=o["lr"],
                           betas=tuple(o["betas"]), eps=o["eps"])

    def loss_fn(out):
        if spec["loss"] == "mse":
            return F.mse_loss(out, labels)
        return F.cross_entropy(out.reshape(-1, out.shape[-1]),
                               labels.reshape(-1))

    times, losses = [], []
    for _ in range(spec["steps"]):
        start = time.perf_counter()
        opt.zero_grad()
        loss = loss_fn(model(*inputs))
        loss.backward()
        opt.step()
        times.append((time.perf_counter() - start) * 1e3)
        losses.append(loss.item())
    json.dump({"torch": torch.__version__, "threads": torch.get_num_threads(),
               "times_ms": times, "losses": losses}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
