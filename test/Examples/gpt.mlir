// The GPT generator, reshape form: vocab-parallel embedding lookup, per layer
// LN -> attention -> residual -> LN -> MLP -> residual, final LN and the LM
// head; Megatron annotations on the token ids and the weights.
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 --batch 2 --seq 8 --embed 48 --heads 4 --vocab 64 --ffn 96 \
// RUN:   | autoshard-opt | FileCheck %s
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 --batch 2 --seq 8 --embed 48 --heads 4 --vocab 64 --ffn 96 \
// RUN:   | autoshard-opt | FileCheck %s --check-prefix=MASKS
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 1 --batch 2 --seq 8 --embed 48 --heads 4 --vocab 64 --ffn 96 --no-causal --annotate none \
// RUN:   | autoshard-opt | FileCheck %s --check-prefix=PLAIN

// Arguments: ids, wte, wpe, per layer (ln1 g/b, wq, wk, wv, wo, ln2 g/b, w1, w2), lnf g/b, head.
// CHECK: func.func @main(%[[IDS:[a-z0-9_]+]]: tensor<2x8xi64>, %[[WTE:[a-z0-9_]+]]: tensor<64x48xf32>, %[[WPE:[a-z0-9_]+]]: tensor<8x48xf32>, %[[LN1G:[a-z0-9_]+]]: tensor<48xf32>, %[[LN1B:[a-z0-9_]+]]: tensor<48xf32>, %[[WQ:[a-z0-9_]+]]: tensor<48x48xf32>, %{{.*}}: tensor<48x48xf32>, %{{.*}}: tensor<48x48xf32>, %[[WO:[a-z0-9_]+]]: tensor<48x48xf32>, %{{.*}}: tensor<48xf32>, %{{.*}}: tensor<48xf32>, %[[W1:[a-z0-9_]+]]: tensor<48x96xf32>, %[[W2:[a-z0-9_]+]]: tensor<96x48xf32>,
// CHECK-SAME: %{{.*}}: tensor<48xf32>, %{{.*}}: tensor<48xf32>, %[[HEAD:.*]]: tensor<48x64xf32>) -> tensor<2x8x64xf32>
// CHECK-DAG: %[[AIDS:.*]] = dist.annotate %[[IDS]] : tensor<2x8xi64> as #dist.layout<#mesh, {{\[\[}}dp], []]>
// CHECK-DAG: %[[AWTE:.*]] = dist.annotate %[[WTE]] : tensor<64x48xf32> as #dist.layout<#mesh, {{\[\[}}mp], []]>
// CHECK-DAG: dist.annotate %[[WQ]] : tensor<48x48xf32> as #dist.layout<#mesh, {{\[\[}}], [mp]]>
// CHECK-DAG: dist.annotate %[[WO]] : tensor<48x48xf32> as #dist.layout<#mesh, {{\[\[}}mp], []]>
// CHECK-DAG: dist.annotate %[[W1]] : tensor<48x96xf32> as #dist.layout<#mesh, {{\[\[}}], [mp]]>
// CHECK-DAG: dist.annotate %[[W2]] : tensor<96x48xf32> as #dist.layout<#mesh, {{\[\[}}mp], []]>
// CHECK-DAG: %[[AHEAD:.*]] = dist.annotate %[[HEAD]] : tensor<48x64xf32> as #dist.layout<#mesh, {{\[\[}}], [mp]]>
// Layer-norm and position-embedding parameters are left to propagation.
// CHECK-NOT: dist.annotate %[[WPE]]
// CHECK-NOT: dist.annotate %[[LN1G]]
// CHECK: %[[IDS3:.*]] = tensor.expand_shape %[[AIDS]] {{\[\[}}0], [1, 2]] output_shape [2, 8, 1] : tensor<2x8xi64> into tensor<2x8x1xi64>
// CHECK: %[[TOK:.*]] = tensor.gather %[[AWTE]][%[[IDS3]]] gather_dims([0]) : (tensor<64x48xf32>, tensor<2x8x1xi64>) -> tensor<2x8x48xf32>
// CHECK: %[[EMB:.*]] = linalg.generic {{.*}} ins(%[[TOK]], %[[WPE]] : tensor<2x8x48xf32>, tensor<8x48xf32>)
// CHECK: %[[X0:.*]] = tensor.collapse_shape %[[EMB]] {{\[\[}}0, 1], [2]] : tensor<2x8x48xf32> into tensor<16x48xf32>
// Layer 0: LN (sum, centre, square-sum, normalise with gamma/beta).
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X0]] : tensor<16x48xf32>)
// CHECK: %[[CEN:.*]] = linalg.generic {{.*}} ins(%[[X0]], %[[SUM]] : tensor<16x48xf32>, tensor<16xf32>)
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[CEN]] : tensor<16x48xf32>)
// CHECK: %[[NORM:.*]] = linalg.generic {{.*}} ins(%[[CEN]], %[[SQ]], %[[LN1G]], %[[LN1B]] : tensor<16x48xf32>, tensor<16xf32>, tensor<48xf32>, tensor<48xf32>)
// CHECK: math.rsqrt
// CHECK: linalg.matmul ins(%[[NORM]], %{{.*}} : tensor<16x48xf32>, tensor<48x48xf32>)
// CHECK: tensor.expand_shape {{.*}} output_shape [2, 8, 4, 12]
// CHECK: linalg.batch_matmul {{.*}} : tensor<8x8x12xf32>, tensor<8x12x8xf32>) outs(%{{.*}} : tensor<8x8x8xf32>)
// CHECK: linalg.softmax dimension(2)
// CHECK: %[[ATT:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x48xf32>, tensor<48x48xf32>)
// CHECK: %[[X1:.*]] = linalg.generic {{.*}} ins(%[[X0]], %[[ATT]] : tensor<16x48xf32>, tensor<16x48xf32>)
// CHECK: arith.addf
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x48xf32>, tensor<48x96xf32>)
// CHECK: math.tanh
// CHECK: %[[MLP:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x96xf32>, tensor<96x48xf32>)
// CHECK: %[[X2:.*]] = linalg.generic {{.*}} ins(%[[X1]], %[[MLP]] : tensor<16x48xf32>, tensor<16x48xf32>)
// Layer 1 reads the residual stream of layer 0.
// CHECK: linalg.generic {{.*}} ins(%[[X2]] : tensor<16x48xf32>)
// CHECK: linalg.softmax
// LM head: vocabulary logits.
// CHECK: %[[LOG:.*]] = linalg.matmul ins(%{{.*}}, %[[AHEAD]] : tensor<16x48xf32>, tensor<48x64xf32>)
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[LOG]] {{\[\[}}0, 1], [2]] output_shape [2, 8, 64] : tensor<16x64xf32> into tensor<2x8x64xf32>
// CHECK: return %[[OUT]] : tensor<2x8x64xf32>

