"""Partitioned training against single-rank training, one configuration per
call (test/Train/matrix-*.test).

  train_matrix.py --bin BIN_DIR --work DIR --mesh M
      (--gen "MODEL SIZES..." | --model FILE)
      --input NAME=SPEC ... --labels SPEC
      --loss L --optimizer O --lr X [--momentum X] [--weight-decay X]
      [--data-axis AXIS|none] [--cluster FILE.json] [--steps N] [--seed S]
      [--loss-rtol R] [--rtol R] [--atol A]

SPEC is f32:AxB (uniform in [-1, 1)) or i64:AxB:HIGH (integers in [0, HIGH)),
written as .npy from Python's seeded `random` (standard library only: CI's
python3 may have no numpy). --gen runs scripts/gen_models.py with --params
--mesh M and the given words (e.g. "gpt --mp-axis none --layers 1").

Steps: (1) the model; (2) the reference, `autoshard-opt
--dist-training-step` run unpartitioned on one rank by `autoshard-run
--steps N`; (3) `autoshard train` on the mesh; (4) the N losses within
--loss-rtol of each other (and finite), and every tensor the reference
writes with --params-out (parameters and optimizer state) equal to the
partitioned run's within --rtol/--atol (`autoshard-run --compare`'s rule,
npy_compare.py).
Prints one line, `MATCH ...`, or every mismatch (exit status 1); a failing
command is shown with its output.
"""
import argparse
import json
import math
import os
import random
import shlex
import struct
import subprocess
import sys

from npy_compare import compare

# One configuration is seconds; a bound turns a wedged mpirun into a failure.
TIMEOUT_S = 240


def write_npy(path, dtype, shape, values):
    """A version-1.0 .npy file: magic, header dict padded to 64 bytes, data."""
    descr, fmt = {"f32": ("<f4", "<%df"), "i64": ("<i8", "<%dq")}[dtype]
    shape_str = "(%s)" % "".join("%d," % d for d in shape) if len(shape) == 1 \
        else "(%s)" % ", ".join(str(d) for d in shape)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
        descr, shape_str)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack(fmt % len(values), *values))


def make_data(spec, rng, path):
    parts = spec.split(":")
    dtype, shape = parts[0], [int(d) for d in parts[1].split("x")]
    count = math.prod(shape)
    if dtype == "f32":
        values = [rng.uniform(-1.0, 1.0) for _ in range(count)]
    elif dtype == "i64":
        values = [rng.randrange(int(parts[2])) for _ in range(count)]
    else:
        raise SystemExit("bad data spec '%s'" % spec)
    write_npy(path, dtype, shape, values)


