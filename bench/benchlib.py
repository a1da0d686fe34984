"""Helpers the benchmarks share (bench/training/run.py, bench/runtime/run.py).

Python 3 standard library only: running tools with a timeout and a one-line
error, the CPU time other processes took during a run, finding the tools and
a python with torch, the committed training fixtures (test/Train/Inputs),
and text tables.
"""

import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
FIXTURES = os.path.join(REPO, "test", "Train", "Inputs")
TORCH_STEP = os.path.join(BENCH, "training", "torch_step.py")


class BenchError(Exception):
    pass


def run(cmd, timeout, env=None):
    """(returncode, stdout, stderr, wall seconds)."""
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise BenchError("timed out after %gs: %s" % (timeout, " ".join(cmd[:3])))
    except OSError as e:
        raise BenchError("cannot run %s: %s" % (cmd[0], e.strerror))
    return p.returncode, p.stdout, p.stderr, time.perf_counter() - start


def first_error(text, rc):
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()[:160]
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return (lines[0][:160] if lines else "no diagnostic") + " (exit status %d)" % rc


def checked(cmd, timeout, env=None):
    rc, out, err, wall = run(cmd, timeout, env)
    if rc != 0:
        raise BenchError(first_error(err + out, rc))
    return out, err, wall


def thread_env(threads):
    """The environment of a run on `threads` threads: OpenMP and BLAS pools
    sized like torch.set_num_threads."""
    n = str(threads)
    return dict(os.environ, OMP_NUM_THREADS=n, MKL_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n)


class CpuWatch:
    """CPU time the rest of the machine used while this bench ran: busy
    time from /proc/stat minus this process's and its children's own (the
    tools, mpirun and its ranks, torch). A quiet machine shows ~0; a build
    running next to the bench shows up here, whatever the load average
    says (it lags by a minute and counts the bench's own ranks)."""

    def __init__(self):
        self.start = self._sample()

    @staticmethod
    def _sample():
        try:
            with open("/proc/stat") as f:
                fields = [int(x) for x in f.readline().split()[1:]]
            busy = (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            busy = None
        own = sum(getattr(resource.getrusage(who), f)
                  for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                  for f in ("ru_utime", "ru_stime"))
        return busy, own, time.perf_counter()

    def other(self):
        """(CPU seconds of other processes, wall seconds) since start."""
        busy, own, wall = self._sample()
        if busy is None or self.start[0] is None:
            return None, wall - self.start[2]
        return max(0.0, (busy - self.start[0]) - (own - self.start[1])), wall - self.start[2]


def describe_other_cpu(other_s, wall_s):
    """'X CPU-s in its Y s (Z% of N CPUs)' for CpuWatch.other()'s figures."""
    cpus = os.cpu_count() or 1
    return "%.1f CPU-s in its %.1f s (%.0f%% of %d CPUs)" % (
        other_s, wall_s, 100 * other_s / max(wall_s, 1e-9) / cpus, cpus)


def finish(args, work, meta, results, failed):
    """The end of a bench run: --json gets meta and results, the work
    directory goes unless --keep; returns the exit status."""
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
            f.write("\n")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def run_main(main):
    """Exits with main()'s status; a BenchError is one error line."""
    try:
        sys.exit(main())
    except BenchError as e:
        sys.exit("error: %s" % e)


def find_tool(name, bindir):
    """`name` in --bin DIR (exits when missing there), else on PATH, else
    build/bin."""
    if bindir:
        path = os.path.join(bindir, name)
        if not os.path.exists(path):
            sys.exit("error: no %s in --bin %s" % (name, bindir))
        return path
    return shutil.which(name) or os.path.join(REPO, "build", "bin", name)


def find_tools(bindir):
    """autoshard-opt, -translate and -run (see find_tool); exits when one is
    missing."""
    tools = {k: find_tool("autoshard-" + k, bindir) for k in ("opt", "translate", "run")}
    for path in tools.values():
        if not os.path.exists(path):
            sys.exit("error: cannot find %s; build it or pass --bin" % path)
    return tools


def start_meta():
    """The date, machine and load average a bench starts at (JSON "meta"),
    and the '# DATE; MACHINE; load average ...' line that says them."""
    import datetime
    meta = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": "%s, %d CPUs, %s" % (cpu_name(), os.cpu_count() or 1, platform.machine()),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    line = "# %s; %s; load average %s at start" % (
        meta["date"], meta["machine"], " ".join("%.2f" % x for x in meta["load_average_at_start"]))
    return meta, line


