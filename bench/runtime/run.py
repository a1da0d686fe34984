#!/usr/bin/env python3
"""Runtime speed: forward and training step on 1 rank next to PyTorch CPU.

For each committed fixture (test/Train/Inputs/mlp, test/Train/Inputs/gpt)
it imports the ONNX model (autoshard-translate), builds its Adam training
step (autoshard-opt --dist-training-step), and times on one rank, for each
thread count (default 1 and all CPUs):

  forward  autoshard-run --repeat R (the mean of R runs; median of --runs
           invocations) against torch's forward under no_grad (mean of R
           calls after two warm-up calls)
  step     autoshard-run --steps N (median of steps 2..N) against torch's
           zero_grad + forward + loss + backward + Adam step (median of
           steps 2..N)

with the same thread count on both sides (OPENBLAS_NUM_THREADS,
OMP_NUM_THREADS, torch.set_num_threads). A last run with --profile-json
(on the first thread count) gives the time per kernel kind.

The driver is Python 3 standard library only (bench/benchlib.py). The torch
column needs a python with torch and numpy (--torch-python; default: this
python, else /usr/bin/python3); without one it is left out with a note.
bench/README.md ("Runtime speed") describes the columns and the results.
"""

import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import benchlib  # noqa: E402
from benchlib import BenchError, checked, fmt_ms, fmt_ratio, median  # noqa: E402

MODELS = ("mlp", "gpt")
ADAM = {"name": "adam", "lr": 0.01, "betas": [0.9, 0.999], "eps": 1e-8}
TARGET = 1.2  # issue 23: autoshard <= 1.2x PyTorch's time
STEP_LINE = re.compile(r"^step (\d+)/(\d+) loss (\S+) \(([\d.]+) ms\)")
REPEAT_LINE = re.compile(r"^step time: ([\d.eE+-]+) s \((\d+) runs\)")
LEFT = ("model", "run", "kind")


def table(header, rows):
    return benchlib.table(header, rows, LEFT)


class Model:
    def __init__(self, name, args, tools, work):
        self.fixture = fx = benchlib.Fixture(name)
        self.name = name
        self.weights = os.path.join(work, name + "-weights")
        self.forward = os.path.join(work, name + ".mlir")
        checked(fx.import_cmd(tools["translate"], self.weights, self.forward), args.timeout)
        self.step = os.path.join(work, name + ".step.mlir")
        checked([tools["opt"], self.forward, "--dist-training-step=" +
                 benchlib.training_step_option(fx.loss, ADAM), "-o", self.step], args.timeout)
        self.batch = ["--input=%s=%s" % (n, f) for n, f in fx.inputs]
        self.labels = ["--input=labels=%s" % fx.labels]


def autoshard_forward(model, threads, repeat, args, tools, extra=()):
    """Mean seconds per run of autoshard-run --repeat `repeat`."""
    cmd = [tools["run"], model.forward, "--repeat", str(repeat), "--write-outputs=false",
           "--timeout", str(args.timeout)] + model.batch + args.run_flags.split() + list(extra)
    out, _, _ = checked(cmd, args.timeout * 2, benchlib.thread_env(threads))
    for line in out.splitlines():
        m = REPEAT_LINE.match(line)
        if m:
            return float(m.group(1))
    raise BenchError("no 'step time:' line from autoshard-run --repeat")


def autoshard_steps(model, threads, steps, args, tools, extra=()):
    cmd = [tools["run"], model.step, "--entry", "train_step", "--steps", str(steps),
           "--write-outputs=false", "--timeout", str(args.timeout)] + \
        model.batch + model.labels + args.run_flags.split() + list(extra)
    out, _, _ = checked(cmd, args.timeout * (steps + 1), benchlib.thread_env(threads))
    found = [m for m in map(STEP_LINE.match, out.splitlines()) if m]
    if len(found) != steps:
        raise BenchError("expected %d 'step K/N' lines, got %d" % (steps, len(found)))
    times = [float(m.group(4)) for m in found]
    return {"times_ms": times, "median_ms": median(times[1:] or times),
            "losses": [float(m.group(3)) for m in found]}


def repeat_count(model, threads, args, tools):
    """Runs per timing so that one invocation takes about --target-s."""
    if args.quick:
        return 2
    probe = autoshard_forward(model, threads, 3, args, tools)
    return int(min(10000, max(3, args.target_s / max(probe, 1e-7))))


