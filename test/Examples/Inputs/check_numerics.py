#!/usr/bin/env python3
"""Runs a generated model on one CPU with upstream mlir-opt + mlir-runner and
compares the result with a plain-Python reference of the same model.

The einsum form (only linalg.generic/fill/matmul) lowers with upstream
passes; it checks the generator's math (GELU, layer norm, causal softmax
attention, masked embedding lookup, LM head) independently of autoshard.

usage: check_numerics.py GEN_MODELS.PY mlp|gpt [generator args...]
"""
import math
import os
import re
import shutil
import subprocess
import sys

PIPELINE = ",".join([
    "one-shot-bufferize{bufferize-function-boundaries}",
    "convert-linalg-to-loops", "convert-scf-to-cf", "expand-strided-metadata",
    "lower-affine", "convert-math-to-llvm", "convert-math-to-libm",
    "finalize-memref-to-llvm", "convert-arith-to-llvm", "convert-index-to-llvm",
    "convert-cf-to-llvm", "convert-func-to-llvm", "reconcile-unrealized-casts",
])


class Rng:
    """A tiny LCG, so the inputs need no numpy."""

    def __init__(self, seed):
        self.state = seed

    def uniform(self, scale):
        self.state = (self.state * 1103515245 + 12345) % (1 << 31)
        return (self.state / float(1 << 31) * 2.0 - 1.0) * scale


def parse_sig(text):
    m = re.search(r"func\.func @main\((.*)\) -> tensor<([0-9x]+)xf32>", text)
    args = re.findall(r"(%\w+): tensor<([0-9x]+)x(f32|i64)>", m.group(1))
    return ([(n, [int(d) for d in s.split("x")], t) for n, s, t in args],
            [int(d) for d in m.group(2).split("x")])


def nest(flat, shape):
    if len(shape) == 1:
        return list(flat)
    step = len(flat) // shape[0]
    return [nest(flat[i * step:(i + 1) * step], shape[1:])
            for i in range(shape[0])]


def make_inputs(args, vocab):
    rng = Rng(7)
    values = {}
    for name, shape, elt in args:
        n = math.prod(shape)
        if elt == "i64":
            flat = [int(abs(rng.uniform(1.0)) * 1e6) % vocab for _ in range(n)]
        elif name.startswith("%ln") and name.endswith(("_g", "_g_0", "_g_1")):
            flat = [1.0 + rng.uniform(0.1) for _ in range(n)]
        else:
            flat = [rng.uniform(0.5) for _ in range(n)]
        values[name] = (flat, shape, elt)
    return values


def literal(flat, shape, elt):
    fmt = (lambda v: "%d" % v) if elt == "i64" else (lambda v: "%.9e" % v)

    def rec(x):
        return "[" + ", ".join(rec(v) if isinstance(v, list) else fmt(v)
                               for v in x) + "]"
    return rec(nest(flat, shape))


def driver(args, values, result_shape):
    rtype = "tensor<%sxf32>" % "x".join(map(str, result_shape))
    lines = ["  func.func private @printMemrefF32(tensor<*xf32>)",
             "  func.func @entry() {"]
    names = []
    for i, (name, shape, elt) in enumerate(args):
        flat, shape, elt = values[name]
        ty = "tensor<%sx%s>" % ("x".join(map(str, shape)), elt)
        lines.append("    %%a%d = arith.constant dense<%s> : %s" %
                     (i, literal(flat, shape, elt), ty))
        names.append(("%%a%d" % i, ty))
    lines.append("    %%r = func.call @main(%s) : (%s) -> %s" %
                 (", ".join(n for n, _ in names),
                  ", ".join(t for _, t in names), rtype))
    lines.append("    %%u = tensor.cast %%r : %s to tensor<*xf32>" % rtype)
    lines.append("    func.call @printMemrefF32(%u) : (tensor<*xf32>) -> ()")
    lines.append("    return")
    lines.append("  }")
    return "\n".join(lines) + "\n"


# -- reference -----------------------------------------------------------------

def matmul(a, b):
    bt = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in bt] for row in a]


def gelu(v):
    return 0.5 * v * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) *
                                      (v + 0.044715 * v ** 3)))


def layer_norm(rows, g, b, eps=1e-5):
    out = []
    for r in rows:
        mean = sum(r) / len(r)
        var = sum((v - mean) ** 2 for v in r) / len(r)
        out.append([(v - mean) / math.sqrt(var + eps) * gi + bi
                    for v, gi, bi in zip(r, g, b)])
    return out


def add(a, b):
    return [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(a, b)]


