// The partition report prices index-typed tensors at 8 bytes an element (the
// runtime's storage) instead of asking index for a bit width (it crashed:
// a training step's gathered labels are index tensors).
// RUN: autoshard-opt %s --autoshard-pipeline='partition-report=-' -o /dev/null | FileCheck %s
// CHECK: "all_gather": 1
// CHECK: "comm_bytes_per_device": 128
#mesh = #dist.mesh<[dp = 2]>
module attributes {dist.mesh = #mesh} {
  func.func @main(%t: tensor<4x8xindex>) -> tensor<4x8xindex> {
    %a = dist.annotate %t : tensor<4x8xindex> as #dist.layout<#mesh, [[dp], []]>
    %r = dist.reshard %a : tensor<4x8xindex> from #dist.layout<#mesh, [[dp], []]> to #dist.layout<#mesh, [[], []]>
    return %r : tensor<4x8xindex>
  }
}
