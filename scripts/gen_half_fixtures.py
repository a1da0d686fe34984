#!/usr/bin/env python3
"""Writes the float16/bfloat16 model fixtures of test/Import/half-gemm.test,
fp16-cnn.test, bf16-lstm.test, fp16-reduce.test, bf16-reduce.test and
loss-half-bf16.test (issue 20).

    /usr/bin/python3 scripts/gen_half_fixtures.py [OUT_DIR] [gemm|cnn|lstm|reduce|loss...]

Needs torch (1.13), onnx and numpy; CI does not: the outputs are committed
(OUT_DIR, default test/Import/Inputs). Each model's references are printed
with their distance to each other, which is where the tests' tolerances
come from.

What the importer computes for a float16/bfloat16 node: its inputs widened
to float32, the node in float32 (GEMMs and convolutions accumulate in
float32), each output rounded once to nearest even -- PyTorch's bf16 CPU
kernels and its CUDA/autocast fp16 kernels (cuBLAS/cuDNN with FP32
compute), per op. The references are that semantics computed
by torch in float32 on the narrow values, node by node ("torch, FP32 compute,
one rounding per node"); bf16-gemm's y is torch's own bfloat16 addmm (CPU),
which equals it; torch 1.13's bfloat16 mm without C rounds inside its
accumulation (one ulp off in most elements), so z's is the FP32 product.
bf16-lstm also keeps torch's own bfloat16 LSTM (bf16-lstm.torch-bf16.npy),
which rounds after every op inside the cell and every step's state.

- fp16-gemm / bf16-gemm: y = Gemm(x[8,64], w[16,64], c[16]; transB = 1,
  alpha = 0.5, beta = 2) and z = Gemm(xt[64,8], v[64,12]; transA = 1). K =
  64 products: accumulating in the narrow type would be off by several
  ulps, which the tolerance refuses.
- fp16-cnn: conv+BN+ReLU+maxpool, conv(bias)+BN+ReLU+avgpool, global
  average pool, Linear, exported from torch in float32 (PRESERVE keeps the
  BatchNormalization nodes) and converted to float16 (every float tensor:
  initializers, input, output), as onnxconverter-common's float16 converter
  does; torch 1.13 has no float16 conv on the CPU.
- bf16-lstm: LSTM(8 -> 16, batch_first) + Linear(16 -> 5), the model in
  bfloat16 exported by torch as it is. bfloat16 .npy files hold float32
  (numpy has no bfloat16): the values are bfloat16's.
- fp16-reduce / bf16-reduce: ReduceSum, ReduceMean, Softmax, LogSoftmax,
  CumSum and LayerNormalization along the 1024 elements of each row of
  x[4,1024] = 1.25 + 0.05 N(0,1). References: torch in FP32 on the narrow
  values, rounded once (torch 1.13 has no float16 softmax, cumsum or
  layer_norm on the CPU). torch's own bfloat16 sum, mean, softmax and
  cumsum equal them; its log_softmax rounds log(sum) to bfloat16 first and
  its layer_norm keeps mean and rstd in bfloat16 (distances printed). The
  model's outputs are stats = [sum, mean] and rows = [softmax, logsoftmax,
  cumsum, layernorm], concatenated along dim 1. Accumulating in the narrow type stalls:
  a bfloat16 running sum of values near 1.25 stops at 512, a float16 one
  adds 1 instead of 1.25 above 1024 (printed: elements outside the tests'
  tolerance).
- bf16-loss: [cross_entropy, weighted cross_entropy with ignore_index,
  nll_loss (sum) of x - 3 as [16,10,100]] of near-uniform logits x[16,1000],
  exported from torch in bfloat16 (SoftmaxCrossEntropyLoss x2 and
  NegativeLogLikelihoodLoss). Reference: torch in FP32 on the bfloat16
  values, one rounding per node; printed beside torch's own bfloat16 (its
  log_softmax rounds log(sum) first: ce one ulp high) and the losses with
  bfloat16 sums (the exponentials stall at 256, the picks at 1024).
- Pass `reduce` (or gemm, cnn, lstm, loss) to write only those fixtures.
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

F16 = np.float16
F32 = np.float32


def gemm_model(elem, x, w, c, xt, v):
    """The two-Gemm graph; weights as `elem` initializers."""
    def init(a, name):
        if elem == TensorProto.FLOAT16:
            return numpy_helper.from_array(a.astype(F16), name)
        bits = (torch.from_numpy(a).to(torch.bfloat16).view(torch.int16)
                .numpy().view(np.uint16))
        return helper.make_tensor(name, TensorProto.BFLOAT16, a.shape,
                                  bits.tobytes(), raw=True)
    nodes = [
        helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="fc",
                         transB=1, alpha=0.5, beta=2.0),
        helper.make_node("Gemm", ["xt", "v"], ["z"], name="fct", transA=1),
    ]
    graph = helper.make_graph(
        nodes, "half_gemm",
        [helper.make_tensor_value_info("x", elem, list(x.shape)),
         helper.make_tensor_value_info("xt", elem, list(xt.shape))],
        [helper.make_tensor_value_info("y", elem, [8, 16]),
         helper.make_tensor_value_info("z", elem, [8, 12])],
        [init(w, "w"), init(c, "c"), init(v, "v")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def gemm_fixtures(out):
    rng = np.random.default_rng(2020)
    x = rng.standard_normal((8, 64)).astype(F32)
    w = (rng.standard_normal((16, 64)) * 0.3).astype(F32)
    c = rng.standard_normal(16).astype(F32)
    xt = rng.standard_normal((64, 8)).astype(F32)
    v = (rng.standard_normal((64, 12)) * 0.3).astype(F32)
    # float16: numpy, FP32 accumulation and one rounding.
    h = [a.astype(F16) for a in (x, w, c, xt, v)]
    f = [a.astype(F32) for a in h]
    y = (0.5 * (f[0] @ f[1].T) + 2.0 * f[2]).astype(F16)
    z = (f[3].T @ f[4]).astype(F16)
    # Accumulating in float16 instead (the loop the importer used to emit).
    acc = np.zeros((8, 16), F16)
    for k in range(64):
        acc = (acc.astype(F32) + h[0][:, k:k + 1].astype(F32) *
               h[1][:, k].astype(F32)).astype(F16)
    narrow = (0.5 * acc.astype(F32) + 2.0 * f[2]).astype(F16)
    onnx.save(gemm_model(TensorProto.FLOAT16, *h), f"{out}/fp16-gemm.onnx")
    np.save(f"{out}/fp16-gemm.x.npy", h[0])
    np.save(f"{out}/fp16-gemm.xt.npy", h[3])
    np.save(f"{out}/fp16-gemm.y.npy", y)
    np.save(f"{out}/fp16-gemm.z.npy", z)
    d = np.abs(narrow.astype(F32) - y.astype(F32))
    print(f"fp16-gemm: y accumulated in float16 instead: {int((d > 0).sum())} "
          f"of {y.size} differ, max abs {d.max():.3g} (|y| <= "
          f"{np.abs(y.astype(F32)).max():.3g})")
    # bfloat16: torch's own CPU addmm.
    bf = [torch.from_numpy(a).to(torch.bfloat16) for a in (x, w, c, xt, v)]
    ty = torch.addmm(bf[2], bf[0], bf[1].t(), beta=2.0, alpha=0.5)
    tz = bf[3].t() @ bf[4]
    wide = [t.float() for t in bf]
    ey = (0.5 * (wide[0] @ wide[1].t()) + 2.0 * wide[2]).to(torch.bfloat16)
    ez = (wide[3].t() @ wide[4]).to(torch.bfloat16)
    print(f"bf16-gemm: torch bf16 addmm vs FP32 compute + one rounding: "
          f"{int((ty != ey).sum())} of {ey.numel()} differ; torch bf16 mm: "
          f"{int((tz != ez).sum())} of {ez.numel()} differ (one ulp)")
    # torch 1.13's CPU bf16 mm (no C) rounds inside its accumulation: z's
    # reference is the FP32 product rounded once.
    tz = ez
    onnx.save(gemm_model(TensorProto.BFLOAT16, x, w, c, xt, v),
              f"{out}/bf16-gemm.onnx")
    np.save(f"{out}/bf16-gemm.x.npy", bf[0].float().numpy())
    np.save(f"{out}/bf16-gemm.xt.npy", bf[3].float().numpy())
    np.save(f"{out}/bf16-gemm.y.npy", ty.float().numpy())
    np.save(f"{out}/bf16-gemm.z.npy", tz.float().numpy())


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2, stride=2)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.avg = nn.AvgPool2d(2, stride=2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)
        self.r = lambda t: t  # rounds each ONNX node's output

    def forward(self, x):
        r = self.r
        x = self.pool(torch.relu(r(self.bn1(r(self.conv1(x))))))
        x = torch.relu(r(self.bn2(r(self.conv2(x)))))
        x = r(self.gap(r(self.avg(x))))
        return r(self.fc(torch.flatten(x, 1)))


def to_float16(model):
    """Every float32 tensor of `model` (initializers, graph inputs and
    outputs) as float16."""
    g = model.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            a = numpy_helper.to_array(t).astype(F16)
            g.initializer[i].CopyFrom(numpy_helper.from_array(a, t.name))
    for vi in list(g.input) + list(g.output):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    del g.value_info[:]
    for node in g.node:
        assert node.op_type != "Constant" or all(
            a.t.data_type != TensorProto.FLOAT for a in node.attribute), node
    onnx.checker.check_model(model)
    return model


def cnn_fixtures(out):
    torch.manual_seed(20)
    model = CNN()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.5, 0.5)
    model.eval()
    # The parameters the float16 model holds, in float32.
    with torch.no_grad():
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point():
                t.copy_(t.half().float())
    x = torch.randn(8, 3, 8, 8).half().float()
    path = f"{out}/fp16-cnn.onnx"
    torch.onnx.export(model, (x,), path, input_names=["x"],
                      output_names=["y"], opset_version=17,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)
    onnx.save(to_float16(onnx.load(path)), path)
    with torch.no_grad():
        y32 = model(x)
        model.r = lambda t: t.half().float()
        y = model(x)
    print(f"fp16-cnn: per-node float16 vs float32: max abs "
          f"{float((y - y32).abs().max()):.3g} (|y| <= "
          f"{float(y32.abs().max()):.3g})")
    np.save(f"{out}/fp16-cnn.x.npy", x.half().numpy())
    np.save(f"{out}/fp16-cnn.output.npy", y.half().numpy())


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.fc = nn.Linear(16, 5)
        self.r = lambda t: t

    def forward(self, x):
        r = self.r
        y, _ = self.lstm(x)
        # The Linear is a MatMul and an Add in the export: two roundings.
        return r(r(y @ self.fc.weight.t()) + self.fc.bias)


def lstm_fixtures(out):
    torch.manual_seed(21)
    model = Tagger().eval()
    x = torch.randn(4, 6, 8)
    bf = Tagger().eval()
    bf.load_state_dict(model.state_dict())
    bf = bf.to(torch.bfloat16)
    xb = x.to(torch.bfloat16)
    torch.onnx.export(bf, (xb,), f"{out}/bf16-lstm.onnx", input_names=["x"],
                      output_names=["y"], opset_version=17)
    wide = Tagger().eval()
    wide.load_state_dict({k: v.float() for k, v in bf.state_dict().items()})
    with torch.no_grad():
        native = bf(xb).float()
        rnd = lambda t: t.to(torch.bfloat16).float()
        y, _ = wide.lstm(xb.float())
        once = wide.fc.weight, wide.fc.bias
        ref = rnd(rnd(rnd(y) @ once[0].t()) + once[1])
    d = (native - ref).abs()
    print(f"bf16-lstm: torch bf16 (rounding every op) vs FP32 cell + one "
          f"rounding: {int((d > 0).sum())} of {d.numel()} differ, max abs "
          f"{float(d.max()):.3g} (|y| <= {float(ref.abs().max()):.3g})")
    np.save(f"{out}/bf16-lstm.x.npy", xb.float().numpy())
    np.save(f"{out}/bf16-lstm.output.npy", ref.numpy())
    np.save(f"{out}/bf16-lstm.torch-bf16.npy", native.numpy())


def reduce_model(elem, prefix, gamma, beta):
    """x[4,1024] -> the six reductions along dim 1, weights as `elem`:
    stats = [sum, mean] (4x2), rows = [softmax, logsoftmax, cumsum,
    layernorm] (4x4096)."""
    def init(a, name):
        if elem == TensorProto.FLOAT16:
            return numpy_helper.from_array(a.astype(F16), name)
        return helper.make_tensor(name, TensorProto.BFLOAT16, a.shape,
                                  bf16_bits(a).tobytes(), raw=True)
    one = numpy_helper.from_array(np.array([1], np.int64), "axis")
    nodes = [
        helper.make_node("ReduceSum", ["x", "axis"], ["sum"], name="op_sum",
                         keepdims=1),
        helper.make_node("ReduceMean", ["x"], ["mean"], name="op_mean",
                         axes=[1], keepdims=1),
        helper.make_node("Softmax", ["x"], ["softmax"], name="op_softmax",
                         axis=1),
        helper.make_node("LogSoftmax", ["x"], ["logsoftmax"],
                         name="op_logsoftmax", axis=1),
        helper.make_node("CumSum", ["x", "axis"], ["cumsum"], name="op_cumsum"),
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"],
                         ["layernorm"], name="op_layernorm", axis=-1),
        # Two outputs (fewer files to compare): exact concatenations.
        helper.make_node("Concat", ["sum", "mean"], ["stats"],
                         name="op_stats", axis=1),
        helper.make_node("Concat", list(ROWS), ["rows"], name="op_rows",
                         axis=1),
    ]
    graph = helper.make_graph(
        nodes, prefix,
        [helper.make_tensor_value_info("x", elem, [4, 1024])],
        [helper.make_tensor_value_info("stats", elem, [4, 2]),
         helper.make_tensor_value_info("rows", elem, [4, 1024 * len(ROWS)])],
        [one, init(gamma, "gamma"), init(beta, "beta")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def bf16_bits(a):
    return (torch.from_numpy(a).to(torch.bfloat16).view(torch.int16).numpy()
            .view(np.uint16))


ROWS = ("softmax", "logsoftmax", "cumsum", "layernorm")
REDUCTIONS = {
    "sum": lambda t, g, b: t.sum(1, keepdim=True),
    "mean": lambda t, g, b: t.mean(1, keepdim=True),
    "softmax": lambda t, g, b: torch.softmax(t, 1),
    "logsoftmax": lambda t, g, b: torch.log_softmax(t, 1),
    "cumsum": lambda t, g, b: torch.cumsum(t, 1),
    "layernorm": lambda t, g, b: nn.functional.layer_norm(t, (1024,), g, b),
}


def narrow_accumulation(w, dtype):
    """Row sums and running sums of `w` rounded to `dtype` after every add
    (what a narrow accumulator computes)."""
    acc = torch.zeros(w.shape[0], dtype=dtype)
    running = []
    for k in range(w.shape[1]):
        acc = (acc.float() + w[:, k]).to(dtype)
        running.append(acc.float())
    return acc.float(), torch.stack(running, 1)


def reduce_fixtures(out):
    torch.manual_seed(22)
    x = 1.25 + 0.05 * torch.randn(4, 1024)
    gamma = 1 + 0.5 * torch.randn(1024)
    beta = 0.5 * torch.randn(1024)
    for dtype, prefix, elem, rtol in (
            (torch.float16, "fp16-reduce", TensorProto.FLOAT16, 1e-3),
            (torch.bfloat16, "bf16-reduce", TensorProto.BFLOAT16, 8e-3)):
        xn, gn, bn = (t.to(dtype) for t in (x, gamma, beta))
        w, gw, bw = (t.float() for t in (xn, gn, bn))
        onnx.save(reduce_model(elem, prefix, gw.numpy(), bw.numpy()),
                  f"{out}/{prefix}.onnx")
        save = (lambda name, t: np.save(name, t.to(dtype).numpy())) \
            if dtype == torch.float16 else \
            (lambda name, t: np.save(name, t.to(dtype).float().numpy()))
        save(f"{out}/{prefix}.x.npy", xn)
        nsum, nrun = narrow_accumulation(w, dtype)
        narrow = {"sum": nsum[:, None], "cumsum": nrun,
                  "mean": (nsum / 1024).to(dtype).float()[:, None]}
        refs = {}
        for name, f in REDUCTIONS.items():
            with torch.no_grad():
                refs[name] = ref = f(w, gw, bw).to(dtype).float()
            msg = f"{prefix} {name}:"
            if name in narrow:
                bad = ((narrow[name] - ref).abs() > rtol * ref.abs()).sum()
                msg += (f" narrow accumulation: {int(bad)} of {ref.numel()}"
                        f" outside rtol {rtol} (max abs "
                        f"{float((narrow[name] - ref).abs().max()):.3g})")
            if dtype == torch.bfloat16:
                with torch.no_grad():
                    own = f(xn, gn, bn).float()
                d = (own - ref).abs()
                msg += (f" torch bf16 differs in {int((d > 0).sum())} of "
                        f"{d.numel()}, max abs {float(d.max()):.3g}")
            print(msg)
        save(f"{out}/{prefix}.stats.npy",
             torch.cat([refs["sum"], refs["mean"]], 1))
        save(f"{out}/{prefix}.rows.npy", torch.cat([refs[r] for r in ROWS], 1))


class Losses(nn.Module):
    """ce = cross_entropy(x, t); wce = the same with class weights (a
    bfloat16 initializer) and ignore_index 5 (weighted mean); nll =
    nll_loss((x - 3) as [16, 10, 100], t2, sum). Stacked into one output."""
    def __init__(self, w):
        super().__init__()
        self.register_buffer("w", w)

    def forward(self, x, t, t2):
        ce = nn.functional.cross_entropy(x, t)
        wce = nn.functional.cross_entropy(x, t, weight=self.w, ignore_index=5)
        nll = nn.functional.nll_loss((x - 3).view(16, 10, 100), t2,
                                     reduction="sum")
        return torch.stack([ce, wce, nll])


def loss_fixtures(out):
    torch.manual_seed(23)
    # Near-uniform logits: 1000 exponentials near 1 whose bfloat16 running
    # sum stalls at 256, and a loss near log(1000) = 6.9.
    x = (0.1 * torch.randn(16, 1000)).to(torch.bfloat16)
    t = torch.randint(0, 1000, (16,))
    t[::4] = 5  # ignored by wce
    t2 = torch.randint(0, 10, (16, 100))
    w = (1 + 0.5 * torch.rand(1000)).to(torch.bfloat16)
    model = Losses(w).eval()
    torch.onnx.export(model, (x, t, t2), f"{out}/bf16-loss.onnx",
                      input_names=["x", "t", "t2"], output_names=["losses"],
                      opset_version=17)
    f = nn.functional
    rnd = lambda v: v.to(torch.bfloat16).float()
    xw, ww = x.float(), w.float()
    with torch.no_grad():
        own = model(x, t, t2).float()
        # FP32 compute on the bfloat16 values, one rounding per node (the
        # Sub rounds before the NLL, as in the graph).
        ref = rnd(torch.stack([
            f.cross_entropy(xw, t),
            f.cross_entropy(xw, t, weight=ww, ignore_index=5),
            f.nll_loss(rnd(xw - 3).view(16, 10, 100), t2, reduction="sum")]))
        # The sums in bfloat16 instead: of the exponentials and of the
        # losses (what the importer emitted before).
        e = rnd(torch.exp(xw - xw.max(1, keepdim=True).values))
        s, _ = narrow_accumulation(e, torch.bfloat16)
        logp = rnd(xw - xw.max(1, keepdim=True).values - rnd(torch.log(s))[:, None])
        picked = rnd(-logp[torch.arange(16), t])
        ce_sum, _ = narrow_accumulation(picked[None], torch.bfloat16)
        nll_sum, _ = narrow_accumulation(
            rnd(3 - xw).view(16, 10, 100).gather(1, t2[:, None]).reshape(1, -1),
            torch.bfloat16)
    print(f"bf16-loss: reference [ce, wce, nll] = {ref.tolist()}; torch's "
          f"own bf16 {own.tolist()}; bfloat16 sums instead: ce "
          f"{float(rnd(ce_sum / 16)):.6g}, nll {float(nll_sum):.6g}")
    for name, a in (("x", x.float()), ("t", t), ("t2", t2), ("losses", ref)):
        np.save(f"{out}/bf16-loss.{name}.npy", a.numpy())


def main():
    args = sys.argv[1:]
    which = [a for a in args if a in ("gemm", "cnn", "lstm", "reduce", "loss")]
    dirs = [a for a in args if a not in which]
    out = dirs[0] if dirs else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "test", "Import",
        "Inputs")
    which = which or ["gemm", "cnn", "lstm", "reduce", "loss"]
    for name in which:
        globals()[f"{name}_fixtures"](out)


if __name__ == "__main__":
    main()
