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
// moved in front of the batch and merged heads-major into batch_matmul's
// batch dim [H*B, S, D]): with one head per device, heads on mp and the
// batch on dp are the block [mp, dp] of the merged dim, so the core stays
// local exactly as in the einsum form. The unannotated result is free, so
// Wo's partial sum is reduce-scattered into [[dp], [], [mp]] instead of
// all-reduced: 3/4 * 2048 B.
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

// RESHAPE-NOT: dist.reshard
// RESHAPE-COUNT-3: tensor.collapse_shape {{.*}}out = {{\[\[}}[mp, dp], [], []]]>} : tensor<4x4x8x8xf32> into tensor<16x8x8xf32>
// RESHAPE-NOT: dist.reshard
// RESHAPE: linalg.batch_matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[mp, dp], [], []], {{\[\[}}mp, dp], [], []], {{\[\[}}mp, dp], [], []]], out = {{\[\[}}[mp, dp], [], []]]>}
// RESHAPE-NOT: dist.reshard
// RESHAPE: linalg.softmax {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[mp, dp], [], []], {{\[\[}}mp, dp], [], []]], out = {{\[\[}}[mp, dp], [], []]]>}
// RESHAPE-NOT: dist.reshard
// RESHAPE: linalg.batch_matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[mp, dp], [], []], {{\[\[}}mp, dp], [], []], {{\[\[}}mp, dp], [], []]], out = {{\[\[}}[mp, dp], [], []]]>}
// RESHAPE-NOT: dist.reshard
// RESHAPE: tensor.expand_shape {{.*}}out = {{\[\[}}[mp], [dp], [], []]]>} : tensor<16x8x8xf32> into tensor<4x4x8x8xf32>
// RESHAPE-NOT: dist.reshard
// RESHAPE: dist.reshard {{.*}} : tensor<32x32xf32> from #dist.layout<#mesh, {{\[\[}}dp], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], [mp]]>
// RESHAPE-NOT: dist.reshard

// RESHAPE-REPORT: "collectives": {
// RESHAPE-REPORT-NEXT: "reduce_scatter": 1
// RESHAPE-REPORT-NEXT: },
// RESHAPE-REPORT-NEXT: "comm_bytes_per_device": 1536,
// RESHAPE-REPORT: "optimal": true,
// RESHAPE-REPORT: "reshards": 1,
