#!/usr/bin/env python3
"""Prints a propagation report (autoshard compile --report FILE) for a person:
strategies of the key ops (matmuls, gathers, reductions), collectives, and the
predicted communication and memory per device. Standard library only."""
import json
import sys

KEY_OPS = ("matmul", "gather", "softmax", "reduce", "embedding")


def human_bytes(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: print_plan.py REPORT.json")
    try:
        with open(sys.argv[1]) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"print_plan.py: cannot read {sys.argv[1]}: {e}")

    strategies = report.get("strategies", {})
    items = strategies.items() if isinstance(strategies, dict) else (
        (s.get("op", "?"), s) for s in strategies)
    print(f"ops: {report.get('ops', '?')}   solver: {report.get('solver', '?')}")
    print("strategies of key ops:")
    shown = 0
    for name, layouts in items:
        if not any(k in name for k in KEY_OPS):
            continue
        print(f"  {name}: {json.dumps(layouts) if not isinstance(layouts, str) else layouts}")
        shown += 1
    if not shown:
        print("  (none)")
    print(f"reshards: {report.get('reshards', 0)}")
    colls = report.get("collectives", {})
    print("collectives: " + (", ".join(f"{k} x{v}" for k, v in sorted(colls.items())) or "none"))
    print(f"predicted comm per device: {human_bytes(report.get('comm_bytes_per_device', 0))}, "
          f"{report.get('comm_time_us', 0):.1f} us")
    print(f"predicted memory per device: {human_bytes(report.get('memory_bytes_per_device', 0))}")


if __name__ == "__main__":
    main()
