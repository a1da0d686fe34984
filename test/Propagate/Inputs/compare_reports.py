"""Checks that --dist-partition emitted what --dist-propagate predicted.

Usage: compare_reports.py PROPAGATE.json PARTITION.json [kind=count ...]

The collective counts (local all_slice steps included) and the per-device
communication bytes must agree exactly; optional kind=count arguments also
pin the expected counts. Prints one line per mismatch and exits 1.
"""
import json
import sys


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: compare_reports.py PROPAGATE.json PARTITION.json "
                 "[kind=count ...]")
    with open(argv[1]) as f:
        prop = json.load(f)
    with open(argv[2]) as f:
        part = json.load(f)
    errors = []
    if prop["collectives"] != part["collectives"]:
        errors.append("collectives: propagate %s, partition %s" %
                      (prop["collectives"], part["collectives"]))
    if abs(prop["comm_bytes_per_device"] -
           part["comm_bytes_per_device"]) > 1e-6:
        errors.append("comm bytes per device: propagate %s, partition %s" %
                      (prop["comm_bytes_per_device"],
                       part["comm_bytes_per_device"]))
    if prop["reshards"] != part["reshards"]:
        errors.append("reshards: propagate %s, partition %s" %
                      (prop["reshards"], part["reshards"]))
    for arg in argv[3:]:
        kind, count = arg.split("=")
        got = prop["collectives"].get(kind, 0)
        if got != int(count):
            errors.append("%s: expected %s, got %s" % (kind, count, got))
    for e in errors:
        print(e)
    print("%s: %s, %s bytes per device" %
          ("MISMATCH" if errors else "agree", prop["collectives"],
           prop["comm_bytes_per_device"]))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