def attention(x, batch, seq, heads, wq, wk, wv, wo, causal):
    """x: [batch*seq][embed]; weights [embed][embed] (heads major in columns)."""
    embed = len(wq)
    d = embed // heads
    q, k, v = matmul(x, wq), matmul(x, wk), matmul(x, wv)
    ctx = [[0.0] * embed for _ in range(batch * seq)]
    for b in range(batch):
        for h in range(heads):
            cols = range(h * d, (h + 1) * d)
            for i in range(seq):
                qi = q[b * seq + i]
                s = []
                for j in range(seq):
                    kj = k[b * seq + j]
                    val = sum(qi[c] * kj[c] for c in cols) / math.sqrt(d)
                    if causal and j > i:
                        val += -1e9
                    s.append(val)
                m = max(s)
                e = [math.exp(t - m) for t in s]
                z = sum(e)
                for c in cols:
                    ctx[b * seq + i][c] = sum(e[j] / z * v[b * seq + j][c]
                                              for j in range(seq))
    return matmul(ctx, wo)


def reference(model, values, opts):
    val = {n: nest(f, s) for n, (f, s, _) in values.items()}

    def flat2(name):  # [E, NH, D] -> [E, E]; [NH, D, E] -> [E, E]
        f, s, _ = values[name]
        if len(s) == 2:
            return nest(f, s)
        if name.startswith("%wo"):
            return nest(f, [s[0] * s[1], s[2]])
        return nest(f, [s[0], s[1] * s[2]])

    if model == "mlp":
        x = val["%x"]
        for layer in range(opts["layers"]):
            h = matmul(x, val["%%w1_%d" % layer])
            x = matmul([[gelu(t) for t in r] for r in h],
                       val["%%w2_%d" % layer])
        return [t for r in x for t in r]
    batch, seq = opts["batch"], opts["seq"]
    ids, wte, wpe = val["%ids"], val["%wte"], val["%wpe"]
    x = [[a + b for a, b in zip(wte[ids[bi][si]], wpe[si])]
         for bi in range(batch) for si in range(seq)]
    for layer in range(opts["layers"]):
        sfx = "_%d" % layer
        h = layer_norm(x, val["%ln1_g" + sfx], val["%ln1_b" + sfx])
        a = attention(h, batch, seq, opts["heads"], flat2("%wq" + sfx),
                      flat2("%wk" + sfx), flat2("%wv" + sfx),
                      flat2("%wo" + sfx), opts["causal"])
        x = add(x, a)
        h = layer_norm(x, val["%ln2_g" + sfx], val["%ln2_b" + sfx])
        m = matmul([[gelu(t) for t in r] for r in matmul(h, val["%w1" + sfx])],
                   val["%w2" + sfx])
        x = add(x, m)
    h = layer_norm(x, val["%lnf_g"], val["%lnf_b"])
    return [t for r in matmul(h, val["%w_head"]) for t in r]


def main(argv):
    gen, model, gen_args = argv[0], argv[1], argv[2:]
    text = subprocess.run([sys.executable, gen, model] + gen_args, check=True,
                          capture_output=True, text=True).stdout
    args, result_shape = parse_sig(text)
    opts = {}
    for flag in ("layers", "batch", "seq", "heads", "vocab"):
        if "--" + flag in gen_args:
            opts[flag] = int(gen_args[gen_args.index("--" + flag) + 1])
    opts["causal"] = "--no-causal" not in gen_args
    values = make_inputs(args, opts.get("vocab", 1))
    module = text.rstrip()
    assert module.endswith("}")
    module = module[:-1] + driver(args, values, result_shape) + "}\n"

    mlir_opt = shutil.which("mlir-opt")
    runner = shutil.which("mlir-runner")
    libdir = os.path.join(os.path.dirname(os.path.realpath(runner)), "..",
                          "lib")
    lowered = subprocess.run(
        [mlir_opt, "--pass-pipeline=builtin.module(%s)" % PIPELINE],
        input=module, check=True, capture_output=True, text=True).stdout
    libs = ",".join(os.path.join(libdir, l) for l in
                    ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    out = subprocess.run([runner, "-e", "entry", "-entry-point-result=void",
                          "-shared-libs=" + libs], input=lowered, check=True,
                         capture_output=True, text=True).stdout
    data = out[out.index("data =") + len("data ="):]
    got = [float(t) for t in re.findall(r"-?\d+\.?\d*(?:e[-+]?\d+)?|-?nan|-?inf",
                                        data)]
    want = reference(model, values, opts)
    if len(got) != len(want):
        print("FAIL: %d values, expected %d" % (len(got), len(want)))
        return 1
    err = max(abs(g - w) / max(1.0, abs(w)) for g, w in zip(got, want))
    print("%s: %d values, max rel error %.2e" % (model, len(got), err))
    if not err < 1e-4:
        print("FAIL")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
