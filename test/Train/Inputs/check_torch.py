"""Compares an `autoshard train` run with PyTorch's own training loop.

  check_torch.py AUTOSHARD_RUN OURS.json TORCH.json LOSS_TOL OURS_DIR TORCH_DIR RTOL ATOL

Losses: every |ours - torch| <= LOSS_TOL. Parameters: every TORCH_DIR/*.npy
has a file of the same name in OURS_DIR, and `autoshard-run --compare`'s
rule (npy_compare.py, in this process) finds them equal within RTOL/ATOL. Prints one line (MATCH ...) or the
mismatches, and exits non-zero on any. Standard library only: CI has no torch
and may have no numpy.
"""
import json
import os
import sys

from npy_compare import compare


def main(argv):
    run, ours, torch, loss_tol, our_dir, torch_dir, rtol, atol = argv[1:9]
    a, b = json.load(open(ours)), json.load(open(torch))
    bad = []
    if len(a) != len(b):
        bad.append("%d losses vs torch's %d" % (len(a), len(b)))
    worst = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
    if worst > float(loss_tol):
        bad.append("losses differ by %.3g > %s: %r vs %r" % (worst, loss_tol, a, b))
    names = sorted(f for f in os.listdir(torch_dir) if f.endswith(".npy"))
    for name in names:
        mine = os.path.join(our_dir, name)
        if not os.path.exists(mine):
            bad.append("no %s in %s" % (name, our_dir))
            continue
        ok, line = compare(run, mine, os.path.join(torch_dir, name), rtol, atol)
        if not ok:
            bad.append(line)
    if bad:
        print("\n".join("MISMATCH " + m for m in bad))
        return 1
    print("MATCH %d losses within %s of torch (max %.2g), %d parameters within "
          "rtol %s atol %s" % (len(a), loss_tol, worst, len(names), rtol, atol))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
