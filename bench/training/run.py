#!/usr/bin/env python3
"""Training step: autoshard's compile time and step time next to PyTorch CPU.

For each model it builds autoshard's training step (--dist-training-step,
Adam, then --autoshard-pipeline for the multi-device meshes), times the
compile, runs the step on 1 and 4 MPI ranks (autoshard-run --steps N) and
runs the same model, batch and optimizer in PyTorch on 1 thread and on all
threads, in the same run. Prints compile times, step times with the ratio
autoshard / torch, and both losses step by step.

Models:
  mlp      test/Train/Inputs/mlp/model.onnx (mse, labels_mse.npy)
  gpt      test/Train/Inputs/gpt/model.onnx (cross entropy, labels.npy)
  gen-gpt  scripts/gen_models.py gpt --params (--gen-gpt sizes), weights
           seeded here and written as .npy files both sides read

Meshes: 1 device (the training step alone, no partitioning), dp=4 (data
parallel only: the batch split over dp) and dp=2,mp=2 (the fixtures'
strategy.yaml, Megatron-style; gen_models' own annotations for gen-gpt);
the "/cpu" variants compile the same inputs with the cost model told about
a CPU machine (--cluster, default cpu-cluster.json) instead of its default
GPU cluster. The last lines give the CPU time other processes used during
each model's runs (a quiet machine shows ~0).

The driver is Python 3 standard library only. The torch column needs a
python with torch and numpy (--torch-python; default: this python, else
/usr/bin/python3); without one it is left out with a note, and the fixture
models still show the losses PyTorch recorded in test/Train/Inputs.
bench/README.md describes the columns and the results.
"""

import array
import importlib.util
import json
import os
import random
import re
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import benchlib  # noqa: E402
from benchlib import (BenchError, CpuWatch, checked, fmt_ms,  # noqa: E402
                      fmt_ratio, median)

REPO = benchlib.REPO
GEN = os.path.join(REPO, "scripts", "gen_models.py")

# Collective counting, op counting and --mlir-timing parsing are the
# propagation benchmark's (one implementation for both benches).
_spec = importlib.util.spec_from_file_location(
    "autoshard_bench_propagation", os.path.join(REPO, "bench", "propagation", "run.py"))
prop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prop)

MODELS = ("mlp", "gpt", "gen-gpt")
ADAM = {"lr": 0.01, "betas": [0.9, 0.999], "eps": 1e-8}
# mesh name -> (ranks, description)
# Mesh variants: name -> ranks. "/cpu" compiles the same input with the
# pipeline's cost model told about this kind of CPU machine (--cluster,
# default cpu-cluster.json) instead of its default GPU cluster.
MESHES = [("1", 1), ("dp=4", 4), ("dp=2,mp=2", 4), ("dp=4/cpu", 4), ("dp=2,mp=2/cpu", 4)]
CPU_CLUSTER = os.path.join(HERE, "cpu-cluster.json")
GEN_GPT_DEFAULT = "layers=2,vocab=256,seq=32,batch=8,embed=64,heads=4"
# Pass names as --mlir-timing prints them.
PHASES = [("train-step", ["DistTrainingStep"]), ("propagate", ["DistPropagate"]),
          ("partition", ["DistPartition"]), ("cleanup", ["Canonicalizer", "CSE"]),
          ("parse+print", ["Parser", "Output"])]


# ----------------------------------------------------------------------------
# Small helpers (the shared ones are bench/benchlib.py's)
# ----------------------------------------------------------------------------

LEFT = ("model", "mesh", "run", "collectives")


def table(header, rows):
    return benchlib.table(header, rows, LEFT)


def write_npy(path, shape, values, descr):
    """A C-order .npy file (format 1.0) from a flat list: descr '<f4' or '<i8'."""
    data = array.array("f" if descr == "<f4" else "q", values)
    if sys.byteorder != "little":
        data.byteswap()
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, repr(tuple(shape)))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(data.tobytes())


# ----------------------------------------------------------------------------
# Models: the 1-device, dp=4 and dp=2,mp=2 inputs of autoshard-opt
# ----------------------------------------------------------------------------

