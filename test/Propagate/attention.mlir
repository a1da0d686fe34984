// One multi-head attention block (batch 4 on dp, 4 heads, Wq/Wk/Wv columns
// and Wo rows on mp; only the input and the weights annotated).
//
// Einsum form ([B, H, S, D] contractions): heads stay on mp from the Q/K/V
// projections through scores, softmax and context to the output projection,
// whose partial sum is the block's only collective (Megatron): an all_reduce
// of the local [2, 8, 32] f32 output, 2 * 3/4 * 2048 B = 3072 B.
// RUN: %python %autoshard_src/scripts/gen_models.py attention --form einsum \
// RUN:   | autoshard-opt --dist-propagate=report=%t.einsum.json > %t.einsum.mlir
// RUN: FileCheck %s --check-prefix=EIN < %t.einsum.mlir
// RUN: FileCheck %s --check-prefix=EIN-REPORT < %t.einsum.json
//
// Reshape form (what importers produce: heads split out with expand_shape,
// moved next to the batch and merged into batch_matmul's batch dim
// [B*H, S, D]): with the batch major and split over dp into shards of two,
// heads over mp are not a block of the merged dim, so no layout expresses
// them there (Shardy's compound factors have the same limit). The optimum is
// then to gather Q, K and V over mp (3 all_gathers of [2, 4, 8, 8] f32:
// 3 * 3/4 * 2048 B) and run the core replicated over mp; the context is
// sliced back to heads (local) and Wo's partial sum is reduce-scattered into
// the result (3/4 * 2048 B).
// RUN: %python %autoshard_src/scripts/gen_models.py attention \
// RUN:   | autoshard-opt --dist-propagate=report=%t.reshape.json > %t.reshape.mlir
// RUN: FileCheck %s --check-prefix=RESHAPE < %t.reshape.mlir
// RUN: FileCheck %s --check-prefix=RESHAPE-REPORT < %t.reshape.json

// Q, K, V projections: [B, S, E] x [E, H, D] -> [B, H, S, D], heads on mp.
// EIN-COUNT-3: linalg.generic {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [], []], {{\[\[}}], [mp], []], {{\[\[}}dp], [mp], [], []]], out = {{\[\[}}[dp], [mp], [], []]]>
// Scores and everything up to the output projection keep [[dp], [mp], ...].
// EIN-NOT: dist.reshard
// EIN: linalg.generic {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [mp], [], []], {{\[\[}}dp], [mp], [], []], {{\[\[}}dp], [mp], [], []]], out = {{\[\[}}[dp], [mp], [], []]]>
// EIN-NOT: dist.reshard
// Output projection: contraction over heads on mp -> partial sum.
// EIN: %[[O:.*]] = linalg.generic {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [mp], [], []], {{\[\[}}mp], [], []], {{\[\[}}dp], [], []] partial sum [mp]], out = {{\[\[}}[dp], [], []] partial sum [mp]]>
// EIN: dist.reshard %[[O]] : tensor<4x8x32xf32> from #dist.layout<#mesh, {{\[\[}}dp], [], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], [], []]>
// EIN-NOT: dist.reshard

// EIN-REPORT: "collectives": {
// EIN-REPORT-NEXT: "all_reduce": 1
// EIN-REPORT-NEXT: },
// EIN-REPORT-NEXT: "comm_bytes_per_device": 3072,
// EIN-REPORT: "optimal": true,
// EIN-REPORT: "reshards": 1,

// RESHAPE-COUNT-3: dist.reshard {{.*}} : tensor<4x4x8x8xf32> from #dist.layout<#mesh, {{\[\[}}dp], [mp], [], []]> to #dist.layout<#mesh, {{\[\[}}dp], [], [], []]>
// RESHAPE: linalg.batch_matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [], []], {{\[\[}}dp], [], []], {{\[\[}}dp], [], []]], out = {{\[\[}}[dp], [], []]]>}
// RESHAPE: linalg.softmax {{.*}}dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [], []], {{\[\[}}dp], [], []]], out = {{\[\[}}[dp], [], []]]>
// RESHAPE: linalg.batch_matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[dp], [], []], {{\[\[}}dp], [], []], {{\[\[}}dp], [], []]], out = {{\[\[}}[dp], [], []]]>}
// RESHAPE: dist.reshard {{.*}} : tensor<4x4x8x8xf32> from #dist.layout<#mesh, {{\[\[}}dp], [], [], []]> to #dist.layout<#mesh, {{\[\[}}dp], [mp], [], []]>
// RESHAPE: dist.reshard {{.*}} : tensor<32x32xf32> from #dist.layout<#mesh, {{\[\[}}dp], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], [mp]]>
// RESHAPE-NOT: dist.reshard

// RESHAPE-REPORT: "collectives": {
// RESHAPE-REPORT-NEXT: "all_gather": 3,
// RESHAPE-REPORT-NEXT: "all_slice": 1,
// RESHAPE-REPORT-NEXT: "reduce_scatter": 1
// RESHAPE-REPORT-NEXT: },
// RESHAPE-REPORT-NEXT: "comm_bytes_per_device": 6144,
// RESHAPE-REPORT: "optimal": true,
// RESHAPE-REPORT: "reshards": 5,
