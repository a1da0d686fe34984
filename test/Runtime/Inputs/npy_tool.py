"""Independent numpy references for the runtime tests (python3-numpy)."""
import sys

import numpy as np


def main(argv):
    cmd = argv[1]
    if cmd == "random":  # random OUT SHAPE DTYPE SEED
        shape = tuple(int(d) for d in argv[3].split(","))
        rng = np.random.default_rng(int(argv[5]))
        if argv[4].startswith("float"):
            data = rng.uniform(-1, 1, shape).astype(argv[4])
        else:
            data = rng.integers(0, 8, shape).astype(argv[4])
        np.save(argv[2], data)
    elif cmd == "matmul":  # matmul A B OUT
        a, b = np.load(argv[2]), np.load(argv[3])
        np.save(argv[4], (a.astype(np.float64) @ b.astype(np.float64)).astype(a.dtype))
    elif cmd == "layernorm_gelu":  # X GAMMA OUT: gelu(layernorm(x) * gamma)
        x, g = np.load(argv[2]).astype(np.float64), np.load(argv[3]).astype(np.float64)
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        y = (x - mean) / np.sqrt(var + 1e-5) * g
        from math import erf
        gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))
        np.save(argv[4], gelu(y).astype(np.float32))
    elif cmd == "softmax_rows":  # X OUT
        x = np.load(argv[2]).astype(np.float64)
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        np.save(argv[3], (e / e.sum(axis=-1, keepdims=True)).astype(np.float32))
    elif cmd == "embed":  # TABLE IDS OUT: table[ids]
        t, ids = np.load(argv[2]), np.load(argv[3])
        np.save(argv[4], t[ids])
    elif cmd == "ops":  # DIR: the outputs of ops-single-rank.mlir from DIR/*.npy
        d = argv[2]
        x = np.load(d + "/x.npy").astype(np.float64)
        g = np.load(d + "/gamma.npy").astype(np.float64)
        table, ids = np.load(d + "/table.npy"), np.load(d + "/ids.npy")
        a3 = np.load(d + "/a3.npy").astype(np.float64)
        b3 = np.load(d + "/b3.npy").astype(np.float64)
        from math import erf
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        y = (x - mean) / np.sqrt(var + 1e-5) * g
        gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        outs = [gelu(y), e / e.sum(axis=-1, keepdims=True), table[ids],
                np.pad(x.T, ((1, 0), (0, 2)), constant_values=0.5),
                np.concatenate([x, 2 * x], axis=0), a3 @ b3,
                x.max(axis=1), (ids * 3 + 1) % 5]
        for i, o in enumerate(outs):
            dtype = np.int64 if o.dtype.kind == "i" else np.float32
            np.save("%s/expected_%d.npy" % (d, i), np.ascontiguousarray(o.astype(dtype)))
    elif cmd == "fortran":  # OUT: a Fortran-ordered array
        np.save(argv[2], np.asfortranarray(np.ones((2, 3), np.float32)))
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