class Model:
    """name, loss, the IR file per mesh, the step's data (--input specs for
    autoshard-run), and what torch_step.py needs."""

    def __init__(self, name):
        self.name = name
        self.ir = {}            # mesh -> input file of autoshard-opt
        self.import_s = []      # autoshard-translate wall times
        self.inputs = []        # [(dist.name, file)] incl. the labels
        self.torch_spec = {}
        self.torch_losses = None  # committed torch losses (fixtures)
        self.note = None


def prepare_fixture(name, args, tools, work):
    m = Model(name)
    fx = benchlib.Fixture(name)
    m.loss = fx.loss
    m.inputs = fx.inputs + [("labels", fx.labels)]
    weights = os.path.join(work, name + "-weights")
    batch_input, batch_data = fx.data[0]
    dp4 = os.path.join(work, name + "-dp4.yaml")
    with open(dp4, "w") as f:
        f.write("mesh: {dp: 4}\nstrategies:\n  - match: \"%s\"\n    layout: [[dp]%s]\n"
                % (batch_input, ", []" * (len(batch_data["shape"]) - 1)))
    strategies = {"1": None, "dp=4": dp4, "dp=2,mp=2": os.path.join(fx.dir, "strategy.yaml")}
    for mesh, strategy in strategies.items():
        out = os.path.join(work, "%s-%s.mlir" % (name, slug(mesh)))
        cmd = fx.import_cmd(tools["translate"], weights, out, strategy)
        for _ in range(args.compile_runs if mesh == "1" else 1):
            m.import_s.append(checked(cmd, args.timeout)[2])
        m.ir[mesh] = out
    m.torch_spec = fx.torch_spec(weights)
    # What PyTorch recorded for this run when the fixtures were written: the
    # reference when torch is not here.
    m.torch_losses = fx.torch_losses
    return m


def parse_sizes(text):
    sizes = {}
    for item in text.split(","):
        k, _, v = item.partition("=")
        if not v.isdigit():
            sys.exit("error: --gen-gpt expects NAME=SIZE,..., got '%s'" % text)
        sizes[k.strip()] = int(v)
    return sizes


def prepare_gen_gpt(args, work):
    m = Model("gen-gpt")
    m.loss = "cross_entropy"
    sizes = parse_sizes(args.gen_gpt)
    gen_args = []
    for k, v in sorted(sizes.items()):
        gen_args += ["--" + k, str(v)]
    variants = {"1": ["--annotate", "none"],
                "dp=4": ["--annotate", "dist", "--mesh", "dp=4", "--mp-axis", "none"],
                "dp=2,mp=2": ["--annotate", "dist", "--mesh", "dp=2,mp=2"]}
    for mesh, extra in variants.items():
        out = os.path.join(work, "gen-gpt-%s.mlir" % slug(mesh))
        text, _, _ = checked([sys.executable, GEN, "gpt", "--params"] + gen_args + extra,
                             args.timeout)
        with open(out, "w") as f:
            f.write(text)
        m.ir[mesh] = out
    # Parameter shapes from the signature: %name: tensor<AxBxf32> {dist.name = "name", dist.param}
    with open(m.ir["1"]) as f:
        sig = f.read()
    shapes = {}
    for dims, name in re.findall(r'tensor<([\dx]+)xf32> \{dist\.name = "(\w+)", dist\.param\}', sig):
        shapes[name] = [int(s) for s in dims.split("x")]
    if not shapes:
        raise BenchError("no dist.param arguments in gen_models.py output")
    ids_shape = [int(s) for s in re.search(r'tensor<([\dx]+)xi64> \{dist\.name = "ids"', sig).group(1).split("x")]
    vocab = shapes["wte"][0]
    weights = os.path.join(work, "gen-gpt-weights")
    os.makedirs(weights, exist_ok=True)
    rng = random.Random(args.seed)
    for name, shape in shapes.items():
        n = 1
        for s in shape:
            n *= s
        if re.match(r"^ln\w*_g(_\d+)?$", name):
            values = [1.0 + 0.1 * rng.gauss(0, 1) for _ in range(n)]
        elif re.match(r"^ln\w*_b(_\d+)?$", name):
            values = [0.1 * rng.gauss(0, 1) for _ in range(n)]
        else:
            values = [0.02 * rng.gauss(0, 1) for _ in range(n)]
        write_npy(os.path.join(weights, name + ".npy"), shape, values, "<f4")
    bsz, seq = ids_shape
    ids = [rng.randrange(vocab) for _ in range(bsz * seq)]
    labels = []
    for b in range(bsz):  # the next token; the last one random
        labels += ids[b * seq + 1:(b + 1) * seq] + [rng.randrange(vocab)]
    write_npy(os.path.join(work, "gen-gpt-ids.npy"), ids_shape, ids, "<i8")
    write_npy(os.path.join(work, "gen-gpt-labels.npy"), ids_shape, labels, "<i8")
    m.inputs = [(n, os.path.join(weights, n + ".npy")) for n in shapes] + \
               [("ids", os.path.join(work, "gen-gpt-ids.npy")),
                ("labels", os.path.join(work, "gen-gpt-labels.npy"))]
    m.torch_spec = {"model": "gen-gpt", "shapes": shapes, "weights_dir": weights,
                    "layers": sizes.get("layers", 2), "heads": sizes.get("heads", 4),
                    "inputs": [os.path.join(work, "gen-gpt-ids.npy")],
                    "labels": os.path.join(work, "gen-gpt-labels.npy"), "loss": m.loss}
    m.sizes = sizes
    return m


