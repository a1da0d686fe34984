"""Writes a small ONNX model (protobuf text format) chaining Resize (linear,
2x in H and W), Pad (reflect), Einsum (a contraction with a weight) and
TopK, its input, and numpy's result for it, for the partitioned runs of
onnx-einsum-pad-resize-partitioned.test.

    python3 einsum_pad_resize_model.py OUT_DIR

Only numpy is needed (no onnx package): the model is written as text.
"""
import os
import sys

import numpy as np

rng = np.random.default_rng(21)
f32 = np.float32
x = rng.standard_normal((4, 3, 6, 8)).astype(f32)
w = rng.standard_normal((18, 4)).astype(f32)


def resize_linear_2x(a, axis):
    """ONNX Resize, mode linear, half_pixel, scale 2 along `axis`."""
    n = a.shape[axis]
    c = (np.arange(2 * n) + 0.5) / 2 - 0.5
    lo = np.floor(c).astype(int)
    r = (c - lo).astype(f32)
    i0, i1 = np.clip(lo, 0, n - 1), np.clip(lo + 1, 0, n - 1)
    shape = [1] * a.ndim
    shape[axis] = 2 * n
    r = r.reshape(shape)
    return np.take(a, i0, axis) * (1 - r) + np.take(a, i1, axis) * r


def reference():
    r = resize_linear_2x(resize_linear_2x(x, 3), 2)           # [4,3,12,16]
    p = np.pad(r, ((0, 0), (0, 0), (1, 1), (1, 1)), "reflect")  # [4,3,14,18]
    e = np.einsum("nchw,wk->nchk", p, w)                       # [4,3,14,4]
    top = -np.sort(-e, axis=2, kind="stable")[:, :, :3, :]     # [4,3,3,4]
    return e.astype(f32), top.astype(f32)


def tensor(name, a, dtype=1):
    dims = "".join(f" dims: {d}" for d in a.shape)
    field = "float_data" if dtype == 1 else "int64_data"
    data = "".join(f" {field}: {v!r}" for v in a.ravel().tolist())
    return f'name: "{name}"{dims} data_type: {dtype}{data}'


def node(name, op, ins, outs, attrs=""):
    i = "".join(f' input: "{v}"' for v in ins)
    o = "".join(f' output: "{v}"' for v in outs)
    return f'  node {{ name: "{name}" op_type: "{op}"{i}{o}{attrs} }}\n'


def attr_s(name, v):
    return f' attribute {{ name: "{name}" type: STRING s: "{v}" }}'


def value_info(kind, name, shape, elem=1):
    dims = "".join(f" dim {{ dim_value: {d} }}" for d in shape)
    return (f'  {kind} {{ name: "{name}" type {{ tensor_type {{ elem_type: '
            f'{elem} shape {{{dims} }} }} }} }}\n')


def model():
    # Scales as a Constant node: a float initializer is a weight.
    scales = tensor("", np.array([1, 1, 2, 2], f32))
    g = (f'  node {{ name: "scales" op_type: "Constant" output: "scales" '
         f'attribute {{ name: "value" type: TENSOR t {{ {scales} }} }} }}\n')
    g += node("resize", "Resize", ["x", "", "scales"], ["r"],
             attr_s("mode", "linear"))
    g += node("pad", "Pad", ["r", "pads"], ["p"], attr_s("mode", "reflect"))
    g += node("einsum", "Einsum", ["p", "w"], ["y"],
              attr_s("equation", "nchw,wk->nchk"))
    g += node("topk", "TopK", ["y", "k"], ["top", "idx"],
              ' attribute { name: "axis" type: INT i: 2 }')
    g += value_info("input", "x", x.shape)
    for name, a, t in [("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1]), 7),
                       ("k", np.array([3]), 7), ("w", w, 1)]:
        g += f"  initializer {{ {tensor(name, a, t)} }}\n"
    g += value_info("output", "y", (4, 3, 14, 4))
    g += value_info("output", "top", (4, 3, 3, 4))
    return ('ir_version: 8\nopset_import { domain: "" version: 18 }\n'
            f'graph {{\n  name: "einsum_pad_resize"\n{g}}}\n')


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.pbtxt"), "w") as f:
        f.write(model())
    np.save(os.path.join(out, "x.npy"), x)
    y, top = reference()
    np.save(os.path.join(out, "y.npy"), y)
    np.save(os.path.join(out, "top.npy"), top)
