#!/usr/bin/env python3
"""Conv layers on 4 ranks: H/W split (halo exchange) vs batch split vs
replicated. Bytes each rank sends and the time of a forward.

    python3 bench/runtime/conv.py [--quick] [--ranks 4] [--json FILE]

A stack of `--layers` 3x3 convs (padding 1, stride 1, ReLU between) on
[N, C, H, W] images, written as MLIR with the input and every conv's output
laid out per strategy:
  hw          rows over the mesh: each conv receives one halo row from each
              neighbour (dist.permute) before computing its own rows
  batch       images over the mesh (data parallel): no communication
  replicated  every rank computes everything: no communication, no speed-up
Compiled with autoshard-opt --autoshard-pipeline (partition-report: bytes per
device, as the emitted collectives move them), run with mpirun -np RANKS
autoshard-run --repeat R (mean step time, rank 0). Needs mpirun; the ranks
share this machine's cores, so times on an oversubscribed machine say more
about the split's work than about its speed. Python 3 standard library only.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchlib  # noqa: E402
from benchlib import BenchError, checked  # noqa: E402

STRATEGIES = {
    # input/output layout of every conv: which dim goes over the mesh axis d
    "hw": 2,
    "batch": 0,
    "replicated": None,
}


def dims(dim, rank=4):
    return "[%s]" % ", ".join("[d]" if d == dim else "[]" for d in range(rank))


def layout(dim):
    return "#dist.layout<#mesh, %s>" % dims(dim)


def model(n, c, h, w, layers, ranks, split):
    """MLIR of the conv stack with `split`'s layouts."""
    lay = layout(STRATEGIES[split])
    split_dims, whole = dims(STRATEGIES[split]), dims(None)
    x = "tensor<%dx%dx%dx%dxf32>" % (n, c, h, w)
    xp = "tensor<%dx%dx%dx%dxf32>" % (n, c, h + 2, w + 2)
    wt = "tensor<%dx%dx3x3xf32>" % (c, c)
    args = ", ".join(["%%x: %s" % x] + ["%%w%d: %s" % (i, wt) for i in range(layers)])
    lines = ["#mesh = #dist.mesh<[d = %d]>" % ranks,
             "#map = affine_map<(a, b, c, d) -> (a, b, c, d)>",
             "func.func @main(%s) -> %s {" % (args, x),
             "  %zero = arith.constant 0.0 : f32",
             "  %%v0 = dist.annotate %%x : %s as %s" % (x, lay)]
    # A spatially split conv reads its padded input whole (the halo).
    strategy = "#dist.strategy<#mesh, in = [%s, %s], out = [%s]>" % (
        whole if split == "hw" else split_dims, whole, split_dims)
    # The ReLU keeps the split too: with the images this small, two halo
    # permutes cost more than one all-gather, and propagation would rather
    # gather before the ReLU (then the conv just slices its window).
    relu = "#dist.strategy<#mesh, in = [%s], out = [%s]>" % (split_dims,
                                                             split_dims)
    for i in range(layers):
        lines += [
            "  %%p%d = tensor.pad %%v%d low[0, 0, 1, 1] high[0, 0, 1, 1] {" % (i, i),
            "  ^bb0(%a: index, %b: index, %c: index, %d: index):",
            "    tensor.yield %zero : f32",
            "  } : %s to %s" % (x, xp),
            "  %%e%d = tensor.empty() : %s" % (i, x),
            "  %%i%d = linalg.fill ins(%%zero : f32) outs(%%e%d : %s) -> %s" % (i, i, x, x),
            "  %%c%d = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, "
            "strides = dense<1> : tensor<2xi64>, dist.strategy = %s} ins(%%p%d, %%w%d : %s, %s) "
            "outs(%%i%d : %s) -> %s" % (i, strategy, i, i, xp, wt, i, x, x),
            "  %%v%d = linalg.generic {indexing_maps = [#map, #map], iterator_types = "
            "[\"parallel\", \"parallel\", \"parallel\", \"parallel\"], dist.strategy = %s} "
            "ins(%%c%d : %s) outs(%%e%d : %s) {" % (i + 1, relu, i, x, i, x),
            "  ^bb0(%in: f32, %out: f32):",
            "    %%r%d = arith.maximumf %%in, %%zero : f32" % i,
            "    linalg.yield %%r%d : f32" % i,
            "  } -> %s" % x]
    lines += ["  %%out = dist.annotate %%v%d : %s as %s" % (layers, x, lay),
              "  return %%out : %s" % x, "}"]
    return "\n".join(lines) + "\n"