# ----------------------------------------------------------------------------
# autoshard: compile, run
# ----------------------------------------------------------------------------

def training_step_option(model, mesh):
    return benchlib.training_step_option(model.loss, dict(ADAM, name="adam"),
                                         None if mesh == "1" else "dp")


def slug(mesh):
    """A file-name part for a mesh variant: 'dp=2,mp=2/cpu' -> 'dp2mp2-cpu'."""
    return mesh.replace("=", "").replace(",", "").replace("/", "-")


def base_mesh(mesh):
    """The IR input of a variant: 'dp=4/cpu' compiles 'dp=4'."""
    return mesh.split("/")[0]


def compile_step(model, mesh, args, tools, work):
    """Median wall time of autoshard-opt over --compile-runs, each pass's
    median from --mlir-timing, the op count and collectives of the output."""
    out = os.path.join(work, "%s-%s.step.mlir" % (model.name, slug(mesh)))
    cmd = [tools["opt"], model.ir[base_mesh(mesh)],
           "--dist-training-step=" + training_step_option(model, mesh)]
    if mesh.endswith("/cpu"):
        cmd.append("--autoshard-pipeline=cluster=" + args.cluster)
    elif mesh != "1":
        cmd.append("--autoshard-pipeline")
    cmd += ["-o", out, "--mlir-timing", "--mlir-timing-display=list"]
    walls, phases = [], {p: [] for p, _ in PHASES}
    for _ in range(args.compile_runs):
        _, err, wall = checked(cmd, args.timeout)
        walls.append(wall)
        t = prop.pass_times(err)
        for phase, names in PHASES:
            phases[phase].append(sum(t.get(n, 0.0) for n in names))
    with open(out) as f:
        text = f.read()
    colls = prop.count_collectives(text)
    return {"program": out, "wall_ms": median(walls) * 1e3,
            "phases_ms": {p: median(v) * 1e3 for p, v in phases.items()},
            "ops": prop.count_top_level_ops(text),
            "collectives": prop.format_counts(colls["counts"]),
            "comm_bytes": colls["bytes"],
            "command": " ".join(cmd[:2] + ["'%s'" % cmd[2]] + cmd[3:-2])}


STEP_LINE = re.compile(r"^step (\d+)/(\d+) loss (\S+) \(([\d.]+) ms\)")


