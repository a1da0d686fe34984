"""Propagation's invariants over random graphs.

Usage: random_graphs.py [--seeds N] [--first S] [--jobs J] [--keep DIR]
                        [--solver dp|local|exact] [--print SEED]

Generates, for each seed, a random DAG of matmuls, elementwise ops
(linalg.add, a tanh generic), transposes and zero fills on a random mesh
of 1 to 3 axes, with values read by several ops (fan-outs, also of
tensor.empty), some returned as well as read, and random annotations on
arguments and intermediates (some values annotated several times, in
layouts that may disagree). Runs `autoshard-opt` (from PATH) with
--dist-propagate then --dist-partition on it and checks:
  - the objective the propagation report gives (solver_cost_us) equals the
    cost of what it emitted (total_cost_us: compute + its reshards);
  - the report's collectives and bytes per device equal those counted on
    the partitioned program's IR (ir_collectives.py, independently of
    --dist-partition's own report).
Prints one line per failing seed (its input kept under --keep) and a
summary; exits 1 on any failure.
"""
import argparse
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ir_collectives import count  # noqa: E402

SIZES = [16, 32, 64]


def layout_text(rng, shape, axes):
    """A random even layout: each mesh axis on a dim it divides, or none."""
    dims = [[] for _ in shape]
    for a, size in enumerate(axes):
        d = rng.randrange(len(shape) + 1)
        if d == len(shape):
            continue
        n = size
        for b in dims[d]:
            n *= axes[b]
        if shape[d] % n == 0:
            dims[d].append(a)
    return "[" + ", ".join(
        "[" + ", ".join("a%d" % a for a in d) + "]" for d in dims) + "]"


def ty(shape):
    return "tensor<%dx%dxf32>" % tuple(shape)


