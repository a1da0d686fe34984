#!/usr/bin/env python3
"""Memory, gradient communication and step time of the training-step features.

For the bundled GPT (examples/gpt-train.mlir: scripts/gen_models.py gpt
--layers 2 --vocab 64 --seq 8 --embed 32 --heads 4 --mesh dp=2,mp=4 --params)
on 8 CPU ranks, Adam, cross entropy, one fixed global batch (--batch,
default 8 sequences), five cumulative rows:

  plain             the step as it is, gradient fusion off
  optimizer shard   + --optimizer-shard (ZeRO-1; --os-threshold, default 1024 B)
  + accumulation 4  + --micro-batches 4 (the model generated at a quarter of
                    the batch, fed all of it)
  + fusion          + --fusion-threshold-mb 64 (gradient buckets)
  + recompute       + --recompute all

Each row runs `autoshard train ... --report R --memory-out M` (memory per
device from the propagation report, the optimizer state each rank's
autoshard-run holds from M, step times from its `step K/N loss X (T ms)`
lines) and
compiles the same step with `autoshard-opt --dist-training-step=...
--autoshard-pipeline='... fusion-report=F partition-report=P'` (gradient
collectives before and after fusion and their bytes, every collective's
bytes), checking that both programs have the same collectives. All rows run
the same computation: their losses must equal the plain row's (rel 1e-4).

--quick: the same rows on dp=2,mp=2 (4 ranks), 2 steps (the smoke test).
Python 3 standard library only; bench/README.md explains the columns.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(REPO, "scripts", "gen_models.py")
BUNDLED = os.path.join(REPO, "examples", "gpt-train.mlir")
CLUSTER = os.path.join(HERE, "features-cluster.json")
# The bundled GPT's generator arguments, without --batch and --mesh.
GPT = ["gpt", "--layers", "2", "--vocab", "64", "--seq", "8", "--embed", "32",
       "--heads", "4"]
VOCAB = 64
SEQ = 8
BATCH = 8            # default global batch (sequences) of every row
MICRO = 4            # micro-batches of the accumulation rows
LOSS_RTOL = 1e-4
STEP_RE = re.compile(r"^step (\d+)/(\d+) loss (\S+) \(([0-9.]+) ms\)", re.M)

# name, micro-batches, optimizer shard, fusion, recompute
ROWS = [
    ("plain", 1, False, False, False),
    ("optimizer shard", 1, True, False, False),
    ("+ accumulation 4", MICRO, True, False, False),
    ("+ fusion", MICRO, True, True, False),
    ("+ recompute", MICRO, True, True, True),
]
MEMORY = [("params", "parameter_bytes_per_device"),
          ("grads", "gradient_bytes_per_device"),
          ("opt state", "optimizer_state_bytes_per_device"),
          ("activations", "activation_bytes_per_device"),
          ("total", "memory_bytes_per_device")]


class BenchError(Exception):
    pass


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise BenchError("timed out after %gs: %s" % (timeout, " ".join(cmd[:2])))
    except OSError as e:
        raise BenchError("cannot run %s: %s" % (cmd[0], e.strerror))
    if p.returncode != 0:
        text = (p.stderr + p.stdout).strip().splitlines()
        err = next((l for l in text if "error" in l.lower()), text[0] if text else "")
        raise BenchError("%s: %s (exit status %d)" % (os.path.basename(cmd[0]),
                                                      err.strip()[:200], p.returncode))
    return p.stdout


def write_i64_npy(path, rows, cols, f):
    """rows x cols int64 .npy (format 1.0, C order) of f(r, c)."""
    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        out.write(header.encode("latin1"))
        out.write(struct.pack("<%dq" % (rows * cols),
                              *(f(r, c) for r in range(rows) for c in range(cols))))


def find_tool(name, bindir):
    path = os.path.join(bindir, name) if bindir else \
        shutil.which(name) or os.path.join(REPO, "build", "bin", name)
    if not os.path.exists(path):
        sys.exit("error: no %s (build autoshard, or give --bin DIR)" % path)
    return path


def generate(batch, mesh, path):
    text = run([sys.executable, GEN] + GPT + ["--batch", str(batch), "--mesh", mesh,
                                              "--params"], 60)
    with open(path, "w") as f:
        f.write(text)
    return text


def same_as_bundled(text):
    """Whether the generated batch-4 dp=2,mp=4 model is examples/gpt-train.mlir
    (the first line, the command, aside)."""
    try:
        with open(BUNDLED) as f:
            bundled = f.read()
    except OSError:
        return False
    return bundled.split("\n", 1)[1:] == text.split("\n", 1)[1:]


def collectives(path):
    """Sorted `shard.<kind> ... : types` lines of a program: what it communicates."""
    out = []
    with open(path) as f:
        for line in f:
            m = re.search(r"shard\.(all_reduce|reduce_scatter|all_gather|all_to_all|"
                          r"all_slice)\s+\S+\s+on\s+(.*)$", line)
            if m:
                out.append(m.group(1) + " " + m.group(2).strip())
    return sorted(out)


def batch_gathers(path):
    """all_gathers of integer tensors (token ids, labels) over dp (grid axis 0):
    where the plan gathers the batch instead of keeping it split."""
    with open(path) as f:
        return sum(1 for line in f
                   if re.search(r"shard\.all_gather .*grid_axes = \[0\].*xi64>", line))


def row_flags(micro, shard, fusion, recompute, args):
    train, step = [], []
    if micro > 1:
        train += ["--micro-batches", str(micro)]
        step.append("micro-batches=%d" % micro)
    if shard:
        train += ["--optimizer-shard", "--optimizer-shard-threshold", str(args.os_threshold)]
        step += ["optimizer-shard=true", "optimizer-shard-threshold=%d" % args.os_threshold]
    if recompute:
        train += ["--recompute", "all"]
        step.append("recompute=all")
    mb = args.fusion_mb if fusion else 0
    train += ["--fusion-threshold-mb", "%g" % mb]
    return train, step, mb


def run_row(name, micro, shard, fusion, recompute, ctx, args, tools, work):
    slug = re.sub(r"[^a-z0-9]+", "-", name).strip("-")
    d = os.path.join(work, slug)
    os.makedirs(d, exist_ok=True)
    model = ctx["models"][micro]
    train_flags, step_opts, mb = row_flags(micro, shard, fusion, recompute, args)
    report = os.path.join(d, "report.json")
    losses = os.path.join(d, "losses.json")
    memory = os.path.join(d, "memory.json")
    cmd = [tools["autoshard"], "train", model, "--cluster", args.cluster,
           "--input", "ids=" + ctx["ids"], "--labels", ctx["labels"],
           "--loss", "cross_entropy", "--optimizer", "adam", "--lr", "0.01",
           "--steps", str(args.steps), "--report", report, "--losses-out", losses,
           "--memory-out", memory, "--work-dir", os.path.join(d, "work")] + train_flags
    start = time.perf_counter()
    out = run(cmd, args.timeout)
    wall = time.perf_counter() - start
    steps = [(int(k), float(ms)) for k, _, _, ms in STEP_RE.findall(out)]
    if len(steps) != args.steps:
        raise BenchError("expected %d step lines from autoshard train, got %d"
                         % (args.steps, len(steps)))
    with open(report) as f:
        prop = json.load(f)
    with open(losses) as f:
        loss_list = json.load(f)
    with open(memory) as f:
        held = json.load(f)

    # The same step through autoshard-opt, for the fusion and partition
    # reports (autoshard train writes neither).
    fusion_report = os.path.join(d, "fusion.json")
    part_report = os.path.join(d, "partition.json")
    program = os.path.join(d, "step.mlir")
    step = " ".join(["loss=cross_entropy optimizer=adam lr=0.01 data-axis=dp"] + step_opts)
    pipeline = "cluster=%s fusion-threshold-mb=%g fusion-report=%s partition-report=%s" % (
        args.cluster, mb, fusion_report, part_report)
    run([tools["autoshard-opt"], model, "--dist-training-step=" + step,
         "--autoshard-pipeline=" + pipeline, "-o", program], args.timeout)
    with open(fusion_report) as f:
        fus = json.load(f)
    with open(part_report) as f:
        part = json.load(f)
    same = collectives(program) == collectives(os.path.join(d, "work", "train_step.mlir"))

    times = [ms for k, ms in steps if k >= 2] or [ms for _, ms in steps]
    return {
        "row": name,
        "model": os.path.relpath(model, work),
        "micro_batches": micro,
        "optimizer_shard": shard,
        "fusion_threshold_mb": mb,
        "recompute": "all" if recompute else "none",
        "train_flags": train_flags,
        "memory": {key: prop.get(key) for _, key in MEMORY},
        "runtime_bytes_max_over_ranks": held["max"],
        "propagation_collectives": prop.get("collectives", {}),
        "gradient_collectives_before": fus["gradient_collectives_before"],
        "gradient_collectives_after": fus["gradient_collectives_after"],
        "fused_buckets": fus["fused_buckets"],
        "gradient_collective_bytes": fus["gradient_bytes_per_device"],
        "buckets": fus["buckets"],
        "comm_bytes_per_device": part["comm_bytes_per_device"],
        "partition_collectives": part["collectives"],
        "same_program_as_train": same,
        "batch_gathers_over_dp": batch_gathers(program),
        "step_ms": [ms for _, ms in steps],
        "step_ms_median": statistics.median(times),
        "losses": loss_list,
        "wall_s": round(wall, 2),
    }


def kib(v):
    return "-" if v is None else "%.1f" % (v / 1024.0)


def print_table(meta, rows):
    print("# autoshard training-step features: %s on %s (%d CPU ranks), Adam, "
          "cross entropy, global batch %d x %d tokens, %d steps"
          % (meta["model"], meta["mesh"], meta["ranks"], meta["global_batch"], SEQ, meta["steps"]))
    print("# cluster %s, optimizer-shard threshold %d B, fusion %g MB; load %s on %d CPUs; %s"
          % (os.path.relpath(meta["cluster"], REPO) if meta["cluster"].startswith(REPO)
             else meta["cluster"], meta["os_threshold"], meta["fusion_mb"],
             " ".join("%.2f" % l for l in meta["load_before"]), meta["cpus"], meta["date"]))
    print("# memory in KiB per device (propagation report); state run = the optimizer "
          "state autoshard-run holds (max over ranks); grad colls = gradient "
          "collectives before -> after fusion, grad B = their bytes per device "
          "(fusion report); comm B = every collective (partition report); ids AG = "
          "all_gathers of token ids over dp; step = median of steps 2..N")
    head = ["row"] + [m for m, _ in MEMORY] + ["state run", "grad colls", "grad B", "comm B",
                                               "ids AG", "step ms", "loss vs plain"]
    lines = []
    for r in rows:
        if "error" in r:
            lines.append([r["row"], "failed: " + r["error"]])
            continue
        lines.append([r["row"]] + [kib(r["memory"][k]) for _, k in MEMORY] + [
            kib(r["runtime_bytes_max_over_ranks"]["optimizer_state"]),
            "%d -> %d" % (r["gradient_collectives_before"], r["gradient_collectives_after"]),
            str(r["gradient_collective_bytes"]), str(r["comm_bytes_per_device"]),
            str(r["batch_gathers_over_dp"]), "%.2f" % r["step_ms_median"],
            r["loss_check"] + ("" if r["same_program_as_train"] else " (programs differ!)")])
    widths = [max(len(str(l[i])) for l in [head] + lines if i < len(l))
              for i in range(len(head))]
    for l in [head] + lines:
        if len(l) == 2 and l[1].startswith("failed"):
            print(l[0].ljust(widths[0]) + "  " + l[1])
            continue
        print("  ".join([str(l[0]).ljust(widths[0])] +
                        [str(c).rjust(w) for c, w in zip(l[1:], widths[1:])]))
    for r in rows:
        if r.get("buckets"):
            print("# %s: %s" % (r["row"], ", ".join(
                "%d x %s %d B over axes %s" % (b["collectives"], b["kind"], b["bytes"],
                                                b["grid_axes"]) for b in r["buckets"])))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Rows: " + ", ".join(r[0] for r in ROWS))
    ap.add_argument("--quick", action="store_true",
                    help="smoke mode: mesh dp=2,mp=2 (4 ranks), 2 steps")
    ap.add_argument("--steps", type=int, help="training steps per row (default 10; quick 2)")
    ap.add_argument("--mesh", help="mesh (default dp=2,mp=4; quick dp=2,mp=2); needs dp")
    ap.add_argument("--cluster", default=CLUSTER,
                    help="cluster file for the cost model (default features-cluster.json)")
    ap.add_argument("--batch", type=int, default=BATCH,
                    help="global batch in sequences (default %d; the accumulation rows' "
                         "model takes a quarter of it)" % BATCH)
    ap.add_argument("--os-threshold", type=int, default=1024,
                    help="--optimizer-shard-threshold in bytes (default 1024)")
    ap.add_argument("--fusion-mb", type=float, default=64.0,
                    help="fusion threshold of the fusion rows (default 64)")
    ap.add_argument("--bin", help="directory of autoshard and autoshard-opt "
                                  "(default: PATH, else build/bin)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--keep", help="keep models, reports and programs in this directory")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per command")
    args = ap.parse_args(argv)
    mesh = args.mesh or ("dp=2,mp=2" if args.quick else "dp=2,mp=4")
    args.steps = args.steps or (2 if args.quick else 10)
    if args.steps < 1:
        sys.exit("error: --steps must be at least 1")
    axes = {}
    for part in mesh.split(","):
        name, _, size = part.partition("=")
        if not size.isdigit() or int(size) < 1:
            sys.exit("error: bad --mesh '%s' (NAME=SIZE,...)" % mesh)
        axes[name] = int(size)
    dp = axes.get("dp")
    batch = args.batch
    if not dp or batch < 1 or batch % (dp * MICRO):
        sys.exit("error: the global batch (%d) must divide into %d micro-batches "
                 "over the mesh's dp axis, got --mesh '%s'" % (batch, MICRO, mesh))
    ranks = 1
    for s in axes.values():
        ranks *= s
    args.cluster = os.path.abspath(args.cluster)
    if not os.path.exists(args.cluster):
        sys.exit("error: no cluster file %s" % args.cluster)
    tools = {t: find_tool(t, args.bin) for t in ("autoshard", "autoshard-opt")}

    work = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="features-")
    os.makedirs(work, exist_ok=True)
    load_before = list(os.getloadavg())
    meta = {"model": "bundled GPT", "mesh": mesh, "ranks": ranks, "steps": args.steps,
            "global_batch": batch, "seq": SEQ, "micro_batches": MICRO,
            "cluster": args.cluster, "os_threshold": args.os_threshold,
            "fusion_mb": args.fusion_mb, "cpus": os.cpu_count(),
            "load_before": load_before,
            "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M")}
    rows = []
    try:
        models = {1: os.path.join(work, "gpt-b%d.mlir" % batch),
                  MICRO: os.path.join(work, "gpt-b%d.mlir" % (batch // MICRO))}
        generate(batch, mesh, models[1])
        generate(batch // MICRO, mesh, models[MICRO])
        meta["generator"] = "gen_models.py " + " ".join(GPT) + " --mesh %s --params " \
                            "--batch %d | %d" % (mesh, batch, batch // MICRO)
        meta["same_as_bundled_at_batch_4"] = same_as_bundled(
            run([sys.executable, GEN] + GPT + ["--batch", "4", "--mesh", "dp=2,mp=4",
                                               "--params"], 60))
        # ids[b, s] = (7 b + 3 s + 1) mod 64 and its next token, as
        # examples/train-batch.mlir (the main job's batch), for 8 sequences.
        ctx = {"models": models, "ids": os.path.join(work, "ids.npy"),
               "labels": os.path.join(work, "labels.npy")}
        write_i64_npy(ctx["ids"], batch, SEQ, lambda b, s: (7 * b + 3 * s + 1) % VOCAB)
        write_i64_npy(ctx["labels"], batch, SEQ, lambda b, s: (7 * b + 3 * s + 4) % VOCAB)
        for name, micro, shard, fusion, recompute in ROWS:
            try:
                rows.append(run_row(name, micro, shard, fusion, recompute, ctx, args,
                                    tools, work))
            except (BenchError, OSError, KeyError, ValueError) as e:
                rows.append({"row": name, "error": str(e)})
    except BenchError as e:
        sys.exit("error: %s" % e)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    meta["load_after"] = list(os.getloadavg())

    failed = False
    plain = rows[0].get("losses") if rows and "error" not in rows[0] else None
    for r in rows:
        if "error" in r:
            failed = True
            continue
        if plain is None or len(plain) != len(r["losses"]):
            r["loss_check"], r["loss_max_rel_diff"] = "no reference", None
            failed = True
            continue
        worst = max(abs(a - b) / abs(b) for a, b in zip(r["losses"], plain))
        r["loss_max_rel_diff"] = worst
        r["loss_check"] = ("equal" if worst == 0 else "rel %.1e" % worst) \
            if worst <= LOSS_RTOL else "DIFFERS rel %.1e" % worst
        failed |= worst > LOSS_RTOL or not r["same_program_as_train"]
    print_table(meta, rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
            f.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
