// The generated GPT (embedding 32, 4 heads, MLP 128, vocab 64, batch 4 on
// dp, seq 8; mesh dp=2 x mp=4; weights annotated Megatron-style: Wq/Wk/Wv
// and W1 columns, Wo and W2 rows, the token table by vocabulary rows and
// the LM head by columns over mp). Every count below is the proven optimum
// of the cost model (the default solver eliminates variables exactly:
// "optimal": true) and is the same in every layer.
//
// Reshape form (examples/gpt.mlir is this model): heads are merged
// heads-major into batch_matmul's batch dim [H*B], so with one head per
// device heads on mp and the batch on dp are the block [mp, dp] of it and
// the whole attention core stays local (see attention.mlir). The Megatron
// optimum: the vocabulary-parallel embedding's all_reduce and, per layer,
// the all_reduces of Wo's and W2's partial sums, each of the local [2*8, 32]
// f32 activation: (1 + 2L) * 2*3/4*2048 B = 3072 + L * 6144 B.
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 \
// RUN:   | autoshard-opt --dist-propagate=report=%t.2.json > %t.2.mlir
// RUN: FileCheck %s --check-prefix=IR2 < %t.2.mlir
// RUN: FileCheck %s --check-prefix=R2 < %t.2.json
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 4 \
// RUN:   | autoshard-opt --dist-propagate=report=%t.4.json -o /dev/null
// RUN: FileCheck %s --check-prefix=R4 < %t.4.json
//
// Einsum form ([B, H, S, D] contractions, table not split): the Megatron
// optimum, one all_reduce after each attention output projection and one
// after each MLP W2, nothing else.
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 --form einsum \
// RUN:   | autoshard-opt --dist-propagate=report=%t.e.json > %t.e.mlir
// RUN: FileCheck %s --check-prefix=E2 < %t.e.json
// RUN: FileCheck %s --check-prefix=EIR < %t.e.mlir

// Both layers keep heads on mp through scores, softmax and context; the
// only reshards are the five partial-sum all_reduces.
// IR2: dist.reshard {{.*}} : tensor<4x8x32xf32> from #dist.layout<#mesh, {{\[\[}}dp], [], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], [], []]>
// IR2-NOT: dist.reshard
// IR2-COUNT-3: tensor.collapse_shape {{.*}}out = {{\[\[}}[mp, dp], [], []]]>} : tensor<4x4x8x8xf32> into tensor<16x8x8xf32>
// IR2-NOT: dist.reshard
// IR2: linalg.batch_matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[mp, dp], [], []], {{\[\[}}mp, dp], [], []], {{\[\[}}mp, dp], [], []]], out = {{\[\[}}[mp, dp], [], []]]>}
// IR2-NOT: dist.reshard
// IR2: linalg.softmax {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[mp, dp], [], []], {{\[\[}}mp, dp], [], []]], out = {{\[\[}}[mp, dp], [], []]]>}
// IR2-NOT: dist.reshard
// IR2: linalg.batch_matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[mp, dp], [], []], {{\[\[}}mp, dp], [], []], {{\[\[}}mp, dp], [], []]], out = {{\[\[}}[mp, dp], [], []]]>}
// IR2-NOT: dist.reshard
// IR2: dist.reshard {{.*}} : tensor<32x32xf32> from #dist.layout<#mesh, {{\[\[}}dp], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], []]>
// IR2-NOT: dist.reshard
// IR2: dist.reshard {{.*}} : tensor<32x32xf32> from #dist.layout<#mesh, {{\[\[}}dp], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], []]>
// IR2-NOT: dist.reshard
// IR2-COUNT-3: tensor.collapse_shape {{.*}}out = {{\[\[}}[mp, dp], [], []]]>} : tensor<4x4x8x8xf32> into tensor<16x8x8xf32>
// IR2-NOT: dist.reshard
// IR2: linalg.batch_matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[mp, dp], [], []], {{\[\[}}mp, dp], [], []], {{\[\[}}mp, dp], [], []]], out = {{\[\[}}[mp, dp], [], []]]>}
// IR2-NOT: dist.reshard
// IR2: linalg.softmax {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[mp, dp], [], []], {{\[\[}}mp, dp], [], []]], out = {{\[\[}}[mp, dp], [], []]]>}
// IR2-NOT: dist.reshard
// IR2: linalg.batch_matmul {dist.strategy = #dist.strategy<#mesh, in = {{\[\[}}[mp, dp], [], []], {{\[\[}}mp, dp], [], []], {{\[\[}}mp, dp], [], []]], out = {{\[\[}}[mp, dp], [], []]]>}
// IR2-NOT: dist.reshard
// IR2: dist.reshard {{.*}} : tensor<32x32xf32> from #dist.layout<#mesh, {{\[\[}}dp], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], []]>
// IR2-NOT: dist.reshard
// IR2: dist.reshard {{.*}} : tensor<32x32xf32> from #dist.layout<#mesh, {{\[\[}}dp], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], []]>
// IR2-NOT: dist.reshard
// No sequence-parallel detours through [[dp, mp], []] around the layer norms.
// IR2-NOT: {{\[\[}}dp, mp], []]>

// R2: "collectives": {
// R2-NEXT: "all_reduce": 5
// R2-NEXT: },
// R2-NEXT: "comm_bytes_per_device": 15360,
// R2: "optimal": true,
// R2: "reshards": 5,

// R4: "collectives": {
// R4-NEXT: "all_reduce": 9
// R4-NEXT: },
// R4-NEXT: "comm_bytes_per_device": 27648,
// R4: "optimal": true,
// R4: "reshards": 9,

// E2: "collectives": {
// E2-NEXT: "all_reduce": 4
// E2-NEXT: },
// E2-NEXT: "comm_bytes_per_device": 12288,
// E2: "optimal": true,
// E2: "reshards": 4,

// EIR-COUNT-4: dist.reshard {{.*}} : tensor<4x8x32xf32> from #dist.layout<#mesh, {{\[\[}}dp], [], []] partial sum [mp]> to #dist.layout<#mesh, {{\[\[}}dp], [], []]>
// EIR-NOT: dist.reshard
