"""`autoshard-run --compare A.npy B.npy --rtol R --atol A`, in this process.

The training checks (check_torch.py, compare_runs.py, train_matrix.py)
compare tens of tensors per run; starting autoshard-run for each took ~0.25 s
(it loads the CUDA libraries where the backend is built), most of a
recompute-train.test. This reads the .npy files autoshard-run writes and
applies rt::compareTensors (runtime/lib/HostIO.cpp) rule for rule: same dtype
and shape; NaN matches NaN and equal values (the same inf too) match;
otherwise both finite and |a - b| <= atol + rtol * |b|. A file it does not
read (another dtype, Fortran order, a damaged header) goes to autoshard-run
itself. `npy_compare.py --self-test AUTOSHARD_RUN DIR` checks both agree
(test/Train/npy-compare.test). Standard library only: CI has no numpy.
"""
import array
import ast
import math
import os
import struct
import subprocess
import sys

# descr -> (autoshard dtype name, array typecode or struct format char).
_TYPES = {"<f4": ("f32", "f"), "<f8": ("f64", "d"), "<i4": ("i32", "i"),
          "<i8": ("i64", "q"), "|b1": ("i1", "B"), "<b1": ("i1", "B"),
          "<f2": ("f16", "e")}


def read_npy(path):
    """(dtype name, shape, values) of a C-order .npy file, or None where this
    reader does not know the file (autoshard-run then decides)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY" or data[6] not in (1, 2, 3):
        return None
    if data[6] == 1:
        size, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        size, start = struct.unpack("<I", data[8:12])[0], 12
    try:
        header = ast.literal_eval(data[start:start + size].decode("latin1"))
        descr, shape = header["descr"], tuple(header["shape"])
        fortran = header["fortran_order"]
    except (ValueError, SyntaxError, KeyError, TypeError):
        return None
    if descr not in _TYPES or fortran:
        return None
    name, code = _TYPES[descr]
    count = math.prod(shape)
    body = data[start + size:]
    width = struct.calcsize(code)
    if len(body) < count * width:
        return None
    body = body[:count * width]
    if code == "e":
        values = struct.unpack("<%de" % count, body)
    else:
        values = array.array(code)
        values.frombytes(body)
        if code == "B":
            values = [v != 0 for v in values]
    return name, shape, values, body


def _type_string(name, shape):
    return "%s[%s]" % (name, "x".join(str(d) for d in shape))


def _compare_values(a, b, rtol, atol):
    """(first mismatch text or "", max |a - b|), as rt::compareTensors."""
    worst, first = 0.0, ""
    for i, (x, y) in enumerate(zip(a, b)):
        x, y = float(x), float(y)
        if x == y or (x != x and y != y):
            continue
        err = abs(x - y)
        if err != err:
            err = math.inf
        worst = max(worst, err)
        close = math.isfinite(x) and math.isfinite(y) and \
            err <= atol + rtol * abs(y)
        if not first and not close:
            first = "mismatch at flat index %d: %.9g vs %.9g (|diff| %.9g)" % (
                i, x, y, err)
    return first, worst


def compare(run, a_path, b_path, rtol, atol):
    """(ok, line) as `autoshard-run --compare` exits and prints: line is
    "MATCH <type> max_abs_err=E" or "MISMATCH A vs B: why"."""
    a, b = read_npy(a_path), read_npy(b_path)
    if a is None or b is None:
        out = subprocess.run([run, "--compare", a_path, b_path, "--rtol",
                              str(rtol), "--atol", str(atol)],
                             capture_output=True, text=True)
        ok = out.returncode == 0 and out.stdout.startswith("MATCH")
        return ok, (out.stdout + out.stderr).strip()
    (an, ashape, avals, abytes), (bn, bshape, bvals, bbytes) = a, b
    if an != bn or ashape != bshape:
        return False, "MISMATCH %s vs %s: type mismatch: %s vs %s" % (
            a_path, b_path, _type_string(an, ashape), _type_string(bn, bshape))
    # Equal bytes: every element equal, or the same NaN.
    first, worst = ("", 0.0) if abytes == bbytes else \
        _compare_values(avals, bvals, float(rtol), float(atol))
    if first:
        return False, "MISMATCH %s vs %s: %s" % (a_path, b_path, first)
    return True, "MATCH %s max_abs_err=%.6g" % (_type_string(an, ashape), worst)


def _write(path, descr, shape, fmt, values, fortran=False):
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (
        descr, fortran, "".join("%d," % d for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))


def self_test(run, work):
    """Every case through both comparators: the same verdict, and for a
    match the same max_abs_err. Prints AGREE N or each disagreement."""
    os.makedirs(work, exist_ok=True)
    inf, nan = math.inf, math.nan
    f32 = ("<f4", "f")
    cases = [  # (a, b, rtol, atol); a side is (descr, fmt, shape, values)
        ((f32, (4,), [1, 2, 3, 4]), (f32, (4,), [1, 2, 3, 4]), 0, 0),
        ((f32, (2, 2), [1, 2, 3, 4.001]), (f32, (2, 2), [1, 2, 3, 4]), 1e-3, 0),
        ((f32, (2, 2), [1, 2, 3, 4.01]), (f32, (2, 2), [1, 2, 3, 4]), 1e-3, 0),
        ((f32, (3,), [0.5, 1e-7, 2]), (f32, (3,), [0.5, 0, 2]), 0, 1e-6),
        ((f32, (3,), [0.5, 1e-5, 2]), (f32, (3,), [0.5, 0, 2]), 0, 1e-6),
        ((f32, (2,), [nan, 1]), (f32, (2,), [nan, 1]), 0, 0),
        ((f32, (2,), [nan, 1]), (f32, (2,), [nan, 1.5]), 0, 1),
        ((f32, (2,), [nan, 1]), (f32, (2,), [1, 1]), 1, 1),
        ((f32, (2,), [inf, -inf]), (f32, (2,), [inf, -inf]), 0, 0),
        ((f32, (2,), [inf, 1]), (f32, (2,), [-inf, 1]), 1, 1),
        ((f32, (2,), [1e30, 1]), (f32, (2,), [inf, 1]), 1, 1),
        ((f32, (2,), [-0.0, 1]), (f32, (2,), [0.0, 1]), 0, 0),
        ((f32, (4,), [1, 2, 3, 4]), (f32, (2, 2), [1, 2, 3, 4]), 1, 1),
        ((f32, (2,), [1, 2]), (("<f8", "d"), (2,), [1, 2]), 1, 1),
        ((("<f8", "d"), (2,), [1, 2 + 1e-12]), (("<f8", "d"), (2,), [1, 2]),
         0, 1e-13),
        ((("<i8", "q"), (3,), [1, -5, 7]), (("<i8", "q"), (3,), [1, -5, 8]),
         0, 1),
        ((("<i4", "i"), (3,), [1, -5, 7]), (("<i4", "i"), (3,), [1, -5, 9]),
         0, 1),
        ((("|b1", "B"), (3,), [1, 0, 2]), (("|b1", "B"), (3,), [1, 0, 1]), 0, 0),
        ((("<f2", "e"), (2,), [1, 2.5]), (("<f2", "e"), (2,), [1, 2.5]), 0, 0),
        ((("<f2", "e"), (2,), [1, 2.5]), (("<f2", "e"), (2,), [1, 2]), 0.1, 0),
        ((f32, (0,), []), (f32, (0,), []), 0, 0),
    ]
    bad = []
    for k, ((da, sa, va), (db, sb, vb), rtol, atol) in enumerate(cases):
        pa, pb = [os.path.join(work, "%d%s.npy" % (k, s)) for s in "ab"]
        _write(pa, da[0], sa, da[1], va)
        _write(pb, db[0], sb, db[1], vb)
        mine = compare(run, pa, pb, rtol, atol)
        out = subprocess.run([run, "--compare", pa, pb, "--rtol", str(rtol),
                              "--atol", str(atol)], capture_output=True,
                             text=True)
        theirs = (out.returncode == 0 and out.stdout.startswith("MATCH"),
                  (out.stdout + out.stderr).strip())
        same = mine[0] == theirs[0] and (not mine[0] or mine[1] == theirs[1])
        if not same:
            bad.append("case %d: %r vs autoshard-run %r" % (k, mine, theirs))
    # A Fortran-order file is autoshard-run's to refuse.
    pf = os.path.join(work, "fortran.npy")
    _write(pf, "<f4", (2, 2), "f", [1, 2, 3, 4], fortran=True)
    ok, line = compare(run, pf, pf, 0, 0)
    if ok or "Fortran order" not in line:
        bad.append("Fortran order: %r" % line)
    print("\n".join(bad) if bad else "AGREE %d cases" % (len(cases) + 1))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--self-test":
        sys.exit(self_test(sys.argv[2], sys.argv[3]))
    sys.exit("usage: npy_compare.py --self-test AUTOSHARD_RUN DIR")
