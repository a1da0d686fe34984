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
    elif cmd == "fortran":  # OUT: a Fortran-ordered array
        np.save(argv[2], np.asfortranarray(np.ones((2, 3), np.float32)))
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
