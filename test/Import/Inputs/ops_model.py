"""Writes a hand-made ONNX model (protobuf text format) that exercises every
op family the importer covers, its inputs, and numpy's result for it.

    python3 ops_model.py OUT_DIR

Only numpy is needed (no onnx package): the model is written as text.
"""
import os
import sys

import numpy as np

rng = np.random.default_rng(7)
f32 = np.float32
x = rng.standard_normal((2, 3, 4)).astype(f32)
ids = np.array([[1, 9], [4, 4]], dtype=np.int64)
w = rng.standard_normal((2, 5)).astype(f32)
scale = rng.standard_normal(5).astype(f32)
bias = rng.standard_normal(5).astype(f32)
w2 = rng.standard_normal((4, 5)).astype(f32)
c = rng.standard_normal(4).astype(f32)
emb = rng.standard_normal((10, 3)).astype(f32)


def erf(v):
    from math import erf as e
    return np.vectorize(e)(v).astype(f32)


def reference():
    r = x.reshape(2, -1) + f32(0.5)                   # Shape..Reshape, ConstantOfShape
    sl = r[:, 1:12:2]                                 # Slice with step
    sp1, sp2 = sl[:, :2], sl[:, 2:]                   # Split
    t = np.concatenate([sp2, sp1], axis=1).T          # Concat, Transpose
    e = np.broadcast_to(t[:, None, :], (6, 3, 2))     # Unsqueeze, Squeeze, Expand
    mm = e @ w                                        # MatMul 3-D x 2-D
    sub = mm - mm.mean(axis=2, keepdims=True)         # ReduceMean, Sub
    sq = np.sqrt(sub ** 2 + f32(1.0))                 # Pow, Add, Sqrt
    m = (1 / (1 + np.exp(-sq))) * np.tanh(sub)        # Sigmoid, Tanh, Mul
    wh = np.where(m < 0, f32(-1.0), m)                # Less, Where
    c2 = (erf(wh) * f32(10.0)).astype(np.int64).astype(f32)  # Erf, Cast
    rs = c2.sum(axis=1) / f32(7.0)                    # ReduceSum, Div
    ex = np.exp(rs - rs.max(axis=1, keepdims=True))
    sm = ex / ex.sum(axis=1, keepdims=True)           # Softmax
    mu = sm.mean(axis=-1, keepdims=True)
    var = ((sm - mu) ** 2).mean(axis=-1, keepdims=True)
    ln = (sm - mu) / np.sqrt(var + f32(1e-5)) * scale + bias  # LayerNorm
    gm = f32(0.5) * ln @ w2.T + f32(2.0) * c          # Gemm
    y1 = np.maximum(gm[:, [3, 0]], 0)                 # Gather axis 1, Relu
    y2 = emb[ids]                                     # Gather (embedding)
    return (np.ascontiguousarray(y1, dtype=f32),
            np.ascontiguousarray(y2, dtype=f32))


def tensor(name, a, dtype=1):
    dims = "".join(f" dims: {d}" for d in a.shape)
    field = "float_data" if dtype == 1 else "int64_data"
    data = "".join(f" {field}: {v!r}" for v in a.ravel().tolist())
    return f'name: "{name}"{dims} data_type: {dtype}{data}'


def const(name, a, dtype=7):
    return (f'  node {{ name: "{name}" op_type: "Constant" output: "{name}" '
            f'attribute {{ name: "value" type: TENSOR t {{ {tensor("", np.array(a), dtype)} }} }} }}\n')


def node(name, op, ins, outs, attrs=""):
    i = "".join(f' input: "{v}"' for v in ins)
    o = "".join(f' output: "{v}"' for v in outs)
    return f'  node {{ name: "{name}" op_type: "{op}"{i}{o}{attrs} }}\n'


def ints(name, vals):
    v = "".join(f" ints: {k}" for k in vals)
    return f' attribute {{ name: "{name}" type: INTS{v} }}'


def attr_i(name, v):
    return f' attribute {{ name: "{name}" type: INT i: {v} }}'


def attr_f(name, v):
    return f' attribute {{ name: "{name}" type: FLOAT f: {v} }}'


def value_info(kind, name, shape, elem=1):
    dims = "".join(f" dim {{ dim_value: {d} }}" for d in shape)
    return f'  {kind} {{ name: "{name}" type {{ tensor_type {{ elem_type: {elem} shape {{{dims} }} }} }} }}\n'


