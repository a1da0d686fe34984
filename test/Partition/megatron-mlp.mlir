// Two Megatron MLP layers on dp=2 x mp=4, written in the post-propagation
// form: X [B, H] rows on dp, W1 columns on mp, W2 rows on mp. Each layer's
// second matmul leaves a partial sum over mp that one all_reduce of the
// local [B/dp, H] activation resolves.
// RUN: autoshard-opt %s --dist-partition | FileCheck %s
// RUN: autoshard-opt %s --dist-partition="report=%t.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=REPORT < %t.json

#mesh = #dist.mesh<[dp = 2, mp = 4]>
#x = #dist.layout<#mesh, [[dp], []]>
#col = #dist.layout<#mesh, [[], [mp]]>
#row = #dist.layout<#mesh, [[mp], []]>
#h = #dist.layout<#mesh, [[dp], [mp]]>
#p = #dist.layout<#mesh, [[dp], []] partial sum [mp]>

// CHECK: module attributes {dist.mesh = #mesh}
// CHECK: shard.grid @mesh(shape = 2x4)
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32> {dist.global_type = tensor<8x16xf32>, dist.layout = #dist.layout<#mesh, {{\[\[}}dp], []]>}
// CHECK-SAME: %{{.*}}: tensor<16x16xf32> {dist.global_type = tensor<16x64xf32>, dist.layout = #dist.layout<#mesh, {{\[\[}}], [mp]]>}
// CHECK-SAME: %{{.*}}: tensor<16x16xf32> {dist.global_type = tensor<64x16xf32>, dist.layout = #dist.layout<#mesh, {{\[\[}}mp], []]>}
// CHECK-SAME: -> (tensor<4x16xf32> {dist.global_type = tensor<8x16xf32>, dist.layout = #dist.layout<#mesh, {{\[\[}}dp], []]>})
// CHECK-NOT: dist.strategy
// CHECK: linalg.matmul ins(%[[X]], %{{.*}} : tensor<4x16xf32>, tensor<16x16xf32>) outs(%{{.*}} : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK: math.tanh %{{.*}} : tensor<4x16xf32>
// CHECK: %[[Y1:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<16x16xf32>) outs(%{{.*}} : tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK: %[[R1:.*]] = shard.all_reduce %[[Y1]] on @mesh grid_axes = [1] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK: linalg.matmul ins(%[[R1]], %{{.*}} : tensor<4x16xf32>, tensor<16x16xf32>)
// CHECK: %[[Y2:.*]] = linalg.matmul
// CHECK: %[[R2:.*]] = shard.all_reduce %[[Y2]] on @mesh grid_axes = [1] : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NOT: shard.
// CHECK: return %[[R2]] : tensor<4x16xf32>

// 2 all_reduces of 4x16 f32 (256 B) over mp=4: 2 * 2 * 3/4 * 256 = 768 B.
// REPORT-DAG: "all_reduce": 2
// REPORT-DAG: "comm_bytes_per_device": 768
// REPORT-DAG: "planned_comm_bytes_per_device": 768
// REPORT-DAG: "reshards": 2

module attributes {dist.mesh = #mesh} {
func.func @mlp(%x: tensor<8x16xf32> {dist.layout = #x},
               %w1: tensor<16x64xf32> {dist.layout = #col},
               %w2: tensor<64x16xf32> {dist.layout = #row},
               %w3: tensor<16x64xf32> {dist.layout = #col},
               %w4: tensor<64x16xf32> {dist.layout = #row})
    -> (tensor<8x16xf32> {dist.layout = #x}) {
  %zero = arith.constant 0.0 : f32
  %x0 = dist.annotate %x : tensor<8x16xf32> as #x
  %e1 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], [mp]]]>} : tensor<8x64xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %h1 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []], [[], [mp]]], out = [[[dp], [mp]]]>}
      ins(%x0, %w1 : tensor<8x16xf32>, tensor<16x64xf32>) outs(%f1 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %a1 = math.tanh %h1 {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]]], out = [[[dp], [mp]]]>} : tensor<8x64xf32>
  %e2 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], []] partial sum [mp]]>} : tensor<8x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y1 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]], [[mp], []]], out = [[[dp], []] partial sum [mp]]>}
      ins(%a1, %w2 : tensor<8x64xf32>, tensor<64x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r1 = dist.reshard %y1 : tensor<8x16xf32> from #p to #x

  %e3 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], [mp]]]>} : tensor<8x64xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %h2 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], []], [[], [mp]]], out = [[[dp], [mp]]]>}
      ins(%r1, %w3 : tensor<8x16xf32>, tensor<16x64xf32>) outs(%f3 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %a2 = math.tanh %h2 {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]]], out = [[[dp], [mp]]]>} : tensor<8x64xf32>
  %e4 = tensor.empty() {dist.strategy = #dist.strategy<#mesh, in = [], out = [[[dp], []] partial sum [mp]]>} : tensor<8x16xf32>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y2 = linalg.matmul {dist.strategy = #dist.strategy<#mesh, in = [[[dp], [mp]], [[mp], []]], out = [[[dp], []] partial sum [mp]]>}
      ins(%a2, %w4 : tensor<8x64xf32>, tensor<64x16xf32>) outs(%f4 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r2 = dist.reshard %y2 : tensor<8x16xf32> from #p to #x
  return %r2 : tensor<8x16xf32>
}
}
