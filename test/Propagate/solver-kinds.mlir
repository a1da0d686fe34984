// The three solvers through the pass. `exact` (elimination with larger
// tables, else branch and bound) proves the default's choice optimal on the
// Megatron MLP and the attention block: identical IR, identical report
// except the solver's name. `local` (the fallback for graphs too wide to
// eliminate) reaches the same optimum on the MLP.
// RUN: %python %autoshard_src/scripts/gen_models.py mlp --layers 2 --batch 8 --hidden 16 --ffn 64 > %t.mlp.mlir
// RUN: %python %autoshard_src/scripts/gen_models.py attention > %t.att.mlir
// RUN: for m in mlp att; do for s in dp exact local; do \
// RUN:   autoshard-opt %t.$m.mlir --dist-propagate="solver=$s report=%t.$m.$s.json" -o %t.$m.$s.out || exit 1; done; done
// RUN: diff %t.mlp.dp.out %t.mlp.exact.out
// RUN: diff %t.att.dp.out %t.att.exact.out
// RUN: diff %t.mlp.dp.out %t.mlp.local.out
// RUN: %python -c "import json, sys; \
// RUN:   keys = ['collectives', 'comm_bytes_per_device', 'reshards', 'optimal', 'strategies']; \
// RUN:   load = lambda f: json.load(open(f)); \
// RUN:   pairs = [('%t.mlp.dp.json', '%t.mlp.exact.json'), ('%t.att.dp.json', '%t.att.exact.json')]; \
// RUN:   bad = [(a, k) for a, b in pairs for k in keys if load(a)[k] != load(b)[k]]; \
// RUN:   sys.exit('differ: %%s' %% bad if bad else 0)"
// RUN: FileCheck %s --check-prefix=EXACT < %t.att.exact.json
// RUN: FileCheck %s --check-prefix=DP < %t.att.dp.json

// EXACT: "optimal": true,
// EXACT: "solver": "exact",
// DP: "optimal": true,
// DP: "solver": "dp",
