"""Writes a .npy file holding IN's rows K times over (standard library only:
CI may have no numpy).

  repeat_npy.py IN.npy K OUT.npy

OUT's dim 0 is K times IN's, its data IN's bytes repeated K times (C order,
so the copies follow each other). A step with K micro-batches fed the
repeated batch computes each row's loss K times and averages: the same
losses and gradients as one step on IN (micro-batches-torch.test).
"""
import ast
import struct
import sys


def main(argv):
    src, k, out = argv[1], int(argv[2]), argv[3]
    data = open(src, "rb").read()
    if data[:6] != b"\x93NUMPY":
        sys.exit("repeat_npy.py: %s is not a .npy file" % src)
    major = data[6]
    size_fmt, start = ("<H", 10) if major == 1 else ("<I", 12)
    header_len = struct.unpack(size_fmt, data[8:start])[0]
    header = ast.literal_eval(data[start:start + header_len].decode("latin1"))
    body = data[start + header_len:]
    shape = tuple(header["shape"])
    if not shape:
        sys.exit("repeat_npy.py: %s has no dim 0" % src)
    header["shape"] = (shape[0] * k,) + shape[1:]
    text = repr(header).encode("latin1")
    # Pad to a multiple of 64 bytes with the newline, as numpy does.
    pad = 64 - (10 + len(text) + 1) % 64
    text += b" " * (pad % 64) + b"\n"
    with open(out, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text)
        f.write(body * k)


if __name__ == "__main__":
    main(sys.argv)
