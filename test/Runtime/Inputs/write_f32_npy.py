"""Writes a float32 .npy file of N copies of VALUE without numpy.

usage: write_f32_npy.py OUT.npy VALUE N   (VALUE: a float, inf, -inf, nan)
"""
import struct
import sys

path, value, n = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
    f.write(header.encode("latin1") + struct.pack("<%df" % n, *[value] * n))
