#!/usr/bin/env python3
"""Sharding propagation + partition: autoshard vs upstream MLIR `shard`.

For each model and layer count L, scripts/gen_models.py writes ONE file with
upstream `shard` annotations on the arguments only (input batch on dp, weights
Megatron-style on mp). The same file goes to

  upstream   mlir-opt --pass-pipeline='builtin.module(func.func(
                 sharding-propagation[,shard-partition]))'
  autoshard  autoshard-opt --dist-propagate[ --dist-partition]

Both partitioned outputs are read by one function (count_collectives) that
prices every collective with the alpha-beta byte formulas of
include/autoshard/Analysis/CostModel.h, so neither tool grades its own work;
autoshard's counts are also cross-checked with its --dist-partition report.
Bytes are compared with an analytic reference (see reference_bytes and
bench/README.md); times are the passes' own wall time from --mlir-timing
(parsing and printing excluded), best of N runs. With --memory-fraction F,
autoshard's propagation is also timed with memory_gib set to F times its
fastest plan's bytes per device (the bound binds for F < 1), next to the
unbounded run and upstream's, as ratios, with the bounded plan's bytes and
cost.

python3 standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "bench"))
from benchlib import cpu_name  # noqa: E402
GEN = os.path.join(REPO, "scripts", "gen_models.py")

UPSTREAM_PASSES = {"prop": "func.func(sharding-propagation)",
                   "full": "func.func(sharding-propagation,shard-partition)"}
# Pass names as --mlir-timing prints them.
UPSTREAM_TIMERS = {"prop": "ShardingPropagation", "part": "Partition"}
AUTOSHARD_TIMERS = {"prop": "DistPropagate", "part": "DistPartition"}

# Collective op -> (short name for the table, how its bytes are priced).
#   reduce2: 2(n-1)/n * operand   full_out: (n-1)/n * result
#   full_in: (n-1)/n * operand    whole: operand (if anything moves)
#   local:   0 (no communication)
COLLECTIVES = {
    "shard.all_reduce": ("AR", "reduce2"),
    "shard.all_gather": ("AG", "full_out"),
    "shard.reduce_scatter": ("RS", "full_in"),
    "shard.all_to_all": ("A2A", "full_in"),
    "shard.all_slice": ("AS", "local"),
    "dist.all_gather_uneven": ("AGu", "full_out"),
    "dist.all_slice_uneven": ("ASu", "local"),
    "dist.permute": ("P", "whole"),
    "dist.make_partial": ("MP", "local"),
}
# Upstream collectives without a formula here; counted, never priced silently.
UNPRICED = ("shard.broadcast", "shard.gather", "shard.scatter", "shard.reduce",
            "shard.send", "shard.recv", "shard.shift", "shard.update_halo")

ELEM_BITS = {"f64": 64, "f32": 32, "f16": 16, "bf16": 16, "i64": 64,
             "i32": 32, "i16": 16, "i8": 8, "i1": 8, "index": 64}


# ----------------------------------------------------------------------------
# IR reading
# ----------------------------------------------------------------------------

_OP_LINE = re.compile(r'^\s*(?:%[^=]*=\s*)?"?([A-Za-z_][\w$]*\.[\w.$]+)"?[\s({<]')


def count_top_level_ops(text):
    """Ops directly in a func.func body (not in linalg bodies): what the
    propagation passes assign shardings to."""
    depth, body_depth, count = 0, None, 0
    for line in text.splitlines():
        code = line.split("//", 1)[0]
        m = _OP_LINE.match(code)
        if m and body_depth is not None and depth == body_depth:
            count += 1
        if m and m.group(1) == "func.func":
            body_depth = depth + 1
        depth += code.count("{") - code.count("}")
        if body_depth is not None and depth < body_depth:
            body_depth = None
    return count


def tensor_bytes(ty):
    """Bytes of `tensor<AxBxf32>`; None when a dim is dynamic."""
    m = re.match(r"tensor<((?:[\d?]+x)*)(\w+)>", ty)
    if not m:
        return None
    dims = [d for d in m.group(1).split("x") if d]
    if "?" in dims:
        return None
    n = 1
    for d in dims:
        n *= int(d)
    return n * ELEM_BITS.get(m.group(2), 32) // 8


def count_collectives(text):
    """Collectives of a partitioned module: {'counts': {op: n}, 'bytes': B,
    'detail': [(op, bytes)], 'unpriced': [op]} with B the per-device bytes
    sent, summed over the static program."""
    grids = {name: [int(s) for s in shape.split("x")]
             for name, shape in re.findall(r"shard\.grid @([\w$.]+)\(shape = ([\dx]+)\)", text)}
    counts, total, unpriced, detail = {}, 0.0, set(), []
    for line in text.splitlines():
        m = re.search(r"\b((?:shard|dist)\.[a-z_]+) %\S+ on @([\w$.]+)(.*)$", line)
        if not m or (m.group(1) not in COLLECTIVES and m.group(1) not in UNPRICED):
            continue
        op, grid, rest = m.groups()
        counts[op] = counts.get(op, 0) + 1
        cost = None if op in UNPRICED else price(op, grids.get(grid), rest)
        if cost is None:
            unpriced.add(op)
            continue
        total += cost
        detail.append((op, cost))
    return {"counts": counts, "bytes": total, "unpriced": sorted(unpriced),
            "detail": detail}


def price(op, grid_shape, rest):
    """Bytes per device of one collective (see COLLECTIVES); None when the
    line lacks what the formula needs (unknown grid, dynamic shape)."""
    formula = COLLECTIVES[op][1]
    if formula == "local":
        return 0.0
    types = re.findall(r"tensor<[^>]*>", rest.split(" : ", 1)[-1])
    if not types:
        return None
    operand, result = tensor_bytes(types[0]), tensor_bytes(types[-1])
    if op == "dist.permute":
        src = re.search(r"sources = \[([^\]]*)\]", rest)
        if operand is None:
            return None
        return float(operand) if src and src.group(1).strip() else 0.0
    axes = re.search(r"grid_axes = \[([\d, ]*)\]", rest)
    n = 1
    for a in (axes.group(1).split(",") if axes else []):
        if a.strip():
            if grid_shape is None or int(a) >= len(grid_shape):
                return None
            n *= grid_shape[int(a)]
    frac = (n - 1) / n
    buffer = result if formula == "full_out" else operand
    if buffer is None:
        return None
    return (2 * frac if formula == "reduce2" else frac) * buffer


def format_counts(counts):
    if not counts:
        return "none"
    short = lambda op: COLLECTIVES.get(op, (op,))[0]
    return " ".join("%s%d" % (short(op), n) for op, n in sorted(counts.items(), key=lambda kv: short(kv[0])))


# ----------------------------------------------------------------------------
# Analytic reference
# ----------------------------------------------------------------------------

def reference_bytes(model, layers, mesh, sizes, form="einsum"):
    """(bytes, label). mlp: the optimum, L all-reduces over mp of the local
    [B/dp, H] activation; gpt: Megatron's plan, 2L all-reduces of the local
    [B/dp, S, E] activation (attention output and MLP output), plus one for
    the vocabulary-parallel embedding of the reshape form (its table is split
    by vocabulary; the einsum form replicates it). The derivation is in
    bench/README.md."""
    dp, mp = mesh.get("dp", 1), mesh.get("mp", 1)
    ar = 2.0 * (mp - 1) / mp
    needed = {"mlp": ("batch", "hidden"), "gpt": ("batch", "seq", "embed")}[model]
    if any(k not in sizes for k in needed):
        return None, "-"
    if model == "mlp":
        return layers * ar * (sizes["batch"] // dp) * sizes["hidden"] * 4, "optimum"
    if model == "gpt":
        count = 2 * layers + (1 if form == "reshape" else 0)
        return count * ar * (sizes["batch"] // dp) * sizes["seq"] * sizes["embed"] * 4, "Megatron"
    return None, None


# ----------------------------------------------------------------------------
# Running tools
# ----------------------------------------------------------------------------

class Run:
    def __init__(self, rc, stderr, wall, maxrss_kb, timed_out):
        self.rc, self.stderr, self.wall = rc, stderr, wall
        self.maxrss_kb, self.timed_out = maxrss_kb, timed_out


def run_tool(cmd, timeout):
    """Runs cmd; returns its status, stderr, wall time and peak RSS (from
    wait4, so each child's own peak, not the maximum over all children)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err)
        except OSError as e:
            return Run(127, "error: cannot run %s: %s" % (cmd[0], e.strerror), 0.0, 0, False)
        killed = []
        timer = threading.Timer(timeout, lambda: (killed.append(1), proc.kill()))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return Run(proc.returncode, text, wall, usage.ru_maxrss, bool(killed))


_TIMER_LINE = re.compile(r"^\s*([\d.]+) \(\s*([\d.]+)%\)\s+(.+?)\s*$")
_TOTAL_LINE = re.compile(r"Total Execution Time:\s*([\d.]+) seconds")


def pass_times(stderr):
    """--mlir-timing-display=list lines -> {name: seconds}. A line prints
    its time to 0.1 ms and its share of the total to 0.1%: of the two
    readings (the time, or the total times the share), the one with the
    smaller rounding bound is taken, so a pass of 0.2 ms in a 4 ms run is
    read to ~2% rather than to +-25%."""
    total = None
    for line in stderr.splitlines():
        m = _TOTAL_LINE.search(line)
        if m:
            total = float(m.group(1))
    times = {}
    for line in stderr.splitlines():
        m = _TIMER_LINE.match(line)
        if not m:
            continue
        seconds, share = float(m.group(1)), float(m.group(2))
        if total:
            # Rounding bounds: 0.05 ms on the time; 0.05 ms on the total and
            # 0.05 points on the share.
            bound = 0.00005 * share / 100 + total * 0.0005
            if bound < 0.00005:
                seconds = total * share / 100
        times[m.group(3)] = times.get(m.group(3), 0.0) + seconds
    return times


def failure(run, timeout):
    if run.timed_out:
        return "failed: timed out after %gs" % timeout
    for line in run.stderr.splitlines():
        if "error:" in line:
            return "failed: " + line[line.index("error:"):].strip()
    lines = [l.strip() for l in run.stderr.splitlines()
             if l.strip() and not _TIMER_LINE.match(l) and not l.startswith("===")
             and "Execution time report" not in l and "Wall Time" not in l
             and not _TOTAL_LINE.search(l)]
    if lines:
        return "failed: " + lines[0]
    return "failed: exit status %d, no diagnostic" % run.rc


def measure(tool, build_cmd, timers, runs, timeout, workdir):
    """Times propagation alone and propagation + partition (best of `runs`);
    returns a result dict and the partitioned IR (None on failure)."""
    res = {"prop_s": None, "full_s": None, "part_s": None, "wall_s": None,
           "maxrss_mib": None, "error": None}
    out = os.path.join(workdir, tool + ".out.mlir")
    for _ in range(runs):
        for stage in ("prop", "full"):
            r = run_tool(build_cmd(stage, out), timeout)
            if r.rc != 0:
                res["error"] = failure(r, timeout) + (" (propagation)" if stage == "prop" else " (partition)")
                return res, None
            t = pass_times(r.stderr)
            wanted = [timers["prop"]] + ([timers["part"]] if stage == "full" else [])
            missing = [name for name in wanted if name not in t]
            if missing:
                # A renamed pass would otherwise time as 0 ms.
                res["error"] = "failed: no --mlir-timing entry for %s" % ", ".join(missing)
                return res, None
            if stage == "prop":
                value = t.get(timers["prop"], 0.0)
                res["prop_s"] = value if res["prop_s"] is None else min(res["prop_s"], value)
            else:
                full = t.get(timers["prop"], 0.0) + t.get(timers["part"], 0.0)
                res["full_s"] = full if res["full_s"] is None else min(res["full_s"], full)
                part = t.get(timers["part"], 0.0)
                res["part_s"] = part if res["part_s"] is None else min(res["part_s"], part)
                res["wall_s"] = r.wall if res["wall_s"] is None else min(res["wall_s"], r.wall)
                rss = r.maxrss_kb / 1024.0
                res["maxrss_mib"] = rss if res["maxrss_mib"] is None else max(res["maxrss_mib"], rss)
    with open(out) as f:
        return res, f.read()


def find_tool(explicit, names, fallbacks, what):
    if explicit:
        return explicit
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    for path in fallbacks:
        if os.path.exists(path):
            return path
    sys.exit("error: cannot find %s; pass --%s" % (names[0], what))


# ----------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------

def parse_mesh(text):
    mesh = {}
    for item in text.split(","):
        name, _, size = item.partition("=")
        if not size.isdigit():
            sys.exit("error: --mesh expects NAME=SIZE,..., got '%s'" % text)
        mesh[name.strip()] = int(size)
    return mesh


def parse_sizes(text, flag):
    sizes = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        if not name or not value.isdigit():
            sys.exit("error: %s expects NAME=INT,..., got '%s'" % (flag, text))
        sizes[name.strip()] = int(value)
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", default="1,2,8,64,512", help="comma-separated layer counts")
    ap.add_argument("--models", default="mlp,gpt", help="comma-separated: mlp, gpt")
    ap.add_argument("--runs", type=int, default=3,
                    help="best of N runs (at most 2 for L > 64)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument("--mesh", default="dp=2,mp=4", help="mesh (default dp=2,mp=4)")
    ap.add_argument("--form", choices=("einsum", "reshape"), default="einsum",
                    help="generator form; upstream cannot propagate 'reshape'")
    ap.add_argument("--mlir-opt", help="upstream mlir-opt (default: mlir-opt on PATH, then /usr/lib/llvm-22/bin)")
    ap.add_argument("--autoshard-opt", help="autoshard-opt (default: on PATH, then build/bin)")
    ap.add_argument("--solver", choices=("dp", "exact"),
                    help="autoshard's --dist-propagate solver (default: its own default)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per tool run")
    ap.add_argument("--mlp-sizes", default="batch=64,hidden=256,ffn=1024")
    ap.add_argument("--gpt-sizes", default="vocab=256,seq=16,batch=8,embed=64,heads=4")
    ap.add_argument("--count", metavar="FILE",
                    help="only count and price the collectives of a partitioned module")
    ap.add_argument("--keep", metavar="DIR", help="keep generated and partitioned files here")
    ap.add_argument("--memory-fraction", type=float, metavar="F",
                    help="also time autoshard's propagation under a memory bound: memory_gib = F "
                         "times the fastest plan's bytes per device (F < 1 makes the bound bind)")
    args = ap.parse_args()
    if args.count:
        return count_only(args.count)

    mlir_opt = find_tool(args.mlir_opt, ["mlir-opt", "mlir-opt-22"],
                         ["/usr/lib/llvm-22/bin/mlir-opt"], "mlir-opt")
    as_opt = find_tool(args.autoshard_opt, ["autoshard-opt"],
                       [os.path.join(REPO, "build", "bin", "autoshard-opt")], "autoshard-opt")
    mesh = parse_mesh(args.mesh)
    try:
        layers = [int(x) for x in args.layers.split(",") if x]
    except ValueError:
        sys.exit("error: --layers expects integers, got '%s'" % args.layers)
    models = [m for m in args.models.split(",") if m]
    for m in models:
        if m not in ("mlp", "gpt"):
            sys.exit("error: unknown model '%s' (mlp, gpt)" % m)
    sizes = {"mlp": parse_sizes(args.mlp_sizes, "--mlp-sizes"),
             "gpt": parse_sizes(args.gpt_sizes, "--gpt-sizes")}

    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": "%s, %d cores, %s" % (cpu_name(), os.cpu_count() or 0, platform.machine()),
        "mlir_opt": mlir_opt, "autoshard_opt": as_opt, "mesh": args.mesh,
        "form": args.form, "sizes": {m: sizes[m] for m in models},
        "timing": "pass wall time from --mlir-timing (parse/print excluded; the time or "
                  "total x share, whichever rounds tighter), best of N",
        "load_average_at_start": round(os.getloadavg()[0], 2),
    }
    print("# autoshard vs upstream MLIR shard: propagation + partition")
    print("# %s | %s (load %.1f) | mesh %s | form %s" % (
        meta["date"], meta["machine"], meta["load_average_at_start"], args.mesh, args.form))
    for m in models:
        print("# %s sizes: %s" % (m, ",".join("%s=%d" % kv for kv in sizes[m].items())))
    print("# upstream: %s\n# autoshard: %s" % (mlir_opt, as_opt))
    sys.stdout.flush()

    results = []
    tmp = tempfile.mkdtemp(prefix="autoshard-bench-")
    try:
        for model in models:
            for L in layers:
                results.append(bench_one(model, L, args, mesh, sizes[model],
                                         mlir_opt, as_opt, tmp))
                print_row(results[-1])
                sys.stdout.flush()
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    meta["load_average_at_end"] = round(os.getloadavg()[0], 2)
    add_marginal_times(results)
    print_tables(results)
    print_bounded(results)
    print("# load average (1 min) at start %.1f, at end %.1f" % (
        meta["load_average_at_start"], meta["load_average_at_end"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=2)
            f.write("\n")
    bad = [r for r in results if r["autoshard"]["error"] or r.get("crosscheck") == "mismatch"]
    return 1 if bad else 0


def count_only(path):
    try:
        with open(path) as f:
            c = count_collectives(f.read())
    except OSError as e:
        sys.exit("error: cannot read %s: %s" % (path, e.strerror))
    for op, cost in c["detail"]:
        print("%s %.0f" % (op, cost))
    for op in c["unpriced"]:
        print("%s unpriced" % op)
    print("total %s %.0f" % (format_counts(c["counts"]), c["bytes"]))
    return 0


def bench_one(model, L, args, mesh, sizes, mlir_opt, as_opt, tmp):
    workdir = os.path.join(args.keep or tmp, "%s-L%d" % (model, L))
    os.makedirs(workdir, exist_ok=True)
    src = os.path.join(workdir, "input.mlir")
    gen = [sys.executable, GEN, model, "--layers", str(L), "--annotate", "shard",
           "--form", args.form, "--mesh", args.mesh]
    for k, v in sizes.items():
        gen += ["--" + k, str(v)]
    g = subprocess.run(gen, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if g.returncode != 0:
        sys.exit("error: generator failed: %s" % (g.stderr.strip().splitlines() or ["?"])[0])
    with open(src, "w") as f:
        f.write(g.stdout)
    ops = count_top_level_ops(g.stdout)
    runs = min(args.runs, 2) if L > 64 else args.runs
    runs = max(1, runs)
    timing = ["--mlir-timing", "--mlir-timing-display=list"]

    def upstream_cmd(stage, out):
        return [mlir_opt, src, "--pass-pipeline=builtin.module(%s)" % UPSTREAM_PASSES[stage],
                "-o", out if stage == "full" else os.devnull] + timing

    prop_report = os.path.join(workdir, "propagate.json")
    part_report = os.path.join(workdir, "partition.json")

    solver = " solver=" + args.solver if args.solver else ""

    # Timed runs write what upstream writes (the IR), no report: the JSON
    # report (strategies of every op) is an extra output, produced once below
    # by an untimed run.
    def autoshard_cmd(stage, out):
        if stage == "prop":
            return [as_opt, src, "--dist-propagate=" + solver.strip(),
                    "-o", os.devnull] + timing
        return [as_opt, src, "--dist-propagate=" + solver.strip(),
                "--dist-partition=report=" + part_report, "-o", out] + timing

    rec = {"model": model, "layers": L, "ops": ops, "runs": runs}
    ref, label = reference_bytes(model, L, mesh, sizes, args.form)
    rec["reference_bytes"], rec["reference"] = ref, label
    for tool, cmd, timers in (("upstream", upstream_cmd, UPSTREAM_TIMERS),
                              ("autoshard", autoshard_cmd, AUTOSHARD_TIMERS)):
        res, ir = measure(tool, cmd, timers, runs, args.timeout, workdir)
        if ir is not None:
            c = count_collectives(ir)
            res["collectives"], res["bytes"] = c["counts"], c["bytes"]
            res["unpriced"] = c["unpriced"]
            res["bytes_vs_reference"] = c["bytes"] / ref if ref else None
            res["us_per_op_prop"] = res["prop_s"] * 1e6 / ops if ops else None
        rec[tool] = res
    up, au = rec["upstream"], rec["autoshard"]
    if not au["error"]:
        rec["crosscheck"] = crosscheck(au, part_report)
        try:
            subprocess.run([as_opt, src, "--dist-propagate=report=" + prop_report + solver,
                            "-o", os.devnull], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=args.timeout, check=True)
            with open(prop_report) as f:
                report = json.load(f)
            au["solver"], au["solver_optimal"] = report.get("solver"), report.get("optimal")
            au["memory_bytes"] = report.get("memory_bytes_per_device")
            au["cost_us"] = report.get("total_cost_us")
        except (OSError, ValueError, subprocess.SubprocessError):
            pass
        if args.memory_fraction and au.get("memory_bytes"):
            rec["bounded"] = bench_bounded(src, au, args, runs, timing, workdir, as_opt)
    if not up["error"] and not au["error"] and up["prop_s"]:
        rec["time_ratio_prop"] = au["prop_s"] / up["prop_s"]
        rec["time_ratio_full"] = au["full_s"] / up["full_s"] if up["full_s"] else None
    return rec


def bench_bounded(src, au, args, runs, timing, workdir, as_opt):
    """autoshard's propagation time (best of `runs`) with memory_gib set to
    --memory-fraction of the fastest plan's bytes per device, and the plan
    it gives: {prop_s, memory_bytes, cost_us, fits, error}, and the plan the
    multiplier search gave before the repair (unrepaired_bytes,
    unrepaired_cost_us)."""
    bound = args.memory_fraction * au["memory_bytes"]
    cluster = os.path.join(workdir, "cluster-bounded.json")
    with open(cluster, "w") as f:
        json.dump({"memory_gib": bound / 2.0 ** 30}, f)
    solver = " solver=" + args.solver if args.solver else ""
    res = {"prop_s": None, "memory_bytes": None, "cost_us": None, "fits": None,
           "bound_bytes": bound, "unrepaired_bytes": None, "unrepaired_cost_us": None,
           "error": None}
    for _ in range(runs):
        r = run_tool([as_opt, src, "--dist-propagate=cluster=" + cluster + solver,
                      "-o", os.devnull] + timing, args.timeout)
        if r.rc != 0:
            res["error"] = failure(r, args.timeout)
            return res
        t = pass_times(r.stderr).get(AUTOSHARD_TIMERS["prop"])
        if t is not None:
            res["prop_s"] = t if res["prop_s"] is None else min(res["prop_s"], t)
    report_path = os.path.join(workdir, "propagate-bounded.json")
    r = run_tool([as_opt, src, "--dist-propagate=cluster=%s report=%s%s" % (cluster, report_path, solver),
                  "-o", os.devnull], args.timeout)
    if r.rc == 0:
        with open(report_path) as f:
            report = json.load(f)
        res["memory_bytes"] = report.get("memory_bytes_per_device")
        res["cost_us"] = report.get("total_cost_us")
        res["fits"] = report.get("memory_fits")
        res["unrepaired_bytes"] = report.get("unrepaired_memory_bytes_per_device")
        res["unrepaired_cost_us"] = report.get("unrepaired_cost_us")
    return res


def print_bounded(results):
    rows = []
    for r in results:
        b, au, up = r.get("bounded"), r["autoshard"], r["upstream"]
        if not b:
            continue
        row = [r["model"], str(r["layers"]), "%.0f" % au["memory_bytes"], "%.0f" % b["bound_bytes"]]
        if b["error"]:
            row += [(b["error"], 8)]
        else:
            unrep_b, unrep_us = b.get("unrepaired_bytes"), b.get("unrepaired_cost_us")
            row += ["-" if unrep_b is None else "%.0f" % unrep_b,
                    "-" if b["memory_bytes"] is None else "%.0f" % b["memory_bytes"],
                    "-" if au.get("cost_us") is None else "%.2f" % au["cost_us"],
                    "-" if unrep_us is None else "%.2f" % unrep_us,
                    "-" if b["cost_us"] is None else "%.2f" % b["cost_us"],
                    fmt_ms(au["prop_s"]), fmt_ms(b["prop_s"]),
                    fmt_x(b["prop_s"] / au["prop_s"] if b["prop_s"] and au["prop_s"] else None)]
        row.append(fmt_x(b["prop_s"] / up["prop_s"]
                         if b.get("prop_s") and not up["error"] and up["prop_s"] else None))
        rows.append(row)
    if not rows:
        return
    print()
    print("Memory bound (autoshard, memory_gib = fraction x the fastest plan's bytes per device;")
    print("      bytes per device, plan cost in us, propagation ms; ratios of propagation time;")
    print("      'multiplier': the Lagrangian search's plan, 'bounded': after the repair)")
    table(("model", "L", "fastest B", "bound B", "multiplier B", "bounded B", "fastest us",
           "multiplier us", "bounded us",
           "as prop", "as bounded", "bounded/free", "bounded/up"), rows)


def add_marginal_times(results):
    """Time per op added from the previous (smaller) L of the same model:
    (t(L) - t(L_prev)) / (ops(L) - ops(L_prev)). The plain us/op of a small
    graph is mostly a fixed cost (pass set-up, first use of cold code and
    memory); the slope is the cost each further op adds."""
    for model in {r["model"] for r in results}:
        rs = sorted((r for r in results if r["model"] == model), key=lambda r: r["ops"])
        for prev, cur in zip(rs, rs[1:]):
            for tool in ("upstream", "autoshard"):
                a, b = prev[tool], cur[tool]
                if (not a["error"] and not b["error"] and a.get("prop_s") is not None
                        and b.get("prop_s") is not None and cur["ops"] > prev["ops"]):
                    b["marginal_us_per_op_prop"] = (
                        (b["prop_s"] - a["prop_s"]) * 1e6 / (cur["ops"] - prev["ops"]))
            up = cur["upstream"].get("marginal_us_per_op_prop")
            au = cur["autoshard"].get("marginal_us_per_op_prop")
            if up is not None and au is not None and up > 0:
                cur["marginal_ratio_prop"] = au / up


def crosscheck(res, report_path):
    """autoshard's own partition report must agree with what we count."""
    try:
        with open(report_path) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        res["crosscheck_detail"] = "no report: %s" % e
        return "mismatch"
    theirs = {k: v for k, v in report.get("collectives", {}).items() if v}
    ours = {}
    for op, n in res["collectives"].items():
        name = op.split(".", 1)[1]
        if name == "make_partial":  # local; the report may not list it
            continue
        ours[name] = ours.get(name, 0) + n
    theirs.pop("make_partial", None)
    bytes_ok = abs(report.get("comm_bytes_per_device", -1) - res["bytes"]) <= 1e-6 * max(1.0, res["bytes"])
    if ours == theirs and bytes_ok:
        return "ok"
    res["crosscheck_detail"] = "report %s %s B, counted %s %s B" % (
        theirs, report.get("comm_bytes_per_device"), ours, res["bytes"])
    return "mismatch"


# ----------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------

def fmt_ms(s):
    return "-" if s is None else "%.2f" % (s * 1e3)


def fmt_x(v):
    return "-" if v is None else "%.2fx" % v


def print_row(r):
    up, au = r["upstream"], r["autoshard"]
    parts = ["%s L=%d ops=%d" % (r["model"], r["layers"], r["ops"])]
    for name, res in (("upstream", up), ("autoshard", au)):
        if res["error"]:
            parts.append("%s %s" % (name, res["error"]))
        else:
            parts.append("%s %.0f B (%s %s) prop %s ms" % (
                name, res["bytes"], fmt_x(res["bytes_vs_reference"]), r["reference"], fmt_ms(res["prop_s"])))
    print("# done: " + " | ".join(parts))


def print_tables(results):
    print()
    print("Communication (per-device bytes sent, static count; ref = %s)" %
          ", ".join(sorted({"%s: %s" % (r["model"], r["reference"]) for r in results})))
    head = ("model", "L", "ref bytes", "upstream colls", "upstream bytes", "up/ref",
            "autoshard colls", "autoshard bytes", "as/ref", "check")
    rows = []
    for r in results:
        ref = r["reference_bytes"]
        row = [r["model"], str(r["layers"]), "-" if ref is None else "%.0f" % ref]
        for tool in ("upstream", "autoshard"):
            res = r[tool]
            if res["error"]:
                row += [(res["error"], 3)]
            else:
                row += [format_counts(res["collectives"]), "%.0f" % res["bytes"],
                        fmt_x(res["bytes_vs_reference"])]
        row.append(r.get("crosscheck", "-"))
        rows.append(row)
    table(head, rows)
    print()
    print("Time (ms of pass wall time, best of runs; us/op = propagation time / top-level ops;")
    print("      +us/op = propagation time added per op since the previous L of the model)")
    head = ("model", "L", "ops", "up prop", "up +part", "up us/op", "up +us/op", "as prop",
            "as +part", "as us/op", "as +us/op", "as/up prop", "as/up +part", "as/up +us/op",
            "up MiB", "as MiB")
    rows = []
    for r in results:
        up, au = r["upstream"], r["autoshard"]
        row = [r["model"], str(r["layers"]), str(r["ops"])]
        for res in (up, au):
            if res["error"]:
                row += [("failed", 4)]
            else:
                marginal = res.get("marginal_us_per_op_prop")
                row += [fmt_ms(res["prop_s"]), fmt_ms(res["full_s"]), "%.1f" % res["us_per_op_prop"],
                        "-" if marginal is None else "%.1f" % marginal]
        row += [fmt_x(r.get("time_ratio_prop")), fmt_x(r.get("time_ratio_full")),
                fmt_x(r.get("marginal_ratio_prop"))]
        row += ["-" if res["maxrss_mib"] is None else "%.0f" % res["maxrss_mib"] for res in (up, au)]
        rows.append(row)
    table(head, rows)
    print()
    for model in sorted({r["model"] for r in results}, key=[r["model"] for r in results].index):
        rs = [r for r in results if r["model"] == model]
        parts = []
        for tool, short in (("upstream", "upstream"), ("autoshard", "autoshard")):
            ratios = [r[tool]["bytes_vs_reference"] for r in rs if not r[tool]["error"]]
            fails = sum(1 for r in rs if r[tool]["error"])
            text = "%s/%s %s" % (short, rs[0]["reference"], span(ratios))
            if fails:
                text += " (%d failed)" % fails
            parts.append(text)
        times = [(r["layers"], r["time_ratio_prop"]) for r in rs if r.get("time_ratio_prop")]
        if times:
            parts.append("autoshard/upstream propagation time %s, %.2fx at L=%d" % (
                span([t for _, t in times]), times[-1][1], times[-1][0]))
        marginal = [r["marginal_ratio_prop"] for r in rs if r.get("marginal_ratio_prop")]
        if marginal:
            parts.append("time per added op %s" % span(marginal))
        print("summary %s: %s" % (model, "; ".join(parts)))
    print("\ncolls: AR all_reduce, AG all_gather, RS reduce_scatter, A2A all_to_all, "
          "AS all_slice (local), AGu/ASu uneven gather/slice, P permute, MP make_partial (local)")
    for r in results:
        for tool in ("upstream", "autoshard"):
            if r[tool].get("unpriced"):
                print("warning: %s L=%d %s: unpriced collectives %s" % (
                    r["model"], r["layers"], tool, ", ".join(r[tool]["unpriced"])))
        if r["autoshard"].get("solver_optimal") is False:
            print("note: %s L=%d: autoshard's solver (%s) reports its plan as not proven optimal" % (
                r["model"], r["layers"], r["autoshard"].get("solver")))
        if r.get("crosscheck") == "mismatch":
            print("warning: %s L=%d: autoshard report disagrees: %s" % (
                r["model"], r["layers"], r["autoshard"].get("crosscheck_detail")))


def span(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return "%.2fx" % lo if abs(hi - lo) < 0.005 else "%.2fx-%.2fx" % (lo, hi)


def table(head, rows):
    """Prints aligned columns. A cell (text, k) spans k columns (a tool's
    failure message) and does not widen them."""
    widths = [len(h) for h in head]
    for row in rows:
        i = 0
        for cell in row:
            if isinstance(cell, tuple):
                i += cell[1]
                continue
            widths[i] = max(widths[i], len(cell))
            i += 1

    def line(cells):
        out, i = [], 0
        for cell in cells:
            if isinstance(cell, tuple):
                text, span = cell
                w = sum(widths[i:i + span]) + 2 * (span - 1)
                out.append(text.ljust(w))
                i += span
                continue
            out.append(cell.rjust(widths[i]) if i > 1 else cell.ljust(widths[i]))
            i += 1
        return "  ".join(out).rstrip()

    print(line(head))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print(line(row))


if __name__ == "__main__":
    sys.exit(main())