def model():
    g = ""
    g += node("shape", "Shape", ["x"], ["s"])
    g += const("k0", 0) + node("g0", "Gather", ["s", "k0"], ["g0"])
    g += const("ax0", [0]) + node("u0", "Unsqueeze", ["g0", "ax0"], ["u0"])
    g += const("m1", [-1]) + node("cat0", "Concat", ["u0", "m1"], ["shp"], attr_i("axis", 0))
    g += node("reshape", "Reshape", ["x", "shp"], ["r"])
    g += const("cs_shape", [1, 12])
    g += (f'  node {{ name: "cos" op_type: "ConstantOfShape" input: "cs_shape" output: "half" '
          f'attribute {{ name: "value" type: TENSOR t {{ {tensor("", np.array([0.5], f32))} }} }} }}\n')
    g += node("add0", "Add", ["r", "half"], ["a"])
    g += const("st", [1]) + const("en", [12]) + const("ax1", [1]) + const("step", [2])
    g += node("slice", "Slice", ["a", "st", "en", "ax1", "step"], ["sl"])
    g += const("splits", [2, 4])
    g += node("split", "Split", ["sl", "splits"], ["sp1", "sp2"], attr_i("axis", 1))
    g += node("cat1", "Concat", ["sp2", "sp1"], ["cat"], attr_i("axis", 1))
    g += node("tr", "Transpose", ["cat"], ["t"], ints("perm", [1, 0]))
    g += node("unsq", "Unsqueeze", ["t", "ax0"], ["un"])
    g += node("sqz", "Squeeze", ["un", "ax0"], ["sq0"])
    g += node("unsq1", "Unsqueeze", ["sq0", "ax1"], ["un1"])
    g += const("eshape", [6, 3, 2])
    g += node("expand", "Expand", ["un1", "eshape"], ["e"])
    g += node("mm", "MatMul", ["e", "w"], ["mm"])
    g += node("mean", "ReduceMean", ["mm"], ["rm"], ints("axes", [2]))
    g += node("sub", "Sub", ["mm", "rm"], ["sub"])
    g += const("two", 2.0, 1) + node("pow", "Pow", ["sub", "two"], ["p"])
    g += const("one", 1.0, 1) + node("add1", "Add", ["p", "one"], ["p1"])
    g += node("sqrt", "Sqrt", ["p1"], ["sq"])
    g += node("sig", "Sigmoid", ["sq"], ["sg"])
    g += node("tanh", "Tanh", ["sub"], ["th"])
    g += node("mul", "Mul", ["sg", "th"], ["m"])
    g += const("zero", 0.0, 1) + node("less", "Less", ["m", "zero"], ["lt"])
    g += const("mone", -1.0, 1) + node("where", "Where", ["lt", "mone", "m"], ["wh"])
    g += node("erf", "Erf", ["wh"], ["er"])
    g += const("ten", 10.0, 1) + node("mul10", "Mul", ["er", "ten"], ["m10"])
    g += node("cast_i", "Cast", ["m10"], ["c1"], attr_i("to", 7))
    g += node("cast_f", "Cast", ["c1"], ["c2"], attr_i("to", 1))
    g += node("rsum", "ReduceSum", ["c2", "ax1"], ["rs0"], attr_i("keepdims", 0))
    g += const("seven", 7.0, 1) + node("div", "Div", ["rs0", "seven"], ["rs"])
    g += node("softmax", "Softmax", ["rs"], ["sm"], attr_i("axis", 1))
    g += node("ln", "LayerNormalization", ["sm", "scale", "bias"], ["ln"],
              attr_i("axis", -1) + attr_f("epsilon", 1e-5))
    g += node("gemm", "Gemm", ["ln", "w2", "c"], ["gm"],
              attr_i("transB", 1) + attr_f("alpha", 0.5) + attr_f("beta", 2.0))
    g += const("cols", [3, 0])
    g += node("gcols", "Gather", ["gm", "cols"], ["gc"], attr_i("axis", 1))
    g += node("relu", "Relu", ["gc"], ["rl"])
    g += node("dropout", "Dropout", ["rl"], ["y1"])
    g += node("embed", "Gather", ["emb", "ids"], ["ge"])
    g += node("identity", "Identity", ["ge"], ["y2"])
    g += value_info("input", "x", x.shape) + value_info("input", "ids", ids.shape, 7)
    for name, a in [("w", w), ("scale", scale), ("bias", bias), ("w2", w2), ("c", c), ("emb", emb)]:
        g += f"  initializer {{ {tensor(name, a)} }}\n"
    g += value_info("output", "y1", (6, 2)) + value_info("output", "y2", (2, 2, 3))
    return ('ir_version: 8\nopset_import { domain: "" version: 17 }\n'
            f'graph {{\n  name: "ops"\n{g}}}\n')


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "ops.pbtxt"), "w") as f:
        f.write(model())
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "ids.npy"), ids)
    y1, y2 = reference()
    np.save(os.path.join(out, "y1.npy"), y1)
    np.save(os.path.join(out, "y2.npy"), y2)