def generate(seed):
    rng = random.Random(seed)
    axes = [rng.choice([2, 4]) for _ in range(rng.choice([1, 2, 2, 3]))]
    mesh = "#dist.mesh<[%s]>" % ", ".join(
        "a%d = %d" % (i, s) for i, s in enumerate(axes))
    args, lines, values, uses = [], [], [], {}
    counter = [0]

    def fresh(prefix="v"):
        counter[0] += 1
        return "%%%s%d" % (prefix, counter[0])

    def new_arg(shape):
        name = "%%arg%d" % len(args)
        args.append((name, shape))
        values.append((name, shape))
        uses[name] = 0
        annotate_some(name, shape)
        return name

    def annotate_some(name, shape):
        # Now and then several annotations of one value, which may disagree:
        # a fan-out whose readers want different layouts.
        if rng.random() < 0.4:
            annotate(name, shape)
            while rng.random() < 0.4:
                annotate(name, shape)

    def annotate(name, shape):
        v = fresh("s")
        prio = rng.choice(["", "", " priority 1"])
        lines.append("%s = dist.annotate %s : %s as #dist.layout<#mesh, %s>%s"
                     % (v, name, ty(shape), layout_text(rng, shape, axes),
                        prio))
        uses[name] += 1
        values.append((v, shape))
        uses[v] = 0
        return v

    def pick(shape=None, dim0=None):
        pool = [(n, s) for n, s in values
                if (shape is None or s == shape) and
                (dim0 is None or s[0] == dim0)]
        # Recent values are likelier: chains, with fan-outs.
        if pool and rng.random() < 0.85:
            n, s = pool[-1 - min(int(rng.expovariate(0.5)), len(pool) - 1)]
            uses[n] += 1
            return n, s
        s = list(shape) if shape else [
            dim0 or rng.choice(SIZES), rng.choice(SIZES)]
        n = new_arg(s)
        uses[n] += 1
        return n, s

    empties = {}

    def init(shape):
        key = tuple(shape)
        # A tensor.empty shared by several ops now and then.
        if key in empties and rng.random() < 0.3:
            return empties[key]
        e = fresh("e")
        lines.append("%s = tensor.empty() : %s" % (e, ty(shape)))
        if rng.random() < 0.3:
            z, f = fresh("z"), fresh("f")
            lines.append("%s = arith.constant 0.0 : f32" % z)
            lines.append("%s = linalg.fill ins(%s : f32) outs(%s : %s) -> %s"
                         % (f, z, e, ty(shape), ty(shape)))
            e = f
        empties[key] = e
        return e

    new_arg([rng.choice(SIZES), rng.choice(SIZES)])
    for _ in range(rng.randint(3, 12)):
        kind = rng.choice(["matmul", "matmul", "add", "tanh", "transpose"])
        v = fresh()
        if kind == "matmul":
            a, sa = pick()
            b, sb = pick(dim0=sa[1])
            shape = [sa[0], sb[1]]
            lines.append("%s = linalg.matmul ins(%s, %s : %s, %s) outs(%s : "
                         "%s) -> %s" % (v, a, b, ty(sa), ty(sb), init(shape),
                                        ty(shape), ty(shape)))
        elif kind == "add":
            a, shape = pick()
            b, _ = pick(shape=shape)
            lines.append("%s = linalg.add ins(%s, %s : %s, %s) outs(%s : %s) "
                         "-> %s" % (v, a, b, ty(shape), ty(shape),
                                    init(shape), ty(shape), ty(shape)))
        elif kind == "tanh":
            a, shape = pick()
            lines.append(
                "%s = linalg.generic {indexing_maps = [affine_map<(d0, d1) "
                "-> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], "
                "iterator_types = [\"parallel\", \"parallel\"]} ins(%s : %s) "
                "outs(%s : %s) {\n    ^bb0(%%in: f32, %%out: f32):\n      "
                "%%t = math.tanh %%in : f32\n      linalg.yield %%t : f32\n"
                "    } -> %s" % (v, a, ty(shape), init(shape), ty(shape),
                                 ty(shape)))
        else:
            a, sa = pick()
            shape = [sa[1], sa[0]]
            lines.append("%s = linalg.transpose ins(%s : %s) outs(%s : %s) "
                         "permutation = [1, 0]" % (v, a, ty(sa), init(shape),
                                                   ty(shape)))
        values.append((v, shape))
        uses[v] = 0
        annotate_some(v, shape)
    # Every unread result, and now and then one that is also read.
    ret = [(n, s) for n, s in values
           if not n.startswith("%arg") and
           (uses[n] == 0 or rng.random() < 0.15)]
    if not ret:
        ret = [values[-1]]
    sig = ", ".join("%s: %s" % (n, ty(s)) for n, s in args)
    out = []
    out.append("#mesh = %s" % mesh)
    out.append("module attributes {dist.mesh = #mesh} {")
    out.append("  func.func @main(%s) -> (%s) {" % (
        sig, ", ".join(ty(s) for _, s in ret)))
    out.extend("    " + l for l in lines)
    out.append("    return %s : %s" % (", ".join(n for n, _ in ret),
                                       ", ".join(ty(s) for _, s in ret)))
    out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def check(seed, keep, solver):
    text = generate(seed)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "in.mlir")
        with open(src, "w") as f:
            f.write(text)
        rep = os.path.join(tmp, "p.json")
        proc = subprocess.run(
            ["autoshard-opt", src, "--pass-pipeline=builtin.module("
             "dist-propagate{solver=%s report=%s},dist-partition)" %
             (solver, rep)],
            capture_output=True, text=True)
        problems = []
        if proc.returncode != 0:
            problems.append("autoshard-opt failed: " +
                            proc.stderr.strip().splitlines()[-1][:300])
        else:
            with open(rep) as f:
                prop = json.load(f)
            objective, emitted = prop["solver_cost_us"], prop["total_cost_us"]
            if abs(objective - emitted) > 1e-9 * max(1.0, emitted):
                problems.append("objective %.9f us != emitted %.9f us" %
                                (objective, emitted))
            counts, total = count(proc.stdout)
            if (counts != prop["collectives"] or
                    abs(total - prop["comm_bytes_per_device"]) > 1e-6):
                problems.append("report %s %d B != IR %s %d B" % (
                    prop["collectives"], prop["comm_bytes_per_device"],
                    counts, total))
        if problems and keep:
            os.makedirs(keep, exist_ok=True)
            with open(os.path.join(keep, "seed%d.mlir" % seed), "w") as f:
                f.write(text)
        return seed, problems, proc.returncode == 0 and (
            prop["comm_bytes_per_device"] > 0)


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--seeds", type=int, default=100)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--keep", default="")
    p.add_argument("--solver", default="dp")
    p.add_argument("--print", type=int, default=-1,
                   help="print the graph of this seed and exit")
    args = p.parse_args(argv[1:])
    if args.print >= 0:
        sys.stdout.write(generate(args.print))
        return 0
    failed, communicating = 0, 0
    seeds = range(args.first, args.first + args.seeds)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for seed, problems, comm in pool.map(
                lambda s: check(s, args.keep, args.solver), seeds):
            communicating += comm
            for msg in problems:
                print("seed %d: %s" % (seed, msg))
            failed += bool(problems)
    print("%s: %d graphs (%d communicate): %d failed" %
          (args.solver, len(seeds), communicating, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