def bench(split, args, tools, work):
    src = os.path.join(work, split + ".mlir")
    with open(src, "w") as f:
        f.write(model(args.batch, args.channels, args.size, args.size, args.layers,
                      args.ranks, split))
    spmd = os.path.join(work, split + ".spmd.mlir")
    report = os.path.join(work, split + ".json")
    checked([tools["opt"], src, "--autoshard-pipeline=partition-report=" + report,
             "-o", spmd], args.timeout)
    with open(report) as f:
        rep = json.load(f)
    with open(spmd) as f:
        text = f.read()
    cmd = [tools["mpirun"], "--allow-run-as-root", "--oversubscribe", "-np",
           str(args.ranks), tools["run"], spmd, "--repeat", str(args.repeat),
           "--write-outputs=false", "--timeout", str(args.timeout)]
    out, _, _ = checked(cmd, args.timeout * 2, benchlib.thread_env(1))
    ms = None
    for line in out.splitlines():
        if line.startswith("step time:"):
            ms = float(line.split()[2]) * 1e3
    if ms is None:
        raise BenchError("no 'step time:' line from autoshard-run --repeat")
    return {"split": split, "bytes_per_device": rep["comm_bytes_per_device"],
            "planned_bytes_per_device": rep["planned_comm_bytes_per_device"],
            "collectives": rep["collectives"],
            "permutes": text.count("dist.permute"),
            "all_gathers": text.count("shard.all_gather"), "ms": ms}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="tiny sizes, one repeat (the lit smoke test)")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--channels", type=int, default=16)
    ap.add_argument("--size", type=int, default=64, help="H = W")
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5,
                    help="runs per timing (at least 2)")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if args.quick:
        args.batch, args.channels, args.size, args.layers, args.repeat = 4, 4, 16, 2, 2
    if args.repeat < 2:
        ap.error("--repeat must be at least 2 (autoshard-run reports a mean)")
    for name, v in (("--batch", args.batch), ("--size", args.size)):
        if v % args.ranks:
            ap.error("%s %d is not divisible by --ranks %d" % (name, v, args.ranks))
    build = os.path.join(benchlib.REPO, "build", "bin")
    tools = {"opt": os.path.join(build, "autoshard-opt"),
             "run": os.path.join(build, "autoshard-run"),
             "mpirun": shutil.which("mpirun")}
    missing = [k for k, v in tools.items() if not v or not os.path.exists(v)]
    if missing:
        print("error: missing tools: %s (build first; mpirun from openmpi-bin)"
              % ", ".join(missing), file=sys.stderr)
        return 1
    results = []
    with tempfile.TemporaryDirectory() as work:
        try:
            for split in STRATEGIES:
                results.append(bench(split, args, tools, work))
        except BenchError as e:
            print("error: %s" % e, file=sys.stderr)
            return 1
    print("# %d x conv 3x3 on [%d, %d, %d, %d], %d ranks (mean of %d runs, rank 0)"
          % (args.layers, args.batch, args.channels, args.size, args.size, args.ranks,
             args.repeat))
    print("split bytes/device planned permutes all_gathers ms")
    for r in results:
        print("%s %d %d %d %d %.3f" % (r["split"], r["bytes_per_device"],
                                       r["planned_bytes_per_device"], r["permutes"],
                                       r["all_gathers"], r["ms"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
