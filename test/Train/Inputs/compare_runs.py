"""Compares two `autoshard train` runs of the same model and data.

  compare_runs.py AUTOSHARD_RUN A.json B.json LOSS_RTOL A_DIR B_DIR RTOL ATOL

Losses: as many, every |a - b| <= LOSS_RTOL * |b|. Tensors: A_DIR and
B_DIR (--params-out) hold the same .npy names (parameters and optimizer
state), and `autoshard-run --compare`'s rule (npy_compare.py, in this
process) finds each pair equal within RTOL/ATOL. Prints one line (MATCH ...) or the mismatches, and exits non-zero
on any. Standard library only, as check_torch.py.
"""
import json
import os
import sys

from npy_compare import compare


def main(argv):
    run, a_json, b_json, loss_rtol, a_dir, b_dir, rtol, atol = argv[1:9]
    a, b = json.load(open(a_json)), json.load(open(b_json))
    bad = []
    if len(a) != len(b) or not a:
        bad.append("%d losses vs %d" % (len(a), len(b)))
    worst = max((abs(x - y) / abs(y) for x, y in zip(a, b) if y), default=0.0)
    if worst > float(loss_rtol):
        bad.append("losses differ by rel %.3g > %s: %r vs %r" %
                   (worst, loss_rtol, a, b))
    names = sorted(f for f in os.listdir(b_dir) if f.endswith(".npy"))
    others = sorted(f for f in os.listdir(a_dir) if f.endswith(".npy"))
    if names != others:
        bad.append("tensors differ: %r vs %r" % (others, names))
    for name in names:
        mine = os.path.join(a_dir, name)
        if not os.path.exists(mine):
            continue
        ok, line = compare(run, mine, os.path.join(b_dir, name), rtol, atol)
        if not ok:
            bad.append(name + ": " + line)
    if bad:
        print("\n".join("MISMATCH " + m for m in bad))
        return 1
    print("MATCH %d losses within rel %s (max %.2g), %d tensors within rtol %s "
          "atol %s" % (len(a), loss_rtol, worst, len(names), rtol, atol))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