def run_steps(model, mesh, ranks, program, args, tools, work):
    losses_file = os.path.join(work, "%s-%s.losses.json" % (model.name, slug(mesh)))
    cmd = [tools["run"], program, "--entry", "train_step", "--steps", str(args.steps),
           "--losses-out", losses_file, "--write-outputs=false",
           "--timeout", str(args.timeout)]
    for name, f in model.inputs:
        cmd += ["--input", "%s=%s" % (name, f)]
    if ranks > 1:
        cmd = args.mpirun.split() + ["-np", str(ranks)] + cmd
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out, _, _ = checked(cmd, args.timeout * (args.steps + 1), env)
    times = [float(m.group(4)) for m in map(STEP_LINE.match, out.splitlines()) if m]
    if len(times) != args.steps:
        raise BenchError("expected %d 'step K/N' lines, got %d" % (args.steps, len(times)))
    with open(losses_file) as f:
        losses = json.load(f)
    return {"times_ms": times, "median_ms": median(times[1:] or times),
            "losses": losses, "command": " ".join(cmd[:8]) + " ..."}


# ----------------------------------------------------------------------------
# torch
# ----------------------------------------------------------------------------

def torch_steps(model, threads, args, py, work):
    spec = dict(model.torch_spec, steps=args.steps, optimizer=ADAM)
    path = os.path.join(work, "%s-torch%d.json" % (model.name, threads))
    r = benchlib.run_torch(spec, threads, py, path, args.timeout * (args.steps + 1))
    r["median_ms"] = median(r["times_ms"][1:] or r["times_ms"])
    return r


# ----------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------

