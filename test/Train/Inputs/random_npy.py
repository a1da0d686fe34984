"""Writes a seeded random .npy file (standard library only: CI may have no
numpy).

  random_npy.py OUT.npy f32:AxB... SEED

Values uniform in [-1, 1) from Python's `random.Random(SEED)`, float32.
"""
import math
import random
import struct
import sys


def main(argv):
    out, spec, seed = argv[1], argv[2], int(argv[3])
    dtype, dims = spec.split(":")
    if dtype != "f32":
        sys.exit("random_npy.py: only f32, got " + dtype)
    shape = [int(d) for d in dims.split("x")]
    rng = random.Random(seed)
    values = [rng.uniform(-1.0, 1.0) for _ in range(math.prod(shape))]
    shape_str = "(%d,)" % shape[0] if len(shape) == 1 else \
        "(%s)" % ", ".join(str(d) for d in shape)
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape_str
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    with open(out, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%df" % len(values), *values))


if __name__ == "__main__":
    main(sys.argv)
