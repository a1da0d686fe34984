#!/usr/bin/env python3
"""Prints a propagation report (autoshard compile --report FILE) for a person:
strategies of the key ops (matmuls, gathers, reductions), collectives, and the
predicted communication and memory per device. Standard library only."""
import json
import sys

KEY_OPS = ("matmul", "gather", "softmax", "reduce", "embedding")


# Key ops listed at most (a training step has each twice and more).
MAX_SHOWN = 16


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

    strategies = report.get("strategies", [])
    if isinstance(strategies, dict):
        strategies = [{"op": k, **(v if isinstance(v, dict) else {"results": v})}
                      for k, v in strategies.items()]
    print(f"ops: {report.get('ops', '?')}   solver: {report.get('solver', '?')}"
          f"   optimal: {report.get('optimal', '?')}")
    print("strategies of key ops (operands -> results):")
    shown = 0
    for s in strategies:
        name = s.get("op", "?")
        if not any(k in name for k in KEY_OPS):
            continue
        loc = s.get("loc", "")
        # loc("file":line:col) -> file:line
        if loc.startswith('loc("'):
            file, _, rest = loc[5:].partition('"')
            loc = file.rsplit("/", 1)[-1] + ":" + rest.lstrip(":").split(":")[0]
        ins = " x ".join(s.get("operands", []))
        outs = ", ".join(s.get("results", []))
        shown += 1
        if shown <= MAX_SHOWN:
            print(f"  {name:<20} {loc:<16} {ins} -> {outs}")
    if not shown:
        print("  (none)")
    elif shown > MAX_SHOWN:
        print(f"  ... and {shown - MAX_SHOWN} more (all in the report's 'strategies')")
    print(f"reshards: {report.get('reshards', 0)}")
    colls = report.get("collectives", {})
    print("collectives: " + (", ".join(f"{k} x{v}" for k, v in sorted(colls.items())) or "none"))
    print(f"predicted comm per device: {human_bytes(report.get('comm_bytes_per_device', 0))}, "
          f"{report.get('comm_time_us', 0):.1f} us")
    print(f"predicted memory per device: {human_bytes(report.get('memory_bytes_per_device', 0))}")
    parts = [("parameters", "parameter_bytes_per_device"),
             ("gradients", "gradient_bytes_per_device"),
             ("optimizer state", "optimizer_state_bytes_per_device"),
             ("activations", "activation_bytes_per_device")]
    if any(report.get(key, 0) for _, key in parts):
        print("  of which " + ", ".join(f"{label} {human_bytes(report.get(key, 0))}"
                                        for label, key in parts))


if __name__ == "__main__":
    main()
