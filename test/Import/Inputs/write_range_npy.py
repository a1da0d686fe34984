"""Writes a float32 .npy file of START, START + 1, ..., N values, without numpy.

usage: write_range_npy.py OUT.npy START N
"""
import struct
import sys

path, start, n = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
    f.write(header.encode("latin1"))
    f.write(struct.pack("<%df" % n, *[start + i for i in range(n)]))
