#!/usr/bin/env python3
"""Writes PyTorch reference fixtures for autoshard's training tests (run once).

Run with Debian's python3-torch (1.13) and python3-onnx, from anywhere:

    apt-get install -y python3-torch python3-onnx
    /usr/bin/python3 scripts/export_training_fixtures.py [OUT_DIR]

OUT_DIR defaults to test/Train/Inputs. For an MLP (mlp/) and a 2-layer
GPT (gpt/) it writes the ONNX model (opset 17, parameters as initializers,
no constant folding), the fixed batch, and what PyTorch's own training loop
(zero_grad, forward, loss, backward, opt.step()) gives for 5 steps with SGD,
SGD+momentum, Adam and AdamW: the loss before every update and the final
parameters, saved under the file names autoshard's ONNX importer gives the
initializers (in the initializer's layout). test/Train/Inputs/README.md
describes the files; config.json in each model directory records every
hyperparameter and the initializer <-> torch parameter mapping. Everything is
seeded and runs on one CPU thread, so a rerun writes the same numbers. The
outputs are committed: CI never needs torch.
"""
import copy
import json
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import numpy_helper
import torch
from torch import nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from export_onnx_models import GPT  # noqa: E402  (the import tests' GPT)

OPSET = 17
STEPS = 5
SEED = 20240611

# name -> (torch optimizer class, its keyword arguments). "momentum" is
# torch.optim.SGD with momentum (dampening 0, no Nesterov).
OPTIMIZERS = {
    "sgd": {"type": "sgd", "torch": "torch.optim.SGD", "lr": 0.05,
            "momentum": 0.0, "dampening": 0.0, "nesterov": False,
            "weight_decay": 0.0},
    "momentum": {"type": "momentum", "torch": "torch.optim.SGD", "lr": 0.05,
                 "momentum": 0.9, "dampening": 0.0, "nesterov": False,
                 "weight_decay": 0.0},
    "adam": {"type": "adam", "torch": "torch.optim.Adam", "lr": 0.01,
             "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0,
             "amsgrad": False},
    "adamw": {"type": "adamw", "torch": "torch.optim.AdamW", "lr": 0.01,
              "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.01,
              "amsgrad": False},
}

LOSS_DOC = {
    "mse": "F.mse_loss(output, labels) (mean over all elements)",
    "cross_entropy": "F.cross_entropy(output.reshape(-1, C), "
                     "labels.reshape(-1)) (mean over all positions; C = "
                     "output.shape[-1])",
}


class MLP(nn.Module):
    """Linear(16,32) -> GELU -> Linear(32,32) -> ReLU -> Linear(32,8)."""

    def __init__(self, d_in=16, hidden=32, d_out=8):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, d_out)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(self.act(self.fc1(x)))))


class TrainGPT(GPT):
    """export_onnx_models.GPT with its additive causal mask held as a plain
    tensor attribute instead of a registered buffer. A buffer is exported as
    a float initializer, which autoshard imports as a weight argument like
    any parameter (and a training step would update it); a plain attribute
    is traced as an ONNX Constant node, which the importer folds. So every
    float initializer of gpt/model.onnx is a trainable parameter."""

    def __init__(self, **kw):
        super().__init__(**kw)
        mask = self.causal_mask
        del self.causal_mask  # unregisters the buffer
        self.causal_mask = mask


def make_optimizer(name, params):
    c = OPTIMIZERS[name]
    if c["type"] in ("sgd", "momentum"):
        return torch.optim.SGD(params, lr=c["lr"], momentum=c["momentum"],
                               dampening=c["dampening"],
                               nesterov=c["nesterov"],
                               weight_decay=c["weight_decay"])
    cls = torch.optim.Adam if c["type"] == "adam" else torch.optim.AdamW
    return cls(params, lr=c["lr"], betas=tuple(c["betas"]), eps=c["eps"],
               weight_decay=c["weight_decay"], amsgrad=c["amsgrad"])