def find_torch(no_torch, torch_python):
    """(python, version) of the first candidate that imports torch and numpy,
    or (None, why)."""
    if no_torch:
        return None, "--no-torch"
    candidates = [torch_python] if torch_python else [sys.executable, "/usr/bin/python3"]
    for py in candidates:
        if not py or not os.path.exists(py):
            continue
        try:
            p = subprocess.run([py, "-c", "import numpy, torch; print(torch.__version__)"],
                               capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            continue
        if p.returncode == 0:
            return py, p.stdout.strip()
    return None, "no python with torch and numpy among %s" % ", ".join(c for c in candidates if c)


def run_torch(spec, threads, py, path, timeout):
    """Runs bench/training/torch_step.py on SPEC (written to `path`) with
    `threads` threads; returns its JSON result."""
    with open(path, "w") as f:
        json.dump(dict(spec, threads=threads), f)
    out, _, _ = checked([py, TORCH_STEP, path], timeout, thread_env(threads))
    return json.loads(out.strip().splitlines()[-1])


class Fixture:
    """A committed training fixture, test/Train/Inputs/NAME: its ONNX model,
    batch inputs [(dist.name, file)], the labels file of its loss and the
    PyTorch losses recorded when it was written (5 Adam steps, lr 0.01)."""

    def __init__(self, name):
        self.name = name
        self.dir = os.path.join(FIXTURES, name)
        self.config_file = os.path.join(self.dir, "config.json")
        with open(self.config_file) as f:
            config = json.load(f)
        self.loss = "mse" if name == "mlp" else "cross_entropy"
        self.onnx = os.path.join(self.dir, "model.onnx")
        self.data = list(config["inputs"].items())
        self.inputs = [(n, os.path.join(self.dir, d["file"])) for n, d in self.data]
        self.labels = os.path.join(self.dir, config["labels"][self.loss]["file"])
        run_name = "adam" if self.loss == "mse" or name == "gpt" else "adam_ce"
        with open(os.path.join(self.dir, "losses_%s.json" % run_name)) as f:
            self.torch_losses = json.load(f)

    def import_cmd(self, translate, weights_dir, out, strategy=None):
        cmd = [translate, "--import-onnx", self.onnx, "--weights-dir", weights_dir, "-o", out]
        return cmd + (["--strategy", strategy] if strategy else [])

    def torch_spec(self, weights_dir):
        """What torch_step.py needs to build the same model from the weight
        files autoshard-translate wrote."""
        return {"model": "fixture-" + self.name, "config": self.config_file,
                "weights_dir": weights_dir, "inputs": [f for _, f in self.inputs],
                "labels": self.labels, "loss": self.loss}


def make_parser(doc, epilog, models):
    """An argument parser described by the module's first paragraph, with
    --models (comma-separated, default: all of `models`)."""
    import argparse
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0], epilog=epilog)
    ap.add_argument("--models", default=",".join(models),
                    help="comma-separated: %s (default: all)" % ", ".join(models))
    return ap


def add_common_arguments(ap, timeout_help="seconds per command"):
    """The options every bench takes: --no-torch, --torch-python, --bin,
    --timeout, --json, --keep."""
    ap.add_argument("--no-torch", action="store_true", help="leave out the torch columns")
    ap.add_argument("--torch-python", help="python with torch and numpy "
                    "(default: this one, else /usr/bin/python3)")
    ap.add_argument("--bin", help="directory of autoshard-opt, -translate, -run "
                    "(default: PATH, else build/bin)")
    ap.add_argument("--timeout", type=float, default=300, help=timeout_help)
    ap.add_argument("--json", help="write every number to this file")
    ap.add_argument("--keep", help="work directory to keep (default: a temporary one)")


def parse_models(text, known):
    """The comma-separated --models list; exits on an unknown name."""
    models = [m.strip() for m in text.split(",") if m.strip()]
    for m in models:
        if m not in known:
            sys.exit("error: unknown model '%s' (%s)" % (m, ", ".join(known)))
    return models


def training_step_option(loss, optimizer, data_axis=None):
    """The --dist-training-step option string."""
    opt = "loss=%s optimizer=%s lr=%g" % (loss, optimizer["name"], optimizer["lr"])
    return opt + (" data-axis=%s" % data_axis if data_axis else "")


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def median(xs):
    return statistics.median(xs) if xs else None


def fmt_ms(v, digits=2):
    return "-" if v is None else "%.*f" % (digits, v)


def fmt_ratio(a, b):
    return "-" if a is None or b is None or b <= 0 else "%.2fx" % (a / b)


def table(header, rows, left=()):
    """Columns named in `left`, and any non-number, left-aligned; numbers
    right-aligned; a dashed line under the header."""
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) if header[i] in left or not _numeric(c) else str(c).rjust(w)
                       for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _numeric(c):
    return bool(re.match(r"^-?[\d.]+(x|%|e[-+]\d+)?$", str(c)))
