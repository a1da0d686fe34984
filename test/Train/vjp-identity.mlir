// dist.annotate and dist.reshard return their input: dX = dY, passed on
// as is (no op of their own in the backward).
// RUN: autoshard-opt %s --dist-training-step='loss=mse optimizer=sgd lr=1' | FileCheck %s

// CHECK-LABEL: func.func @train_step(
// CHECK: %[[A:.*]] = dist.annotate %arg0
// CHECK: %[[R:.*]] = dist.reshard %[[A]]
// CHECK: %[[DY:.*]] = linalg.generic {{.*}}ins(%[[R]], %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>) outs(%{{.*}} : tensor<4x3xf32>) attrs = {dist.phase = "loss"}
// CHECK-NOT: dist.phase = "backward"
// CHECK: ins(%[[DY]], %arg0 : {{.*}}dist.phase = "optimizer"
#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%x: tensor<4x3xf32> {dist.param}) -> tensor<4x3xf32> {
    %a = dist.annotate %x : tensor<4x3xf32> as #dist.layout<#mesh, [[dp], []]>
    %r = dist.reshard %a : tensor<4x3xf32> from #dist.layout<#mesh, [[dp], []]> to #dist.layout<#mesh, [[], []]>
    return %r : tensor<4x3xf32>
  }
}
