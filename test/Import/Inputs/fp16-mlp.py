#!/usr/bin/env python3
"""Writes the float16/bfloat16 fixtures of test/Import/fp16-mlp.test and
test/Import/bf16-cast.test.

    /usr/bin/python3 test/Import/Inputs/fp16-mlp.py [OUT_DIR]

Needs onnx and numpy (CI does not: the outputs are committed).

fp16-mlp.onnx: an all-float16 MLP, x[8,16] -> MatMul W1[16,32] -> Add b1
-> Relu -> Mul by a Constant 0.5 -> MatMul W2[32,12] -> Softmax. W1 and W2
are raw_data initializers, b1 holds its 16-bit patterns in int32_data (the
other spelling ONNX allows). The reference fp16-mlp.output.npy is computed
op by op like the runtime: each op in float32, its result rounded to
float16.

bf16-cast.onnx: float32 x[4,8] -> Cast BFLOAT16 -> Add a bfloat16
Constant (int32_data) -> Mul a bfloat16 initializer (raw_data; a weight
file) -> Cast FLOAT16 -> Cast FLOAT (output 0), and
x -> Cast FLOAT16 -> Cast FLOAT (output 1). x holds values halfway between
two bfloat16 / float16 values, so round-to-nearest-even is checked.
numpy has no bfloat16: it is emulated on the float32 bit patterns.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F16 = np.float16
F32 = np.float32


def to_bf16(x):
    """float32 -> nearest-even bfloat16, returned as float32."""
    b = np.asarray(x, F32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(F32)


def bf16_bits(x):
    return (to_bf16(x).view(np.uint32) >> 16).astype(np.int64)


def int32_data_tensor(name, data_type, dims, bits):
    """A TensorProto holding 16-bit patterns in int32_data, set by hand
    (helper.make_tensor would take values, not patterns)."""
    t = TensorProto()
    t.name = name
    t.data_type = data_type
    t.dims.extend(dims)
    t.int32_data.extend(int(b) for b in bits)
    return t


def fp16_mlp(out):
    rng = np.random.default_rng(20)
    x = rng.standard_normal((8, 16)).astype(F16)
    w1 = (rng.standard_normal((16, 32)) * 0.3).astype(F16)
    b1 = (rng.standard_normal(32) * 0.1).astype(F16)
    w2 = (rng.standard_normal((32, 12)) * 0.5).astype(F16)
    b1_proto = int32_data_tensor("b1", TensorProto.FLOAT16, [32],
                                 b1.view(np.uint16))
    half = int32_data_tensor("half", TensorProto.FLOAT16, [],
                             [np.array(0.5, F16).view(np.uint16)])
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="bias1"),
        helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
        helper.make_node("Constant", [], ["c"], name="half", value=half),
        helper.make_node("Mul", ["h2", "c"], ["h3"], name="scale"),
        helper.make_node("MatMul", ["h3", "w2"], ["h4"], name="fc2"),
        helper.make_node("Softmax", ["h4"], ["y"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "fp16_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [8, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [8, 12])],
        [numpy_helper.from_array(w1, "w1"), b1_proto,
         numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "fp16-mlp.onnx"))

    f = lambda a: a.astype(F32)
    h = (f(x) @ f(w1)).astype(F16)
    h = (f(h) + f(b1)).astype(F16)
    h = np.maximum(h, F16(0))
    h = (f(h) * F32(0.5)).astype(F16)
    h = f((f(h) @ f(w2)).astype(F16))
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    y = (e / e.sum(axis=-1, keepdims=True)).astype(F16)
    np.save(os.path.join(out, "fp16-mlp.x.npy"), x)
    np.save(os.path.join(out, "fp16-mlp.output.npy"), y)


def bf16_cast(out):
    rng = np.random.default_rng(16)
    x = rng.standard_normal((4, 8)).astype(F32)
    # Ties: 1 + 2^-8 and 1 + 3*2^-8 are halfway between bfloat16 values
    # (to 1 and to 1 + 2^-6); 1 + 2^-11 and 1 + 3*2^-11 between float16 ones.
    x[0, :4] = [1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 3 * (1 + 3 * 2**-8)]
    x[1, :4] = [1 + 2**-11, 1 + 3 * 2**-11, -(1 + 2**-11), 1e-3]
    bias = np.linspace(-1, 1, 8).astype(F32)
    scale = to_bf16(np.linspace(0.5, 3, 8).astype(F32))
    scale_proto = TensorProto()
    scale_proto.name = "scale"
    scale_proto.data_type = TensorProto.BFLOAT16
    scale_proto.dims.append(8)
    scale_proto.raw_data = (scale.view(np.uint32) >> 16).astype("<u2").tobytes()
    bias_proto = int32_data_tensor("bias", TensorProto.BFLOAT16, [8],
                                   bf16_bits(bias))
    nodes = [
        helper.make_node("Cast", ["x"], ["xb"], to=TensorProto.BFLOAT16),
        helper.make_node("Constant", [], ["bias"], value=bias_proto),
        helper.make_node("Add", ["xb", "bias"], ["s0"], name="add"),
        helper.make_node("Mul", ["s0", "scale"], ["s"], name="mul"),
        helper.make_node("Cast", ["s"], ["sh"], to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["sh"], ["y"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["x"], ["xh"], to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["xh"], ["z"], to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes, "bf16_cast",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [4, 8])],
        [scale_proto])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "bf16-cast.onnx"))

    s = to_bf16(to_bf16(to_bf16(x) + to_bf16(bias)) * scale)
    y = s.astype(F16).astype(F32)
    z = x.astype(F16).astype(F32)
    np.save(os.path.join(out, "bf16-cast.x.npy"), x)
    np.save(os.path.join(out, "bf16-cast.y.npy"), y)
    np.save(os.path.join(out, "bf16-cast.z.npy"), z)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    fp16_mlp(out)
    bf16_cast(out)