def measure(model, threads, args, tools, py, work):
    r = {"threads": threads}
    repeat = repeat_count(model, threads, args, tools)
    means = [autoshard_forward(model, threads, repeat, args, tools) for _ in range(args.runs)]
    r["forward"] = {"repeat": repeat, "means_ms": [m * 1e3 for m in means],
                    "ms": median(means) * 1e3}
    r["step"] = autoshard_steps(model, threads, args.steps, args, tools)
    if py:
        spec = model.fixture.torch_spec(model.weights)
        path = os.path.join(work, "%s-torch%d.json" % (model.name, threads))
        try:
            fwd = benchlib.run_torch(dict(spec, mode="forward", repeat=repeat), threads, py,
                                     path, args.timeout)
            r["torch_forward"] = {"ms": sum(fwd["times_ms"]) / len(fwd["times_ms"]),
                                  "repeat": repeat, "threads": fwd["threads"]}
            st = benchlib.run_torch(dict(spec, steps=args.steps, optimizer=ADAM), threads, py,
                                    path, args.timeout * (args.steps + 1))
            r["torch_step"] = {"median_ms": median(st["times_ms"][1:] or st["times_ms"]),
                               "times_ms": st["times_ms"], "losses": st["losses"]}
        except BenchError as e:
            r["torch_error"] = str(e)
    return r


def profile(model, threads, args, tools, work, repeat):
    """Per-kernel-kind times of a forward (--repeat) and a training run
    (--steps) from --profile-json, or None when this autoshard-run has no
    --profile-json."""
    out = {}
    for run, fn, count in (("forward", autoshard_forward, repeat),
                           ("step", autoshard_steps, args.steps)):
        path = os.path.join(work, "%s-%s.profile.json" % (model.name, run))
        try:
            fn(model, threads, count, args, tools, ["--profile-json", path])
        except BenchError as e:
            if "profile-json" in str(e):
                return None
            raise
        with open(path) as f:
            out[run] = json.load(f)
    return out


