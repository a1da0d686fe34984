"""numpy reference for bf16.mlir: bf16 rounding emulated on float32 bits
(numpy has no bfloat16), every sum exact in float64 and rounded once where
the program rounds."""
import sys

import numpy as np


def bf16(x):
    """Rounds float64/float32 values to bfloat16, to nearest even, as float32."""
    u = np.asarray(x, dtype=np.float64).astype(np.float32).view(np.uint32)
    u = (u + np.uint32(0x7FFF) + ((u >> 16) & 1)) & np.uint32(0xFFFF0000)
    return u.view(np.float32)


def main(argv):
    out = argv[1]
    rng = np.random.default_rng(5)
    # Multiples of 1/16 in [-1, 1]: exact in bf16, products and the partial
    # sums over 8 terms exact in f32, so only the program's roundings count.
    a = (rng.integers(-16, 17, (8, 16)) / 16).astype(np.float32)
    b = (rng.integers(-16, 17, (16, 12)) / 16).astype(np.float32)
    np.save(out + "/a.npy", a)
    np.save(out + "/b.npy", b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    # mp holds K in two halves: each partial product rounded to bf16, then
    # the all-reduce's one pairwise add rounded again.
    p0 = bf16(a64[:, :8] @ b64[:8, :]).astype(np.float64)
    p1 = bf16(a64[:, 8:] @ b64[8:, :]).astype(np.float64)
    np.save(out + "/expected.npy", bf16(p0 + p1))
    np.save(out + "/exact.npy", (a64 @ b64).astype(np.float32))


if __name__ == "__main__":
    main(sys.argv)