def run(cmd, stdout_path=None):
    """Runs cmd (its stdout into stdout_path if given); on failure prints it
    with its output and exits 1."""
    try:
        out = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print("FAILED (timeout %ds): %s" % (TIMEOUT_S, shlex.join(cmd)))
        sys.exit(1)
    if out.returncode != 0:
        print("FAILED (exit %d): %s" % (out.returncode, shlex.join(cmd)))
        print(out.stdout + out.stderr)
        sys.exit(1)
    if stdout_path:
        with open(stdout_path, "w") as f:
            f.write(out.stdout)


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--mesh", required=True)
    p.add_argument("--gen")
    p.add_argument("--model")
    p.add_argument("--input", action="append", default=[])
    p.add_argument("--labels", required=True)
    p.add_argument("--loss", required=True)
    p.add_argument("--optimizer", required=True)
    p.add_argument("--lr", required=True)
    p.add_argument("--momentum")
    p.add_argument("--weight-decay")
    p.add_argument("--data-axis")
    p.add_argument("--cluster")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--loss-rtol", type=float, default=1e-5)
    p.add_argument("--rtol", default="1e-4")
    p.add_argument("--atol", default="1e-6")
    a = p.parse_args(argv)
    tool = lambda name: os.path.join(a.bin, name)
    os.makedirs(a.work, exist_ok=True)
    w = lambda name: os.path.join(a.work, name)

    # (1) The model.
    model = a.model
    if a.gen:
        model = w("model.mlir")
        gen = os.path.normpath(os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
            "scripts", "gen_models.py"))
        words = a.gen.split()
        run([sys.executable, gen, words[0], "--params", "--mesh", a.mesh]
            + words[1:], stdout_path=model)

    # Data: inputs and labels, seeded.
    rng = random.Random(a.seed)
    inputs = []
    for spec in a.input:
        name, _, data = spec.partition("=")
        make_data(data, rng, w(name + ".npy"))
        inputs.append("%s=%s" % (name, w(name + ".npy")))
    make_data(a.labels, rng, w("labels.npy"))

    # (2) The single-rank reference.
    opts = {"loss": a.loss, "optimizer": a.optimizer, "lr": a.lr}
    if a.momentum:
        opts["momentum"] = a.momentum
    if a.weight_decay:
        opts["weight-decay"] = a.weight_decay
    run([tool("autoshard-opt"), model, "--dist-training-step=" +
         " ".join("%s=%s" % kv for kv in opts.items()), "-o", w("ref.mlir")])
    run([tool("autoshard-run"), w("ref.mlir"), "--entry", "train_step",
         "--steps", str(a.steps), "--seed", str(a.seed)]
        + [x for i in inputs for x in ("--input", i)]
        + ["--input", "labels=" + w("labels.npy"),
           "--losses-out", w("ref.json"), "--params-out", w("ref"),
           "--write-outputs=false"])

    # (3) The partitioned run.
    cmd = [tool("autoshard"), "train", model, "--mesh", a.mesh,
           "--steps", str(a.steps), "--seed", str(a.seed),
           "--labels", w("labels.npy"), "--losses-out", w("part.json"),
           "--params-out", w("part"), "--work-dir", w("work")]
    cmd += [x for i in inputs for x in ("--input", i)]
    cmd += ["--%s=%s" % kv for kv in opts.items()]
    if a.data_axis:
        cmd += ["--data-axis", a.data_axis]
    if a.cluster:
        cmd += ["--cluster", a.cluster]
    run(cmd)

    # (4) Compare.
    bad = []
    ref, part = json.load(open(w("ref.json"))), json.load(open(w("part.json")))
    if len(ref) != a.steps or len(part) != a.steps:
        bad.append("%d and %d losses, expected %d" % (len(part), len(ref),
                                                      a.steps))
    worst = 0.0
    for k, (x, y) in enumerate(zip(part, ref)):
        if not (math.isfinite(x) and math.isfinite(y)):
            bad.append("loss %d not finite: %r vs %r" % (k + 1, x, y))
            continue
        worst = max(worst, abs(x - y) / max(abs(y), 1e-30))
        if abs(x - y) > a.loss_rtol * abs(y) + 1e-7:
            bad.append("loss %d: %r vs single-rank %r" % (k + 1, x, y))
    names = sorted(f for f in os.listdir(w("ref")) if f.endswith(".npy"))
    worst_abs = (0.0, "")
    extra = sorted(set(os.listdir(w("part"))) - set(names))
    if extra:
        bad.append("only the partitioned run wrote %s" % ", ".join(extra))
    for name in names:
        mine = os.path.join(w("part"), name)
        if not os.path.exists(mine):
            bad.append("the partitioned run wrote no %s" % name)
            continue
        ok, line = compare(tool("autoshard-run"), mine,
                           os.path.join(w("ref"), name), a.rtol, a.atol)
        if not ok:
            bad.append(line)
        elif "max_abs_err=" in line:
            err = float(line.split("max_abs_err=")[1].split()[0])
            if err > worst_abs[0]:
                worst_abs = (err, name)
    if bad:
        report(w, "\n".join("MISMATCH " + m for m in bad))
        return 1
    trend = "falling" if all(x > y for x, y in zip(part, part[1:])) \
        else "not falling"
    report(w, "MATCH %d losses (%s, max rel diff %.2g), %d tensors within rtol %s "
          "atol %s (max abs diff %.2g%s)" %
          (len(part), trend, worst, len(names), a.rtol, a.atol, worst_abs[0],
           " in " + worst_abs[1] if worst_abs[1] else ""))
    return 0


def report(w, text):
    """Prints the verdict and keeps it in the work dir (result.txt)."""
    print(text)
    with open(w("result.txt"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