def compute_loss(loss, out, labels):
    if loss == "mse":
        return F.mse_loss(out, labels)
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), labels.reshape(-1))


def weight_file_name(name, used):
    """ModelImporter::weightFileName (lib/Import/OnnxImporter.cpp): every
    char outside [A-Za-z0-9._-] becomes '_', a leading '.' (or nothing) gets
    a 'w' prefix, and a clash with an earlier float initializer's file gets
    _1, _2, ... appended."""
    base = "".join(c if (c.isascii() and c.isalnum()) or c in "._-" else "_"
                   for c in name)
    if not base or base[0] == ".":
        base = "w" + base
    f = base + ".npy"
    k = 1
    while f in used:
        f = f"{base}_{k}.npy"
        k += 1
    used.add(f)
    return f


def distinct_values(model, gen):
    """Biases and LayerNorm affine parameters get distinct random values.
    torch.onnx.export deduplicates initializers with equal values (the
    default all-ones / all-zeros ones would collapse into one initializer plus
    Identity nodes, i.e. shared parameters), and non-trivial values make a
    dropped bias or a wrong broadcast visible."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.copy_(torch.randn(p.shape, generator=gen) * 0.1)
            elif p.dim() == 1:  # LayerNorm weight
                p.copy_(1.0 + torch.randn(p.shape, generator=gen) * 0.1)


def export_and_map(model, inputs, input_names, out_dir):
    """Exports model.onnx and maps every float initializer to the torch
    parameter (or buffer) it holds, as is or transposed."""
    path = os.path.join(out_dir, "model.onnx")
    model.eval()
    torch.onnx.export(model, tuple(inputs), path, opset_version=OPSET,
                      input_names=input_names, output_names=["output"],
                      do_constant_folding=False,
                      training=torch.onnx.TrainingMode.EVAL)
    proto = onnx.load(path)
    opsets = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
    assert opsets == [OPSET], opsets
    tensors = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    used, mapping, covered = set(), [], set()
    for t in proto.graph.initializer:
        a = numpy_helper.to_array(t)
        if a.dtype.kind != "f":
            continue  # integer initializers are shape data for the importer
        cands = []
        for tname, tv in list(tensors.items()) + list(buffers.items()):
            v = tv.detach().numpy()
            if v.shape == a.shape and np.array_equal(v, a):
                cands.append((tname, "identity"))
            if (v.ndim == 2 and v.shape[::-1] == a.shape
                    and np.array_equal(v.T, a)):
                cands.append((tname, "transpose"))
        # The initializer's own name wins if it is a candidate.
        own = [c for c in cands if c[0] == t.name]
        cands = own or cands
        if len(cands) != 1:
            raise SystemExit(f"initializer {t.name!r} {a.shape}: "
                             f"{len(cands)} matching tensors {cands}")
        tname, layout = cands[0]
        covered.add(tname)
        mapping.append({
            "onnx_name": t.name,
            "file": weight_file_name(t.name, used),
            "torch_name": tname,
            "layout": layout,
            "shape": list(a.shape),
            "trainable": tname in tensors,
        })
    missing = [n for n in tensors if n not in covered]
    if missing:
        raise SystemExit(f"parameters with no initializer: {missing}")
    frozen = [m["onnx_name"] for m in mapping if not m["trainable"]]
    if frozen:
        raise SystemExit(f"float initializers that are no parameter: {frozen}")
    dups = [n for n in covered
            if sum(m["torch_name"] == n for m in mapping) > 1]
    if dups:
        raise SystemExit(f"parameters in several initializers: {dups}")
    return mapping


def in_layout(tensor, layout):
    a = tensor.detach().numpy().astype(np.float32)
    return np.ascontiguousarray(a.T if layout == "transpose" else a)


def save_params(tensors, mapping, out_dir):
    """tensors: torch name -> tensor (parameters or their gradients)."""
    os.makedirs(out_dir, exist_ok=True)
    for m in mapping:
        if m["trainable"]:
            np.save(os.path.join(out_dir, m["file"]),
                    in_layout(tensors[m["torch_name"]], m["layout"]))


def train(init_model, name, loss, inputs, labels):
    model = copy.deepcopy(init_model)
    model.train()  # dropout is 0: train and eval forward are the same
    opt = make_optimizer(name, model.parameters())
    losses = []
    grads0 = None
    for step in range(STEPS):
        opt.zero_grad()
        out = model(*inputs)
        l = compute_loss(loss, out, labels)
        l.backward()
        if step == 0:
            grads0 = {n: p.grad.detach().clone()
                      for n, p in model.named_parameters()}
        opt.step()
        losses.append(l.item())
    with torch.no_grad():
        after = compute_loss(loss, model(*inputs), labels).item()
    return model, losses, after, grads0


def write_model(out_dir, model, inputs, input_names, runs, labels, extra):
    """runs: list of (optimizer, loss, suffix)."""
    # Regenerate everything but the hand-written strategy.yaml.
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        p = os.path.join(out_dir, f)
        if f.startswith(("final_", "grads")) and os.path.isdir(p):
            shutil.rmtree(p)
        elif f.endswith((".npy", ".onnx", ".json")):
            os.remove(p)
    for n, t in zip(input_names, inputs):
        np.save(os.path.join(out_dir, n + ".npy"), t.numpy())
    for f, t in labels.values():
        np.save(os.path.join(out_dir, f), t.numpy())
    mapping = export_and_map(model, inputs, input_names, out_dir)
    model.eval()
    with torch.no_grad():
        out = model(*inputs)
    np.save(os.path.join(out_dir, "output.npy"), out.numpy().astype(np.float32))
    model.train()
    with torch.no_grad():
        assert torch.equal(model(*inputs), out), "train != eval forward"

    config = dict(extra)
    config.update({
        "torch": torch.__version__,
        "onnx_opset": OPSET,
        "seed": SEED,
        "model": "model.onnx",
        "inputs": {n: {"file": n + ".npy", "dtype": str(t.dtype)[6:],
                       "shape": list(t.shape)}
                   for n, t in zip(input_names, inputs)},
        "output": {"name": "output", "file": "output.npy",
                   "shape": list(out.shape),
                   "note": "torch forward at the initial parameters"},
        "labels": {k: {"file": f, "dtype": str(t.dtype)[6:],
                       "shape": list(t.shape)}
                   for k, (f, t) in labels.items()},
        "losses": {k: LOSS_DOC[k] for k in labels},
        "steps": STEPS,
        "optimizers": {k: OPTIMIZERS[k] for k in
                       sorted({r[0] for r in runs}, key=list(OPTIMIZERS).index)},
        "initializers": mapping,
        "runs": [],
    })
    grads_done = set()
    for opt, loss, suffix in runs:
        tag = opt + suffix
        final, losses, after, grads0 = train(model, opt, loss, inputs,
                                         labels[loss][1])
        with open(os.path.join(out_dir, f"losses_{tag}.json"), "w") as f:
            json.dump(losses, f)
            f.write("\n")
        save_params(dict(final.named_parameters()), mapping,
                    os.path.join(out_dir, f"final_{tag}"))
        run = {"optimizer": opt, "loss": loss, "labels": labels[loss][0],
               "losses": f"losses_{tag}.json", "final": f"final_{tag}/",
               "loss_after_last_step": after}
        if loss not in grads_done:
            gdir = "grads" + suffix
            save_params(grads0, mapping, os.path.join(out_dir, gdir))
            grads_done.add(loss)
        run["grads_step0"] = "grads" + suffix + "/"
        config["runs"].append(run)
        print(f"{out_dir}: {tag:12s} {loss:13s} losses {losses} "
              f"after {after}")
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=1)
        f.write("\n")
    for m in mapping:
        print(f"  {m['onnx_name']:32s} -> {m['file']:34s} "
              f"{m['torch_name']} ({m['layout']})")


def main():
    out_root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        HERE, "..", "test", "Train", "Inputs")
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    # MLP: x [8, 16] f32; mse labels [8, 8] f32, cross_entropy labels [8].
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    mlp = MLP()
    distinct_values(mlp, gen)
    x = torch.randn((8, 16), generator=gen)
    y_mse = torch.randn((8, 8), generator=gen)
    y_ce = torch.randint(0, 8, (8,), generator=gen, dtype=torch.int64)
    runs = [(o, "mse", "") for o in OPTIMIZERS] + \
           [(o, "cross_entropy", "_ce") for o in OPTIMIZERS]
    write_model(os.path.join(out_root, "mlp"), mlp, [x], ["x"], runs,
                {"mse": ("labels_mse.npy", y_mse),
                 "cross_entropy": ("labels_ce.npy", y_ce)},
                {"name": "mlp", "definition":
                 "Linear(16,32) -> GELU(erf) -> Linear(32,32) -> ReLU -> "
                 "Linear(32,8); biases re-drawn N(0, 0.1^2)"})

    # An MLP whose weights divide over no data axis of 4 or 8 ranks (7 and 10
    # rows/columns): optimizer shard splits them unevenly, padded
    # (test/Train/optimizer-shard-uneven.test). x [64, 10]; mse labels
    # [64, 6]: a batch larger than the weights, so that a data-parallel plan
    # reduces the gradients rather than gathering the batch.
    torch.manual_seed(SEED + 2)
    gen = torch.Generator().manual_seed(SEED + 2)
    uneven = MLP(d_in=10, hidden=7, d_out=6)
    distinct_values(uneven, gen)
    x = torch.randn((64, 10), generator=gen)
    y_mse = torch.randn((64, 6), generator=gen)
    write_model(os.path.join(out_root, "mlp_uneven"), uneven, [x], ["x"],
                [(o, "mse", "") for o in ("sgd", "adam")],
                {"mse": ("labels_mse.npy", y_mse)},
                {"name": "mlp_uneven", "definition":
                 "Linear(10,7) -> GELU(erf) -> Linear(7,7) -> ReLU -> "
                 "Linear(7,6); biases re-drawn N(0, 0.1^2)"})

    # GPT (export_onnx_models.GPT): vocab 64, seq 8, embed 32, 4 heads,
    # ffn 64, 2 blocks, no dropout; ids/labels [4, 8] i64, labels = next token.
    torch.manual_seed(SEED + 1)
    gen = torch.Generator().manual_seed(SEED + 1)
    gpt = TrainGPT(vocab=64, seq=8, embed=32, heads=4, ffn=64, layers=2)
    distinct_values(gpt, gen)
    ids = torch.randint(0, 64, (4, 8), generator=gen, dtype=torch.int64)
    labels = torch.empty_like(ids)
    labels[:, :-1] = ids[:, 1:]
    labels[:, -1] = torch.randint(0, 64, (4,), generator=gen, dtype=torch.int64)
    write_model(os.path.join(out_root, "gpt"), gpt, [ids], ["ids"],
                [(o, "cross_entropy", "") for o in OPTIMIZERS],
                {"cross_entropy": ("labels.npy", labels)},
                {"name": "gpt", "definition":
                 "scripts/export_onnx_models.py GPT(vocab=64, seq=8, "
                 "embed=32, heads=4, ffn=64, layers=2): token + positional "
                 "nn.Embedding, 2 pre-LN blocks (LayerNorm, causal "
                 "nn.MultiheadAttention (additive -1e9 mask, exported as a "
                 "Constant node, not an initializer), "
                 "LayerNorm, Linear-GELU(erf)-Linear), final LayerNorm, "
                 "head Linear(32,64, bias=False); dropout 0; biases and "
                 "LayerNorm affine re-drawn (bias N(0,0.1^2), LN weight "
                 "1+N(0,0.1^2))"})


if __name__ == "__main__":
    main()