def main(argv=None):
    ap = benchlib.make_parser(__doc__, "bench/README.md: what the columns mean, results.", MODELS)
    ap.add_argument("--steps", type=int, default=10,
                    help="training steps per run; step times are the median "
                         "over steps 2..N (default: 10)")
    ap.add_argument("--compile-runs", type=int, default=5,
                    help="autoshard-opt runs per compile; the median is shown (default: 5)")
    ap.add_argument("--meshes", default=",".join(m for m, _ in MESHES).replace(",mp", "+mp"),
                    help="which of 1, dp=4, dp=2+mp=2, dp=4/cpu, dp=2+mp=2/cpu "
                         "(default: all)")
    ap.add_argument("--cluster", default=CPU_CLUSTER,
                    help="ClusterSpec JSON of the /cpu variants (default: %s)"
                         % os.path.relpath(CPU_CLUSTER, REPO))
    ap.add_argument("--gen-gpt", default=GEN_GPT_DEFAULT,
                    help="gen_models.py gpt sizes (default: %s; ffn = 4 * embed)" % GEN_GPT_DEFAULT)
    ap.add_argument("--seed", type=int, default=20240611, help="gen-gpt weights and batch")
    ap.add_argument("--quick", action="store_true",
                    help="smoke mode: mlp only, 2 steps, 1 compile run, no torch")
    ap.add_argument("--torch-threads", help="comma-separated torch thread counts "
                    "(default: 1 and all CPUs)")
    ap.add_argument("--mpirun", default="mpirun --allow-run-as-root --oversubscribe",
                    help="launcher for the 4-rank runs")
    benchlib.add_common_arguments(ap, "seconds per command (per step for runs)")
    args = ap.parse_args(argv)

    models = benchlib.parse_models(args.models, MODELS)
    meshes = [s.strip().replace("+", ",") for s in args.meshes.split(",") if s.strip()]
    for s in meshes:
        if s not in dict(MESHES):
            sys.exit("error: unknown mesh '%s' (%s)"
                     % (s, ", ".join(m.replace(",mp", "+mp") for m, _ in MESHES)))
    if args.quick:
        if "--models" not in " ".join(argv or sys.argv):
            models = ["mlp"]
        args.steps, args.compile_runs, args.no_torch = 2, 1, True
    if args.steps < 1 or args.compile_runs < 1:
        sys.exit("error: --steps and --compile-runs must be at least 1")
    if any(m.endswith("/cpu") for m in meshes) and not os.path.exists(args.cluster):
        sys.exit("error: no cluster file %s" % args.cluster)
    tools = benchlib.find_tools(args.bin)
    py, torch_version = benchlib.find_torch(args.no_torch, args.torch_python)
    cpus = os.cpu_count() or 1
    threads = [int(t) for t in args.torch_threads.split(",")] if args.torch_threads else \
        sorted({1, cpus})

    work = args.keep or tempfile.mkdtemp(prefix="autoshard-bench-training-")
    os.makedirs(work, exist_ok=True)
    meta, start_line = benchlib.start_meta()
    meta.update({"torch": torch_version if py else None, "torch_python": py,
                 "torch_note": None if py else torch_version,
                 "steps": args.steps, "compile_runs": args.compile_runs, "tools": tools,
                 "optimizer": dict(ADAM, name="adam")})
    print("# autoshard training step vs PyTorch CPU: compile time, step time, losses")
    print(start_line)
    print("# Adam lr %g; %d steps per run, step time = median of steps 2..%d; compile = "
          "median of %d runs" % (ADAM["lr"], args.steps, args.steps, args.compile_runs))
    print("# torch: %s" % ("%s (%s), threads %s" % (torch_version, py, ",".join(map(str, threads)))
                           if py else "not measured (%s)" % torch_version))
    print("# autoshard ranks: OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1; %d-rank runs: %s"
          % (4, args.mpirun))
    if any(m.endswith("/cpu") for m in meshes):
        print("# /cpu meshes: --autoshard-pipeline=cluster=%s (others: the default GPU cluster)"
              % os.path.relpath(args.cluster, REPO))

    results, failed = [], False
    whole = CpuWatch()
    for name in models:
        entry = {"model": name, "compile": {}, "steps": {}, "torch": {}, "errors": []}
        results.append(entry)
        watch = CpuWatch()
        try:
            model = prepare_gen_gpt(args, work) if name == "gen-gpt" else \
                prepare_fixture(name, args, tools, work)
        except BenchError as e:
            entry["errors"].append("prepare: %s" % e)
            failed = True
            continue
        entry["model_obj"] = model
        entry["import_ms"] = median(model.import_s) * 1e3 if model.import_s else None
        for mesh in meshes:
            ranks = dict(MESHES)[mesh]
            try:
                entry["compile"][mesh] = compile_step(model, mesh, args, tools, work)
            except BenchError as e:
                entry["compile"][mesh] = {"error": str(e)}
                failed = True
                continue
            try:
                entry["steps"][mesh] = run_steps(model, mesh, ranks,
                                                 entry["compile"][mesh]["program"],
                                                 args, tools, work)
            except BenchError as e:
                entry["steps"][mesh] = {"error": str(e)}
                failed = True
        if py:
            for t in threads:
                try:
                    entry["torch"][t] = torch_steps(model, t, args, py, work)
                except BenchError as e:
                    entry["torch"][t] = {"error": str(e)}
        entry["other_cpu_s"], entry["wall_s"] = watch.other()
    meta["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    meta["other_cpu_s"], meta["wall_s"] = whole.other()

    report(results, meshes, threads, py, meta, args)
    if args.json:
        for e in results:
            m = e.pop("model_obj", None)
            if m is not None:
                e["reference_torch_losses"] = m.torch_losses
                e["loss"] = m.loss
    return benchlib.finish(args, work, meta, results, failed)


def report(results, meshes, threads, py, meta, args):
    print()
    print("Compile (ms): compile = wall time of autoshard-opt IN --dist-training-step='loss=L "
          "optimizer=adam lr=0.01[ data-axis=dp]'")
    print("  [--autoshard-pipeline[=cluster=FILE]] -o OUT, median of %d runs; phases: "
          "--mlir-timing, medians; import = autoshard-translate" % args.compile_runs)
    print("  --import-onnx; ops = top-level ops of train_step; collectives in it: AG all_gather, "
          "AR all_reduce, RS reduce_scatter, AS all_slice")
    header = ["model", "mesh", "import", "compile", "train-step", "propagate", "partition",
              "cleanup", "parse+print", "ops", "collectives"]
    rows, failures = [], []
    for e in results:
        for mesh in meshes:
            c = e["compile"].get(mesh)
            if c is None:
                continue
            if "error" in c:
                failures.append("%s %s: failed: %s" % (e["model"], mesh, c["error"]))
                continue
            ph = c["phases_ms"]
            rows.append([e["model"], mesh, fmt_ms(e.get("import_ms")) if mesh == "1" else "",
                         fmt_ms(c["wall_ms"], 1), fmt_ms(ph["train-step"]),
                         fmt_ms(ph["propagate"]) if mesh != "1" else "-",
                         fmt_ms(ph["partition"]) if mesh != "1" else "-",
                         fmt_ms(ph["cleanup"]) if mesh != "1" else "-",
                         fmt_ms(ph["parse+print"]), c["ops"], c["collectives"]])
        failures += ["%s: failed: %s" % (e["model"], err) for err in e["errors"]]
    print(table(header, rows))
    for line in failures:
        print(line)
    print("No torch column: PyTorch %sruns eagerly (torch.compile came with 2.0), so there "
          "is no compile to time; its first-step overhead is not one."
          % ("%s " % meta["torch"] if meta["torch"] else ""))

    print()
    print("Step (ms, median of steps 2..%d; autoshard: rank 0's step incl. the loss gather; "
          "torch: zero_grad+forward+loss+backward+step)" % args.steps)
    header = ["model", "ranks", "mesh", "autoshard"]
    for t in threads if py else []:
        header += ["torch %dT" % t, "as/%dT" % t]
    rows, failures = [], []
    for e in results:
        for mesh in meshes:
            s = e["steps"].get(mesh)
            if s is None:
                continue
            row = [e["model"], dict(MESHES)[mesh], mesh]
            if "error" in s:
                failures.append("%s %s: failed: %s" % (e["model"], mesh, s["error"]))
                continue
            row.append(fmt_ms(s["median_ms"]))
            for t in threads if py else []:
                tr = e["torch"].get(t, {})
                if "error" in tr or "median_ms" not in tr:
                    row += ["failed", "-"]
                else:
                    row += [fmt_ms(tr.get("median_ms"), 3), fmt_ratio(s["median_ms"], tr.get("median_ms"))]
            rows.append(row)
    print(table(header, rows))
    for line in failures:
        print(line)
    errs = ["%s torch %dT: %s" % (e["model"], t, tr["error"]) for e in results
            for t, tr in e["torch"].items() if "error" in tr]
    for err in errs:
        print("torch failed: " + err)
    if not py:
        print("torch: not measured (%s)" % meta["torch_note"])
    if (os.cpu_count() or 1) < 4 and any(dict(MESHES)[m] > 1 for m in meshes):
        print("note: %d CPUs for 4 ranks: the ranks share cores (--oversubscribe)"
              % (os.cpu_count() or 1))

    print()
    print("Losses (loss before each update; 'torch fixture' = test/Train/Inputs/*/losses_adam.json, "
          "what torch recorded, 5 steps)")
    shown = min(args.steps, 5)
    header = ["model", "run"] + ["step %d" % (i + 1) for i in range(shown)] + \
             (["step %d" % args.steps] if args.steps > shown else []) + ["max |d| vs torch"]
    rows = []
    for e in results:
        m = e.get("model_obj")
        runs = []
        for t in threads if py else []:
            tr = e["torch"].get(t, {})
            if "losses" in tr:
                runs.append(("torch %dT" % t, tr["losses"]))
        if m is not None and m.torch_losses:
            runs.append(("torch fixture", m.torch_losses))
        ref = runs[0][1] if runs else None
        for mesh in meshes:
            s = e["steps"].get(mesh, {})
            if "losses" in s:
                runs.append(("autoshard %s" % mesh, s["losses"]))
        for label, losses in runs:
            cells = ["%.6f" % x for x in losses[:shown]] + [""] * (shown - len(losses[:shown]))
            if args.steps > shown:
                cells.append("%.6f" % losses[-1] if len(losses) == args.steps else "")
            if ref is not None and losses is not ref:
                n = min(len(ref), len(losses))
                d = max(abs(a - b) for a, b in zip(ref[:n], losses[:n]))
                cells.append("%.1e" % d)
            else:
                cells.append("(ref)" if ref is not None else "-")
            rows.append([e["model"], label] + cells)
    print(table(header, rows))
    print()
    print("load average at end: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    for e in results:
        if e.get("other_cpu_s") is not None:
            print("%s: other processes used %s" % (
                e["model"], benchlib.describe_other_cpu(e["other_cpu_s"], e["wall_s"])))


if __name__ == "__main__":
    benchlib.run_main(main)
