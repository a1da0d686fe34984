"""Counts the collectives of a partitioned program from its IR text.

Usage: ir_collectives.py PARTITIONED.mlir [PROPAGATE.json]

Reads the `shard.grid` shapes and every collective op (shard.all_gather,
all_reduce, reduce_scatter, all_to_all, all_slice; dist.permute,
make_partial, all_gather_uneven, all_slice_uneven) with its types, and
prints the counts and the bytes each device sends (all_gather: (n-1)/n of
the result; all_reduce: 2(n-1)/n of the input; reduce_scatter and
all_to_all: (n-1)/n of the input; permute: the input; slices and
make_partial: 0), independently of --dist-partition's own report. With a
propagation report, also says whether its counts and bytes are the same.
No numpy: the tests must run anywhere.
"""
import json
import re
import sys

ELEM_BYTES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4,
              "i16": 2, "i8": 1, "i1": 1, "index": 8}
KINDS = {"shard.all_gather": "all_gather", "dist.all_gather_uneven":
         "all_gather", "shard.all_reduce": "all_reduce",
         "shard.reduce_scatter": "reduce_scatter",
         "shard.all_to_all": "all_to_all", "shard.all_slice": "all_slice",
         "dist.all_slice_uneven": "all_slice", "dist.permute": "permute",
         "dist.make_partial": "make_partial"}
OP = re.compile(r"=\s*(shard\.\w+|dist\.\w+)\s+\S+\s+on\s+@(\w+)(.*)")


def tensor_bytes(text):
    m = re.match(r"tensor<((?:\?|\d+)(?:x(?:\?|\d+))*)x(\w+)>", text)
    if not m:
        m = re.match(r"tensor<(\w+)>", text)
        return ELEM_BYTES.get(m.group(1), 0) if m else 0
    n = 1
    for d in m.group(1).split("x"):
        if d == "?":
            return 0
        n *= int(d)
    return n * ELEM_BYTES.get(m.group(2), 0)


def count(text):
    grids = {m.group(1): [int(s) for s in m.group(2).split("x")]
             for m in re.finditer(r"shard\.grid @(\w+)\(shape = ([\dx]+)\)",
                                  text)}
    counts, total = {}, 0.0
    for line in text.splitlines():
        m = OP.search(line)
        if not m or m.group(1) not in KINDS:
            continue
        kind = KINDS[m.group(1)]
        shape = grids.get(m.group(2), [1])
        axes = re.search(r"grid_axes = \[([\d, ]*)\]", m.group(3))
        n = 1
        if axes and axes.group(1).strip():
            for a in axes.group(1).split(","):
                n *= shape[int(a)]
        else:
            for s in shape:
                n *= s
        types = re.findall(r"tensor<[^>]*>", line.split(" : ", 1)[1])
        frac = (n - 1) / n
        if kind == "all_gather":
            sent = frac * tensor_bytes(types[-1])
        elif kind == "all_reduce":
            sent = 2 * frac * tensor_bytes(types[0])
        elif kind in ("reduce_scatter", "all_to_all"):
            sent = frac * tensor_bytes(types[0])
        elif kind == "permute":
            sent = tensor_bytes(types[0])
        else:
            sent = 0.0
        counts[kind] = counts.get(kind, 0) + 1
        total += sent
    return counts, total


def main(argv):
    with open(argv[1]) as f:
        counts, total = count(f.read())
    print("ir: %s, %d bytes per device" %
          (dict(sorted(counts.items())), round(total)))
    if len(argv) > 2:
        with open(argv[2]) as f:
            prop = json.load(f)
        same = (prop["collectives"] == counts and
                abs(prop["comm_bytes_per_device"] - total) < 1e-6)
        print("%s: propagate %s, %d bytes per device" %
              ("agree" if same else "MISMATCH",
               dict(sorted(prop["collectives"].items())),
               round(prop["comm_bytes_per_device"])))
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