def main(argv=None):
    ap = benchlib.make_parser(__doc__, "bench/README.md (Runtime speed): columns, results.", MODELS)
    ap.add_argument("--threads", help="comma-separated thread counts (default: 1 and all CPUs)")
    ap.add_argument("--steps", type=int, default=20,
                    help="training steps per run; the median of steps 2..N (default: 20)")
    ap.add_argument("--runs", type=int, default=3,
                    help="autoshard-run --repeat invocations per forward time (default: 3)")
    ap.add_argument("--target-s", type=float, default=0.5,
                    help="seconds one forward timing aims at; sets R (default: 0.5)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke mode: mlp only, 1 thread, 2 steps, R = 2, no torch")
    ap.add_argument("--run-flags", default="",
                    help="more autoshard-run flags for every run, e.g. "
                         "'--kernels=interpreted --gemm-contractions=false' (the reference; "
                         "write --run-flags=... so that the value may start with --)")
    benchlib.add_common_arguments(ap)
    args = ap.parse_args(argv)

    models = benchlib.parse_models(args.models, MODELS)
    cpus = os.cpu_count() or 1
    try:
        threads = [int(t) for t in args.threads.split(",")] if args.threads else sorted({1, cpus})
    except ValueError:
        sys.exit("error: --threads expects numbers, got '%s'" % args.threads)
    if args.quick:
        if "--models" not in " ".join(argv or sys.argv):
            models = ["mlp"]
        if not args.threads:
            threads = [1]
        args.steps, args.runs, args.no_torch = 2, 1, True
    if args.steps < 1 or args.runs < 1 or any(t < 1 for t in threads):
        sys.exit("error: --steps, --runs and --threads must be at least 1")
    tools = benchlib.find_tools(args.bin)
    py, torch_version = benchlib.find_torch(args.no_torch, args.torch_python)

    work = args.keep or tempfile.mkdtemp(prefix="autoshard-bench-runtime-")
    os.makedirs(work, exist_ok=True)
    meta, start_line = benchlib.start_meta()
    meta.update({"torch": torch_version if py else None,
                 "torch_note": None if py else torch_version, "threads": threads,
                 "steps": args.steps, "runs": args.runs, "tools": tools,
                 "run_flags": args.run_flags})
    print("# autoshard runtime vs PyTorch CPU: forward and Adam training step, 1 rank")
    print(start_line)
    print("# torch: %s" % ("%s (%s)" % (torch_version, py) if py
                           else "not measured (%s)" % torch_version))
    print("# threads %s: OPENBLAS_NUM_THREADS = OMP_NUM_THREADS = T on both sides, "
          "torch.set_num_threads(T)" % ",".join(map(str, threads)))
    print("# autoshard-run %s%s" % (tools["run"], " " + args.run_flags if args.run_flags else ""))

    results, failed = [], False
    whole = benchlib.CpuWatch()
    for name in models:
        entry = {"model": name, "runs": [], "errors": [],
                 "reference_torch_losses": benchlib.Fixture(name).torch_losses}
        results.append(entry)
        try:
            model = Model(name, args, tools, work)
            for t in threads:
                entry["runs"].append(measure(model, t, args, tools, py, work))
            entry["profile_threads"] = threads[0]
            entry["profile"] = profile(model, threads[0], args, tools, work,
                                       entry["runs"][0]["forward"]["repeat"])
        except BenchError as e:
            entry["errors"].append(str(e))
            failed = True
    meta["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    meta["other_cpu_s"], meta["wall_s"] = whole.other()
    report(results, py, meta, args)
    return benchlib.finish(args, work, meta, results, failed)


def report(results, py, meta, args):
    print()
    print("Time (ms). forward: mean of R runs (autoshard-run --repeat R; median of %d "
          "invocations), torch: mean of R no_grad calls;" % args.runs)
    print("  step: median of steps 2..%d, torch: zero_grad+forward+loss+backward+Adam step. "
          "as/torch <= %.2fx is the target" % (args.steps, TARGET))
    header = ["model", "run", "threads", "R", "autoshard"] + \
        (["torch", "as/torch", "target"] if py else [])
    rows, notes = [], []
    for e in results:
        for r in e["runs"]:
            for run in ("forward", "step"):
                mine = r["forward"]["ms"] if run == "forward" else r["step"]["median_ms"]
                row = [e["model"], run, r["threads"],
                       r["forward"]["repeat"] if run == "forward" else "",
                       fmt_ms(mine, 3)]
                if py:
                    tr = r.get("torch_" + run)
                    theirs = tr and (tr["ms"] if run == "forward" else tr["median_ms"])
                    row += [fmt_ms(theirs, 3), fmt_ratio(mine, theirs),
                            "-" if not theirs else "met" if mine <= TARGET * theirs else "missed"]
                rows.append(row)
            if "torch_error" in r:
                notes.append("%s torch %dT failed: %s" % (e["model"], r["threads"], r["torch_error"]))
        notes += ["%s: failed: %s" % (e["model"], err) for err in e["errors"]]
    print(table(header, rows))
    for line in notes:
        print(line)
    if not py:
        print("torch: not measured (%s)" % meta["torch_note"])

    print()
    print("Losses of the first steps (autoshard, threads %s; 'torch fixture' = what torch "
          "recorded in test/Train/Inputs)" % meta["threads"][0])
    rows = []
    for e in results:
        if not e["runs"]:
            continue
        ref = e["reference_torch_losses"]
        mine = e["runs"][0]["step"]["losses"]
        n = min(len(ref), len(mine))
        rows.append([e["model"], " ".join("%.6f" % x for x in mine[:n]),
                     " ".join("%.6f" % x for x in ref[:n]),
                     "%.1e" % max(abs(a - b) for a, b in zip(mine[:n], ref[:n]))])
    print(table(["model", "autoshard", "torch fixture", "max |d|"], rows))

    print()
    print("Time per kernel kind (autoshard-run --profile-json, %d thread%s; ms and calls per "
          "forward run / per training step)" % (meta["threads"][0],
                                                "" if meta["threads"][0] == 1 else "s"))
    rows = []
    for e in results:
        prof = e.get("profile")
        if prof is None:
            if e["runs"]:
                print("%s: this autoshard-run has no --profile-json" % e["model"])
            continue
        for run in ("forward", "step"):
            p = prof[run]
            n = max(1, p["runs"])
            total = sum(k["ms"] for k in p["kinds"])
            for k in sorted(p["kinds"], key=lambda k: -k["ms"]):
                rows.append([e["model"], run, k["kind"], "%.1f" % (k["calls"] / n),
                             fmt_ms(k["ms"] / n, 4),
                             "%.1f%%" % (100 * k["ms"] / total if total > 0 else 0)])
            rows.append([e["model"], run, "(all kinds)", "", fmt_ms(total / n, 4), ""])
            rows.append([e["model"], run, "(run wall)", "", fmt_ms(p["wall_ms"] / n, 4), ""])
    if rows:
        print(table(["model", "run", "kind", "calls", "ms", "share"], rows))

    print()
    print("load average at end: %s" % " ".join("%.2f" % x for x in meta["load_average_at_end"]))
    if meta["other_cpu_s"] is not None:
        print("other processes used " + benchlib.describe_other_cpu(meta["other_cpu_s"],
                                                                   meta["wall_s"]))


if __name__ == "__main__":
    benchlib.run_main(main)
