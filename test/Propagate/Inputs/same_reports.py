"""Checks that two --dist-propagate JSON reports describe the same program.

Usage: same_reports.py FIRST.json SECOND.json

The reshards, collectives, bytes and times, compute, memory and the
strategies must be equal (a second run of the pass over its own output
must not change the plan or what it costs). Prints `same` or each
difference.
"""
import json
import sys

KEYS = ["reshards", "collectives", "comm_bytes_per_device", "comm_time_us",
        "compute_time_us", "memory_bytes_per_device", "total_cost_us",
        "strategies"]


def main(argv):
    with open(argv[1]) as f:
        a = json.load(f)
    with open(argv[2]) as f:
        b = json.load(f)
    diffs = []
    for k in KEYS:
        x, y = a.get(k), b.get(k)
        if k == "strategies":
            # Ops, and the layouts they take (locations are those of the
            # input, which the second run reads from a file of its own; the
            # reshards the first run emitted are ops of the second's input).
            x = [(s["op"], s["operands"], s["results"]) for s in x or []
                 if s["op"] != "dist.reshard"]
            y = [(s["op"], s["operands"], s["results"]) for s in y or []
                 if s["op"] != "dist.reshard"]
        if isinstance(x, float) and isinstance(y, float):
            if abs(x - y) > 1e-9 * max(1.0, abs(x)):
                diffs.append("%s: %s vs %s" % (k, x, y))
        elif x != y:
            diffs.append("%s: %s vs %s" % (k, str(x)[:200], str(y)[:200]))
    for d in diffs:
        print(d)
    print("same" if not diffs else "DIFFERENT")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