// 2 layers: 2 attention softmaxes, 5 layer norms, 2 causal masks,
// 4 x 2 projections + 2 x 2 MLP matmuls + 1 head.
// MASKS-COUNT-2: arith.constant dense<
// MASKS-NOT: arith.constant dense<
// MASKS: return
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 --batch 2 --seq 8 --embed 48 --heads 4 --vocab 64 --ffn 96 \
// RUN:   | autoshard-opt | FileCheck %s --check-prefix=OPS
// OPS-COUNT-13: linalg.matmul
// OPS-NOT: linalg.matmul
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 --batch 2 --seq 8 --embed 48 --heads 4 --vocab 64 --ffn 96 \
// RUN:   | autoshard-opt | FileCheck %s --check-prefix=RSQRT
// RSQRT-COUNT-5: math.rsqrt
// RSQRT-NOT: math.rsqrt
// RUN: %python %autoshard_src/scripts/gen_models.py gpt --layers 2 --batch 2 --seq 8 --embed 48 --heads 4 --vocab 64 --ffn 96 \
// RUN:   | autoshard-opt | FileCheck %s --check-prefix=SM
// SM-COUNT-2: linalg.softmax
// SM-NOT: linalg.softmax

// PLAIN-NOT: dist.
// PLAIN-NOT: arith.constant dense<
// PLAIN: tensor.gather
// PLAIN-NOT: dist.
