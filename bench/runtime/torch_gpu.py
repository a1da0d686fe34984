#!/usr/bin/env python3
"""PyTorch eager on a GPU, for scripts/gpu-check.sh (the CUDA column of issue 23).

    python3 bench/runtime/torch_gpu.py --fixture gpt --weights-dir DIR \
        [--repeat 50] [--output OUT.npy] [--device cuda]
        [--precision fp32|tf32|bf16|fp16]

Builds the committed fixture's model (test/Train/Inputs/NAME: the classes of
scripts/export_training_fixtures.py, parameters from the .npy files
autoshard-translate wrote to DIR, as bench/training/torch_step.py does on the
CPU), moves it and the fixture's batch to the device and times `repeat`
forward passes under torch.no_grad() after two warm-up calls, each timed
with torch.cuda.synchronize() on both sides (so a pass is the whole forward,
launch overhead included, as autoshard-run --repeat measures it). Prints one
JSON object: torch version, device name, per-pass times (ms), their mean;
--output writes the forward's result (for comparing with autoshard's).
With --steps N it instead runs N Adam training steps (cross-entropy on the
fixture's labels, lr 0.01, as bench/runtime/run.py's autoshard step) and
prints each step's time and loss (the loss's .item() waits for the step, as
autoshard-run's per-step loss line does).
--precision is the PyTorch side of `autoshard compile --precision`: fp32
turns TF32 off for matmuls and cuDNN, tf32 turns it on, bf16/fp16 run the
forward (and the loss) under torch.autocast, which casts matmul inputs and
keeps FP32 master weights, as autoshard's mixed-precision pass does (autocast
also returns the matmul results in the low precision; autoshard keeps them
FP32, so outputs differ at that precision's rounding level).
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "bench", "training"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture", default="gpt", choices=("gpt", "mlp"))
    ap.add_argument("--weights-dir", required=True)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--output")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--steps", type=int, default=0,
                    help="time N Adam training steps instead of the forward")
    ap.add_argument("--precision", default="fp32",
                    choices=("fp32", "tf32", "bf16", "fp16"))
    args = ap.parse_args()

    import numpy as np
    import torch
    import torch_step  # bench/training: the fixture models

    fixture = os.path.join(REPO, "test", "Train", "Inputs", args.fixture)
    with open(os.path.join(fixture, "config.json")) as f:
        config = json.load(f)
    spec = {"model": "fixture-" + args.fixture,
            "config": os.path.join(fixture, "config.json"),
            "weights_dir": args.weights_dir}
    device = torch.device(args.device)
    model = torch_step.load_fixture(spec).to(device).eval()
    # Tensors held as plain attributes (the fixtures' causal mask, kept out
    # of the ONNX initializers) are not moved by .to(): move them too.
    for mod in model.modules():
        for name, value in list(vars(mod).items()):
            if isinstance(value, torch.Tensor):
                setattr(mod, name, value.to(device))
    inputs = [torch.from_numpy(np.load(os.path.join(fixture, d["file"]))).to(device)
              for d in config["inputs"].values()]

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    tf32 = args.precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    low = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(args.precision)

    def autocast():
        return torch.autocast(device_type=device.type, dtype=low,
                              enabled=low is not None)

    if args.steps:
        train(model, inputs, fixture, config, device, args.steps, autocast)
        return
    times = []
    with torch.no_grad(), autocast():
        for _ in range(2):
            out = model(*inputs)
        for _ in range(args.repeat):
            sync()
            start = time.perf_counter()
            out = model(*inputs)
            sync()
            times.append((time.perf_counter() - start) * 1e3)
    if args.output:
        np.save(args.output, out.float().cpu().numpy())
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    json.dump({"torch": torch.__version__, "device": name,
               "precision": args.precision, "times_ms": times,
               "mean_ms": sum(times) / len(times)}, sys.stdout)
    sys.stdout.write("\n")


def train(model, inputs, fixture, config, device, steps, autocast):
    import numpy as np
    import torch
    import torch.nn.functional as F

    labels = torch.from_numpy(np.load(os.path.join(
        fixture, config["labels"]["cross_entropy"]["file"]))).to(device)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=0.01, betas=(0.9, 0.999),
                           eps=1e-8)
    times, losses = [], []
    for _ in range(steps):
        start = time.perf_counter()
        opt.zero_grad()
        with autocast():
            out = model(*inputs)
            loss = F.cross_entropy(out.float().reshape(-1, out.shape[-1]),
                                   labels.reshape(-1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
        times.append((time.perf_counter() - start) * 1e3)
    rest = sorted(times[1:] or times)
    json.dump({"torch": torch.__version__, "times_ms": times, "losses": losses,
               "median_ms": rest[len(rest) // 2]}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
